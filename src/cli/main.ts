#!/usr/bin/env node
// The command line: the only module that reads argv, the environment, files named by the user, or
// writes to stdout/stderr.
import { Command, InvalidArgumentError, Option } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep, extname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../core/canonical.js';
import { isLitmPackError, LitmPackError } from '../core/errors.js';
import { packBriefing, packBundle, toCanonicalJson } from '../core/pack.js';
import type { Pack, PackFormat } from '../core/schemas.js';
import type { EncodingName } from '../tokenize/types.js';
import { MemoryHybridStore } from '../retrieve/memory-store.js';
import type { Filter, IngestDocument, SearchMode } from '../retrieve/types.js';
import { parseCandidates } from './read-candidates.js';

const STORE_FILE = 'store.json';
const DEFAULT_STORE = '.litm-store';
const DEMO_QUESTION = 'Why should the best passage go first and the second best last in a long context?';

function integer(name: string) {
  return (value: string) => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${name} must be a whole number`);
    return Number(value);
  };
}

function number(name: string) {
  return (value: string) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) throw new InvalidArgumentError(`${name} must be a number`);
    return parsed;
  };
}

const list = (value: string) => value.split(',').map((v) => v.trim()).filter((v) => v !== '');

function jsonFilter(value: string): Filter {
  try {
    return JSON.parse(value) as Filter;
  } catch {
    throw new InvalidArgumentError('filter must be JSON in Qdrant filter form, e.g. {"must":[{"key":"sourceId","match":{"value":"a.md"}}]}');
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) {
    throw new LitmPackError('invalid_input', 'No input: give a candidates FILE, or pipe JSON (array or lines) to stdin');
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function readUserFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new LitmPackError('not_found', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}

interface PackFlags {
  budget: number;
  kind?: 'bundle' | 'briefing';
  format: PackFormat;
  encoding: EncodingName;
  pins?: string[];
  maxPerSource?: number;
  minScore?: number;
}

function packWith(flags: PackFlags, query: string, candidates: Parameters<typeof packBundle>[0]['candidates']): Pack {
  const common = {
    query,
    candidates,
    maxTokens: flags.budget,
    format: flags.format,
    encoding: flags.encoding,
    maxPerSource: flags.maxPerSource,
    minScore: flags.minScore,
  };
  return flags.kind === 'briefing' ? packBriefing({ ...common, pins: flags.pins ?? [] }) : packBundle(common);
}

function printPack(pack: Pack, json: boolean): void {
  if (json) {
    process.stdout.write(`${toCanonicalJson(pack)}\n`);
    return;
  }
  process.stdout.write(`${pack.context}\n\n`);
  process.stdout.write(`Citations (${pack.budget.usedTokens}/${pack.budget.maxTokens} ${pack.budget.encoding} tokens, confidence ${pack.coverage.confidence}):\n`);
  for (const c of pack.citations) {
    const where = [c.version ? `version ${c.version}` : '', c.span ? `chars ${c.span.start}-${c.span.end}` : '', c.section?.length ? `§ ${c.section.join(' > ')}` : '']
      .filter(Boolean)
      .join(', ');
    process.stdout.write(`  [${c.ref}] ${c.sourceId}${where ? ` (${where})` : ''} sha256:${c.textSha256.slice(0, 12)}\n`);
  }
  if (pack.dropped.length > 0) {
    const counts = new Map<string, number>();
    for (const d of pack.dropped) counts.set(d.reason, (counts.get(d.reason) ?? 0) + 1);
    process.stdout.write(`Dropped: ${[...counts].map(([reason, n]) => `${n} ${reason}`).join(', ')}\n`);
  }
}

async function collectFiles(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  const visit = async (path: string) => {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw new LitmPackError('not_found', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
    }
    if (info.isDirectory()) {
      const entries = (await readdir(path)).sort();
      for (const entry of entries) if (!entry.startsWith('.')) await visit(join(path, entry));
    } else if (['.md', '.markdown', '.txt'].includes(extname(path).toLowerCase())) {
      out.push(path);
    }
  };
  for (const path of paths) await visit(path);
  return out;
}

function titleOf(text: string, path: string): string {
  const heading = /^#\s+(.+)$/m.exec(text);
  return heading?.[1]?.trim() ?? basename(path);
}

/**
 * `qdrant://host:port/collection` (or `qdrants://` for TLS) opens a Qdrant collection instead of a local
 * store; `QDRANT_API_KEY` supplies the key. The Qdrant module is loaded only then.
 */
async function openQdrant(spec: string) {
  const match = /^qdrant(s?):\/\/([^/]+)\/([^/?#]+)\/?$/.exec(spec);
  if (!match) {
    if (spec.startsWith('qdrant')) {
      throw new LitmPackError('invalid_input', `Bad Qdrant store "${spec}": use qdrant://host:6333/collection`);
    }
    return null;
  }
  const { QdrantHybridStore } = await import('../qdrant/index.js');
  const url = `${match[1] === 's' ? 'https' : 'http'}://${match[2]}`;
  const apiKey = process.env.QDRANT_API_KEY;
  // The CLI writes BM25 vectors only (it has no embedding model); a collection it creates still gets a
  // dense slot, sized for the common 384-d sentence embedders, so it can be filled from code later.
  return new QdrantHybridStore({ url, collection: decodeURIComponent(match[3] as string), vectorSize: 384, ...(apiKey ? { apiKey } : {}) });
}

async function loadStore(dir: string, mustExist: boolean): Promise<MemoryHybridStore> {
  const file = join(dir, STORE_FILE);
  try {
    await stat(file);
  } catch {
    if (mustExist) {
      throw new LitmPackError('not_found', `No store at ${dir}: run "litm-pack ingest PATH... --store ${dir}" first`);
    }
    return new MemoryHybridStore();
  }
  return MemoryHybridStore.load(file);
}

async function ingest(paths: string[], storeDir: string, quiet: boolean): Promise<string> {
  const files = await collectFiles(paths);
  if (files.length === 0) throw new LitmPackError('invalid_input', `No .md or .txt files found in ${paths.join(', ')}`);
  // Read everything first: an unreadable file fails the ingest before the store is touched.
  const docs: IngestDocument[] = [];
  for (const file of files) {
    const text = await readUserFile(file);
    const id = relative(process.cwd(), resolve(file)).split(sep).join('/');
    docs.push({ id, text, title: titleOf(text, file), version: sha256Hex(text).slice(0, 12) });
  }
  const qdrant = await openQdrant(storeDir);
  const store = qdrant ?? (await loadStore(storeDir, false));
  if (qdrant) await qdrant.ensureCollection();
  const bar = !quiet && process.stderr.isTTY ? new SingleBar({ format: 'ingest [{bar}] {value}/{total} files', stream: process.stderr }, Presets.shades_classic) : null;
  bar?.start(docs.length, 0);
  const result = await store.addDocuments(docs, { onProgress: (done) => bar?.update(done) });
  bar?.stop();
  if (store instanceof MemoryHybridStore) {
    await mkdir(storeDir, { recursive: true });
    await store.save(join(storeDir, STORE_FILE));
  }
  const total = store instanceof MemoryHybridStore ? ` (${store.size} chunks in all)` : '';
  return `Ingested ${docs.length} files into ${storeDir}: ${result.added} chunks added, ${result.unchanged} unchanged, ${result.removed} removed${total}.`;
}

interface RetrieveFlags extends PackFlags {
  store: string;
  mode: SearchMode;
  limit: number;
  principals?: string[];
  filter?: Filter;
  json?: boolean;
}

async function retrieveAndPack(query: string, flags: RetrieveFlags): Promise<Pack> {
  if (query.trim() === '') throw new LitmPackError('invalid_input', 'The query must not be empty');
  const store = (await openQdrant(flags.store)) ?? (await loadStore(flags.store, true));
  const candidates = await store.search({ text: query, mode: flags.mode, limit: flags.limit, filter: flags.filter, principals: flags.principals });
  return packWith(flags, query, candidates);
}

function packOptions(command: Command, defaults: { budget: number }): Command {
  return command
    .option('--budget <tokens>', 'token budget for the context', integer('budget'), defaults.budget)
    .addOption(new Option('--format <format>', 'context format').choices(['markdown', 'xml', 'text']).default('markdown'))
    .addOption(new Option('--encoding <encoding>', 'tokenizer encoding').choices(['o200k_base', 'cl100k_base']).default('o200k_base'))
    .option('--max-per-source <n>', 'at most n items from one source', integer('max-per-source'))
    .option('--min-score <score>', 'drop candidates scoring below this', number('min-score'));
}

function retrieveOptions(command: Command): Command {
  return command
    .option('--store <dir>', 'store directory, or qdrant://host:6333/collection', DEFAULT_STORE)
    .addOption(new Option('--mode <mode>', 'search mode').choices(['hybrid', 'dense', 'lexical']).default('hybrid'))
    .option('--limit <n>', 'candidates to retrieve before packing', integer('limit'), 50)
    .option('--principals <list>', 'comma-separated principals; only chunks they may read are searched', list)
    .option('--filter <json>', 'Qdrant-style payload filter (JSON)', jsonFilter)
    .option('--json', 'print the canonical JSON pack');
}

export function buildProgram(): Command {
  const program = new Command('litm-pack')
    .description('Token-budgeted, Lost-in-the-Middle-ordered context packs with citations')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  packOptions(
    program
      .command('pack')
      .description('pack candidates (JSON array or JSON lines, from FILE or stdin) and print the canonical JSON')
      .argument('[file]', 'candidates file; stdin when absent')
      .requiredOption('--query <text>', 'the query the pack answers'),
    { budget: 4000 },
  )
    .addOption(new Option('--kind <kind>', 'pack kind').choices(['bundle', 'briefing']).default('bundle'))
    .option('--pins <list>', 'briefing: comma-separated source or chunk ids to put first', list)
    .addOption(new Option('--output <what>', 'what to print').choices(['json', 'context']).default('json'))
    .action(async (file: string | undefined, flags: PackFlags & { query: string; output: 'json' | 'context' }) => {
      const input = file === undefined || file === '-' ? await readStdin() : await readUserFile(file);
      const pack = packWith(flags, flags.query, parseCandidates(input));
      process.stdout.write(flags.output === 'context' ? `${pack.context}\n` : `${toCanonicalJson(pack)}\n`);
    });

  program
    .command('ingest')
    .description('chunk and index .md/.txt files and folders into the embedded store')
    .argument('<paths...>', 'files or folders')
    .option('--store <dir>', 'store directory, or qdrant://host:6333/collection', DEFAULT_STORE)
    .option('--quiet', 'no progress bar')
    .action(async (paths: string[], flags: { store: string; quiet?: boolean }) => {
      process.stdout.write(`${await ingest(paths, flags.store, flags.quiet === true)}\n`);
    });

  retrieveOptions(packOptions(program.command('bundle').description('retrieve and print a LITM bundle with citations').argument('<query>'), { budget: 2000 })).action(
    async (query: string, flags: RetrieveFlags) => {
      printPack(await retrieveAndPack(query, { ...flags, kind: 'bundle' }), flags.json === true);
    },
  );

  retrieveOptions(packOptions(program.command('briefing').description('retrieve and print a briefing (grounding, evidence, caveats)'), { budget: 2000 }))
    .requiredOption('--prompt <text>', 'what the briefing is for')
    .option('--pins <list>', 'comma-separated source or chunk ids to put first', list)
    .action(async (flags: RetrieveFlags & { prompt: string }) => {
      printPack(await retrieveAndPack(flags.prompt, { ...flags, kind: 'briefing' }), flags.json === true);
    });

  packOptions(program.command('demo').description('ingest the bundled example corpus into a temporary store and print a bundle'), { budget: 700 })
    .option('--question <text>', 'the question to pack for', DEMO_QUESTION)
    .action(async (flags: PackFlags & { question: string }) => {
      const corpus = fileURLToPath(new URL('../../examples/corpus/', import.meta.url));
      const dir = await mkdtemp(join(tmpdir(), 'litm-demo-'));
      try {
        const cwd = process.cwd();
        process.chdir(corpus);
        try {
          process.stdout.write(`${await ingest(['.'], dir, true)}\n\nQuestion: ${flags.question}\n\n`);
        } finally {
          process.chdir(cwd);
        }
        printPack(await retrieveAndPack(flags.question, { ...flags, kind: 'bundle', store: dir, mode: 'hybrid', limit: 20 }), false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram().exitOverride();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof Error && 'exitCode' in error && typeof (error as { exitCode: unknown }).exitCode === 'number') {
      // commander already printed its message (usage errors, --help)
      return (error as { exitCode: number }).exitCode;
    }
    if (isLitmPackError(error)) {
      process.stderr.write(`litm-pack: ${error.message}\n`);
      return error.code === 'invalid_input' || error.code === 'not_found' ? 2 : 1;
    }
    process.stderr.write(`litm-pack: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    // npm links bin entries; compare real paths
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}
const invokedDirectly = isEntryPoint();
if (invokedDirectly) {
  main(process.argv).then((code) => {
    process.exitCode = code;
  });
}
