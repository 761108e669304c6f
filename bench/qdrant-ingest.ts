/**
 * Ingest throughput into QdrantHybridStore on the SciFact corpus (5,183 abstracts), lexical (BM25 vectors and
 * payloads; no embedding model), excluding the engine's own time: every Qdrant answer carries `time` (the
 * server's own seconds for the request), summed here; the client's share is wall time minus that sum, measured
 * with one request in flight at a time so the two add up exactly. Rows with requests in parallel show wall time
 * only (their server times overlap). A fresh collection per row; the second ingest of each row re-ingests the same
 * documents (nothing changes: one scroll per batch, no writes).
 *
 *   npx tsx bench/qdrant-ingest.ts [--docs N] [--rows baseline,batched,parallel] [--write]
 *   QDRANT_URL=http://localhost:6333 npx tsx bench/qdrant-ingest.ts     # a real server instead of the test engine
 */
import { execSync } from 'node:child_process';
import { loadSciFact } from './lib/datasets.js';
import { startQdrant } from './lib/qdrant-engine.js';
import { loadNote, writeSection } from './lib/report.js';
import { fixed, markdownTable } from './lib/table.js';
import { progress } from './lib/timing.js';
import { QdrantHybridStore, QdrantRestClient, type QdrantHybridStoreOptions } from '../src/qdrant/index.js';
import { encodeBm25Document } from '../src/tokenize/bm25.js';
import { chunkDocument } from '../src/store/chunk.js';
import type { IngestDocument } from '../src/store/schemas.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? undefined : args[index + 1];
};

interface Row {
  name: string;
  /** Store options beyond the defaults (absent on code that predates them). */
  options: Partial<QdrantHybridStoreOptions>;
  /** One request in flight at a time: wall − Σ server time is the client's time. */
  sequential: boolean;
}

const ROWS: Record<string, Row> = {
  baseline: {
    name: 'one document per round trip (scroll + upsert per document)',
    options: { ingestBatchSize: 1, ingestConcurrency: 1 },
    sequential: true,
  },
  batched: { name: 'batched, one request in flight (defaults, ingestConcurrency 1)', options: { ingestConcurrency: 1 }, sequential: true },
  parallel: { name: 'batched, parallel requests (defaults)', options: {}, sequential: false },
  current: { name: "this commit's defaults", options: {}, sequential: true },
};

interface Measured {
  wallMs: number;
  serverMs: number;
  requests: number;
  cpuMs: number;
  chunks: number;
}

async function measure(url: string, row: Row, docs: IngestDocument[], label: string): Promise<[Measured, Measured]> {
  let serverMs = 0;
  let requests = 0;
  const client = new QdrantRestClient({
    url,
    timeoutMs: 600_000,
    onResponse: (info) => {
      requests += 1;
      serverMs += (info.serverTimeSeconds ?? 0) * 1000;
    },
  });
  const collection = `litm-bench-ingest-${label}-${process.pid}`;
  const store = new QdrantHybridStore({ client, collection, vectorSize: 384, timeoutMs: 600_000, ...row.options });
  await store.ensureCollection();
  const runs: Measured[] = [];
  for (const pass of ['first ingest', 're-ingest']) {
    serverMs = 0;
    requests = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await store.addDocuments(docs);
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    runs.push({ wallMs, serverMs, requests, cpuMs: (used.user + used.system) / 1000, chunks: result.added + result.unchanged });
    progress(`${row.name} / ${pass}: ${(wallMs / 1000).toFixed(1)} s wall, ${(serverMs / 1000).toFixed(1)} s server, ${requests} requests`);
  }
  await client.deleteCollection(collection).catch(() => undefined);
  return runs as [Measured, Measured];
}

let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  if (execSync('git status --porcelain -- src', { encoding: 'utf8' }).trim() !== '') commit += ' (with uncommitted changes in src)';
} catch {
  // not a git checkout
}

const endpoint = await startQdrant();
if (endpoint === null) process.exit(1);
try {
  const limit = Number(flag('docs') ?? Infinity);
  const docs: IngestDocument[] = loadSciFact()
    .corpus.slice(0, limit)
    .map((d) => ({ id: d.id, text: d.text, title: d.title }));
  const selected = (flag('rows') ?? 'baseline,batched,parallel').split(',');
  const table: (string | number)[][] = [];
  for (const key of selected) {
    const row = ROWS[key];
    if (row === undefined) throw new Error(`unknown row ${key}; rows: ${Object.keys(ROWS).join(', ')}`);
    const [first, again] = await measure(endpoint.url, row, docs, key);
    for (const [pass, m] of [
      ['first', first],
      ['re-ingest', again],
    ] as const) {
      const clientMs = m.wallMs - m.serverMs;
      table.push([
        `${row.name}, ${pass}`,
        docs.length,
        m.chunks,
        m.requests,
        fixed(m.wallMs / 1000, 2),
        fixed(m.serverMs / 1000, 2),
        row.sequential ? fixed(clientMs / 1000, 2) : 'n/a',
        fixed(m.cpuMs / 1000, 2),
        row.sequential ? Math.round(docs.length / (clientMs / 1000)) : 'n/a',
        Math.round(docs.length / (m.cpuMs / 1000)),
        Math.round(docs.length / (m.wallMs / 1000)),
      ]);
    }
  }
  // The share every store pays, measured alone on the same documents (warm): chunking with exact token counts
  // and BM25 encoding. What the Qdrant path adds is the rest of the client's CPU.
  const cpu = process.cpuUsage();
  for (const doc of docs) {
    for (const record of chunkDocument(doc, { indexedAt: '2025-01-01T00:00:00.000Z' })) encodeBm25Document(record.text);
  }
  const shared = process.cpuUsage(cpu);
  const sharedSeconds = (shared.user + shared.system) / 1e6;
  const output = [
    `SciFact corpus, lexical, into ${endpoint.kind === 'server' ? 'a real Qdrant server' : 'the Qdrant test engine'}; commit ${commit}.`,
    '',
    markdownTable(
      [
        'ingest',
        'docs',
        'chunks',
        'requests',
        'wall s',
        'engine s (Σ time)',
        'client s (wall − engine)',
        'client CPU s',
        'docs/s excl. engine',
        'docs/s of client CPU',
        'docs/s wall',
      ],
      table,
    ),
    '',
    `Chunking with exact token counts and BM25 encoding alone (what the memory store's ingest does too), same documents, warm: ` +
      `${fixed(sharedSeconds, 2)} s CPU, ${Math.round(docs.length / sharedSeconds)} docs/s.`,
    '',
    `Run: \`npx tsx bench/qdrant-ingest.ts${args
      .filter((a) => a !== '--write')
      .map((a) => ` ${a}`)
      .join('')}\`; ${loadNote()}.`,
  ].join('\n');
  console.log(output);
  if (args.includes('--write')) writeSection('qdrant-ingest', output);
} finally {
  await endpoint.stop();
}
