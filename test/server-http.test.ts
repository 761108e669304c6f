// The HTTP API over real sockets: fetch against servers on ephemeral loopback ports, rate limits as a client
// sees them, a graceful close that lets requests in flight finish, and `litm-pack serve` stopping on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, PackSchema, packBundle, toCanonicalJson, type Candidate, type SearchRequest } from '../src/index.js';
import { retrieveCandidates } from '../src/pipeline/retrieve.js';
import { startServer } from '../src/server/index.js';
import { runCli } from './helpers/cli.js';
import { heldReranker } from './helpers/loopback.js';
import { FIXED_NOW, KEYS, PUBLIC_DOCS, RESTRICTED_DOCS, fixtureKeys, fixtureStore, spawnServe } from './helpers/serve-fixtures.js';

let store: MemoryHybridStore;
beforeAll(async () => {
  store = await fixtureStore({ restricted: true });
});

describe('fetch against a listening server', () => {
  it('serves the same bytes as the library, and text/markdown for format=md', async () => {
    const server = await startServer({ store, rateLimit: false });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await fetch(`${server.url}/api/bundle?q=refunds&budget=250`);
      expect(response.status).toBe(200);
      const { candidates, degraded } = await retrieveCandidates(store, { text: 'refunds', mode: 'hybrid', limit: 50, principals: [] });
      // The pipeline records its pool (this store holds fewer than 50 chunks: no widening).
      expect(await response.text()).toBe(
        toCanonicalJson(
          packBundle({ query: 'refunds', candidates, maxTokens: 250, degraded, pool: { candidates: candidates.length, limit: 50 } }),
        ),
      );
      const md = await fetch(`${server.url}/api/bundle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ q: 'refunds', format: 'md' }),
      });
      expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect((await md.text()).startsWith('[1] ')).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('rate-limits a client with 429 and Retry-After, at the default 30 calls per second', async () => {
    const server = await startServer({ store, apiKeys: fixtureKeys() });
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      // Sent together so they fall in one one-second window even on a busy machine.
      const answers = await Promise.all(Array.from({ length: 32 }, () => fetch(`${server.url}/api/openapi.json`)));
      for (const answer of answers) {
        statuses.push(answer.status);
        if (answer.status === 429) {
          retryAfter = answer.headers.get('retry-after');
          expect(await answer.json()).toMatchObject({ code: 'rate_limited' });
        } else await answer.arrayBuffer();
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(30);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      // A client with its own key still gets through.
      expect((await fetch(`${server.url}/api/openapi.json`, { headers: { authorization: `Bearer ${KEYS.bob}` } })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

/** A store whose searches wait until released: a request stays in flight as long as the test wants. */
class GatedStore extends MemoryHybridStore {
  entered!: Promise<void>;
  #enter!: () => void;
  #release!: () => void;
  #gate!: Promise<void>;

  constructor() {
    super({ now: FIXED_NOW });
    this.arm();
  }

  arm(): void {
    this.entered = new Promise((resolve) => (this.#enter = resolve));
    this.#gate = new Promise((resolve) => (this.#release = resolve));
  }

  release(): void {
    this.#release();
  }

  override async search(request: SearchRequest): Promise<Candidate[]> {
    this.#enter();
    await this.#gate;
    return super.search(request);
  }
}

describe('graceful close', () => {
  it('lets a request in flight finish with its whole pack, then refuses new connections', async () => {
    const gated = new GatedStore();
    await gated.addDocuments(PUBLIC_DOCS);
    const lines: string[] = [];
    const server = await startServer({ store: gated, rateLimit: false, log: { write: (line: string) => lines.push(line) } });
    const inFlight = fetch(`${server.url}/api/bundle?q=refunds&budget=300`);
    await gated.entered;
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    gated.release();
    const response = await inFlight;
    expect(response.status).toBe(200);
    const pack = PackSchema.parse(await response.json());
    expect(pack.items.length).toBeGreaterThan(0);
    await closing;
    expect(closed).toBe(true);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ route: '/api/bundle', status: 200 });
  });
});

describe('litm-pack serve', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'litm-serve-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('serves a store with API keys from a file, logs one line per request, and stops cleanly on SIGTERM', async () => {
    const storeDir = join(work, 'store');
    await mkdir(storeDir);
    const writer = new MemoryHybridStore({ now: FIXED_NOW });
    await writer.addDocuments([...PUBLIC_DOCS, ...RESTRICTED_DOCS]);
    await writer.save(join(storeDir, 'store.json'));
    const keys = join(work, 'keys.json');
    await writeFile(keys, JSON.stringify({ keys: [{ id: 'alice', key: KEYS.alice, principals: ['hr'] }] }));
    const log = join(work, 'requests.log');
    const serve = await spawnServe([
      '--store',
      storeDir,
      '--port',
      '0',
      '--keys',
      keys,
      '--require-auth',
      '--log',
      log,
      '--idf-corpus',
      'visible',
    ]);
    const { url } = serve;
    try {
      expect(serve.stderr()).toContain('1 API keys, required');
      expect((await fetch(`${url}/api/bundle?q=refunds`)).status).toBe(401);
      const keyed = await fetch(`${url}/api/bundle?q=refunds&mode=lexical`, { headers: { authorization: `Bearer ${KEYS.alice}` } });
      expect(keyed.status).toBe(200);
      const pack = PackSchema.parse(await keyed.json());
      expect(pack.items.some((item) => item.sourceId === 'hr/salaries.md')).toBe(true);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(serve.stderr()).toContain('SIGTERM: finishing requests in flight');
      const lines = (await readFile(log, 'utf8')).split('\n');
      expect(lines.pop()).toBe('');
      expect(lines.map((line) => (JSON.parse(line) as { status: number; principal: string }).status)).toEqual([401, 200]);
      expect(JSON.parse(lines[1] as string)).toMatchObject({ principal: 'alice', route: '/api/bundle' });
      expect(lines.join('\n')).not.toContain('refunds');
    } finally {
      serve.kill();
    }
  });

  it('on SIGTERM finishes the request in flight (here: waiting on its reranker) with its whole pack, refuses new connections, and logs it to stdout with --log-queries', async () => {
    const storeDir = join(work, 'sigterm-store');
    await mkdir(storeDir);
    const writer = new MemoryHybridStore({ now: FIXED_NOW });
    await writer.addDocuments(PUBLIC_DOCS);
    await writer.save(join(storeDir, 'store.json'));
    // A reranker that holds its answer until the test releases it: the request stays in flight.
    const reranker = await heldReranker();
    const { reached, release } = reranker;
    const serve = await spawnServe([
      '--store',
      storeDir,
      '--port',
      '0',
      '--no-rate-limits',
      '--log-queries',
      '--rerank-url',
      `${reranker.url}/rerank`,
      '--rerank-timeout',
      '60000',
    ]);
    const { url } = serve;
    try {
      const inFlight = fetch(`${url}/api/bundle?q=refunds&budget=300`);
      await reached;
      serve.child.kill('SIGTERM');
      for (let i = 0; i < 100 && !serve.stderr().includes('SIGTERM: finishing requests in flight'); i += 1)
        await new Promise((done) => setTimeout(done, 50));
      expect(serve.stderr()).toContain('SIGTERM: finishing requests in flight');
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
      expect(serve.child.exitCode).toBeNull();
      release();
      const response = await inFlight;
      expect(response.status).toBe(200);
      const pack = PackSchema.parse(await response.json());
      // The whole pack, reranked: the reranker's scores, nothing degraded.
      expect(pack.degraded).toEqual([]);
      expect(pack.items.length).toBeGreaterThan(0);
      expect(pack.items.every((item) => item.score <= 10 && item.score > 0 && Number.isInteger(item.score))).toBe(true);
      expect(await serve.exited).toBe(0);
      expect(serve.stderr()).toContain('litm-pack: stopped');
      // One whole JSON line on stdout, with the query (--log-queries).
      expect(serve.stdout().endsWith('\n')).toBe(true);
      const lines = serve
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        route: '/api/bundle',
        status: 200,
        principal: 'anonymous',
        query: 'refunds',
        budget: 300,
        items: pack.items.length,
        usedTokens: pack.budget.usedTokens,
        budgetBound: pack.truncated,
        confidence: pack.coverage.confidence,
      });
      expect(typeof lines[0]?.latencyMs).toBe('number');
    } finally {
      serve.kill();
      release();
      await reranker.close();
    }
  });

  it('--workers 2 serves the port from two processes, logs whole lines from both, and stops cleanly on SIGTERM', async () => {
    const storeDir = join(work, 'cluster-store');
    await mkdir(storeDir);
    const writer = new MemoryHybridStore({ now: FIXED_NOW });
    await writer.addDocuments(PUBLIC_DOCS);
    await writer.save(join(storeDir, 'store.json'));
    const log = join(work, 'cluster.log');
    const serve = await spawnServe(['--store', storeDir, '--port', '0', '--workers', '2', '--no-rate-limits', '--log', log], {
      listening: /on (http:\/\/127\.0\.0\.1:\d+) with 2 workers/,
      timeoutMs: 90_000,
    });
    const { url } = serve;
    try {
      // Separate connections, so both workers answer.
      const statuses = await Promise.all(
        Array.from({ length: 8 }, () => fetch(`${url}/api/bundle?q=refunds`, { headers: { connection: 'close' } }).then((r) => r.status)),
      );
      expect(statuses).toEqual(Array(8).fill(200));
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(serve.stderr()).toContain('litm-pack: stopped');
      const lines = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
      expect(lines).toHaveLength(8);
      expect(lines.every((line) => (JSON.parse(line) as { status: number }).status === 200)).toBe(true);
    } finally {
      serve.kill();
    }
  }, 120_000);

  it('refuses --require-auth without keys, with one clear line', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--store', work, '--require-auth'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LITM_PACK_API_KEYS: '' },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('litm-pack: --require-auth needs API keys: give --keys FILE or set LITM_PACK_API_KEYS');
    const budget = await runCli(['serve', '--store', work, '--bundle-budget', '30000', '--max-budget', '24000']);
    expect(budget.code).toBe(2);
    expect(budget.stderr.trim()).toBe('litm-pack: --bundle-budget must be at most --max-budget');
    const workers = await runCli(['serve', '--store', work, '--workers', '2']);
    expect(workers.code).toBe(2);
    expect(workers.stderr).toMatch(/--workers above 1 needs --no-rate-limits/);
    const rerank = await runCli(['serve', '--store', work, '--rerank-model', 'm']);
    expect(rerank.code).toBe(2);
    expect(rerank.stderr.trim()).toBe('litm-pack: --rerank-model needs --rerank-url URL');
    const badUrl = await runCli(['serve', '--store', work, '--rerank-url', 'localhost:8080']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/--rerank-url must be an http\(s\) URL/);
  });
});

describe('--idf-corpus', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'litm-idf-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('visible: an anonymous bundle from the CLI is byte-identical to one from a store without the restricted documents', async () => {
    for (const [name, docs] of [
      ['full', [...PUBLIC_DOCS, ...RESTRICTED_DOCS]],
      ['public', PUBLIC_DOCS],
    ] as const) {
      const writer = new MemoryHybridStore({ now: FIXED_NOW });
      await writer.addDocuments([...docs]);
      await mkdir(join(work, name));
      await writer.save(join(work, name, 'store.json'));
    }
    const bundle = (store: string, idf: string) =>
      runCli(['bundle', 'refunds', '--store', join(work, store), '--mode', 'lexical', '--principals', '', '--idf-corpus', idf, '--json']);
    const [fullVisible, publicVisible, fullAll] = await Promise.all([
      bundle('full', 'visible'),
      bundle('public', 'visible'),
      bundle('full', 'all'),
    ]);
    expect(fullVisible.stderr).toBe('');
    expect(fullVisible.stdout).toBe(publicVisible.stdout);
    expect(fullAll.stdout).not.toBe(publicVisible.stdout);
    expect(PackSchema.parse(JSON.parse(fullAll.stdout)).items.map((i) => i.id)).toEqual(
      PackSchema.parse(JSON.parse(publicVisible.stdout)).items.map((i) => i.id),
    );
    const qdrant = await runCli(['bundle', 'refunds', '--store', 'qdrant://127.0.0.1:1/docs', '--idf-corpus', 'visible']);
    expect(qdrant.code).not.toBe(0);
    expect(qdrant.stderr).toMatch(/idfCorpus "visible" is not implemented by the Qdrant store/);
  });
});
