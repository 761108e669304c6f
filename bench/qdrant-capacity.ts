/**
 * What a query, a source read and a delete cost the client on QdrantHybridStore, at two collection sizes 16×
 * apart: round trips, bytes each way, client CPU per call, plus the engine's own time for reference. The client's
 * costs should not grow with the collection (one round trip, fusion and IDF on the server, no client scans);
 * this prints the numbers that show it, and the per-chunk sizes (payload bytes, BM25 terms) the capacity estimate
 * in BENCHMARKS.md multiplies out.
 *
 * SciFact abstracts (one chunk each), all-MiniLM-L6-v2 vectors from the benchmark cache (`npm run bench:setup`);
 * the large size repeats the corpus under other source ids. 100 SciFact queries per mode, one at a time.
 *
 *   npx tsx bench/qdrant-capacity.ts [--queries 100] [--small 1296] [--large 20732] [--write]
 *   QDRANT_URL=http://localhost:6333 npx tsx bench/qdrant-capacity.ts
 */
import { CachedEmbeddings } from './lib/cached-embeddings.js';
import { loadSciFact } from './lib/datasets.js';
import { startQdrant } from './lib/qdrant-engine.js';
import { loadNote, writeSection } from './lib/report.js';
import { fixed, markdownTable } from './lib/table.js';
import { progress } from './lib/timing.js';
import { QdrantHybridStore, QdrantRestClient, type QdrantResponseInfo } from '../src/qdrant/index.js';
import { encodeBm25Document } from '../src/tokenize/bm25.js';
import { chunkDocument } from '../src/store/chunk.js';
import type { IngestDocument, SearchMode } from '../src/store/schemas.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(args[index + 1]);
};
const QUERIES = flag('queries', 100);
const SIZES = [flag('small', 1296), flag('large', 20_732)];
// Large enough that every SciFact abstract is one chunk (the cached vectors are per abstract).
const CHUNK_TOKENS = 2048;

interface Tally {
  requests: number;
  requestBytes: number;
  responseBytes: number;
  serverMs: number[];
}
const tally: Tally = { requests: 0, requestBytes: 0, responseBytes: 0, serverMs: [] };
const reset = () => Object.assign(tally, { requests: 0, requestBytes: 0, responseBytes: 0, serverMs: [] });
const onResponse = (info: QdrantResponseInfo) => {
  tally.requests += 1;
  tally.requestBytes += info.requestBytes;
  tally.responseBytes += info.responseBytes;
  tally.serverMs.push((info.serverTimeSeconds ?? 0) * 1000);
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 2)]!;
};

/** Runs `calls` one at a time; per call: requests, bytes, client CPU, wall and engine medians. */
async function measure(calls: (() => Promise<unknown>)[]) {
  reset();
  const walls: number[] = [];
  const cpu = process.cpuUsage();
  for (const call of calls) {
    const started = performance.now();
    await call();
    walls.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  const n = calls.length;
  return {
    requests: tally.requests / n,
    requestKiB: tally.requestBytes / n / 1024,
    responseKiB: tally.responseBytes / n / 1024,
    cpuMs: (used.user + used.system) / 1000 / n,
    wallMs: median(walls),
    serverMs: median(tally.serverMs),
  };
}

const scifact = loadSciFact();
const embeddings = new CachedEmbeddings({ datasets: ['scifact-corpus', 'scifact-queries'] });
const base: IngestDocument[] = scifact.corpus.map((d) => ({ id: d.id, text: d.text, title: d.title }));
const queries = scifact.queries.slice(0, QUERIES).map((q) => q.text);
// Warm the embedding lookups so the loops measure the store, not the cache.
for (const text of queries) await embeddings.embedQuery(text);

const endpoint = await startQdrant();
if (endpoint === null) process.exit(1);
const rows: (string | number)[][] = [];
try {
  const client = new QdrantRestClient({ url: endpoint.url, timeoutMs: 600_000, onResponse });
  for (const size of SIZES) {
    const docs = Array.from({ length: size }, (_, i) => {
      const doc = base[i % base.length]!;
      const copy = Math.floor(i / base.length);
      return copy === 0 ? doc : { ...doc, id: `${doc.id}~${copy}` };
    });
    const collection = `litm-bench-capacity-${size}-${process.pid}`;
    const store = new QdrantHybridStore({
      client,
      collection,
      embeddings,
      vectorSize: embeddings.dim,
      chunkTokens: CHUNK_TOKENS,
      timeoutMs: 600_000,
    });
    await store.ensureCollection();
    const ingestStarted = performance.now();
    const ingested = await store.addDocuments(docs);
    progress(`${size} documents (${ingested.added} chunks) ingested in ${((performance.now() - ingestStarted) / 1000).toFixed(1)} s`);
    const label = `${ingested.added.toLocaleString('en-US')} chunks`;
    for (const mode of ['hybrid', 'dense', 'lexical'] as SearchMode[]) {
      await store.search({ text: queries[0]!, mode, limit: 10 });
      const m = await measure(queries.map((text) => () => store.search({ text, mode, limit: 10 })));
      rows.push([
        label,
        `search ${mode}, limit 10`,
        fixed(m.requests, 2),
        fixed(m.requestKiB, 1),
        fixed(m.responseKiB, 1),
        fixed(m.cpuMs, 2),
        fixed(m.wallMs, 1),
        fixed(m.serverMs, 1),
      ]);
    }
    const r = await measure(queries.map((text) => () => store.rankings({ text, limit: 10 })));
    rows.push([
      label,
      'rankings hybrid, k 10',
      fixed(r.requests, 2),
      fixed(r.requestKiB, 1),
      fixed(r.responseKiB, 1),
      fixed(r.cpuMs, 2),
      fixed(r.wallMs, 1),
      fixed(r.serverMs, 1),
    ]);
    const sources = docs.slice(0, QUERIES).map((d) => d.id);
    const g = await measure(sources.map((id) => () => store.getChunks({ sourceIds: [id] })));
    rows.push([
      label,
      'getChunks one source',
      fixed(g.requests, 2),
      fixed(g.requestKiB, 1),
      fixed(g.responseKiB, 1),
      fixed(g.cpuMs, 2),
      fixed(g.wallMs, 1),
      fixed(g.serverMs, 1),
    ]);
    const d = await measure(sources.slice(0, 20).map((id) => () => store.deleteSources([id])));
    rows.push([
      label,
      'deleteSources one source',
      fixed(d.requests, 2),
      fixed(d.requestKiB, 1),
      fixed(d.responseKiB, 1),
      fixed(d.cpuMs, 2),
      fixed(d.wallMs, 1),
      fixed(d.serverMs, 1),
    ]);
    await client.deleteCollection(collection).catch(() => undefined);
  }

  // Per-chunk sizes the capacity estimate uses: the payload as stored and the BM25 vector's terms.
  const records = base.flatMap((doc) => chunkDocument(doc, { maxTokens: 256, indexedAt: '2025-01-01T00:00:00.000Z' }));
  const payloadBytes = records.reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r)), 0) / records.length;
  const terms = records.reduce((sum, r) => sum + encodeBm25Document(r.text).indices.length, 0) / records.length;
  const textBytes = records.reduce((sum, r) => sum + Buffer.byteLength(r.text), 0) / records.length;

  const output = [
    `Per call, ${QUERIES} SciFact queries per search row, one call at a time, into ${endpoint.kind === 'server' ? 'a real Qdrant server' : 'the Qdrant test engine'} ` +
      "(engine times are that engine's, not a Qdrant server's).",
    '',
    markdownTable(['collection', 'call', 'round trips', 'sent KiB', 'received KiB', 'client CPU ms', 'wall ms p50', 'engine ms p50'], rows),
    '',
    `SciFact chunks at the default 256 tokens: ${records.length} chunks; ${fixed(payloadBytes, 0)} payload bytes (JSON) and ` +
      `${fixed(textBytes, 0)} text bytes per chunk; ${fixed(terms, 1)} BM25 terms per chunk.`,
    '',
    `Run: \`npx tsx bench/qdrant-capacity.ts${args
      .filter((a) => a !== '--write')
      .map((a) => ` ${a}`)
      .join('')}\`; ${loadNote()}.`,
  ].join('\n');
  console.log(output);
  if (args.includes('--write')) writeSection('qdrant-capacity', output);
} finally {
  await endpoint.stop();
}
