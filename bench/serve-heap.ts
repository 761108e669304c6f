/**
 * Is memory kept per request? The service function behind GET /api/bundle (the bench:serve store and queries:
 * SciFact, lexical, a 2,000-token budget) in a loop, with a full garbage collection and a heap reading at fixed
 * intervals. A leak shows as heapUsed after GC climbing with the request count; RSS alone cannot tell, since V8
 * grows and returns its heap as it pleases.
 *
 *   npm run bench:serve -- --duration 5 --workers 1   # once, to build the store bench:serve uses
 *   node --expose-gc --import tsx bench/serve-heap.ts [--seconds 150] [--every 15]
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryHybridStore } from '../src/index.js';
import { DEFAULT_LIMITS, parseRequest, requestSchemas, serveBundle } from '../src/service/index.js';
import { loadSciFact } from './lib/datasets.js';
import { REPO_ROOT } from './lib/paths.js';
import { markdownTable } from './lib/table.js';
import { now } from './lib/timing.js';

const { values: flags } = parseArgs({ options: { seconds: { type: 'string', default: '150' }, every: { type: 'string', default: '15' } } });
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc --import tsx bench/serve-heap.ts');
const storeFile = join(REPO_ROOT, '.cache', 'bench-serve', 'store.json');
if (!existsSync(storeFile)) throw new Error(`${storeFile} is missing: run npm run bench:serve once (it builds the store)`);

const store = await MemoryHybridStore.load(storeFile);
const schema = requestSchemas(DEFAULT_LIMITS).bundle;
const queries = loadSciFact().queries.map((query) => query.text);
const run = (query: string) => serveBundle(parseRequest(schema, { query, budget: 2000, mode: 'lexical' }), { store, principals: [] });
// Warm-up as bench:serve's: every query twice.
for (let pass = 0; pass < 2; pass += 1) for (const query of queries) await run(query);

const rows: string[][] = [];
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const started = now();
let requests = 0;
const seconds = Number(flags.seconds);
const every = Number(flags.every);
for (let at = 0; at <= seconds; at += every) {
  gc();
  const memory = process.memoryUsage();
  rows.push([((now() - started) / 1000).toFixed(0), String(requests), mib(memory.heapUsed), mib(memory.rss)]);
  if (at + every > seconds) break;
  const until = now() + every * 1000;
  while (now() < until) await run(queries[requests++ % queries.length] as string);
}
console.log(`### Heap after a full GC, ${queries.length} SciFact claims in turn through serveBundle (lexical, 2,000 tokens)\n`);
console.log(markdownTable(['s', 'requests', 'heapUsed after GC MiB', 'RSS MiB'], rows));
