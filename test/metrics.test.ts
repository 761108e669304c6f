// GET /metrics as a scraper sees it: known requests against a listening server, then exact counts, histogram
// buckets and label sets; the log lines of the same requests agree with them; metrics behind the API's keys or
// on a port of their own; two servers in one process keep their own figures.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LitmPackError, MemoryHybridStore, type Pack } from '../src/index.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { runCli } from './helpers/cli.js';
import { metricTypes, parseExposition, seriesOf, valueOf, type Sample } from './helpers/prometheus.js';
import { KEYS, fixtureKeys, fixtureStore, spawnServe } from './helpers/serve-fixtures.js';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const DURATION_BUCKETS = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];
const RATIO_BUCKETS = [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1];
const ITEM_BUCKETS = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55];

/** A histogram's cumulative buckets for `values`, as the scrape should show them (`le` → count). */
function cumulative(bounds: readonly number[], values: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const bound of bounds) out[String(bound)] = values.filter((v) => v <= bound).length;
  out['+Inf'] = values.length;
  return out;
}

function buckets(samples: readonly Sample[], name: string, labels: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const sample of samples) {
    if (sample.name !== `${name}_bucket`) continue;
    const { le, ...rest } = sample.labels;
    if (JSON.stringify(Object.entries(rest).sort()) === JSON.stringify(Object.entries(labels).sort())) out[le as string] = sample.value;
  }
  return out;
}

async function scrape(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ text: string; samples: Sample[]; type: string | null }> {
  const response = await fetch(url, { headers });
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, samples: parseExposition(text), type: response.headers.get('content-type') };
}

let store: MemoryHybridStore;
beforeAll(async () => {
  store = await fixtureStore({ restricted: true });
});

describe('GET /metrics after known requests', () => {
  let server: RunningServer;
  const lines: Record<string, unknown>[] = [];
  const packs: Pack[] = [];
  // One scrape after the requests (every caller may make two calls: bob scrapes, twice at most).
  let scraped: Awaited<ReturnType<typeof scrape>>;

  beforeAll(async () => {
    // Two calls per caller in an hour: the third of alice's is refused 429 whatever the machine's speed.
    server = await startServer({
      store,
      apiKeys: fixtureKeys(),
      rateLimit: { perClient: 2, global: 1000, windowMs: 3_600_000 },
      log: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    for (const q of ['refunds', 'shipping']) {
      const answer = await fetch(`${server.url}/api/bundle?q=${q}&budget=60`, { headers: bearer(KEYS.alice) });
      expect(answer.status).toBe(200);
      packs.push((await answer.json()) as Pack);
    }
    expect((await fetch(`${server.url}/api/bundle?q=refunds`, { headers: bearer('not-a-configured-key-0123') })).status).toBe(401);
    expect((await fetch(`${server.url}/api/bundle?q=refunds`, { headers: bearer(KEYS.alice) })).status).toBe(429);
    expect(
      (await server.app.inject({ method: 'GET', url: '/api/bundle?q=refunds', headers: { host: 'evil.example.com' } })).statusCode,
    ).toBe(403);
    expect((await fetch(`${server.url}/no/such/route?q=refunds`)).status).toBe(404);
    scraped = await scrape(`${server.url}/metrics`, bearer(KEYS.bob));
  });

  afterAll(async () => {
    await server.close();
  });

  it('counts requests by route, tool and status, with a latency histogram of the same series', () => {
    const { samples, type } = scraped;
    expect(type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(seriesOf(samples, 'litm_pack_http_requests_total')).toEqual([
      '{"route":"/api/bundle","status":"200","tool":""} 2',
      '{"route":"/api/bundle","status":"401","tool":""} 1',
      '{"route":"/api/bundle","status":"403","tool":""} 1',
      '{"route":"/api/bundle","status":"429","tool":""} 1',
      // A path no route has is one label, never the path itself.
      '{"route":"unmatched","status":"404","tool":""} 1',
    ]);
    const ok = { route: '/api/bundle', status: '200', tool: '' };
    expect(valueOf(samples, 'litm_pack_http_request_duration_seconds_count', ok)).toBe(2);
    expect(
      samples
        .filter((x) => x.name === 'litm_pack_http_request_duration_seconds_bucket' && x.labels.status === '200')
        .map((x) => x.labels.le),
    ).toEqual(DURATION_BUCKETS);
    expect(buckets(samples, 'litm_pack_http_request_duration_seconds', ok)['+Inf']).toBe(2);
    const sum = valueOf(samples, 'litm_pack_http_request_duration_seconds_sum', ok) as number;
    const logged = lines
      .filter((line) => line.status === 200 && line.route === '/api/bundle')
      .reduce((total, line) => total + (line.latencyMs as number) / 1000, 0);
    expect(sum).toBeCloseTo(logged, 9);
  });

  it('records each pack: used/budget ratio, budget bound, items and confidence by kind, exactly', () => {
    const { samples } = scraped;
    const bundle = { kind: 'bundle' };
    expect(buckets(samples, 'litm_pack_budget_used_ratio', bundle)).toEqual(
      cumulative(
        RATIO_BUCKETS,
        packs.map((p) => p.budget.usedTokens / 60),
      ),
    );
    expect(valueOf(samples, 'litm_pack_budget_used_ratio_count', bundle)).toBe(2);
    expect(valueOf(samples, 'litm_pack_budget_bound_total', bundle)).toBe(packs.filter((p) => p.truncated).length);
    expect(buckets(samples, 'litm_pack_pack_items', bundle)).toEqual(
      cumulative(
        ITEM_BUCKETS,
        packs.map((p) => p.items.length),
      ),
    );
    const levels = new Map<string, number>();
    for (const pack of packs) levels.set(pack.coverage.confidence, (levels.get(pack.coverage.confidence) ?? 0) + 1);
    expect(seriesOf(samples, 'litm_pack_confidence_total')).toEqual(
      [...levels].map(([level, count]) => `{"kind":"bundle","level":"${level}"} ${count}`).sort(),
    );
    // Nothing degraded, and the store's embeddings answered: families declared, no series.
    expect(seriesOf(samples, 'litm_pack_degraded_total')).toEqual([]);
    expect(seriesOf(samples, 'litm_pack_dense_unavailable_total')).toEqual([]);
  });

  it('counts refusals by reason and caller (the API key id, never a key or principal)', () => {
    const { samples, text } = scraped;
    expect(seriesOf(samples, 'litm_pack_refused_total')).toEqual([
      '{"caller":"alice","reason":"rate_limited"} 1',
      '{"caller":"anonymous","reason":"forbidden"} 1',
      '{"caller":"invalid-key","reason":"unauthorized"} 1',
    ]);
    expect(text).not.toContain(KEYS.alice);
    expect(text).not.toContain('"hr"');
    // No query text in any label.
    expect(text).not.toMatch(/refunds|shipping/u);
  });

  it('reads the store size at each scrape, and counts its own scrapes', async () => {
    expect(valueOf(scraped.samples, 'litm_pack_http_requests_total', { route: '/metrics', status: '200', tool: '' })).toBeUndefined();
    const { samples } = await scrape(`${server.url}/metrics`, bearer(KEYS.bob));
    expect(valueOf(samples, 'litm_pack_store_sources')).toBe(store.sources().length);
    expect(valueOf(samples, 'litm_pack_store_chunks')).toBe(store.size);
    expect(valueOf(samples, 'litm_pack_http_requests_total', { route: '/metrics', status: '200', tool: '' })).toBe(1);
    // The last ingest: when the newest chunk was indexed, in Unix seconds; a later ingest moves it.
    const newest = Math.max(
      ...(await store.getChunks({ sourceIds: store.sources().map((s) => s.sourceId), principals: 'all' })).map((chunk) =>
        Date.parse(chunk.indexedAt),
      ),
    );
    expect(valueOf(samples, 'litm_pack_store_last_ingest_timestamp_seconds')).toBe(newest / 1000);
  });

  it('moves the last ingest time with an ingest that adds content, and back when that content is removed', async () => {
    const own = new MemoryHybridStore();
    const running = await startServer({ store: own, rateLimit: false });
    try {
      const lastIngest = async () =>
        valueOf((await scrape(`${running.url}/metrics`)).samples, 'litm_pack_store_last_ingest_timestamp_seconds');
      expect(await lastIngest()).toBe(0); // an empty store: 0, no time
      await own.addDocuments([{ id: 'first.md', text: 'The first document.' }]);
      const first = await lastIngest();
      expect(first).toBe(Date.parse((await own.getChunks({ sourceIds: ['first.md'] }))[0]!.indexedAt) / 1000);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await own.addDocuments([{ id: 'later.md', text: 'A document ingested later.' }]);
      expect(await lastIngest()).toBeGreaterThan(first!);
      await own.deleteSources(['later.md']);
      expect(await lastIngest()).toBe(first);
    } finally {
      await running.close();
    }
  });

  it('agrees with the request log line for line', () => {
    const { samples } = scraped;
    const requests = samples.filter((s) => s.name === 'litm_pack_http_requests_total' && s.labels.route !== '/metrics');
    expect(requests.reduce((total, s) => total + s.value, 0)).toBe(lines.filter((line) => line.route !== '/metrics').length);
    const refusals = lines.filter((line) => ['forbidden', 'unauthorized', 'rate_limited'].includes(line.code as string));
    expect(refusals.map((line) => `${line.principal as string}:${line.code as string}`).sort()).toEqual([
      'alice:rate_limited',
      'anonymous:forbidden',
      'invalid-key:unauthorized',
    ]);
    const packLines = lines.filter((line) => line.kind === 'bundle');
    expect(packLines.map((line) => line.usedTokens)).toEqual(packs.map((p) => p.budget.usedTokens));
  });
});

describe('tools, kinds, degraded stages and the dense arm', () => {
  it('labels /mcp by tool; counts degraded stages by stage and code, and dense-less hybrid packs', async () => {
    // No embeddings: hybrid runs BM25 alone. A reranker that fails: every reranked pack degrades.
    const lexicalOnly = await fixtureStore({ restricted: false, embeddings: false });
    const failing = { rerank: () => Promise.reject(new LitmPackError('server_error', 'reranker down')) };
    const server = await startServer({ store: lexicalOnly, rateLimit: false, rerank: { reranker: failing, topN: 10, timeoutMs: 60_000 } });
    try {
      const call = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'assemble_bundle', arguments: { query: 'refunds', budget: 200 } },
        }),
      });
      expect(call.status).toBe(200);
      const mcpPack = ((await call.json()) as { result: { structuredContent: Pack } }).result.structuredContent;
      expect(mcpPack.degraded).toEqual([{ stage: 'rerank', code: 'server_error' }]);
      // Lexical asked for, reranker off: neither degraded nor "dense unavailable".
      expect((await fetch(`${server.url}/api/bundle?q=refunds&mode=lexical&rerank=false`)).status).toBe(200);
      const packed = await fetch(`${server.url}/api/pack`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'refunds',
          budget: 100,
          candidates: [{ id: 'a', text: 'Refunds take 14 days.', score: 0.9, similarity: 0.7 }],
        }),
      });
      expect(packed.status).toBe(200);
      const { samples } = await scrape(`${server.url}/metrics`);
      expect(seriesOf(samples, 'litm_pack_http_requests_total')).toEqual([
        '{"route":"/api/bundle","status":"200","tool":""} 1',
        '{"route":"/api/pack","status":"200","tool":""} 1',
        '{"route":"/mcp","status":"200","tool":"assemble_bundle"} 1',
      ]);
      expect(seriesOf(samples, 'litm_pack_degraded_total')).toEqual(['{"code":"server_error","stage":"rerank"} 1']);
      expect(seriesOf(samples, 'litm_pack_dense_unavailable_total')).toEqual(['{"kind":"bundle"} 1']);
      expect(seriesOf(samples, 'litm_pack_confidence_total')).toEqual([
        '{"kind":"bundle","level":"unknown"} 2',
        '{"kind":"pack","level":"partial"} 1',
      ]);
      expect(valueOf(samples, 'litm_pack_budget_used_ratio_count', { kind: 'pack' })).toBe(1);
    } finally {
      await server.close();
    }
  });
});

describe('faults are not refusals', () => {
  it('a store that rate-limits the server is a 503 fault, not a refused caller', async () => {
    const limitedStore = {
      addDocuments: () => Promise.reject(new LitmPackError('rate_limited', 'the store said 429')),
      search: () => Promise.reject(new LitmPackError('rate_limited', 'the store said 429')),
    };
    const server = await startServer({ store: limitedStore, rateLimit: false });
    try {
      const answer = await fetch(`${server.url}/api/bundle?q=refunds`);
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ code: 'rate_limited' });
      const { samples } = await scrape(`${server.url}/metrics`);
      expect(seriesOf(samples, 'litm_pack_http_requests_total')).toEqual(['{"route":"/api/bundle","status":"503","tool":""} 1']);
      expect(seriesOf(samples, 'litm_pack_refused_total')).toEqual([]);
      // A store that does not expose its size has no size gauges.
      expect(samples.some((sample) => sample.name.startsWith('litm_pack_store_'))).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('where the metrics are served', () => {
  it('behind the API keys when they are required, with /healthz and /readyz left open', async () => {
    const server = await startServer({ store, apiKeys: fixtureKeys(), requireAuth: true });
    try {
      expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${server.url}/metrics`, { headers: bearer(KEYS.carol) })).status).toBe(200);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('on a loopback port of their own with metricsPort, and then not on the API', async () => {
    const server = await startServer({ store, apiKeys: fixtureKeys(), requireAuth: true, metricsPort: 0 });
    try {
      expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/u);
      expect(server.metricsUrl).not.toBe(`${server.url}/metrics`);
      expect((await fetch(`${server.url}/api/bundle?q=refunds`, { headers: bearer(KEYS.carol) })).status).toBe(200);
      const { samples } = await scrape(server.metricsUrl as string);
      expect(valueOf(samples, 'litm_pack_http_requests_total', { route: '/api/bundle', status: '200', tool: '' })).toBe(1);
      expect((await fetch(`${server.url}/metrics`, { headers: bearer(KEYS.carol) })).status).toBe(404);
      expect((await fetch(new URL('/api/bundle?q=refunds', server.metricsUrl))).status).toBe(404);
      // A page reaching the listener through a rebinding DNS name is refused.
      const metricsPort = Number(new URL(server.metricsUrl as string).port);
      const forged = await new Promise<number>((resolve, reject) => {
        httpRequest({ host: '127.0.0.1', port: metricsPort, path: '/metrics', headers: { host: 'evil.example.com' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(forged).toBe(403);
    } finally {
      await server.close();
    }
  });

  it('litm-pack serve --metrics-port: a listener of its own, named at start; --metrics-host alone is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-metrics-'));
    try {
      const storeDir = join(dir, 'store');
      expect((await runCli(['ingest', 'examples/corpus', '--store', storeDir, '--quiet'])).code).toBe(0);
      const serve = await spawnServe(['--store', storeDir, '--port', '0', '--metrics-port', '0'], {
        listening: /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/u,
      });
      try {
        const { samples } = await scrape(serve.url);
        expect(valueOf(samples, 'litm_pack_store_chunks')).toBeGreaterThan(0);
        expect(valueOf(samples, 'litm_pack_store_sources')).toBe(7);
      } finally {
        serve.child.kill('SIGTERM');
        expect(await serve.exited).toBe(0);
      }
      const alone = await runCli(['serve', '--store', storeDir, '--metrics-host', '127.0.0.1']);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toContain('--metrics-host needs --metrics-port');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("keeps each server's figures apart in one process (a registry per server)", async () => {
    const first = await startServer({ store, rateLimit: false });
    const second = await startServer({ store, rateLimit: false });
    try {
      await fetch(`${first.url}/api/bundle?q=refunds`);
      await fetch(`${first.url}/api/bundle?q=shipping`);
      const a = await scrape(`${first.url}/metrics`);
      const b = await scrape(`${second.url}/metrics`);
      expect(valueOf(a.samples, 'litm_pack_http_requests_total', { route: '/api/bundle', status: '200', tool: '' })).toBe(2);
      expect(valueOf(b.samples, 'litm_pack_http_requests_total', { route: '/api/bundle', status: '200', tool: '' })).toBeUndefined();
      expect(metricTypes(b.text).get('litm_pack_http_request_duration_seconds')).toBe('histogram');
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

describe('examples/grafana-dashboard.json', () => {
  interface Panel {
    title: string;
    targets?: { expr?: string }[];
  }
  const dashboard = JSON.parse(readFileSync(resolve(import.meta.dirname, '../examples/grafana-dashboard.json'), 'utf8')) as {
    panels: Panel[];
  };

  it('queries only metrics the server exports, and covers every one of them', async () => {
    const server = await startServer({ store, rateLimit: false });
    let types: Map<string, string>;
    try {
      types = metricTypes((await scrape(`${server.url}/metrics`)).text);
    } finally {
      await server.close();
    }
    const queried = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        for (const [name] of (target.expr ?? '').matchAll(/\blitm_pack_[a-z_]+/gu)) {
          // A histogram is queried through its series: name_bucket, name_count, name_sum.
          const family =
            /_(bucket|count|sum)$/u.test(name) && types.get(name.replace(/_(bucket|count|sum)$/u, '')) === 'histogram'
              ? name.replace(/_(bucket|count|sum)$/u, '')
              : name;
          expect(types.has(family), `${panel.title}: ${name}`).toBe(true);
          queried.add(family);
        }
      }
    }
    expect([...queried].sort()).toEqual([...types.keys()].sort());
  });
});
