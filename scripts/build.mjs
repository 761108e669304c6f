// Builds the package:
// - declarations into dist/ (tsc);
// - the ESM build into dist/: one bundle per package entry (and the command line), with the code the entries
//   share split into dist/chunks/, so each module exists once (one LitmPackError class whichever entry threw it).
//   Loading a few files instead of a graph of ~150 modules is what keeps `import('litm-pack')` cheap (see
//   BENCHMARKS.md, first use). Dependencies stay imports, except zod: its classic API is a graph of ~95 modules
//   that cost more to load than everything else the root entry does, so it is bundled into a shared chunk.
//   zod 4 is made for more than one copy in a process (its registry lives on globalThis and `instanceof` checks
//   traits, not classes), and zod is the only library this package hands its schemas to (the MCP SDK, which reads
//   them through zod 4's core); zod stays a dependency for the declarations;
// - a CommonJS copy into dist/cjs/ (file by file, no bundling) with the same declarations, so
//   `require('litm-pack/…')` works on every Node 20 and CommonJS code gets the CommonJS builds of the frameworks,
//   the same copies its own `require` loads.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const cjs = join(dist, 'cjs');

/** Files under `dir` (recursively) whose names end with `suffix`, as paths relative to `dir`. */
function filesUnder(dir, suffix) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

rmSync(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly'],
  { stdio: 'inherit' },
);

/** Every package import stays an import, except zod's (see above). */
const externalExceptZod = {
  name: 'external-except-zod',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path === 'zod' || args.path.startsWith('zod/') ? undefined : { path: args.path, external: true },
    );
  },
};

// The package entries (package.json "exports", each import's types path read as its source file) and the bin.
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const entries = [
  ...Object.values(manifest.exports)
    .map((target) => target?.import?.types)
    .filter((types) => typeof types === 'string')
    .map((types) => types.replace(/^\.\/dist\//u, '').replace(/\.d\.ts$/u, '.ts')),
  'cli/main.ts',
];
await build({
  entryPoints: entries.map((file) => join(root, 'src', file)),
  outdir: dist,
  outbase: join(root, 'src'),
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  plugins: [externalExceptZod],
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // The package ships src/, which the maps point at.
  sourcesContent: false,
  logLevel: 'warning',
});

// The command line is ESM only (the bin entry); everything a package entry can reach is built.
const sources = filesUnder(join(root, 'src'), '.ts')
  .filter((file) => !file.endsWith('.d.ts') && !file.startsWith(`cli/`))
  .map((file) => join(root, 'src', file));
await build({
  entryPoints: sources,
  outdir: cjs,
  outbase: join(root, 'src'),
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // The package ships src/, which the maps point at.
  sourcesContent: false,
  logLevel: 'warning',
  // `import.meta.url` has no CommonJS meaning; the file's own URL is what the code asks for.
  define: { 'import.meta.url': '__litmImportMetaUrl' },
  // First line: the directive must come before any statement to make the file strict.
  banner: { js: '"use strict";\nconst __litmImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
});
writeFileSync(join(cjs, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);

// The same declarations, read as CommonJS ones under dist/cjs (its package.json says so). Their maps would
// point one level off, so they are left out.
for (const file of filesUnder(dist, '.d.ts').filter((f) => !f.startsWith('cjs/'))) {
  const target = join(cjs, file);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, readFileSync(join(dist, file), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'));
}
console.log(
  `build: dist/ (ESM, ${entries.length} entries and ${filesUnder(join(dist, 'chunks'), '.js').length} shared chunks) and dist/cjs/ (CommonJS, ${sources.length} files)`,
);
