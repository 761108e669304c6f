// The HTTP API in process (Fastify's inject): routes, formats, defaults and limits, the OpenAPI document,
// a matrix of bad requests, auth, rate limits, the request log and store faults.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryHybridStore,
  PackSchema,
  packBriefing,
  packBundle,
  toCanonicalJson,
  type Pack,
  assembleBriefing,
  HttpReranker,
  type EmbeddingsLike,
} from '../src/index.js';
import { MAX_BUDGET_TOKENS } from '../src/core/schemas.js';
import { retrieveCandidates } from '../src/pipeline/retrieve.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { closedPort, startLoopback } from './helpers/loopback.js';
import { QdrantHybridStore } from '../src/qdrant/index.js';
import { createServer } from '../src/server/index.js';
import { bearer, fixtureKeys, fixtureStore, KEYS, pipelineBundle } from './helpers/serve-fixtures.js';

let store: MemoryHybridStore;
let app: FastifyInstance;

beforeAll(async () => {
  store = await fixtureStore({ restricted: true, idfCorpus: 'visible' });
  app = await createServer({ store, apiKeys: fixtureKeys(), rateLimit: false });
});
afterAll(async () => {
  await app.close();
});

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

/** The same bundle through the library: the pipeline's retrieval, then packBundle. */
async function libraryBundle(
  query: string,
  budget: number,
  principals: string[] = [],
  format: 'markdown' | 'xml' | 'text' = 'markdown',
): Promise<Pack> {
  const { candidates, degraded } = await retrieveCandidates(store, { text: query, mode: 'hybrid', limit: 50, principals });
  // The pipeline records its pool (this store holds fewer than 50 chunks: no widening).
  return packBundle({ query, candidates, maxTokens: budget, format, degraded, pool: { candidates: candidates.length, limit: 50 } });
}

describe('GET|POST /api/bundle', () => {
  it('answers the canonical JSON of the same pack the library builds, from GET and POST alike', async () => {
    const get = await app.inject({ method: 'GET', url: '/api/bundle?q=how%20are%20refunds%20paid&budget=300' });
    expect(get.statusCode).toBe(200);
    expect(get.headers['content-type']).toBe('application/json; charset=utf-8');
    const expected = toCanonicalJson(await libraryBundle('how are refunds paid', 300));
    expect(get.body).toBe(expected);
    const post = await app.inject({ method: 'POST', url: '/api/bundle', payload: { q: 'how are refunds paid', budget: 300 } });
    expect(post.body).toBe(expected);
    const pack = PackSchema.parse(JSON.parse(get.body));
    expect(pack.items.length).toBeGreaterThan(0);
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(300);
  });

  it('answers the context itself as text/markdown (format=md) and in XML blocks (format=xml)', async () => {
    const md = await app.inject({ method: 'GET', url: '/api/bundle?q=shipping%20cost&format=md' });
    expect(md.statusCode).toBe(200);
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.body).toBe((await libraryBundle('shipping cost', 2000)).context);
    const xml = await app.inject({ method: 'GET', url: '/api/bundle?q=shipping%20cost&format=xml' });
    expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(xml.body).toBe((await libraryBundle('shipping cost', 2000, [], 'xml')).context);
    expect(xml.body.startsWith('<documents>')).toBe(true);
    const text = await app.inject({ method: 'GET', url: '/api/bundle?q=shipping%20cost&context_format=text' });
    expect(PackSchema.parse(JSON.parse(text.body)).format).toBe('text');
  });

  it("uses the default budget of 2000 and refuses more than the one budget limit (the library's)", async () => {
    const pack = PackSchema.parse(json((await app.inject({ method: 'GET', url: '/api/bundle?q=refunds' })).body));
    expect(pack.budget.maxTokens).toBe(2000);
    const over = await app.inject({ method: 'GET', url: `/api/bundle?q=refunds&budget=${MAX_BUDGET_TOKENS + 1}` });
    expect(over.statusCode).toBe(400);
    expect(json(over.body)).toMatchObject({ code: 'invalid_input', error: `budget must be at most ${MAX_BUDGET_TOKENS}` });
  });
});

describe('GET|POST /api/briefing', () => {
  it('packs a briefing from a prompt and pins, pins as CSV or a JSON list, with the default budget of 6000', async () => {
    const get = await app.inject({ method: 'GET', url: '/api/briefing?prompt=refunds&pins=handbook/shipping.md,nowhere.md' });
    expect(get.statusCode).toBe(200);
    const pack = PackSchema.parse(JSON.parse(get.body));
    expect(pack.kind).toBe('briefing');
    expect(pack.budget.maxTokens).toBe(6000);
    expect(pack.items[0]?.sourceId).toBe('handbook/shipping.md');
    expect(pack.briefing?.missingPins).toEqual(['nowhere.md']);
    expect(pack.caveats).toContain('Pinned but not found: nowhere.md.');
    const post = await app.inject({
      method: 'POST',
      url: '/api/briefing',
      payload: { prompt: 'refunds', pins: ['handbook/shipping.md', 'nowhere.md'] },
    });
    expect(post.body).toBe(get.body);
    const { candidates } = await retrieveCandidates(store, { text: 'refunds', mode: 'hybrid', limit: 50, principals: [] });
    const library = packBriefing({
      query: 'refunds',
      candidates,
      maxTokens: 6000,
      pins: ['handbook/shipping.md', 'nowhere.md'],
      pool: { candidates: candidates.length, limit: 50 },
    });
    expect(get.body).toBe(toCanonicalJson(library));
    const md = await app.inject({ method: 'GET', url: '/api/briefing?prompt=refunds&format=md' });
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.body).toMatch(/^## Grounding/);
  });

  it('takes its default and largest budget from the configured limits', async () => {
    const custom = await createServer({ store, rateLimit: false, limits: { briefingDefaultBudget: 3000, briefingMaxBudget: 5000 } });
    try {
      const pack = PackSchema.parse(json((await custom.inject({ method: 'GET', url: '/api/briefing?prompt=refunds' })).body));
      expect(pack.budget.maxTokens).toBe(3000);
      const over = await custom.inject({ method: 'GET', url: '/api/briefing?prompt=refunds&budget=5001' });
      expect(json(over.body)).toMatchObject({ code: 'invalid_input', error: 'budget must be at most 5000' });
    } finally {
      await custom.close();
    }
  });
});

describe('POST /api/pack', () => {
  it('packs the candidates sent, byte for byte as packBundle and packBriefing do', async () => {
    const candidates = [
      { id: 'a#0', sourceId: 'a.md', text: 'Refunds are paid within 14 days.', score: 0.9, similarity: 0.7 },
      { id: 'b#0', sourceId: 'b.md', text: 'Shipping is free above 50 euros.', score: 0.5, similarity: 0.4 },
      { id: 'c#0', sourceId: 'c.md', text: 'Refunds are paid within 14 days.', score: 0.4 },
    ];
    const bundle = await app.inject({ method: 'POST', url: '/api/pack', payload: { query: 'refunds', candidates, budget: 100 } });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.body).toBe(toCanonicalJson(packBundle({ query: 'refunds', candidates, maxTokens: 100 })));
    const briefing = await app.inject({
      method: 'POST',
      url: '/api/pack',
      payload: {
        query: 'refunds',
        candidates,
        budget: 400,
        kind: 'briefing',
        pins: ['b.md'],
        format: 'xml',
        dedupe: { near_duplicate_threshold: 0.9 },
        coverage: { strong: 0.6 },
      },
    });
    expect(briefing.statusCode).toBe(200);
    expect(briefing.body).toBe(
      toCanonicalJson(
        packBriefing({
          query: 'refunds',
          candidates,
          maxTokens: 400,
          pins: ['b.md'],
          format: 'xml',
          dedupe: { nearDuplicateThreshold: 0.9, containmentThreshold: 0.5, shingleSize: 5 },
          coverage: { strong: 0.6, strongMinItems: 3, partial: 0.4 },
        }),
      ),
    );
  });
});

describe('GET /api/openapi.json', () => {
  it('describes every route with the limits of the zod schemas, and its Pack schema validates real packs', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = json(response.body) as {
      openapi: string;
      paths: Record<string, Record<string, { parameters?: { name: string; schema?: { maximum?: number } }[] }>>;
      components: { schemas: Record<string, object> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/briefing',
      '/api/bundle',
      '/api/citations/stale',
      '/api/citations/verify',
      '/api/openapi.json',
      '/api/pack',
      '/healthz',
      '/inspect',
      '/mcp',
      '/metrics',
      '/readyz',
    ]);
    const budget = doc.paths['/api/bundle']?.get?.parameters?.find((p) => p.name === 'budget');
    expect(budget?.schema?.maximum).toBe(MAX_BUDGET_TOKENS);
    const briefingBudget = doc.paths['/api/briefing']?.get?.parameters?.find((p) => p.name === 'budget');
    expect(briefingBudget?.schema).toMatchObject({ default: 6000, maximum: MAX_BUDGET_TOKENS });
    // The refine stages' parameters, on every route that retrieves, and pack.degraded in the Pack schema.
    for (const route of ['/api/bundle', '/api/briefing', '/inspect']) {
      const parameters = doc.paths[route]?.get?.parameters ?? [];
      expect(parameters.find((p) => p.name === 'compress')?.schema).toMatchObject({ enum: ['none', 'sentences'], default: 'none' });
      expect(parameters.find((p) => p.name === 'diversity')?.schema).toMatchObject({ minimum: 0, maximum: 1 });
      expect(parameters.find((p) => p.name === 'rerank')?.schema).toMatchObject({ type: 'boolean' });
    }
    const packBody = (
      doc.paths['/api/pack'] as unknown as {
        post: { requestBody: { content: { 'application/json': { schema: { properties: Record<string, object> } } } } };
      }
    ).post.requestBody.content['application/json'].schema;
    expect(packBody.properties.compress).toMatchObject({ enum: ['none', 'sentences'] });
    const packSchema = doc.components.schemas.Pack as {
      required: string[];
      properties: Record<string, { items?: { required?: string[] } }>;
    };
    expect(packSchema.required).toContain('degraded');
    expect(packSchema.properties.degraded?.items?.required?.sort()).toEqual(['code', 'stage']);
    const ajv = new Ajv2020({ strict: false });
    const validatePack = ajv.compile(doc.components.schemas.Pack as object);
    const pack = json((await app.inject({ method: 'GET', url: '/api/bundle?q=refunds' })).body);
    expect(validatePack(pack)).toBe(true);
    expect(validatePack({ ...pack, items: 'none' })).toBe(false);
    const validateError = ajv.compile(doc.components.schemas.Error as object);
    expect(validateError(json((await app.inject({ method: 'GET', url: '/api/bundle' })).body))).toBe(true);
  });
});

interface BadRequest {
  name: string;
  method?: 'GET' | 'POST';
  url: string;
  payload?: unknown;
  headers?: Record<string, string>;
  status: number;
  code: string;
  message?: RegExp;
}

const longQuery = 'a'.repeat(4097);
const BAD_REQUESTS: BadRequest[] = [
  { name: 'missing q', url: '/api/bundle', status: 400, code: 'invalid_input', message: /^q \(query\) parameter required$/ },
  { name: 'blank q', url: '/api/bundle?q=%20%20', status: 400, code: 'invalid_input', message: /^q must not be empty$/ },
  {
    name: 'q over 4096 characters',
    url: `/api/bundle?q=${longQuery}`,
    status: 400,
    code: 'invalid_input',
    message: /^q must be at most 4096 characters$/,
  },
  {
    name: 'budget not a number',
    url: '/api/bundle?q=x&budget=lots',
    status: 400,
    code: 'invalid_input',
    message: /^budget must be a whole number$/,
  },
  {
    name: 'budget not whole',
    url: '/api/bundle?q=x&budget=2.5',
    status: 400,
    code: 'invalid_input',
    message: /^budget must be a whole number$/,
  },
  { name: 'budget zero', url: '/api/bundle?q=x&budget=0', status: 400, code: 'invalid_input', message: /^budget must be at least 1$/ },
  {
    name: 'budget given twice',
    url: '/api/bundle?q=x&budget=1&budget=2',
    status: 400,
    code: 'invalid_input',
    message: /^budget must be a whole number$/,
  },
  {
    name: 'unknown mode',
    url: '/api/bundle?q=x&mode=fuzzy',
    status: 400,
    code: 'invalid_input',
    message: /^mode must be one of hybrid, dense, lexical$/,
  },
  {
    name: 'unknown response format',
    url: '/api/bundle?q=x&format=html',
    status: 400,
    code: 'invalid_input',
    message: /^format must be one of json, md, xml, anthropic$/,
  },
  {
    name: 'pool too large',
    url: '/api/bundle?q=x&limit=1001',
    status: 400,
    code: 'invalid_input',
    message: /^limit must be at most 1000$/,
  },
  {
    name: 'filter not JSON',
    url: '/api/bundle?q=x&filter=sourceId',
    status: 400,
    code: 'invalid_input',
    message: /^filter must be a filter object/,
  },
  {
    name: 'filter clause not supported',
    url: `/api/bundle?q=x&filter=${encodeURIComponent('{"min_should":{"conditions":[],"min_count":1}}')}`,
    status: 400,
    code: 'unsupported_filter',
    message: /filter\.min_should/,
  },
  {
    name: 'the MCP spelling query',
    url: '/api/bundle?query=x',
    status: 400,
    code: 'invalid_input',
    message: /unknown option "query" \(did you mean "q"\?\)/,
  },
  {
    name: 'a misspelt parameter',
    method: 'POST',
    url: '/api/bundle',
    payload: { q: 'x', budgt: 10 },
    status: 400,
    code: 'invalid_input',
    message: /^unknown option "budgt" \(did you mean "budget"\?\)$/,
  },
  {
    name: 'a string budget in JSON',
    method: 'POST',
    url: '/api/bundle',
    payload: { q: 'x', budget: '100' },
    status: 400,
    code: 'invalid_input',
    message: /^budget must be a whole number$/,
  },
  {
    name: 'diversity out of range',
    url: '/api/bundle?q=x&diversity=2',
    status: 400,
    code: 'invalid_input',
    message: /^diversity must be between 0 and 1$/,
  },
  {
    name: 'rerank not a boolean',
    url: '/api/bundle?q=x&rerank=maybe',
    status: 400,
    code: 'invalid_input',
    message: /^rerank must be true or false$/,
  },
  {
    name: 'rerank on a server without a reranker',
    url: '/api/bundle?q=x&rerank=true',
    status: 400,
    code: 'unsupported',
    message: /^rerank: no reranker is configured on this server/,
  },
  {
    name: 'unknown compress mode',
    url: '/api/bundle?q=x&compress=words',
    status: 400,
    code: 'invalid_input',
    message: /^compress must be one of none, sentences$/,
  },
  {
    name: 'diversity below 0 in JSON',
    method: 'POST',
    url: '/api/bundle',
    payload: { q: 'x', diversity: -0.1 },
    status: 400,
    code: 'invalid_input',
    message: /^diversity must be between 0 and 1$/,
  },
  {
    name: 'diversity on a store without embeddings',
    url: '/api/bundle?q=x&diversity=0.5',
    status: 400,
    code: 'unsupported',
    message: /^diversity \(MMR\) needs dense vectors/,
  },
  {
    name: 'diversity in a briefing on a store without embeddings',
    method: 'POST',
    url: '/api/briefing',
    payload: { prompt: 'x', diversity: 0.3 },
    status: 400,
    code: 'unsupported',
    message: /^diversity \(MMR\) needs dense vectors/,
  },
  {
    name: 'compress in a briefing without a prompt',
    url: '/api/briefing?pins=handbook/refunds.md&compress=sentences',
    status: 400,
    code: 'invalid_input',
    message: /^compress works on the prompt's results/,
  },
  {
    name: 'unknown compress mode on a pack',
    method: 'POST',
    url: '/api/pack',
    payload: { query: 'x', candidates: [], compress: 'summary' },
    status: 400,
    code: 'invalid_input',
    message: /^compress must be one of none, sentences$/,
  },
  {
    name: 'context_format against format',
    url: '/api/bundle?q=x&format=md&context_format=xml',
    status: 400,
    code: 'invalid_input',
    message: /^context_format "xml" contradicts format "md"/,
  },
  {
    name: 'k without debug',
    url: '/api/bundle?q=x&k=10',
    status: 400,
    code: 'invalid_input',
    message: /^k applies to debug=rankings only$/,
  },
  { name: 'dense mode without embeddings', url: '/api/bundle?q=x&mode=dense', status: 400, code: 'unsupported_mode' },
  {
    name: 'body is not JSON',
    method: 'POST',
    url: '/api/bundle',
    payload: '{"q": "x",',
    headers: { 'content-type': 'application/json' },
    status: 400,
    code: 'invalid_input',
    message: /not valid JSON/,
  },
  {
    name: 'body is not JSON at all',
    method: 'POST',
    url: '/api/bundle',
    payload: 'q=x',
    headers: { 'content-type': 'text/plain' },
    status: 415,
    code: 'invalid_input',
    message: /application\/json/,
  },
  {
    name: 'briefing with nothing to brief on',
    method: 'POST',
    url: '/api/briefing',
    payload: {},
    status: 400,
    code: 'invalid_input',
    message: /at least one of prompt, pins or clusters/,
  },
  {
    name: 'more than 25 pins',
    url: `/api/briefing?prompt=x&pins=${Array.from({ length: 26 }, (_, i) => `p${i}`).join(',')}`,
    status: 400,
    code: 'invalid_input',
    message: /^pins must list at most 25 pins$/,
  },
  {
    name: 'more than 10 clusters',
    method: 'POST',
    url: '/api/briefing',
    payload: { prompt: 'x', clusters: Array.from({ length: 11 }, (_, i) => `c${i}`) },
    status: 400,
    code: 'invalid_input',
    message: /^clusters must list at most 10 clusters$/,
  },
  {
    name: 'unknown scope mode',
    url: '/api/briefing?prompt=x&scope_mode=wide',
    status: 400,
    code: 'invalid_input',
    message: /^scope_mode must be one of prefer, strict$/,
  },
  {
    name: 'briefing budget over the limit',
    url: `/api/briefing?prompt=x&budget=${MAX_BUDGET_TOKENS + 1}`,
    status: 400,
    code: 'invalid_input',
    message: new RegExp(`^budget must be at most ${MAX_BUDGET_TOKENS}$`),
  },
  {
    name: 'briefing in XML',
    url: '/api/briefing?prompt=x&format=xml',
    status: 400,
    code: 'invalid_input',
    message: /^format must be one of json, md, anthropic$/,
  },
  {
    name: 'a candidate with a text score',
    method: 'POST',
    url: '/api/pack',
    payload: { query: 'x', candidates: [{ id: 'a', text: 't', score: 'high' }] },
    status: 400,
    code: 'invalid_input',
    message: /^candidates\.0\.score: /,
  },
  {
    name: 'unknown pack kind',
    method: 'POST',
    url: '/api/pack',
    payload: { query: 'x', candidates: [], kind: 'summary' },
    status: 400,
    code: 'invalid_input',
    message: /^kind must be one of bundle, briefing$/,
  },
  {
    name: 'pins on a bundle',
    method: 'POST',
    url: '/api/pack',
    payload: { query: 'x', candidates: [], pins: ['a'] },
    status: 400,
    code: 'invalid_input',
    message: /pins apply to kind "briefing" only/,
  },
  {
    name: 'pack without candidates',
    method: 'POST',
    url: '/api/pack',
    payload: { query: 'x' },
    status: 400,
    code: 'invalid_input',
    message: /^candidates is required$/,
  },
  { name: 'no such route', url: '/api/nothing', status: 404, code: 'not_found' },
  {
    name: 'not a bearer key',
    url: '/api/bundle?q=x',
    headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' },
    status: 401,
    code: 'unauthorized',
  },
  { name: 'an unknown key', url: '/api/bundle?q=x', headers: bearer('not-a-configured-key-0000'), status: 401, code: 'unauthorized' },
  {
    name: 'a body over 1 MiB',
    method: 'POST',
    url: '/api/pack',
    payload: { query: 'x', candidates: [{ id: 'a', text: 'x'.repeat(1024 * 1024), score: 1 }] },
    status: 413,
    code: 'too_large',
  },
  {
    name: 'an MCP message over 1 MiB',
    method: 'POST',
    url: '/mcp',
    headers: { accept: 'application/json, text/event-stream' },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_rag_context', arguments: { query: 'x'.repeat(1024 * 1024) } },
    },
    status: 413,
    code: 'too_large',
    message: /larger than 1048576 bytes/,
  },
  {
    name: 'a prompt over 4096 characters',
    method: 'POST',
    url: '/api/briefing',
    payload: { prompt: longQuery },
    status: 400,
    code: 'invalid_input',
    message: /^prompt must be at most 4096 characters$/,
  },
  {
    name: 'a citation check with neither pack nor citations',
    method: 'POST',
    url: '/api/citations/verify',
    payload: {},
    status: 400,
    code: 'invalid_input',
    message: /^Give exactly one of pack or citations$/,
  },
  {
    name: 'a citation without its hash',
    method: 'POST',
    url: '/api/citations/verify',
    payload: { citations: [{ ref: 1, sourceId: 'a.md', chunkId: 'a.md#0' }] },
    status: 400,
    code: 'invalid_input',
    message: /citations\.0\.textSha256/,
  },
  { name: 'the inspector without q', url: '/inspect', status: 400, code: 'invalid_input', message: /^q \(query\) parameter required$/ },
];

describe('bad requests', () => {
  it(`the matrix has at least 20 cases (${BAD_REQUESTS.length})`, () => {
    expect(BAD_REQUESTS.length).toBeGreaterThanOrEqual(20);
  });

  it.each(BAD_REQUESTS)('$name → $status $code', async (bad) => {
    const lexical = await createServer({
      store: await fixtureStore({ restricted: true, embeddings: false }),
      apiKeys: fixtureKeys(),
      rateLimit: false,
    });
    try {
      const response = await lexical.inject({
        method: bad.method ?? 'GET',
        url: bad.url,
        ...(bad.payload === undefined ? {} : { payload: bad.payload as string }),
        ...(bad.headers === undefined ? {} : { headers: bad.headers }),
      });
      expect(response.statusCode).toBe(bad.status);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      // On /mcp the same body is the data of a JSON-RPC error.
      const answer = json(response.body) as { error: unknown; jsonrpc?: string };
      const body = (bad.url === '/mcp' ? (answer.error as { data: unknown }).data : answer) as {
        error: string;
        code: string;
        issues: unknown[];
      };
      if (bad.url === '/mcp') expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, message: body.error } });
      expect(Object.keys(body).sort()).toEqual(['code', 'error', 'issues']);
      expect(body.code).toBe(bad.code);
      if (bad.message !== undefined) expect(body.error).toMatch(bad.message);
      if (bad.status === 401) expect(response.headers['www-authenticate']).toBe('Bearer');
    } finally {
      await lexical.close();
    }
  });
});

describe("sentence selection, diversity and the server's reranker", () => {
  it("compress=sentences answers the pipeline's pack byte for byte (BM25 alone without embeddings), from GET and POST", async () => {
    const query = 'how much does express shipping cost';
    const get = await app.inject({ method: 'GET', url: `/api/bundle?q=${encodeURIComponent(query)}&budget=300&compress=sentences` });
    expect(get.statusCode).toBe(200);
    const expected = toCanonicalJson(await pipelineBundle(store, query, { budget: 300, compress: true }));
    expect(get.body).toBe(expected);
    expect((await app.inject({ method: 'POST', url: '/api/bundle', payload: { q: query, budget: 300, compress: 'sentences' } })).body).toBe(
      expected,
    );
    const pack = PackSchema.parse(JSON.parse(get.body));
    // Selection did select: the shipping chunk keeps its two sentences about cost, each cited by its span.
    const shipping = pack.items.findIndex((item) => item.sourceId === 'handbook/shipping.md');
    expect(pack.items[shipping]?.text).toBe('Shipping is free above 50 euros. Express shipping costs 9 euros and takes one day.');
    expect(pack.citations[shipping]?.spans).toHaveLength(2);
    expect(pack.citations[shipping]?.keptTextSha256).not.toBe(pack.citations[shipping]?.textSha256);
    expect(get.body).not.toBe((await app.inject({ method: 'GET', url: `/api/bundle?q=${encodeURIComponent(query)}&budget=300` })).body);
    expect(pack.degraded).toEqual([]);
  });

  it("with the server's embeddings, sentence selection blends in sentence vectors, as the pipeline does with the same embeddings", async () => {
    const embeddings = new FakeEmbeddings();
    const withVectors = await createServer({ store, rateLimit: false, embeddings });
    try {
      const query = 'how much does express shipping cost';
      const response = await withVectors.inject({
        method: 'GET',
        url: `/api/bundle?q=${encodeURIComponent(query)}&budget=300&compress=sentences`,
      });
      expect(response.statusCode).toBe(200);
      expect(embeddings.documentCalls).toBe(1);
      expect(response.body).toBe(toCanonicalJson(await pipelineBundle(store, query, { budget: 300, compress: true, embeddings })));
    } finally {
      await withVectors.close();
    }
  });

  it("diversity runs MMR in the store: the pipeline's pack byte for byte, and a different pool than pure relevance", async () => {
    // A server whose pools stay at 2 (the budget is not filled, so a larger pool limit would widen them).
    const small = await createServer({ store, rateLimit: false, limits: { defaultPool: 2, ragDefaultPool: 2, maxPool: 2 } });
    try {
      const get = await small.inject({ method: 'GET', url: '/api/bundle?q=refunds&limit=2&diversity=0.5' });
      expect(get.statusCode).toBe(200);
      expect(get.body).toBe(toCanonicalJson(await pipelineBundle(store, 'refunds', { limit: 2, maxPool: 2, diversity: 0.5 })));
      const relevance = PackSchema.parse(JSON.parse((await small.inject({ method: 'GET', url: '/api/bundle?q=refunds&limit=2' })).body));
      const diverse = PackSchema.parse(JSON.parse(get.body));
      expect(diverse.items.map((item) => item.sourceId).sort()).toEqual(['handbook/refunds.md', 'handbook/shipping.md']);
      expect(relevance.items.map((item) => item.sourceId)).toEqual(['handbook/refunds.md', 'handbook/refunds.md']);
      // debug=rankings reports the same diversified search.
      const debug = json(
        (await small.inject({ method: 'GET', url: '/api/bundle?q=refunds&limit=2&diversity=0.5&debug=rankings&k=2' })).body,
      ) as { pack: unknown; rankings: { fused: { id: string }[] } };
      expect(toCanonicalJson(PackSchema.parse(debug.pack))).toBe(get.body);
      expect(debug.rankings.fused.map((r) => r.id).sort()).toEqual(diverse.items.map((item) => item.id).sort());
    } finally {
      await small.close();
    }
  });

  it('a briefing takes compress and diversity as assembleBriefing does', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/briefing',
      payload: {
        prompt: 'express shipping cost and refunds',
        pins: ['handbook/refunds.md'],
        compress: 'sentences',
        diversity: 0.5,
        budget: 400,
      },
    });
    expect(response.statusCode).toBe(200);
    const { pack } = await assembleBriefing({
      store,
      principals: [],
      prompt: 'express shipping cost and refunds',
      pins: ['handbook/refunds.md'],
      compress: { mode: 'sentences' },
      diversity: 0.5,
      maxTokens: 400,
    });
    expect(response.body).toBe(toCanonicalJson(pack));
    expect(pack.items.find((item) => item.sourceId === 'handbook/shipping.md')?.text).not.toContain('prepaid label');
    // The pin stays whole.
    expect(
      pack.items
        .filter((item) => item.sourceId === 'handbook/refunds.md')
        .map((item) => item.text)
        .join(' '),
    ).toContain('Gift cards are never refunded.');
  });

  it('POST /api/pack selects sentences with BM25 alone, as packBundle does', async () => {
    const candidates = [
      {
        id: 'a#0',
        sourceId: 'a.md',
        text: 'Our shop sells many things. Refunds are issued within 14 days of a return. The cafe opens at nine. A receipt is needed for every refund.',
        score: 0.9,
      },
    ];
    const response = await app.inject({
      method: 'POST',
      url: '/api/pack',
      payload: { query: 'how fast are refunds issued', candidates, budget: 200, compress: 'sentences' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(
      toCanonicalJson(packBundle({ query: 'how fast are refunds issued', candidates, maxTokens: 200, compress: { mode: 'sentences' } })),
    );
    expect(PackSchema.parse(JSON.parse(response.body)).items[0]?.text).toContain(' … ');
  });

  it('a reranker that refuses connections degrades the pack instead of failing it: 200, the fused order, pack.degraded and the log say so', async () => {
    const down = { reranker: new HttpReranker({ url: `http://127.0.0.1:${await closedPort()}/rerank` }), timeoutMs: 5000 };
    const lines: string[] = [];
    const reranking = await createServer({ store, rateLimit: false, rerank: down, log: { write: (line: string) => lines.push(line) } });
    try {
      const response = await reranking.inject({ method: 'GET', url: '/api/bundle?q=refunds&budget=300' });
      expect(response.statusCode).toBe(200);
      const pack = PackSchema.parse(JSON.parse(response.body));
      expect(pack.degraded).toEqual([{ stage: 'rerank', code: 'connection_failed' }]);
      expect(pack.items.length).toBeGreaterThan(0);
      expect(response.body).toBe(toCanonicalJson(await pipelineBundle(store, 'refunds', { budget: 300, rerank: down })));
      // Apart from the report, the same pack as without a reranker.
      const plain = PackSchema.parse(JSON.parse((await app.inject({ method: 'GET', url: '/api/bundle?q=refunds&budget=300' })).body));
      expect({ ...pack, degraded: [], packHash: '' }).toEqual({ ...plain, packHash: '' });
      expect(JSON.parse(lines[0] as string)).toMatchObject({ status: 200, degraded: [{ stage: 'rerank', code: 'connection_failed' }] });
      // rerank=false turns the server's reranker off for one request.
      const off = PackSchema.parse(
        JSON.parse((await reranking.inject({ method: 'GET', url: '/api/bundle?q=refunds&budget=300&rerank=false' })).body),
      );
      expect(off).toEqual(plain);
      // A briefing reranks its prompt's results; without a prompt it runs without the reranker.
      const briefing = PackSchema.parse(JSON.parse((await reranking.inject({ method: 'GET', url: '/api/briefing?prompt=refunds' })).body));
      expect(briefing.degraded).toEqual([{ stage: 'rerank', code: 'connection_failed' }]);
      expect(briefing.caveats).toMatch(/rerank/);
      const pinsOnly = await reranking.inject({ method: 'GET', url: '/api/briefing?pins=handbook/refunds.md' });
      expect(pinsOnly.statusCode).toBe(200);
      expect(PackSchema.parse(JSON.parse(pinsOnly.body)).degraded).toEqual([]);
    } finally {
      await reranking.close();
    }
  });

  it('sentence embeddings that fail degrade selection to BM25 alone, reported in pack.degraded', async () => {
    const failing: EmbeddingsLike = {
      embedQuery: () => Promise.reject(Object.assign(new Error('embeddings service down'), { status: 503 })),
      embedDocuments: () => Promise.reject(Object.assign(new Error('embeddings service down'), { status: 503 })),
    };
    const degrading = await createServer({ store, rateLimit: false, embeddings: failing });
    try {
      const query = 'how much does express shipping cost';
      const response = await degrading.inject({
        method: 'GET',
        url: `/api/bundle?q=${encodeURIComponent(query)}&budget=300&compress=sentences`,
      });
      expect(response.statusCode).toBe(200);
      const pack = PackSchema.parse(JSON.parse(response.body));
      expect(pack.degraded).toEqual([{ stage: 'sentence-embeddings', code: 'server_error' }]);
      const bm25 = PackSchema.parse(
        JSON.parse(
          (await app.inject({ method: 'GET', url: `/api/bundle?q=${encodeURIComponent(query)}&budget=300&compress=sentences` })).body,
        ),
      );
      expect({ ...pack, degraded: [], packHash: '' }).toEqual({ ...bm25, packHash: '' });
    } finally {
      await degrading.close();
    }
  });
});

describe('briefings from pins, clusters and a prompt', () => {
  const library = async (request: Record<string, unknown>) =>
    toCanonicalJson((await assembleBriefing({ store, principals: [], maxTokens: 6000, ...request })).pack);

  it('builds one from pins alone, fetched directly: the same bytes as the pipeline the CLI uses', async () => {
    const response = await app.inject({ method: 'GET', url: '/api/briefing?pins=handbook/shipping.md,refunds.md' });
    expect(response.statusCode).toBe(200);
    const pack = PackSchema.parse(JSON.parse(response.body));
    expect(pack.items.map((item) => item.sourceId)).toEqual(expect.arrayContaining(['handbook/shipping.md', 'handbook/refunds.md']));
    expect(pack.items.every((item) => item.role === 'grounding')).toBe(true);
    expect(response.body).toBe(await library({ pins: ['handbook/shipping.md', 'refunds.md'] }));
  });

  it('draws from clusters, and keeps prompt results inside them with scope_mode strict', async () => {
    const clusters = await app.inject({ method: 'POST', url: '/api/briefing', payload: { clusters: ['logistics'], budget: 500 } });
    expect(clusters.statusCode).toBe(200);
    expect(PackSchema.parse(JSON.parse(clusters.body)).items.map((item) => item.sourceId)).toEqual(['handbook/shipping.md']);
    expect(clusters.body).toBe(await library({ clusters: ['logistics'], maxTokens: 500 }));
    const strict = await app.inject({
      method: 'GET',
      url: '/api/briefing?prompt=long%20context%20passages&clusters=logistics&scope_mode=strict',
    });
    const strictPack = PackSchema.parse(JSON.parse(strict.body));
    expect(strictPack.items.every((item) => item.sourceId === 'handbook/shipping.md')).toBe(true);
    const prefer = PackSchema.parse(
      JSON.parse((await app.inject({ method: 'GET', url: '/api/briefing?prompt=long%20context%20passages&clusters=logistics' })).body),
    );
    expect(prefer.items.some((item) => item.sourceId === 'notes/long-context.md')).toBe(true);
    const tiers = await app.inject({
      method: 'POST',
      url: '/api/briefing',
      payload: { prompt: 'refunds', tier_weights: { insight: 1.2 } },
    });
    expect(tiers.statusCode).toBe(200);
  });
});

describe('POST /api/citations/verify', () => {
  it("grades a pack's citations against the store as the caller may see it", async () => {
    const pack = PackSchema.parse(json((await app.inject({ method: 'GET', url: '/api/bundle?q=refunds&budget=300' })).body));
    const response = await app.inject({ method: 'POST', url: '/api/citations/verify', payload: { pack } });
    expect(response.statusCode).toBe(200);
    const { checks } = json(response.body) as { checks: { status: string; ref: number | null; sourceId: string }[] };
    expect(checks.map((check) => check.ref)).toEqual(pack.citations.map((citation) => citation.ref));
    expect(checks.every((check) => check.status === 'current')).toBe(true);
    const gone = await app.inject({
      method: 'POST',
      url: '/api/citations/verify',
      payload: { citations: [{ ...pack.citations[0], sourceId: 'nowhere.md', chunkId: 'nowhere.md#0' }] },
    });
    expect((json(gone.body) as { checks: { status: string }[] }).checks[0]?.status).toBe('missing');
    const both = await app.inject({ method: 'POST', url: '/api/citations/verify', payload: { pack, citations: [] } });
    expect(json(both.body)).toMatchObject({ code: 'invalid_input', error: 'Give exactly one of pack or citations' });
  });
});

describe('debug=rankings', () => {
  it("answers { pack, rankings }: the same pack as without it, and each arm's ranking beside the fused one", async () => {
    const response = await app.inject({ method: 'GET', url: '/api/bundle?q=refunds%20shipping&budget=300&debug=rankings&k=5' });
    expect(response.statusCode).toBe(200);
    const body = json(response.body) as {
      pack: unknown;
      rankings: { mode: string; dense: { id: string; position: number }[]; lexical: unknown[]; fused: { id: string }[] };
    };
    expect(Object.keys(body).sort()).toEqual(['pack', 'rankings']);
    const plain = await app.inject({ method: 'GET', url: '/api/bundle?q=refunds%20shipping&budget=300' });
    expect(toCanonicalJson(PackSchema.parse(body.pack))).toBe(plain.body);
    expect(body.rankings.mode).toBe('hybrid');
    expect(body.rankings.fused.map((r) => r.id)).toEqual(
      (await store.search({ text: 'refunds shipping', mode: 'hybrid', limit: 5, principals: [] })).map((c) => c.id),
    );
    expect(body.rankings.dense.map((r) => r.position)).toEqual(body.rankings.dense.map((_, i) => i + 1));
    expect(body.rankings.lexical.length).toBeLessThanOrEqual(5);
    const md = await app.inject({ method: 'GET', url: '/api/bundle?q=x&debug=rankings&format=md' });
    expect(json(md.body)).toMatchObject({ code: 'invalid_input', error: 'debug=rankings needs format json' });
  });
});

describe('/inspect', () => {
  it('GET renders the HTML report of the bundle the same parameters give; POST renders a pack sent to it', async () => {
    const report = await app.inject({ method: 'GET', url: '/inspect?q=refunds&budget=300' });
    expect(report.statusCode).toBe(200);
    expect(report.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(report.headers['content-security-policy']).toContain("default-src 'none'");
    const pack = PackSchema.parse(json((await app.inject({ method: 'GET', url: '/api/bundle?q=refunds&budget=300' })).body));
    const posted = await app.inject({ method: 'POST', url: '/inspect', payload: pack });
    expect(posted.body).toBe(report.body);
    expect(report.body.startsWith('<!doctype html>') || report.body.startsWith('<!DOCTYPE html>')).toBe(true);
    for (const citation of pack.citations) expect(report.body).toContain(citation.textSha256);
    const notAPack = await app.inject({ method: 'POST', url: '/inspect', payload: { items: 'none' } });
    expect(notAPack.statusCode).toBe(400);
    expect(json(notAPack.body).code).toBe('invalid_input');
  });
});

describe('options', () => {
  it('createServer and createMcpServer reject unknown options, naming the one probably meant', async () => {
    await expect(createServer({ store, requireAuh: true } as never)).rejects.toThrow(
      /unknown option "requireAuh" \(did you mean "requireAuth"\?\)/,
    );
    const { createMcpServer } = await import('../src/mcp/index.js');
    expect(() => createMcpServer({ store, principal: ['hr'] } as never)).toThrow(
      /unknown option "principal" \(did you mean "principals"\?\)/,
    );
    await expect(createServer({ store, limits: { maxPins: -1 } })).rejects.toThrow(/service limits/);
    await expect(createServer({ store, limits: { briefingDefaultBudget: 30_000, briefingMaxBudget: 24_000 } })).rejects.toThrow(
      /briefingDefaultBudget must be at most briefingMaxBudget/,
    );
  });
});

describe('API keys', () => {
  it('are checked when loaded: ids unique, keys long enough, a key or its sha256', async () => {
    const { ApiKeys, parseApiKeys } = await import('../src/server/index.js');
    expect(() => new ApiKeys({ keys: [{ id: 'a', key: 'short' }] })).toThrow(/key must have at least 16 characters/);
    expect(
      () =>
        new ApiKeys({
          keys: [
            { id: 'a', key: KEYS.alice },
            { id: 'a', key: KEYS.bob },
          ],
        }),
    ).toThrow(/id "a" is listed twice/);
    expect(() => new ApiKeys({ keys: [{ id: 'a', key: KEYS.alice, sha256: '0'.repeat(64) }] })).toThrow(/exactly one of key or sha256/);
    expect(() => parseApiKeys('{"keys": [', 'keys.json')).toThrow(/keys.json is not valid JSON/);
    const { createHash } = await import('node:crypto');
    const hashed = new ApiKeys({
      keys: [{ id: 'ci', sha256: createHash('sha256').update(KEYS.carol).digest('hex'), principals: ['eng'] }],
    });
    expect(hashed.callerFor(`Bearer ${KEYS.carol}`)).toMatchObject({ kind: 'key', id: 'ci', principals: ['eng'] });
    expect(hashed.callerFor(undefined)).toMatchObject({ kind: 'anonymous', principals: [] });
    expect(hashed.callerFor(`Bearer ${KEYS.alice}`).kind).toBe('invalid');
    expect(hashed.callerFor(KEYS.carol).kind).toBe('invalid');
  });

  it('are read from --keys FILE, else from the LITM_PACK_API_KEYS variable', async () => {
    const { loadApiKeys } = await import('../src/cli/commands/serve.js');
    const saved = process.env.LITM_PACK_API_KEYS;
    try {
      process.env.LITM_PACK_API_KEYS = JSON.stringify({ keys: [{ id: 'from-env', key: KEYS.bob, principals: ['eng'] }] });
      const fromEnvironment = await loadApiKeys(undefined);
      expect(fromEnvironment?.callerFor(`Bearer ${KEYS.bob}`)).toMatchObject({ kind: 'key', id: 'from-env', principals: ['eng'] });
      process.env.LITM_PACK_API_KEYS = '{"keys": [{"id": "x", "key": "short"}]}';
      await expect(loadApiKeys(undefined)).rejects.toThrow(/^LITM_PACK_API_KEYS: .*key must have at least 16 characters/);
      process.env.LITM_PACK_API_KEYS = '';
      expect(await loadApiKeys(undefined)).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.LITM_PACK_API_KEYS;
      else process.env.LITM_PACK_API_KEYS = saved;
    }
  });

  it('with --require-auth, answers 401 without a key and serves a valid key; /healthz stays open', async () => {
    const strict = await createServer({ store, apiKeys: fixtureKeys(), requireAuth: true, rateLimit: false });
    try {
      const anonymous = await strict.inject({ method: 'GET', url: '/api/bundle?q=refunds' });
      expect(anonymous.statusCode).toBe(401);
      expect(json(anonymous.body).code).toBe('unauthorized');
      const mcp = await strict.inject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      expect(mcp.statusCode).toBe(401);
      const keyed = await strict.inject({ method: 'GET', url: '/api/bundle?q=refunds', headers: bearer(KEYS.carol) });
      expect(keyed.statusCode).toBe(200);
      expect((await strict.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe('rate limits', () => {
  it('answers 429 with Retry-After past the per-client limit, counting each key apart from anonymous callers', async () => {
    const limited = await createServer({ store, apiKeys: fixtureKeys(), rateLimit: { perClient: 3, global: 100, windowMs: 60_000 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await limited.inject({ method: 'GET', url: '/api/openapi.json' })).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const limitedAnswer = await limited.inject({ method: 'GET', url: '/api/openapi.json' });
      expect(limitedAnswer.statusCode).toBe(429);
      expect(Number(limitedAnswer.headers['retry-after'])).toBeGreaterThan(0);
      expect(json(limitedAnswer.body)).toMatchObject({ code: 'rate_limited' });
      // Another client (an API key) has its own allowance; health checks are never limited.
      expect((await limited.inject({ method: 'GET', url: '/api/openapi.json', headers: bearer(KEYS.alice) })).statusCode).toBe(200);
      expect((await limited.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('defaults to 30 calls per second per caller, 200 for the keyed callers together and 100 for the anonymous ones apart', async () => {
    const defaults = await createServer({ store, apiKeys: fixtureKeys() });
    try {
      // One caller: 30 pass, the 31st is refused.
      const one: number[] = [];
      for (let i = 0; i < 31; i += 1)
        one.push((await defaults.inject({ method: 'GET', url: '/api/openapi.json', headers: bearer(KEYS.alice) })).statusCode);
      expect(one).toEqual([...Array<number>(30).fill(200), 429]);
      expect(json((await defaults.inject({ method: 'GET', url: '/api/openapi.json', headers: bearer(KEYS.alice) })).body).error).toMatch(
        /at most 30 per 1000 ms/,
      );
      // Anonymous callers on twelve addresses, 30 each: their own 100 run out ...
      const anonymous: number[] = [];
      for (let client = 0; client < 12; client += 1) {
        for (let i = 0; i < 30; i += 1)
          anonymous.push(
            (await defaults.inject({ method: 'GET', url: '/api/openapi.json', remoteAddress: `10.0.0.${client + 1}` })).statusCode,
          );
      }
      expect(anonymous.filter((status) => status === 200)).toHaveLength(100);
      expect(anonymous.slice(100).every((status) => status === 429)).toBe(true);
      // ... and never what the keyed callers share: bob's and carol's calls all pass (alice's 30 count in the 200).
      const keyed: number[] = [];
      for (const key of [KEYS.bob, KEYS.carol])
        for (let i = 0; i < 30; i += 1)
          keyed.push((await defaults.inject({ method: 'GET', url: '/api/openapi.json', headers: bearer(key) })).statusCode);
      expect(keyed).toEqual(Array(60).fill(200));
    } finally {
      await defaults.close();
    }
  });

  it('counts every JSON-RPC call at /mcp, tools/list too (429 with Retry-After, as a JSON-RPC error)', async () => {
    const limited = await createServer({ store, rateLimit: { perClient: 3, global: 100, windowMs: 60_000 } });
    const rpc = (id: number, method: string, params: unknown = {}) =>
      limited.inject({
        method: 'POST',
        url: '/mcp',
        headers: { accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id, method, params },
      });
    try {
      const call = (id: number) => rpc(id, 'tools/call', { name: 'get_rag_context', arguments: { query: 'refunds' } });
      expect((await call(1)).statusCode).toBe(200);
      expect((await rpc(10, 'tools/list')).statusCode).toBe(200);
      expect((await call(2)).statusCode).toBe(200);
      const fourth = await rpc(11, 'tools/list');
      expect(fourth.statusCode).toBe(429);
      expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0);
      expect(json(fourth.body)).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'rate_limited' } } });
    } finally {
      await limited.close();
    }
  });

  it('answers 429 past the global limit whoever asks', async () => {
    const limited = await createServer({ store, apiKeys: fixtureKeys(), rateLimit: { perClient: 3, global: 5, windowMs: 60_000 } });
    try {
      const statuses: number[] = [];
      for (const key of [KEYS.alice, KEYS.alice, KEYS.bob, KEYS.bob, KEYS.carol, KEYS.carol]) {
        statuses.push((await limited.inject({ method: 'GET', url: '/api/openapi.json', headers: bearer(key) })).statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('request log', () => {
  it('writes one JSON line per request, with the query text only when asked to', async () => {
    for (const logQueries of [false, true]) {
      const lines: string[] = [];
      const logged = await createServer({
        store,
        apiKeys: fixtureKeys(),
        rateLimit: false,
        log: { write: (line: string) => lines.push(line) },
        logQueries,
      });
      try {
        await logged.inject({ method: 'GET', url: '/api/bundle?q=refunds%20policy&budget=50', headers: bearer(KEYS.alice) });
        await logged.inject({ method: 'GET', url: '/api/bundle?q=x&budget=0' });
        await logged.inject({ method: 'GET', url: '/healthz' });
        await logged.inject({
          method: 'POST',
          url: '/mcp',
          headers: { accept: 'application/json, text/event-stream', ...bearer(KEYS.bob) },
          payload: {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'get_rag_context', arguments: { query: 'refunds policy', max_tokens: 60 } },
          },
        });
      } finally {
        await logged.close();
      }
      expect(lines).toHaveLength(4);
      expect(lines.every((line) => line.endsWith('\n') && line.indexOf('\n') === line.length - 1)).toBe(true);
      const [ok, bad, health, tool] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(tool).toMatchObject({
        method: 'POST',
        route: '/mcp',
        tool: 'get_rag_context',
        status: 200,
        principal: 'bob',
        budget: 60,
        items: expect.any(Number),
        confidence: expect.any(String),
      });
      expect(ok).toMatchObject({
        method: 'GET',
        route: '/api/bundle',
        status: 200,
        principal: 'alice',
        budget: 50,
        budgetBound: true,
        confidence: expect.any(String),
      });
      expect(ok?.usedTokens as number).toBeLessThanOrEqual(50);
      expect(ok?.items as number).toBeGreaterThan(0);
      expect(typeof ok?.latencyMs).toBe('number');
      expect(bad).toMatchObject({ status: 400, code: 'invalid_input', principal: 'anonymous' });
      expect(health).toMatchObject({ route: '/healthz', status: 200 });
      if (logQueries) expect(ok?.query).toBe('refunds policy');
      else expect(lines.join('')).not.toContain('refunds policy');
    }
  });
});

describe('store faults', () => {
  it('answers 503 with the typed code when the store refuses connections, on every route that reads it', async () => {
    const down = new QdrantHybridStore({ url: `http://127.0.0.1:${await closedPort()}`, collection: 'docs', retries: 0, timeoutMs: 5000 });
    const faulty = await createServer({ store: down, rateLimit: false });
    try {
      for (const request of [
        { method: 'GET' as const, url: '/api/bundle?q=refunds' },
        { method: 'GET' as const, url: '/api/bundle?q=refunds&format=md' },
        { method: 'POST' as const, url: '/api/briefing', payload: { prompt: 'refunds' } },
        { method: 'GET' as const, url: '/api/briefing?pins=handbook/refunds.md' },
        { method: 'GET' as const, url: '/api/bundle?q=refunds&debug=rankings&k=5' },
        { method: 'GET' as const, url: '/api/bundle?q=refunds&compress=sentences' },
        { method: 'GET' as const, url: '/inspect?q=refunds' },
        {
          method: 'POST' as const,
          url: '/api/citations/verify',
          payload: { citations: [{ ref: 1, sourceId: 'a.md', chunkId: 'a.md#0', textSha256: '0'.repeat(64) }] },
        },
      ]) {
        const response = await faulty.inject(request);
        expect(response.statusCode).toBe(503);
        const body = json(response.body);
        expect(body).toEqual({
          error: 'The store could not answer (connection_failed); try again later',
          code: 'connection_failed',
          issues: [],
        });
        expect(response.body).not.toContain('127.0.0.1');
      }
      // Packing candidates needs no store.
      expect((await faulty.inject({ method: 'POST', url: '/api/pack', payload: { query: 'q', candidates: [] } })).statusCode).toBe(200);
    } finally {
      await faulty.close();
    }
  });

  it('answers 503 timeout when the store accepts the connection and never answers', async () => {
    const silent = await startLoopback(() => undefined);
    const slow = new QdrantHybridStore({ url: silent.url, collection: 'docs', retries: 0, timeoutMs: 300 });
    const faulty = await createServer({ store: slow, rateLimit: false });
    try {
      const response = await faulty.inject({ method: 'GET', url: '/api/bundle?q=refunds' });
      expect(response.statusCode).toBe(503);
      expect(json(response.body)).toEqual({ error: 'The store could not answer (timeout); try again later', code: 'timeout', issues: [] });
      expect(silent.requests.length).toBeGreaterThan(0);
    } finally {
      await faulty.close();
      await silent.close();
    }
  });
});

describe('/mcp', () => {
  it('is stateless: GET and DELETE answer 405', async () => {
    expect((await app.inject({ method: 'GET', url: '/mcp' })).statusCode).toBe(405);
    expect((await app.inject({ method: 'DELETE', url: '/mcp' })).statusCode).toBe(405);
  });
});
