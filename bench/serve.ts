/**
 * Load on the HTTP API: GET /api/bundle at a 2,000-token budget over the SciFact corpus (5,183 abstracts) in
 * the embedded store, lexical mode, rate limits off, the request log on (to /dev/null), 32 connections for
 * 60 s with autocannon, the SciFact train claims as queries in turn. Beside it, the same queries through the
 * library in process (the service function the route calls), one after another: the HTTP layer's overhead.
 * The server is the built `litm-pack serve` (dist/, built first when older than src/) in a child process (one process, then `--workers 2`: a cluster sharing the
 * port), so the load generator does not share its event loop; RSS is read from /proc at the start and the end of the run, after a
 * warm-up that sends every query once per worker.
 *
 *   npm run bench:serve [-- --duration 60 --connections 32 --workers 1,2 --in-process-seconds 20] [--write]
 *   npx tsx bench/serve.ts --workers 1 --cpu-prof /tmp/serve-profile   # a CPU profile of the server (.cpuprofile files)
 *
 * --write replaces the generated section `serve` of BENCHMARKS.md with the printed figures.
 *
 * Loopback only; every phase is bounded in time and the run stops itself (a watchdog ends it after
 * 15 minutes whatever happens). Prints the load (`uptime`) beside the figures.
 */
import autocannon from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryHybridStore } from '../src/index.js';
import { serveBundle, parseRequest, requestSchemas, DEFAULT_LIMITS } from '../src/service/index.js';
import { loadSciFact } from './lib/datasets.js';
import { REPO_ROOT } from './lib/paths.js';
import { ensureBuilt } from './lib/build.js';
import { writeSection } from './lib/report.js';
import { markdownTable } from './lib/table.js';
import { now, progress } from './lib/timing.js';

const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    connections: { type: 'string', default: '32' },
    workers: { type: 'string', default: '1,2' },
    budget: { type: 'string', default: '2000' },
    'in-process-seconds': { type: 'string', default: '20' },
    'warmup-seconds': { type: 'string', default: '10' },
    write: { type: 'boolean', default: false },
    /** Writes a V8 CPU profile of each server process into this folder (for finding where a request's time goes). */
    'cpu-prof': { type: 'string' },
  },
});

const BUDGET = Number(flags.budget);
const STORE_DIR = join(REPO_ROOT, '.cache', 'bench-serve');
const STORE_FILE = join(STORE_DIR, 'store.json');
const STORE_SIGNATURE = join(STORE_DIR, 'signature.json');
const TARGETS = { requestsPerSecond: 300, p99Ms: 100, errors: 0, rssGrowth: 0.1 };

// ---------------------------------------------------------------------------------------------
// The orchestrator.

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`;
  }
}

function rssMiBOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** The store, ingested once from SciFact and kept under .cache (outside the package). */
async function prepareStore(corpus: { id: string; title: string; text: string }[]): Promise<void> {
  const signature = JSON.stringify({ documents: corpus.length, chars: corpus.reduce((n, d) => n + d.text.length, 0), schema: 1 });
  if (existsSync(STORE_FILE) && existsSync(STORE_SIGNATURE) && (await readFile(STORE_SIGNATURE, 'utf8')) === signature) return;
  progress(`ingesting ${corpus.length} SciFact abstracts into the embedded store (once; kept in ${STORE_DIR})`);
  const started = now();
  const store = new MemoryHybridStore();
  await store.addDocuments(corpus.map((doc) => ({ id: doc.id, title: doc.title, text: doc.text })));
  await mkdir(STORE_DIR, { recursive: true });
  await store.save(STORE_FILE);
  await writeFile(STORE_SIGNATURE, signature);
  progress(`  ${store.size} chunks in ${((now() - started) / 1000).toFixed(1)} s`);
}

interface Row {
  setup: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  rssStart: number | null;
  rssEnd: number | null;
  /** RSS at a quarter, half and three quarters of the run (does it level off?). */
  rssQuarters: number[];
  /** Median RSS of the samples (one a second) in the first and in the last third of the run: the trend, without GC's sawtooth. */
  rssThirds: [number, number] | null;
}

async function inProcess(queries: string[], seconds: number): Promise<Row> {
  const store = await MemoryHybridStore.load(STORE_FILE);
  const schema = requestSchemas(DEFAULT_LIMITS).bundle;
  const run = (query: string) => serveBundle(parseRequest(schema, { query, budget: BUDGET, mode: 'lexical' }), { store, principals: [] });
  for (const query of queries) await run(query); // warm-up: every query once (the tokenizer's piece counts, the JIT)
  const rssStart = process.memoryUsage().rss / 2 ** 20;
  const latencies: number[] = [];
  const deadline = now() + seconds * 1000;
  let errors = 0;
  for (let i = 0; now() < deadline; i += 1) {
    const started = now();
    try {
      await run(queries[i % queries.length] as string);
    } catch {
      errors += 1;
    }
    latencies.push(now() - started);
  }
  const elapsed = (now() - (deadline - seconds * 1000)) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    setup: 'library in process (sequential)',
    requests: latencies.length,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    rssStart,
    rssEnd: process.memoryUsage().rss / 2 ** 20,
    rssQuarters: [],
    rssThirds: null,
  };
}

/** The processes a server runs as: the one started, and its children (the workers of `--workers N`). */
function processTree(pid: number): number[] {
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // Field 4 of /proc/PID/stat is the parent pid (after the command name in parentheses).
        return Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [pid, ...children];
}

/** `litm-pack serve` as users run it, rate limits off, the request log to /dev/null. */
function startServe(workers: number): Promise<{ child: ChildProcess; url: string; pids: number[] }> {
  const child = spawn(
    process.execPath,
    [
      ...(flags['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', flags['cpu-prof']]),
      join(REPO_ROOT, 'dist', 'cli', 'main.js'),
      'serve',
      '--store',
      STORE_DIR,
      '--port',
      '0',
      '--no-rate-limits',
      '--log',
      '/dev/null',
      '--workers',
      String(workers),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start within 180 s: ${err}`)), 180_000);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
      const match = /serving .* on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] as string, pids: processTree(child.pid as number) });
      }
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}) before listening: ${err}`)));
  });
}

/** One autocannon run: for `bound.seconds`, or until `bound.requests` have been sent. */
function load(
  url: string,
  paths: () => string,
  bound: { seconds: number } | { requests: number },
  connections: number,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        ...('seconds' in bound ? { duration: bound.seconds } : { amount: bound.requests }),
        pipelining: 1,
        timeout: 10,
        requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: paths() }) }],
      },
      (error: unknown, result) =>
        error ? reject(error instanceof Error ? error : new Error('autocannon failed', { cause: error })) : resolve(result),
    );
    instance.on('error', reject);
  });
}

async function overHttp(workers: number, queries: string[], seconds: number, connections: number, warmup: number): Promise<Row> {
  const { child, url, pids } = await startServe(workers);
  try {
    let next = 0;
    const paths = () => `/api/bundle?q=${encodeURIComponent(queries[next++ % queries.length] as string)}&budget=${BUDGET}&mode=lexical`;
    // Warm-up: the queries twice over per worker (the cluster hands out connections, not queries, so once per
    // worker does not reach every worker with every query), then a while more: the tokenizer's piece counts,
    // the packer's per-text caches and the JIT settle before RSS is first read.
    progress(`  ${workers} server process(es): warm-up, ${2 * queries.length * workers} requests then ${warmup} s`);
    await load(url, paths, { requests: 2 * queries.length * workers }, connections);
    await load(url, paths, { seconds: warmup }, connections);
    const rss = () => pids.reduce((sum, pid) => sum + rssMiBOf(pid), 0);
    const rssStart = rss();
    const started = now();
    const samples: { at: number; rss: number }[] = [];
    const sampler = setInterval(() => samples.push({ at: (now() - started) / 1000, rss: rss() }), 1000);
    progress(`  ${workers} server process(es): ${seconds} s at ${connections} connections`);
    const result = await load(url, paths, { seconds }, connections).finally(() => clearInterval(sampler));
    const rssEnd = rss();
    const rssMax = Math.max(rssEnd, ...samples.map((sample) => sample.rss));
    // The sample nearest each quarter of the run.
    const rssQuarters = [0.25, 0.5, 0.75].map(
      (q) =>
        samples.reduce((best, sample) => (Math.abs(sample.at - q * seconds) < Math.abs(best.at - q * seconds) ? sample : best), {
          at: Infinity,
          rss: NaN,
        }).rss,
    );
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted.length === 0 ? NaN : (sorted[(sorted.length - 1) >> 1]! + sorted[sorted.length >> 1]!) / 2;
    };
    const rssThirds: [number, number] = [
      median(samples.filter((sample) => sample.at <= seconds / 3).map((sample) => sample.rss)),
      median(samples.filter((sample) => sample.at >= (2 * seconds) / 3).map((sample) => sample.rss)),
    ];
    progress(
      `  RSS ${rssStart.toFixed(1)} → ${rssQuarters.map((v) => v.toFixed(1)).join(' → ')} → ${rssEnd.toFixed(1)} MiB (highest ${rssMax.toFixed(1)})`,
    );
    return {
      setup: workers === 1 ? 'litm-pack serve' : `litm-pack serve --workers ${workers}`,
      requests: result['2xx'],
      perSecond: result['2xx'] / result.duration,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.non2xx + result.timeouts,
      rssStart,
      rssEnd,
      rssQuarters,
      rssThirds,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
  }
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    process.stderr.write('bench:serve: watchdog: still running after 15 minutes, stopping\n');
    process.exit(1);
  }, 15 * 60_000);
  const duration = Number(flags.duration);
  const connections = Number(flags.connections);
  const workerCounts = flags.workers.split(',').map(Number);
  ensureBuilt('the server (the built command line, as `npx litm-pack serve` runs it)');
  const data = loadSciFact();
  await prepareStore(data.corpus);
  const queries = data.queries.map((query) => query.text);
  const loadBefore = uptime();

  const rows: Row[] = [];
  progress(`in process: ${flags['in-process-seconds']} s, ${queries.length} queries in turn`);
  rows.push(await inProcess(queries, Number(flags['in-process-seconds'])));
  for (const workers of workerCounts) rows.push(await overHttp(workers, queries, duration, connections, Number(flags['warmup-seconds'])));
  const loadAfter = uptime();

  const growth = (row: Row) => (row.rssStart === null || row.rssEnd === null ? NaN : (row.rssEnd - row.rssStart) / row.rssStart);
  const verdict = (row: Row) =>
    row.setup.startsWith('library')
      ? '–'
      : [
          row.perSecond >= TARGETS.requestsPerSecond ? 'req/s ok' : 'req/s MISSED',
          row.p99 <= TARGETS.p99Ms ? 'p99 ok' : 'p99 MISSED',
          row.errors === TARGETS.errors ? 'errors ok' : 'errors MISSED',
          growth(row) <= TARGETS.rssGrowth ? 'RSS ok' : 'RSS MISSED',
        ].join(', ');
  const table = markdownTable(
    [
      'setup',
      'requests',
      'req/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'RSS start MiB',
      'RSS at ¼, ½, ¾ MiB',
      'RSS end MiB',
      'RSS growth',
      'median RSS, first → last third',
      'targets',
    ],
    rows.map((row) => [
      row.setup,
      row.requests,
      row.perSecond.toFixed(1),
      row.p50.toFixed(2),
      row.p99.toFixed(2),
      row.errors,
      row.rssStart?.toFixed(1) ?? 'n/a',
      row.rssQuarters.length > 0 ? row.rssQuarters.map((v) => v.toFixed(1)).join(', ') : '–',
      row.rssEnd?.toFixed(1) ?? 'n/a',
      Number.isFinite(growth(row)) ? `${(growth(row) * 100).toFixed(1)}%` : 'n/a',
      row.rssThirds === null
        ? '–'
        : `${row.rssThirds[0].toFixed(1)} → ${row.rssThirds[1].toFixed(1)} (${(((row.rssThirds[1] - row.rssThirds[0]) / row.rssThirds[0]) * 100).toFixed(1)}%)`,
      verdict(row),
    ]),
  );
  const md = [
    `### HTTP API load: GET /api/bundle, ${BUDGET}-token budget, SciFact (${data.corpus.length} abstracts), lexical, rate limits off`,
    '',
    `${connections} connections, ${duration} s per HTTP row (after a warm-up of the queries twice over per worker and ${flags['warmup-seconds']} s more), ` +
      `${queries.length} SciFact train claims in turn; RSS is the sum over the server's processes (with workers: the primary and each worker). Node ${process.version}, ${cpus().length} CPUs.`,
    `Targets: ≥ ${TARGETS.requestsPerSecond} req/s, p99 ≤ ${TARGETS.p99Ms} ms, ${TARGETS.errors} errors, RSS growth ≤ ${TARGETS.rssGrowth * 100}%.`,
    '',
    table,
    '',
    `Load before: ${loadBefore}  `,
    `Load after: ${loadAfter}`,
  ].join('\n');
  console.log(md);
  if (flags.write) writeSection('serve', md);
  clearTimeout(watchdog);
}

await main();
