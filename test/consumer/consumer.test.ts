import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';
import { beforeAll, describe, expect, inject, it } from 'vitest';

const exec = promisify(execFile);
const project = inject('consumerDir');
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
const installed = join(project, 'node_modules/litm-pack');

/** Runs `node args` in the consumer project; rejects with its stderr when it fails. */
async function node(args: string[]): Promise<string> {
  try {
    return (await exec(process.execPath, args, { cwd: project, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`node ${args.join(' ')} failed:\n${failed.stderr ?? ''}${failed.stdout ?? ''}${failed.message}`, { cause: error });
  }
}

/** Typechecks (and with `outDir`, compiles) in the consumer project; resolves with tsc's diagnostics ('' when clean). */
async function typecheck(name: string, compilerOptions: Record<string, unknown>, files: string[]): Promise<string> {
  const config = join(project, `tsconfig.${name}.json`);
  const base = { strict: true, skipLibCheck: true, types: ['node'], lib: ['ES2023'], target: 'ES2022', noEmit: true };
  await writeFile(config, JSON.stringify({ compilerOptions: { ...base, ...compilerOptions }, files }, null, 2));
  try {
    await exec(process.execPath, [tsc, '-p', config], { cwd: project, maxBuffer: 16 * 1024 * 1024 });
    return '';
  } catch (error) {
    return (error as { stdout?: string }).stdout ?? String(error);
  }
}

/** The installed package's manifest, as far as these tests read it. */
interface Manifest {
  name: string;
  version: string;
  engines?: { node?: string };
  exports?: Record<string, unknown>;
}
const manifestAt = async (dir: string) => JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest;

const entries = async () => Object.keys((await manifestAt(installed)).exports ?? {});

beforeAll(async () => {
  for (const file of ['require-all.cjs', 'import-all.mjs', 'use.cjs', 'use.mjs', 'throw.cjs', 'throw.mjs', 'entries.mjs', 'types.ts']) {
    await copyFile(join(here, 'fixtures', file), join(project, file));
  }
  await copyFile(join(here, 'fixtures/types.ts'), join(project, 'types-cjs.cts'));
});

describe('the format loaders from the installed tarball', () => {
  it('ingests a PDF (pdf.js) and a code file (tree-sitter WASM grammars) from ESM, CommonJS and the CLI', async () => {
    const { makePdf } = await import('../helpers/real-files.js');
    await mkdir(join(project, 'formats'), { recursive: true });
    await writeFile(
      join(project, 'formats/manual.pdf'),
      await makePdf([['Introduction to the service.'], ['Refunds are paid within fourteen days.']], 'Manual'),
    );
    const python = [
      'import time',
      '',
      '',
      'class Breaker:',
      '    """Opens after repeated failures."""',
      '',
      '    def record(self, ok):',
      '        """Record the outcome of a call."""',
      '        self.failures = 0 if ok else self.failures + 1',
      '',
    ];
    await writeFile(join(project, 'formats/breaker.py'), python.join('\n'));
    for (const file of ['ingest-formats.mjs', 'ingest-formats.cjs']) await copyFile(join(here, 'fixtures', file), join(project, file));
    const esm = JSON.parse(await node(['ingest-formats.mjs'])) as Record<string, unknown>;
    expect(esm).toMatchObject({
      ids: ['formats/breaker.py', 'formats/manual.pdf'],
      warnings: [],
      skipped: [],
      pdf: { sourceId: 'formats/manual.pdf', locator: { page: 2 } },
      code: { sourceId: 'formats/breaker.py', section: ['Breaker'], locator: { lines: [1, 9] } },
    });
    expect(esm.header).toMatch(/^\[1\] breaker\.py \(lines 1–9\)$/u);
    expect(JSON.parse(await node(['ingest-formats.cjs']))).toEqual({
      ids: ['formats/breaker.py', 'formats/manual.pdf'],
      pdf: { page: 2 },
      code: [['Breaker'], { lines: [1, 9] }],
    });
    const cli = await node([join(installed, 'dist/cli/main.js'), 'ingest', 'formats', '--store', 'formats-store', '--quiet']);
    expect(cli).toMatch(/^Ingested 2 files into formats-store: \d+ chunks? added/u);
  });
});

describe('the installed tarball at run time', () => {
  it('loads every entry with require() from CommonJS, with the same exports as import()', async () => {
    const required = JSON.parse(await node(['require-all.cjs'])) as Record<string, string[]>;
    const imported = JSON.parse(await node(['import-all.mjs'])) as Record<string, string[]>;
    const specifiers = (await entries())
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? 'litm-pack' : `litm-pack/${key.slice(2)}`));
    expect(Object.keys(required).sort()).toEqual(specifiers.sort());
    for (const specifier of specifiers) {
      expect(required[specifier]!.length, specifier).toBeGreaterThan(0);
      expect(required[specifier], specifier).toEqual(imported[specifier]);
    }
    expect(required['litm-pack']).toContain('packBundle');
    expect(required['litm-pack']).toEqual(
      expect.arrayContaining(['HttpReranker', 'splitSentences', 'maximalMarginalRelevance', 'assembleBriefing']),
    );
    expect(required['litm-pack/langchain']).toContain('LitmDocumentPrompt');
    expect(required['litm-pack/langchain']).toContain('CompressorReranker');
    expect(required['litm-pack/llamaindex']).toContain('PostprocessorReranker');
  });

  it('works from CommonJS: packing, an LCEL chain, the stuff-documents chain and a LlamaIndex query engine', async () => {
    const out = JSON.parse(await node(['use.cjs'])) as Record<string, unknown>;
    expect(out.context).toBe('[1] a\nRefunds take 14 days.');
    expect(out.selected).toEqual({ text: 'Refunds take 14 days.', spans: [{ start: 24, end: 45 }] });
    expect(out.typed).toBe(true);
    const expected = out.expected as string;
    expect(expected).toMatch(/^\[1\] refunds\.md/);
    expect(out.lcel).toContain(expected);
    expect(out.stuff).toContain(expected);
    expect(out.llamaPrompt).toContain(expected);
    expect(out.answer).toBe('Within 14 days [1].');
    expect(out.sameLangChain).toBe(true);
    expect(out.sameLlamaIndex).toBe(true);
  });

  it('works from ESM, with the ESM copies of the frameworks', async () => {
    const out = JSON.parse(await node(['use.mjs'])) as Record<string, unknown>;
    expect(out.context).toBe('[1] a\nRefunds take 14 days.');
    expect(out.piped).toMatch(/^\[1\] refunds\.md/);
    expect(out.sameLangChain).toBe(true);
    expect(out.sameLlamaIndex).toBe(true);
  });

  it("bundles its ESM entries over shared chunks: one error class for all entries, schemas the MCP SDK and the application's zod read, the shipped rank tables", async () => {
    const out = JSON.parse(await node(['entries.mjs'])) as Record<string, unknown>;
    expect(out.qdrantErrorCode).toBe('invalid_input');
    expect(out.qdrantErrorIsRootClass).toBe(true);
    expect(out.mcpErrorIsRootClass).toBe(true);
    expect(out.mcpErrorMessage).toMatch(/budgt/);
    expect(out.vocabulary).toBe('rank table');
    expect(out.ragInputProperties).toEqual(expect.arrayContaining(['query', 'max_tokens', 'limit', 'filter']));
    expect(out.ragHasOutputSchema).toBe('object');
    expect(out.ragContext).toMatch(/Refunds are issued within 14 days/);
    expect(out.badIsError).toBe(true);
    expect(out.badText).toMatch(/max_tokens/);
    expect(out.appZodParses).toBe(true);
    expect(out.appZodRejectsPath).toEqual(['pack', 'items']);
    expect(out.appZodIsZodSchema).toBe(true);
    expect(out.appJsonSchemaPackKeys).toEqual(expect.arrayContaining(['context', 'items', 'citations', 'packHash']));
  });

  it('gives stack traces (with source maps on) that point at files the package ships', async () => {
    for (const script of ['throw.cjs', 'throw.mjs']) {
      const stack = await node(['--enable-source-maps', script]);
      const files = [...stack.matchAll(/\(?((?:file:\/\/)?\/[^\s():]+):\d+:\d+\)?/g)].map((m) => m[1]!.replace(/^file:\/\//, ''));
      const ours = files.filter((file) => file.includes('/node_modules/litm-pack/'));
      expect(ours.length, stack).toBeGreaterThan(0);
      expect(
        ours.some((file) => file.includes('/node_modules/litm-pack/src/')),
        stack,
      ).toBe(true);
      for (const file of ours) expect(existsSync(file), file).toBe(true);
    }
    expect(existsSync(join(installed, 'test'))).toBe(false);
  });
});

describe('installing the tarball on the oldest supported Node', () => {
  /** Every package.json under node_modules (scoped and nested included). */
  async function manifests(dir: string): Promise<Manifest[]> {
    const found: Manifest[] = [];
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        found.push(...(await manifests(path)));
        continue;
      }
      if (existsSync(join(path, 'package.json'))) found.push(await manifestAt(path));
      if (existsSync(join(path, 'node_modules'))) found.push(...(await manifests(join(path, 'node_modules'))));
    }
    return found;
  }

  it('prints no engine warning, and every installed package accepts this Node', async () => {
    expect(inject('consumerInstallLog')).not.toMatch(/EBADENGINE|Unsupported engine/u);
    const refused = (await manifests(join(project, 'node_modules')))
      .filter((m) => typeof m.engines?.node === 'string' && !semver.satisfies(process.version, m.engines.node, { includePrerelease: true }))
      .map((m) => `${m.name}@${m.version} wants node ${m.engines?.node}`);
    expect(refused).toEqual([]);
  });
});

describe('the installed command line', () => {
  it('runs from the bin link: --version, and the demo on the corpus the package ships', async () => {
    const bin = join(project, 'node_modules/.bin/litm-pack');
    const version = await exec(bin, ['--version'], { cwd: project });
    expect(version.stdout.trim()).toBe((await manifestAt(installed)).version);
    const demo = await exec(bin, ['demo', '--budget', '300'], { cwd: project });
    expect(demo.stdout).toMatch(/^Ingested 7 files into a store in memory/);
    expect(demo.stdout).toMatch(/\n\[1\] \S.*\n/);
  });
});

describe('the installed tarball in TypeScript', () => {
  const files = ['types.ts'];
  it('typechecks with moduleResolution "node" (node10: typesVersions)', async () => {
    expect(await typecheck('node10', { module: 'commonjs', moduleResolution: 'node', ignoreDeprecations: '5.0' }, files)).toBe('');
  });
  it('typechecks with node16, as ESM and as CommonJS (.cts)', async () => {
    expect(await typecheck('node16', { module: 'node16', moduleResolution: 'node16' }, [...files, 'types-cjs.cts'])).toBe('');
  });
  it('typechecks with nodenext, as ESM and as CommonJS (.cts)', async () => {
    expect(await typecheck('nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }, [...files, 'types-cjs.cts'])).toBe('');
  });
  it('typechecks with bundler', async () => {
    expect(await typecheck('bundler', { module: 'esnext', moduleResolution: 'bundler' }, files)).toBe('');
  });
});

describe("the README's framework examples, against the installed tarball", () => {
  it('compile and run: the LCEL RAG chain, the briefing retriever, the compressor, the LlamaIndex query engine and postprocessor', async () => {
    const readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/<!-- consumer-test: ([\w.-]+) -->\n```ts\n([\s\S]*?)\n```/g)];
    expect(blocks.map((b) => b[1])).toEqual([
      'lcel-rag.ts',
      'briefing-retriever.ts',
      'compressor.ts',
      'llamaindex-engine.ts',
      'llamaindex-postprocessor.ts',
    ]);
    await mkdir(join(project, 'readme'), { recursive: true });
    for (const [, name, code] of blocks) await writeFile(join(project, 'readme', name!), `${code}\n`);
    const names = blocks.map((b) => `readme/${b[1]}`);
    expect(
      await typecheck(
        'readme',
        { module: 'nodenext', moduleResolution: 'nodenext', noEmit: false, outDir: 'readme-out', rootDir: 'readme' },
        names,
      ),
    ).toBe('');
    for (const block of blocks) {
      const out = await node([join('readme-out', block[1]!.replace(/\.ts$/, '.js'))]);
      expect(out, block[1]).toMatch(/\[1\] /);
    }
  });
});
