// Builds the package: ESM with declarations into dist/ (tsc), then a CommonJS copy into dist/cjs/ (esbuild,
// file by file, no bundling) with the same declarations, so `require('litm-pack/…')` works on every Node 20 and
// CommonJS code gets the CommonJS builds of the frameworks, the same copies its own `require` loads.
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
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

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
console.log(`build: dist/ (ESM, ${filesUnder(dist, '.js').filter((f) => !f.startsWith('cjs/')).length} files) and dist/cjs/ (CommonJS, ${sources.length} files)`);
