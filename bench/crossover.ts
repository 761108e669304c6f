/**
 * When to move from the embedded store to Qdrant: latency and memory of MemoryHybridStore against chunk count on
 * the synthetic corpus of `--synthetic` (100–180 words a chunk, 384-d random unit vectors), with the Qdrant test
 * engine beside it at the sizes given: the store saved, copied into the engine with `copyToQdrant` (its
 * throughput is reported too), and the same queries asked there. The test engine is the Qdrant engine in process
 * behind a single-threaded Python HTTP server with exact search: its latencies are that server's, not a Qdrant
 * deployment's (HNSW, many cores).
 *
 *   npx tsx --expose-gc bench/crossover.ts [--sizes 25000,100000,250000,500000] [--qdrant-sizes 25000,100000] [--queries 100] [--write]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { QdrantHybridStore, copyToQdrant } from '../src/qdrant/index.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import type { SearchMode } from '../src/store/schemas.js';
import type { Store } from '../src/store/types.js';
import { percentile } from './lib/metrics.js';
import { startQdrant } from './lib/qdrant-engine.js';
import { mulberry32 } from './lib/random.js';
import { loadNote, writeSection } from './lib/report.js';
import { RandomEmbeddings, syntheticBatches, syntheticQueries, vocabulary } from './lib/synthetic.js';
import { fixed, markdownTable, ms } from './lib/table.js';
import { now, progress, rssMiB } from './lib/timing.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '25000,100000,250000,500000' },
    'qdrant-sizes': { type: 'string', default: '25000,100000' },
    queries: { type: 'string', default: '100' },
    write: { type: 'boolean', default: false },
  },
});
const sizes = args.sizes
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const qdrantSizes = new Set(
  args['qdrant-sizes']
    .split(',')
    .filter((s) => s !== '')
    .map(Number),
);
const queryCount = Number(args.queries);
const MODES: SearchMode[] = ['lexical', 'dense', 'hybrid'];

const gc = () => (globalThis as { gc?: () => void }).gc?.();

async function latencies(store: Store, queries: string[]): Promise<Record<SearchMode, number[]>> {
  const out = { lexical: [], dense: [], hybrid: [] } as Record<SearchMode, number[]>;
  for (const mode of MODES) {
    for (const text of queries.slice(0, 2)) await store.search({ text, mode, limit: 10 });
    for (const text of queries) {
      const start = now();
      await store.search({ text, mode, limit: 10 });
      out[mode].push(now() - start);
    }
  }
  return out;
}

async function main(): Promise<void> {
  const started = now();
  const loadAtStart = loadNote();
  const vocab = vocabulary();
  const embeddings = new RandomEmbeddings();
  const rand = mulberry32(20231107);
  const batches = syntheticBatches(vocab, sizes[sizes.length - 1]!, [100, 180], rand, 5000);
  gc();
  const rssStart = rssMiB();
  const store = new MemoryHybridStore({ embeddings, chunkTokens: 8192 });
  const queries = syntheticQueries(vocab, mulberry32(99), queryCount);
  const endpoint = qdrantSizes.size > 0 ? await startQdrant() : null;
  const dir = await mkdtemp(join(tmpdir(), 'litm-crossover-'));
  const rows: string[][] = [];
  const copies: string[][] = [];
  try {
    for (const size of sizes) {
      while (store.size < size) {
        const next = batches.next();
        if (next.done) break;
        await store.addDocuments(next.value);
        progress(`  ${store.size} chunks, RSS ${rssMiB().toFixed(0)} MiB`);
      }
      gc();
      const rss = rssMiB();
      const memory = await latencies(store, queries);
      rows.push([
        size.toLocaleString('en-US'),
        'MemoryHybridStore',
        ...MODES.map((mode) => ms(percentile(memory[mode], 50))),
        ms(percentile(memory.hybrid, 95)),
        `${(rss - rssStart).toFixed(0)}`,
      ]);
      progress(`${size}: memory hybrid p50 ${ms(percentile(memory.hybrid, 50))} ms, RSS +${(rss - rssStart).toFixed(0)} MiB`);
      if (endpoint !== null && qdrantSizes.has(size)) {
        const file = join(dir, 'store.json');
        let start = now();
        await store.save(file);
        const saveMs = now() - start;
        const collection = `crossover_${size}_${process.pid}`;
        start = now();
        const copied = await copyToQdrant({
          from: file,
          to: { url: endpoint.url, collection, timeoutMs: 600_000 },
          onProgress: ({ phase, done, total }) => {
            if (done % 25_000 === 0 || done === total) progress(`    copy ${phase} ${done}/${total}`);
          },
        });
        const copyMs = now() - start;
        const qdrant = new QdrantHybridStore({
          url: endpoint.url,
          collection,
          embeddings,
          vectorSize: 384,
          chunkTokens: 8192,
          timeoutMs: 600_000,
        });
        const engine = await latencies(qdrant, queries.slice(0, Math.min(queries.length, 50)));
        rows.push([
          size.toLocaleString('en-US'),
          endpoint.kind === 'server' ? 'Qdrant server' : 'Qdrant test engine',
          ...MODES.map((mode) => ms(percentile(engine[mode], 50))),
          ms(percentile(engine.hybrid, 95)),
          'n/a',
        ]);
        copies.push([
          size.toLocaleString('en-US'),
          fixed(saveMs / 1000, 1),
          fixed(copyMs / 1000, 1),
          `${Math.round(copied.chunks / (copyMs / 1000))}`,
          `${copied.written}`,
        ]);
        progress(`${size}: engine hybrid p50 ${ms(percentile(engine.hybrid, 50))} ms; copy ${(copyMs / 1000).toFixed(0)} s`);
        await fetch(`${endpoint.url}/collections/${collection}`, { method: 'DELETE' }).catch(() => undefined);
        await rm(file, { force: true });
      }
    }
  } finally {
    await endpoint?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const md = [
    '### Crossover: the embedded store against chunk count, the Qdrant test engine beside it',
    '',
    `Synthetic chunks of 100–180 words with 384-d random unit vectors (as in the synthetic corpus above), ${queryCount} queries per mode for the embedded store and ${Math.min(queryCount, 50)} for the engine, one at a time, limit 10. Store memory is RSS above the process before the first ingest. The engine's rows come from the same store saved and copied in with \`copyToQdrant\`.`,
    '',
    markdownTable(['chunks', 'store', 'lexical p50 ms', 'dense p50 ms', 'hybrid p50 ms', 'hybrid p95 ms', 'RSS MiB'], rows),
    '',
    ...(copies.length === 0
      ? []
      : [markdownTable(['chunks', 'save s', 'copy into the engine s', 'copy chunks/s', 'points written'], copies), '']),
    `Run: \`npx tsx --expose-gc bench/crossover.ts --sizes ${sizes.join(',')} --qdrant-sizes ${[...qdrantSizes].join(',')}\`; took ${((now() - started) / 1000).toFixed(0)} s; at the start ${loadAtStart}; at the end ${loadNote()}.`,
  ].join('\n');
  process.stdout.write(`${md}\n`);
  if (args.write) writeSection('crossover', md);
}

await main();
