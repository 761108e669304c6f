import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, QdrantHybridStore, pointIdForChunk } from '../src/qdrant/index.js';
import { chunkDocument } from '../src/index.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { qdrantOk, sendJson, startLoopback } from './helpers/loopback.js';
import { failure } from './helpers/failure.js';

// Qdrant answers that break its API contract, Retry-After in both forms, and scrolls that never end, all
// through the store's own HTTP client against a loopback server.

let server: Awaited<ReturnType<typeof startLoopback>>;

beforeAll(async () => {
  server = await startLoopback((_req, res) => qdrantOk(res, null));
});
afterAll(() => server.close());

function store(options: Partial<ConstructorParameters<typeof QdrantHybridStore>[0]> = {}) {
  // Keyword-only writes on purpose: what these stores ingest has no vectors (test/qdrant/lexical-writes.test.ts
  // checks the refusal of such writes into a collection of dense vectors, against the engine).
  return new QdrantHybridStore({ url: server.url, collection: 'docs', retries: 0, retryBaseDelayMs: 1, lexicalOnly: true, ...options });
}

// What a collection litm-pack created records (an ingest reads it once, for the indexed-text recipe).
const COLLECTION_INFO = {
  config: {
    params: { vectors: { dense: { size: 64, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } },
    metadata: { litm_pack: { indexed_text: 'title-headings@1' } },
  },
};
const isCollectionInfo = (req: { method: string; path: string }) => req.method === 'GET' && req.path === '/collections/docs';

const payload = chunkDocument(
  { id: 'tea.md', text: 'Green tea brews best below boiling water.' },
  { indexedAt: '2025-01-01T00:00:00.000Z' },
)[0]!;
const point = (score: unknown) => ({ id: pointIdForChunk(payload.id), version: 1, score, payload });

describe('answers that are not what Qdrant specifies → bad_response naming the field', () => {
  const cases: { name: string; answer: unknown; field: RegExp; mode?: 'lexical' | 'hybrid' }[] = [
    { name: '{points: null}', answer: { result: { points: null }, status: 'ok', time: 0 }, field: /points: .*expected array/ },
    { name: '{result: {}}', answer: { result: {}, status: 'ok', time: 0 }, field: /points: .*expected array/ },
    { name: 'points: "x"', answer: { result: { points: 'x' }, status: 'ok', time: 0 }, field: /points: .*expected array/ },
    { name: 'no result at all', answer: { status: 'ok', time: 0 }, field: /result: the answer has no "result"/ },
    {
      name: 'a point without a score',
      answer: { result: { points: [point(undefined)] }, status: 'ok', time: 0 },
      field: /points\.0\.score: .*expected number/,
    },
    {
      name: 'a string score',
      answer: { result: { points: [point('0.5')] }, status: 'ok', time: 0 },
      field: /points\.0\.score: .*expected number/,
    },
    {
      name: 'a "NaN" score',
      answer: { result: { points: [point('NaN')] }, status: 'ok', time: 0 },
      field: /points\.0\.score: .*expected number/,
    },
    {
      name: 'a point without an id',
      answer: { result: { points: [{ score: 1, version: 1 }] }, status: 'ok', time: 0 },
      field: /points\.0\.id/,
    },
    {
      name: 'query/batch {result: [{}, {}]}',
      answer: { result: [{}, {}], status: 'ok', time: 0 },
      field: /0\.points: .*expected array/,
      mode: 'hybrid',
    },
    {
      name: 'query/batch with one answer for two searches',
      answer: { result: [{ points: [] }], status: 'ok', time: 0 },
      field: /one answer per search/,
      mode: 'hybrid',
    },
  ];
  for (const { name, answer, field, mode = 'lexical' } of cases) {
    it(`search: ${name}`, async () => {
      server.setHandler((req, res) =>
        // The collection is read once before the first search that embeds; its answer is a well-formed one.
        req.method === 'GET'
          ? qdrantOk(res, {
              config: { params: { vectors: { dense: { size: 64, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } } },
            })
          : sendJson(res, 200, answer),
      );
      const s = store(mode === 'hybrid' ? { embeddings: new FakeEmbeddings() } : {});
      const error = await failure(s.search({ text: 'green tea', mode }), 'bad_response');
      expect(error.message).toMatch(field);
      expect(error.message).toMatch(/collection "docs"/);
      expect(error.details.fields ?? error.details).toBeDefined();
    });
  }

  it('a body that is not JSON', async () => {
    server.setHandler((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>proxy login</html>');
    });
    const error = await failure(store().search({ text: 'green tea', mode: 'lexical' }), 'bad_response');
    expect(error.message).toMatch(/not JSON/);
  });

  it('a scroll answer without points (ingest)', async () => {
    server.setHandler((req, res) => {
      if (isCollectionInfo(req)) return qdrantOk(res, COLLECTION_INFO);
      if (req.path.endsWith('/points/scroll')) return sendJson(res, 200, { result: { next_page_offset: null }, status: 'ok', time: 0 });
      qdrantOk(res, { operation_id: 1, status: 'completed' });
    });
    const error = await failure(store().addDocuments([{ id: 'tea.md', text: 'Green tea.' }]), 'bad_response');
    expect(error.message).toMatch(/scroll/);
    expect(error.message).toMatch(/points: .*expected array/);
    expect(server.requests.map((r) => r.path)).toEqual(['/collections/docs', '/collections/docs/points/scroll']);
  });

  it('collection info without config (ensureCollection)', async () => {
    server.setHandler((req, res) => {
      if (req.path.endsWith('/exists')) return qdrantOk(res, { exists: true });
      qdrantOk(res, {});
    });
    const error = await failure(store({ vectorSize: 8 }).ensureCollection(), 'bad_response');
    expect(error.message).toMatch(/config: .*expected object/);
  });

  it('an upsert answer without a status', async () => {
    server.setHandler((req, res) => {
      if (isCollectionInfo(req)) return qdrantOk(res, COLLECTION_INFO);
      if (req.path.endsWith('/points/scroll')) return qdrantOk(res, { points: [], next_page_offset: null });
      qdrantOk(res, { operation_id: 3 });
    });
    const error = await failure(store().addDocuments([{ id: 'tea.md', text: 'Green tea.' }]), 'bad_response');
    expect(error.message).toMatch(/upsert .*status/);
  });

  it('a well-formed answer still works (the checks are not stricter than Qdrant)', async () => {
    server.setHandler((_req, res) => qdrantOk(res, { points: [{ ...point(0.5), shard_key: null, order_value: null, extra: 1 }] }));
    const [candidate] = await store().search({ text: 'green tea', mode: 'lexical' });
    expect(candidate).toMatchObject({ id: payload.id, score: 0.5, sourceId: 'tea.md' });
  });
});

describe('Retry-After, read from the raw answer', () => {
  const limited = (retryAfter: string) =>
    server.setHandler((_req, res) =>
      sendJson(res, 429, { status: { error: 'Too many requests' }, time: 0 }, { 'retry-after': retryAfter }),
    );

  it('seconds: the whole number, not its first digit', async () => {
    limited('30');
    expect((await failure(store().search({ text: 'tea', mode: 'lexical' }), 'rate_limited')).retryAfterMs).toBe(30_000);
    limited('3600');
    expect((await failure(store().search({ text: 'tea', mode: 'lexical' }), 'rate_limited')).retryAfterMs).toBe(3_600_000);
  });

  it('an HTTP date', async () => {
    const at = new Date(Date.now() + 20_000);
    limited(at.toUTCString());
    const error = await failure(store().search({ text: 'tea', mode: 'lexical' }), 'rate_limited');
    // HTTP dates have whole seconds.
    expect(error.retryAfterMs).toBeGreaterThan(18_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(20_000);
    expect(error.status).toBe(429);
  });

  it('is capped: a delay of years is reported as the cap', async () => {
    limited('99999999');
    expect((await failure(store().search({ text: 'tea', mode: 'lexical' }), 'rate_limited')).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
    limited(new Date(Date.now() + 400 * 86_400_000).toUTCString());
    expect((await failure(store().search({ text: 'tea', mode: 'lexical' }), 'rate_limited')).retryAfterMs).toBe(MAX_RETRY_AFTER_MS);
  });

  for (const [form, header] of [
    ['seconds', () => '1'],
    ['HTTP date', () => new Date(Date.now() + 2000).toUTCString()],
  ] as const) {
    it(`a read waits as long as the ${form} form says before retrying`, async () => {
      let calls = 0;
      server.setHandler((_req, res) => {
        calls += 1;
        if (calls === 1) return sendJson(res, 429, { status: { error: 'slow down' }, time: 0 }, { 'retry-after': header() });
        qdrantOk(res, { points: [] });
      });
      await expect(store({ retries: 1 }).search({ text: 'tea', mode: 'lexical' })).resolves.toEqual([]);
      expect(server.requests).toHaveLength(2);
      // Seconds "1" is one second; the date is 2 s ahead truncated to whole seconds, so more than 1 s.
      expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(950);
    });
  }
});

describe('scrolls that do not advance → bad_response instead of a loop', () => {
  const records = (ids: string[]) => ids.map((id) => ({ id, payload: { ...payload, id: `tea.md#${id}` } }));
  const ids = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'];

  function scrollServer(page: (call: number) => { points: unknown[]; next_page_offset: string | null }) {
    let calls = 0;
    server.setHandler((req, res) => {
      if (isCollectionInfo(req)) return qdrantOk(res, COLLECTION_INFO);
      if (req.path.endsWith('/points/scroll')) {
        calls += 1;
        // A loop that ran on would get an end after 200 pages, and the ingest would then succeed.
        return qdrantOk(res, calls > 200 ? { points: [], next_page_offset: null } : page(calls));
      }
      qdrantOk(res, { operation_id: 1, status: 'completed' });
    });
  }

  const scrolls = () => server.requests.filter((r) => r.path.endsWith('/points/scroll'));

  it('the same next_page_offset again and again', async () => {
    scrollServer(() => ({ points: records([ids[0]!]), next_page_offset: ids[0]! }));
    const error = await failure(store().addDocuments([{ id: 'tea.md', text: 'Green tea.' }]), 'bad_response');
    expect(error.message).toMatch(/next_page_offset/);
    expect(scrolls().length).toBeLessThanOrEqual(3);
    expect(server.requests.some((r) => r.method === 'PUT')).toBe(false);
  });

  it('offsets that cycle', async () => {
    scrollServer((call) => ({ points: records([ids[call % 2]!]), next_page_offset: ids[(call + 1) % 2]! }));
    const error = await failure(store().addDocuments([{ id: 'tea.md', text: 'Green tea.' }]), 'bad_response');
    expect(error.message).toMatch(/a second time|does not advance/);
    expect(scrolls().length).toBeLessThanOrEqual(4);
  });

  it('fresh offsets but pages of nothing new', async () => {
    scrollServer((call) => ({
      points: records([ids[0]!]),
      next_page_offset: `00000000-0000-4000-8000-${String(100 + call).padStart(12, '0')}`,
    }));
    const error = await failure(store().addDocuments([{ id: 'tea.md', text: 'Green tea.' }]), 'bad_response');
    expect(error.message).toMatch(/no new points/);
    expect(scrolls().length).toBeLessThanOrEqual(3);
  });

  it('a scroll that ends is read to the end', async () => {
    scrollServer((call) => ({ points: records([ids[call - 1]!]), next_page_offset: call < 3 ? ids[call]! : null }));
    await expect(store().addDocuments([{ id: 'tea.md', text: 'Green tea.' }])).resolves.toBeDefined();
    expect(scrolls().map((r) => (r.body as { offset?: string }).offset ?? null)).toEqual([null, ids[1], ids[2]]);
  });
});
