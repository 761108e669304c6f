/**
 * Cold start and ingest of the embedded store beside what a JavaScript user would pick instead for in-process
 * hybrid search, LanceDB 0.31.0 and Orama 3.1.18, on the same data in the same run:
 *
 * - open to first answer: a saved store of `--chunks` synthetic chunks (real words, 384-d vectors), each system in
 *   a fresh process, timed from the process's start to its first hybrid answer; beside it the time to read the
 *   store file's bytes (the floor), the file's size against its texts and f32 vectors, and then the latency and the
 *   answers of 200 hybrid queries (the same answers before and after: exactness);
 * - ingest: SciFact's 5,183 abstracts with their cached all-MiniLM-L6-v2 vectors (default chunking for
 *   litm-pack, which also counts tokens under two encodings and BM25-encodes), each system in a fresh process, and
 *   the synthetic chunks.
 *
 * With `--before DIR` (a checkout of an earlier litm-pack, its dependencies installed) the same runs are made with
 * that version's `MemoryHybridStore` too, so a change is measured against its baseline in one run.
 *
 *   npx tsx bench/store-open.ts [--chunks 100000] [--before ../main] [--write]
 *
 * LanceDB needs `LANCE_FTS_WRITE_QUEUE_SIZE=64` on 2 cores (set here) and apache-arrow loaded with `require`, not
 * as an ES module, or it writes an empty table.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CachedEmbeddings } from './lib/cached-embeddings.js';
import { loadSciFact } from './lib/datasets.js';
import { percentile } from './lib/metrics.js';
import { mulberry32 } from './lib/random.js';
import { loadNote, writeSection } from './lib/report.js';
import { RandomEmbeddings, syntheticBatches, syntheticQueries, vocabulary } from './lib/synthetic.js';
import { fixed, markdownTable } from './lib/table.js';
import { progress } from './lib/timing.js';

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '100000' },
    before: { type: 'string' },
    write: { type: 'boolean', default: false },
    child: { type: 'string' },
    path: { type: 'string' },
    src: { type: 'string' },
    queries: { type: 'string' },
  },
});

process.env.LANCE_FTS_WRITE_QUEUE_SIZE ??= '64';
const require = createRequire(import.meta.url);
const DIM = 384;
const QUERY_COUNT = 200;
const SELF = new URL(import.meta.url).pathname;
const SRC = resolve(import.meta.dirname, '..', 'src');

interface ChildReport {
  /** ms from the process's start. */
  ready: number;
  importMs: number;
  openMs: number;
  firstMs: number;
  p50?: number;
  answers?: string;
  extra?: Record<string, number>;
}

// -------------------------------------------------------------------------------------------------
// The children: each opens one store in a fresh process and reports on stdout

type Hit = { id: string; score: number };

/** The queries every child runs, with their vectors (made by the parent: a child times only its store). */
interface Queries {
  texts: string[];
  vectors: number[][];
}

async function readQueries(
  path: string,
): Promise<
  Queries & { embeddings: { embedQuery(text: string): Promise<number[]>; embedDocuments(texts: string[]): Promise<number[][]> } }
> {
  const queries = JSON.parse(await readFile(path, 'utf8')) as Queries;
  const byText = new Map(queries.texts.map((text, i) => [text, queries.vectors[i]!]));
  const vector = (text: string) => {
    const found = byText.get(text);
    if (found === undefined) throw new Error(`no vector for the query ${text}`);
    return found;
  };
  return {
    ...queries,
    embeddings: { embedQuery: (text) => Promise.resolve(vector(text)), embedDocuments: (texts) => Promise.resolve(texts.map(vector)) },
  };
}

async function childLitm(path: string, src: string, queryFile: string): Promise<ChildReport> {
  const { texts: queries, embeddings } = await readQueries(queryFile);
  const t0 = performance.now();
  const { MemoryHybridStore } = (await import(
    pathToFileURL(join(src, 'memory', 'memory-hybrid-store.ts')).href
  )) as typeof import('../src/memory/memory-hybrid-store.js');
  const t1 = performance.now();
  const store = await MemoryHybridStore.load(path, { embeddings });
  const t2 = performance.now();
  await store.search({ text: queries[0]!, mode: 'hybrid', limit: 10 });
  const t3 = performance.now();
  const latencies: number[] = [];
  const answers: Hit[][] = [];
  for (const text of queries) {
    const start = performance.now();
    const hits = await store.search({ text, mode: 'hybrid', limit: 10 });
    latencies.push(performance.now() - start);
    answers.push(hits.map((h) => ({ id: h.id, score: h.score })));
  }
  return {
    ready: t3,
    importMs: t1 - t0,
    openMs: t2 - t1,
    firstMs: t3 - t2,
    p50: percentile(latencies, 50),
    answers: JSON.stringify(answers),
  };
}

async function childLance(path: string, queryFile: string): Promise<ChildReport> {
  const { texts: queries, vectors } = await readQueries(queryFile);
  const t0 = performance.now();
  const lancedb = (await import('@lancedb/lancedb')) as typeof import('@lancedb/lancedb');
  const t1 = performance.now();
  const db = await lancedb.connect(path);
  const table = await db.openTable('chunks');
  const t2 = performance.now();
  const vectorOf = new Map(queries.map((text, i) => [text, vectors[i]!]));
  const reranker = await lancedb.rerankers.RRFReranker.create();
  const hybrid = (text: string) => table.query().fullTextSearch(text).nearestTo(vectorOf.get(text)!).rerank(reranker).limit(10).toArray();
  await hybrid(queries[0]!);
  const t3 = performance.now();
  const latencies: number[] = [];
  for (const text of queries) {
    const start = performance.now();
    await hybrid(text);
    latencies.push(performance.now() - start);
  }
  return { ready: t3, importMs: t1 - t0, openMs: t2 - t1, firstMs: t3 - t2, p50: percentile(latencies, 50) };
}

async function childOrama(path: string, queryFile: string): Promise<ChildReport> {
  const { texts: queries, vectors } = await readQueries(queryFile);
  const t0 = performance.now();
  const orama = await import('@orama/orama');
  const { restore } = await import('@orama/plugin-data-persistence');
  const t1 = performance.now();
  const db = await restore('binary', await readFile(path));
  const t2 = performance.now();
  const vectorOf = new Map(queries.map((text, i) => [text, vectors[i]!]));
  const hybrid = (text: string) =>
    orama.search(db, {
      mode: 'hybrid',
      term: text,
      vector: { value: vectorOf.get(text)!, property: 'embedding' },
      similarity: 0,
      limit: 10,
    } as never);
  await hybrid(queries[0]!);
  const t3 = performance.now();
  const latencies: number[] = [];
  for (const text of queries) {
    const start = performance.now();
    await hybrid(text);
    latencies.push(performance.now() - start);
  }
  return { ready: t3, importMs: t1 - t0, openMs: t2 - t1, firstMs: t3 - t2, p50: percentile(latencies, 50) };
}

async function childRead(path: string): Promise<ChildReport> {
  const t0 = performance.now();
  const bytes = await readFile(path);
  const t1 = performance.now();
  return { ready: t1, importMs: 0, openMs: t1 - t0, firstMs: 0, extra: { bytes: bytes.length } };
}

/** Ingest of SciFact (with its cached vectors) by one system, in this fresh process. */
async function childIngest(system: string, src: string): Promise<ChildReport> {
  const data = loadSciFact();
  const embeddings = new CachedEmbeddings({ datasets: ['scifact-corpus'] });
  const docs = data.corpus.map((d) => ({ id: d.id, text: d.text, title: d.title }));
  const rows = docs.map((d) => ({ id: d.id, text: d.text, vector: Array.from(embeddings.vector(d.text)) }));
  const dir = await mkdtemp(join(tmpdir(), 'litm-ingest-'));
  let ms: number;
  const start = performance.now();
  if (system === 'litm' || system === 'litm-lexical') {
    const { MemoryHybridStore } = (await import(
      pathToFileURL(join(src, 'memory', 'memory-hybrid-store.ts')).href
    )) as typeof import('../src/memory/memory-hybrid-store.js');
    const { getTokenizer } = (await import(
      pathToFileURL(join(src, 'tokenize', 'tiktoken.ts')).href
    )) as typeof import('../src/tokenize/tiktoken.js');
    // Loading the vocabularies is a once-per-process cost, left out as bench/retrieval.ts leaves it out.
    getTokenizer('o200k_base').count('warm');
    getTokenizer('cl100k_base').count('warm');
    const begin = performance.now();
    // With vectors, abstracts whole (the cache holds their vectors, not those of parts); lexical, default chunking.
    const store = new MemoryHybridStore(system === 'litm' ? { embeddings, chunkTokens: 8192 } : {});
    await store.addDocuments(docs);
    ms = performance.now() - begin;
  } else if (system === 'lance') {
    const lancedb = (await import('@lancedb/lancedb')) as typeof import('@lancedb/lancedb');
    const begin = performance.now();
    const db = await lancedb.connect(dir);
    const table = await db.createTable('chunks', rows);
    await table.createIndex('text', { config: lancedb.Index.fts() });
    ms = performance.now() - begin;
    if ((await table.countRows()) !== rows.length) throw new Error(`LanceDB holds ${await table.countRows()} rows, not ${rows.length}`);
  } else {
    const orama = await import('@orama/orama');
    const begin = performance.now();
    const db = orama.create({ schema: { id: 'string', text: 'string', embedding: `vector[${DIM}]` } as const });
    await orama.insertMultiple(
      db,
      rows.map((r) => ({ id: r.id, text: r.text, embedding: r.vector })),
      500,
    );
    ms = performance.now() - begin;
  }
  await rm(dir, { recursive: true, force: true });
  return { ready: performance.now() - start, importMs: 0, openMs: ms, firstMs: 0, extra: { docs: docs.length } };
}

// -------------------------------------------------------------------------------------------------
// The parent: builds the stores, runs the children, prints the tables

let queryFile = '';

function runChild(mode: string, path: string, src = SRC): ChildReport {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', SELF, '--child', mode, '--path', path, '--src', src, '--queries', queryFile],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 2 ** 20,
      env: { ...process.env, LANCE_FTS_WRITE_QUEUE_SIZE: process.env.LANCE_FTS_WRITE_QUEUE_SIZE },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return JSON.parse(out.trim().split('\n').at(-1)!) as ChildReport;
}

/** Median of `runs` runs of a child (cold starts vary with the machine's load). */
function medianChild(mode: string, path: string, src = SRC, runs = 3): ChildReport {
  const reports = Array.from({ length: runs }, () => runChild(mode, path, src));
  return reports.sort((a, b) => a.ready - b.ready)[Math.floor(runs / 2)]!;
}

async function build(chunks: number, dir: string, before: string | undefined) {
  const vocab = vocabulary();
  const embed = new RandomEmbeddings(DIM);
  const batches = () => syntheticBatches(vocab, chunks, [100, 180], mulberry32(20231107), 5000);
  const timings: Record<string, number> = {};
  let textBytes = 0;

  const stores: { name: string; src: string; path: string }[] = [
    { name: 'litm-pack (this version)', src: SRC, path: join(dir, 'litm', 'store.json') },
  ];
  if (before !== undefined) stores.push({ name: 'litm-pack (before)', src: join(before, 'src'), path: join(dir, 'before', 'store.json') });
  for (const { name, src, path } of stores) {
    const { MemoryHybridStore } = (await import(
      pathToFileURL(join(src, 'memory', 'memory-hybrid-store.ts')).href
    )) as typeof import('../src/memory/memory-hybrid-store.js');
    const store = new MemoryHybridStore({ embeddings: embed, chunkTokens: 8192 });
    const start = performance.now();
    for (const docs of batches()) await store.addDocuments(docs);
    timings[`${name} ingest`] = performance.now() - start;
    const saving = performance.now();
    await store.save(path);
    timings[`${name} save`] = performance.now() - saving;
    progress(
      `${name}: ${store.size} chunks ingested in ${fixed(timings[`${name} ingest`]! / 1000, 1)} s, saved in ${fixed(timings[`${name} save`]! / 1000, 1)} s`,
    );
  }
  for (const docs of batches()) for (const doc of docs) textBytes += Buffer.byteLength(doc.text, 'utf8');

  // LanceDB: the ES module of apache-arrow makes it write an empty table; the CommonJS one is what it reads.
  const arrow = require('apache-arrow') as typeof import('apache-arrow');
  const lancedb = (await import('@lancedb/lancedb')) as typeof import('@lancedb/lancedb');
  let start = performance.now();
  const db = await lancedb.connect(join(dir, 'lance'));
  const schema = new arrow.Schema([
    new arrow.Field('id', new arrow.Utf8()),
    new arrow.Field('text', new arrow.Utf8()),
    new arrow.Field('vector', new arrow.FixedSizeList(DIM, new arrow.Field('item', new arrow.Float32(), true))),
  ]);
  const table = await db.createEmptyTable('chunks', schema);
  for (const docs of batches()) await table.add(docs.map((d) => ({ id: d.id, text: d.text, vector: embed.vector(d.text) })));
  await table.createIndex('text', { config: lancedb.Index.fts() });
  timings['LanceDB ingest'] = performance.now() - start;
  if ((await table.countRows()) !== chunks) throw new Error(`LanceDB holds ${await table.countRows()} rows, not ${chunks}`);
  progress(`LanceDB: ${chunks} rows and a full-text index in ${fixed(timings['LanceDB ingest'] / 1000, 1)} s`);

  const orama = await import('@orama/orama');
  const { persist } = await import('@orama/plugin-data-persistence');
  start = performance.now();
  const odb = orama.create({ schema: { id: 'string', text: 'string', embedding: `vector[${DIM}]` } as const });
  for (const docs of batches())
    await orama.insertMultiple(
      odb,
      docs.map((d) => ({ id: d.id, text: d.text, embedding: embed.vector(d.text) })),
      1000,
    );
  timings['Orama ingest'] = performance.now() - start;
  start = performance.now();
  let oramaNote: string | null = null;
  try {
    await writeFile(join(dir, 'orama.bin'), (await persist(odb, 'binary')) as Buffer);
    timings['Orama save'] = performance.now() - start;
  } catch (error) {
    // Its persistence encodes the whole index as one string: past Node's string limit it cannot save at all.
    oramaNote = `Orama could not persist the index: ${error instanceof Error ? error.message : String(error)}`;
  }
  progress(
    `Orama: ${chunks} documents in ${fixed(timings['Orama ingest'] / 1000, 1)} s; ${oramaNote ?? `persisted in ${fixed((timings['Orama save'] ?? 0) / 1000, 1)} s`}`,
  );
  return { stores, timings, textBytes, oramaNote };
}

const du = (path: string) => Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);

async function main(): Promise<void> {
  if (args.child !== undefined) {
    const path = args.path ?? '';
    const src = args.src ?? SRC;
    const queries = args.queries ?? '';
    const report =
      args.child === 'litm'
        ? await childLitm(path, src, queries)
        : args.child === 'lance'
          ? await childLance(path, queries)
          : args.child === 'orama'
            ? await childOrama(path, queries)
            : args.child === 'read'
              ? await childRead(path)
              : await childIngest(args.child.replace(/^ingest-/u, ''), src);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const chunks = Number(args.chunks);
  const before = args.before === undefined ? undefined : resolve(args.before);
  const loadAtStart = loadNote();
  const dir = await mkdtemp(join(tmpdir(), 'litm-open-'));
  try {
    const embed = new RandomEmbeddings(DIM);
    const texts = syntheticQueries(vocabulary(), mulberry32(7), QUERY_COUNT);
    queryFile = join(dir, 'queries.json');
    await writeFile(queryFile, JSON.stringify({ texts, vectors: texts.map((text) => embed.vector(text)) }));
    const { stores, timings, textBytes, oramaNote } = await build(chunks, dir, before);
    const vectorBytes = chunks * DIM * 4;

    // Open to first answer, each in fresh processes (median of 3), with the floor: reading the file's bytes.
    const rows: (string | number)[][] = [];
    const answers = new Map<string, string>();
    const reads = new Map<string, ChildReport>();
    for (const { name, src, path } of stores) {
      const read = medianChild('read', path);
      reads.set(name, read);
      const open = medianChild('litm', path, src);
      answers.set(name, open.answers ?? '');
      const size = (await stat(path)).size;
      rows.push([
        name,
        `${fixed(size / 2 ** 20, 0)} MiB (${fixed(size / (textBytes + vectorBytes), 2)}×)`,
        fixed(read.openMs, 0),
        fixed(open.importMs, 0),
        fixed(open.openMs, 0),
        fixed(open.firstMs, 0),
        fixed(open.ready, 0),
        `${fixed((open.openMs + open.firstMs) / read.openMs, 1)}×`,
        fixed(open.p50 ?? Number.NaN, 1),
      ]);
      progress(
        `${name}: open ${fixed(open.openMs, 0)} ms + first answer ${fixed(open.firstMs, 0)} ms; reading the file ${fixed(read.openMs, 0)} ms`,
      );
    }
    const lance = medianChild('lance', join(dir, 'lance'));
    rows.push([
      'LanceDB 0.31.0 (flat vector search, FTS index, RRF)',
      `${fixed(du(join(dir, 'lance')) / 2 ** 20, 0)} MiB`,
      '',
      fixed(lance.importMs, 0),
      fixed(lance.openMs, 0),
      fixed(lance.firstMs, 0),
      fixed(lance.ready, 0),
      '',
      fixed(lance.p50 ?? Number.NaN, 1),
    ]);
    progress(`LanceDB: open ${fixed(lance.openMs, 0)} ms + first answer ${fixed(lance.firstMs, 0)} ms`);
    const oramaFile = join(dir, 'orama.bin');
    if (oramaNote === null) {
      const orama = medianChild('orama', oramaFile);
      rows.push([
        'Orama 3.1.18 (binary persistence)',
        `${fixed((await stat(oramaFile)).size / 2 ** 20, 0)} MiB`,
        '',
        fixed(orama.importMs, 0),
        fixed(orama.openMs, 0),
        fixed(orama.firstMs, 0),
        fixed(orama.ready, 0),
        '',
        fixed(orama.p50 ?? Number.NaN, 1),
      ]);
      progress(`Orama: open ${fixed(orama.openMs, 0)} ms + first answer ${fixed(orama.firstMs, 0)} ms`);
    } else {
      rows.push(['Orama 3.1.18 (binary persistence)', 'not saved', '', '', '', '', '', '', '']);
    }

    const ours = stores[0]!;
    const ourOpen = medianChild('litm', ours.path);
    const exact =
      stores.length < 2 ? 'no baseline run' : answers.get(stores[1]!.name) === answers.get(ours.name) ? 'identical' : 'DIFFERENT';

    // Ingest: SciFact with cached vectors, each system in a fresh process.
    const ingestRows: (string | number)[][] = [];
    const systems: [string, string, string][] = [
      ['litm-pack (this version), with vectors', 'ingest-litm', SRC],
      ['litm-pack (this version), lexical only', 'ingest-litm-lexical', SRC],
      ...(before === undefined
        ? []
        : ([
            ['litm-pack (before), with vectors', 'ingest-litm', join(before, 'src')],
            ['litm-pack (before), lexical only', 'ingest-litm-lexical', join(before, 'src')],
          ] as [string, string, string][])),
      ['LanceDB 0.31.0 (table + FTS index)', 'ingest-lance', SRC],
      ['Orama 3.1.18 (insertMultiple)', 'ingest-orama', SRC],
    ];
    for (const [name, mode, src] of systems) {
      const runs = Array.from({ length: 3 }, () => runChild(mode, '', src).openMs).sort((a, b) => a - b);
      const docs = 5183;
      ingestRows.push([name, fixed(runs[1]! / 1000, 2), Math.round(docs / (runs[1]! / 1000)), Math.round(docs / (runs[0]! / 1000))]);
      progress(`ingest ${name}: ${Math.round(docs / (runs[1]! / 1000))} docs/s`);
    }
    const syntheticRows = Object.entries(timings)
      .filter(([key]) => key.endsWith('ingest'))
      .map(([key, ms]) => [key.replace(/ ingest$/u, ''), fixed(ms / 1000, 1), Math.round(chunks / (ms / 1000))]);

    const lanceOpen = lance.openMs + lance.firstMs;
    const oursOpen = ourOpen.openMs + ourOpen.firstMs;
    const ourRead = reads.get(ours.name)!;
    const ourSize = (await stat(ours.path)).size;
    const check = (ok: boolean) => (ok ? 'met' : 'missed');
    const md = [
      `### Cold start and ingest: the store file @3 beside LanceDB and Orama (${chunks.toLocaleString('en-US')} chunks, ${DIM}-d)`,
      '',
      `Synthetic chunks of 100–180 real words (bench/lib/synthetic.ts) with ${DIM}-d vectors; every system in a fresh process, ` +
        'median of 3 runs; the files were just written (in the page cache). "Ready" is the time from the process start to the ' +
        'first hybrid answer (limit 10); "× read" is open + first answer against reading the store file\'s bytes. ' +
        "This version reads large segments' texts and f32 vectors after the first answer. " +
        `${fixed(textBytes / 2 ** 20, 0)} MiB of texts and ${fixed(vectorBytes / 2 ** 20, 0)} MiB of f32 vectors. ` +
        `Command: \`npx tsx bench/store-open.ts --chunks ${chunks}${before === undefined ? '' : ' --before <checkout of the previous version>'}\`.`,
      '',
      markdownTable(
        ['Store', 'file', 'read bytes ms', 'import ms', 'open ms', 'first answer ms', 'ready ms', '× read', 'hybrid p50 ms'],
        rows,
      ),
      '',
      `Answers of ${QUERY_COUNT} hybrid queries, this version against the one before: ${exact}.${oramaNote === null ? '' : ` ${oramaNote}.`}`,
      '',
      markdownTable(
        ['Target', 'Result'],
        [
          [
            `open + first answer within 8× reading the file (${fixed(ourRead.openMs, 0)} ms)`,
            `${fixed(oursOpen / ourRead.openMs, 1)}×: ${check(oursOpen <= 8 * ourRead.openMs)}`,
          ],
          [
            `open + first answer ≤ 2× LanceDB's (${fixed(lanceOpen, 0)} ms)`,
            `${fixed(oursOpen, 0)} ms = ${fixed(oursOpen / lanceOpen, 2)}×: ${check(oursOpen <= 2 * lanceOpen)}`,
          ],
          [
            'file ≤ 1.5× its texts and f32 vectors',
            `${fixed(ourSize / (textBytes + vectorBytes), 2)}×: ${check(ourSize <= 1.5 * (textBytes + vectorBytes))}`,
          ],
        ],
      ),
      '',
      `#### Ingest: SciFact (5,183 abstracts, cached all-MiniLM-L6-v2 vectors), each system in a fresh process, median of 3`,
      '',
      'litm-pack stores exact o200k_base and cl100k_base counts per chunk and BM25-encodes each chunk (with its title and ' +
        'headings in front: indexed-text recipe `title-headings@1`); lexical only, it chunks with its default 256 tokens ' +
        '(9,161 chunks, the goal of 3,000 docs/s is for this row); with vectors, abstracts whole (the cache holds their vectors), ' +
        'as LanceDB and Orama store each abstract as one row. The vocabularies are loaded before the clock starts.',
      '',
      markdownTable(['Ingest', 's (median)', 'docs/s (median)', 'docs/s (best)'], ingestRows),
      '',
      `#### Ingest: the ${chunks.toLocaleString('en-US')} synthetic chunks (in the parent process, one after another)`,
      '',
      markdownTable(['Store', 's', 'chunks/s'], syntheticRows),
      '',
      `Machine: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores; ${loadAtStart} at the start, ${loadNote()} at the end.`,
    ].join('\n');
    process.stdout.write(`${md}\n`);
    if (args.write) writeSection('store-open', md);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
