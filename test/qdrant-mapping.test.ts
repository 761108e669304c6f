import { Document } from '@langchain/core/documents';
import { NodeRelationship, TextNode } from '@llamaindex/core/schema';
import { nodeToMetadata } from '@llamaindex/core/vector-store';
import { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, type Schemas } from '@qdrant/js-client-rest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  LitmPackError,
  isLitmPackError,
  type LitmPackErrorCode,
  CandidateSchema,
  encodeBm25Query,
  chunkDocument,
  type ChunkRecord,
} from '../src/index.js';
import {
  QdrantHybridStore,
  buildAccessFilter,
  buildCreateCollection,
  buildHybridQueryBatch,
  buildSearchFilter,
  callQdrant,
  checkCollection,
  parseRetryAfter,
  pointIdForChunk,
  pointToCandidate,
  toQdrantError,
  toQdrantFusion,
  QDRANT_CLIENT_METHODS,
  type CallPolicy,
  type QdrantClientLike,
} from '../src/qdrant/index.js';
import { chunkToCandidate } from '../src/store/chunk.js';
import { aclFilter } from '../src/store/filter.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { bodyText, urlOf } from './helpers/fetch-call.js';

type ScoredPoint = Schemas['ScoredPoint'];
type QueryResponse = Schemas['QueryResponse'];

// ---------------------------------------------------------------------------------------------
// Helpers

/** A typed fake client: every method throws unless the test provides it. */
function fakeClient(overrides: Partial<QdrantClientLike>): QdrantClientLike {
  const unexpected = (name: string) => (): never => {
    throw new Error(`unexpected client call: ${name}`);
  };
  const client = Object.fromEntries(QDRANT_CLIENT_METHODS.map((name) => [name, unexpected(name)])) as unknown as QdrantClientLike;
  return Object.assign(client, overrides);
}

/** What `getCollection` answers for a collection with these vectors (the store reads it before a search that embeds). */
function collectionWith(vectors: Record<string, unknown>, sparse: Record<string, unknown> | null = { bm25: { modifier: 'idf' } }) {
  return () =>
    Promise.resolve({
      status: 'green',
      optimizer_status: 'ok',
      segments_count: 1,
      config: { params: { vectors, ...(sparse === null ? {} : { sparse_vectors: sparse }) } },
      payload_schema: {},
    } as unknown as Schemas['CollectionInfo']);
}

function expectCode(error: unknown, code: LitmPackErrorCode): LitmPackError {
  expect(isLitmPackError(error, code), `expected ${code}, got ${String(error)}`).toBe(true);
  return error as LitmPackError;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const record: ChunkRecord = chunkDocument(
  {
    id: 'handbook.md',
    version: 'v3',
    title: 'Handbook',
    text: '# Leave\n\nParental leave is sixteen weeks at full pay.',
    acl: ['hr'],
    metadata: { team: 'hr' },
  },
  { indexedAt: '2025-01-01T00:00:00.000Z' },
)[0]!;

function scored(id: string, score: number, payload: Record<string, unknown> | null = null): ScoredPoint {
  return { id, version: 1, score, payload };
}

const userFilter = { must: [{ key: 'metadata.team', match: { value: 'hr' } }] };
const expectedFilter = {
  must: [
    { must: [{ key: 'metadata.team', match: { value: 'hr' } }] },
    { should: [{ is_empty: { key: 'acl' } }, { key: 'acl', match: { any: ['hr', 'alice'] } }] },
  ],
};

// ---------------------------------------------------------------------------------------------

describe('hybrid request', () => {
  it('is one points/query/batch HTTP call: fused query + cosine re-score, filter inside every query and prefetch', async () => {
    const calls: { url: string; method: string; body: unknown }[] = [];
    const fetchMock = vi.fn(async (input: string | URL | Request, init?: RequestInit) => {
      if ((init?.method ?? 'GET') === 'GET') {
        calls.push({ url: urlOf(input), method: 'GET', body: null });
        return Response.json({ result: await collectionWith({ dense: { size: 8, distance: 'Cosine' } })(), status: 'ok', time: 0 });
      }
      calls.push({ url: urlOf(input), method: init?.method ?? 'GET', body: JSON.parse(bodyText(init)) as unknown });
      const points = [scored(pointIdForChunk(record.id), 0.5, { ...record })];
      return Response.json({ result: [{ points }, { points: [scored(pointIdForChunk(record.id), 0.8)] }], status: 'ok', time: 0 });
    });
    vi.stubGlobal('fetch', fetchMock);
    const embeddings = new FakeEmbeddings({ dimension: 8 });
    const store = new QdrantHybridStore({ url: 'http://qdrant.test:6333', collection: 'docs', embeddings });
    const text = 'parental leave weeks';
    // The first search that embeds reads the collection once (its vectors and dimension); then one call each.
    await store.search({ text, filter: userFilter, principals: ['hr', 'alice'] });
    expect(calls.map((call) => `${call.method} ${call.url}`)).toEqual([
      'GET http://qdrant.test:6333/collections/docs',
      'POST http://qdrant.test:6333/collections/docs/points/query/batch',
    ]);
    calls.length = 0;
    const results = await store.search({ text, filter: userFilter, principals: ['hr', 'alice'] });

    expect(calls).toHaveLength(1);
    expect(calls[0]!.method).toBe('POST');
    expect(calls[0]!.url).toBe('http://qdrant.test:6333/collections/docs/points/query/batch');
    const dense = embeddings.embed(text);
    const sparse = encodeBm25Query(text);
    const densePrefetch = { query: dense, using: 'dense', limit: 50, filter: expectedFilter };
    const lexicalPrefetch = { query: sparse, using: 'bm25', limit: 50, filter: expectedFilter };
    expect(calls[0]!.body).toEqual({
      searches: [
        {
          prefetch: [densePrefetch, lexicalPrefetch],
          query: { fusion: 'rrf' },
          filter: expectedFilter,
          limit: 10,
          with_payload: true,
          with_vector: false,
        },
        {
          prefetch: [densePrefetch, lexicalPrefetch],
          query: dense,
          using: 'dense',
          filter: expectedFilter,
          limit: 100,
          with_payload: false,
          with_vector: false,
        },
      ],
    });
    expect(results).toEqual([chunkToCandidate(record, 0.5, 0.8)]);
  });

  it('sends rrf k and weights in prefetch order (dense, lexical) and dbsf as Qdrant spells them', () => {
    expect(toQdrantFusion({ method: 'rrf' })).toEqual({ fusion: 'rrf' });
    expect(toQdrantFusion({ method: 'rrf', k: 60 })).toEqual({ rrf: { k: 60 } });
    expect(toQdrantFusion({ method: 'rrf', weights: { dense: 2, lexical: 0.5 } })).toEqual({ rrf: { weights: [2, 0.5] } });
    expect(toQdrantFusion({ method: 'dbsf' })).toEqual({ fusion: 'dbsf' });
  });

  it('uses the request fusion over the store default, and the unnamed vector has no `using`', async () => {
    const seen: unknown[] = [];
    const client = fakeClient({
      getCollection: collectionWith({ size: 4, distance: 'Cosine' }),
      queryBatch: (_collection, args) => {
        seen.push(args);
        return Promise.resolve([{ points: [] }, { points: [] }]);
      },
    });
    const store = new QdrantHybridStore({
      client,
      collection: 'docs',
      embeddings: new FakeEmbeddings({ dimension: 4 }),
      denseVectorName: '',
      fusion: { method: 'dbsf' },
      prefetchLimit: 7,
    });
    await store.search({
      text: 'sourdough bread',
      limit: 3,
      fusion: { method: 'rrf', k: 5, weights: { dense: 1, lexical: 3 } },
      principals: 'all',
    });
    const body = seen[0] as { searches: Record<string, unknown>[] };
    expect(body.searches[0]!.query).toEqual({ rrf: { k: 5, weights: [1, 3] } });
    const prefetch = body.searches[0]!.prefetch as Record<string, unknown>[];
    expect(prefetch[0]).not.toHaveProperty('using');
    expect(prefetch[0]!.limit).toBe(7);
    expect(prefetch[1]!.using).toBe('bm25');
    expect(body.searches[1]).not.toHaveProperty('using');
    expect(body.searches[1]!.limit).toBe(14);
    expect(body.searches[0]).not.toHaveProperty('filter');
  });

  it('never lets a prefetch be smaller than the limit', () => {
    const body = buildHybridQueryBatch({
      denseVector: [1, 0],
      sparseVector: { indices: [1], values: [1] },
      limit: 5,
      denseLimit: 5,
      lexicalLimit: 5,
      filter: undefined,
      fusion: { method: 'rrf' },
      vectors: { dense: 'd', sparse: 's' },
      withPayload: true,
    });
    expect(body.searches[1]!.limit).toBe(10);
  });
});

describe('dense and lexical requests', () => {
  it('are one points/query each, with the filter inside; dense scores are the similarity', async () => {
    const queries: unknown[] = [];
    const client = fakeClient({
      getCollection: collectionWith({ dense: { size: 4, distance: 'Cosine' } }),
      query: (_collection, args): Promise<QueryResponse> => {
        queries.push(args);
        return Promise.resolve({ points: [scored(pointIdForChunk(record.id), 0.75, { ...record })] });
      },
    });
    const embeddings = new FakeEmbeddings({ dimension: 4 });
    const store = new QdrantHybridStore({ client, collection: 'docs', embeddings });
    const dense = await store.search({ text: 'leave', mode: 'dense', principals: ['hr'] });
    const lexical = await store.search({ text: 'leave', mode: 'lexical', limit: 3, principals: 'all' });
    expect(queries).toEqual([
      {
        query: embeddings.embed('leave'),
        using: 'dense',
        limit: 10,
        filter: { should: [{ is_empty: { key: 'acl' } }, { key: 'acl', match: { any: ['hr'] } }] },
        with_payload: true,
        with_vector: false,
      },
      { query: encodeBm25Query('leave'), using: 'bm25', limit: 3, with_payload: true, with_vector: false },
    ]);
    expect(dense[0]!.similarity).toBe(0.75);
    expect(lexical[0]).not.toHaveProperty('similarity');
  });

  it('sorts ties by id (Qdrant leaves them in engine order)', async () => {
    const [a, b] = chunkDocument(
      { id: 's', text: 'First paragraph about tea.\n\nSecond paragraph about tea.' },
      { indexedAt: '2025-01-01T00:00:00Z', maxTokens: 8 },
    ) as [ChunkRecord, ChunkRecord];
    const [low, high] = a.id < b.id ? [a, b] : [b, a];
    const client = fakeClient({
      query: () =>
        Promise.resolve({
          points: [scored('2', 1, { ...high }), scored('1', 1, { ...low }), scored('3', 2, { ...high, id: 's#z' })],
        }),
    });
    const store = new QdrantHybridStore({ client, collection: 'docs' });
    const results = await store.search({ text: 'tea', mode: 'lexical' });
    expect(results.map((c) => c.id)).toEqual(['s#z', low.id, high.id]);
  });

  it('sends nothing for a query of stopwords only in lexical mode', async () => {
    const store = new QdrantHybridStore({ client: fakeClient({}), collection: 'docs' });
    await expect(store.search({ text: 'the and of', mode: 'lexical' })).resolves.toEqual([]);
  });
});

describe('filters', () => {
  it('builds the same ACL filter as the memory store', () => {
    expect(buildAccessFilter(['a', 'b'])).toEqual(aclFilter(['a', 'b']));
    expect(buildAccessFilter([])).toEqual(aclFilter([]));
    expect(buildAccessFilter(['x'], 'metadata.acl')).toEqual({
      should: [{ is_empty: { key: 'metadata.acl' } }, { key: 'metadata.acl', match: { any: ['x'] } }],
    });
  });

  it('keeps empty must and must_not clauses as they are', () => {
    expect(buildSearchFilter({ must: [], must_not: [] }, 'all')).toEqual({ must: [], must_not: [] });
  });

  it('normalises single conditions to lists', () => {
    expect(buildSearchFilter({ must: { key: 'n', range: { gte: 1, lt: 5 } } }, 'all')).toEqual({
      must: [{ key: 'n', range: { gte: 1, lt: 5 } }],
    });
    expect(buildSearchFilter(undefined, 'all')).toBeUndefined();
    expect(buildSearchFilter({ must_not: [{ key: 'k', match: { except: [1, 2] } }] }, [])).toEqual({
      must: [{ must_not: [{ key: 'k', match: { except: [1, 2] } }] }, { must: [{ is_empty: { key: 'acl' } }] }],
    });
  });

  it('rejects filters outside the supported subset before any request', async () => {
    const store = new QdrantHybridStore({ client: fakeClient({}), collection: 'docs' });
    const error = await rejection(store.search({ text: 'tea', filter: { must: [{ has_id: [1] }] } as never }));
    expectCode(error, 'unsupported_filter');
  });
});

describe('modes', () => {
  it('without embeddings, hybrid is one lexical query and dense is unsupported', async () => {
    const queries: unknown[] = [];
    const client = fakeClient({
      query: (_collection, args) => {
        queries.push(args);
        return Promise.resolve({ points: [] });
      },
    });
    const store = new QdrantHybridStore({ client, collection: 'docs' });
    await store.search({ text: 'cookies', principals: 'all' });
    expect(queries).toEqual([{ query: encodeBm25Query('cookies'), using: 'bm25', limit: 10, with_payload: true, with_vector: false }]);
    // Without principals a search is anonymous: the ACL filter is inside the query.
    await store.search({ text: 'cookies' });
    expect(queries[1]).toMatchObject({ filter: { must: [{ is_empty: { key: 'acl' } }] } });
    const error = expectCode(await rejection(store.search({ text: 'cookies', mode: 'dense' })), 'unsupported_mode');
    expect(error.message).toMatch(/embeddings/);
  });

  it('a collection without a sparse vector cannot serve lexical, and says so; hybrid runs on the dense vector', async () => {
    const queries: unknown[] = [];
    const store = new QdrantHybridStore({
      client: fakeClient({
        getCollection: collectionWith({ size: 4, distance: 'Cosine' }, null),
        query: (_collection, args): Promise<QueryResponse> => {
          queries.push(args);
          return Promise.resolve({ points: [] });
        },
      }),
      collection: 'lc',
      payloadPreset: 'langchain-js',
      embeddings: new FakeEmbeddings({ dimension: 4 }),
    });
    const error = expectCode(await rejection(store.search({ text: 'cookies', mode: 'lexical' })), 'unsupported_mode');
    expect(error.message).toMatch(/sparse/);
    expect(error.message).toMatch(/sparseVectorName/);
    await store.search({ text: 'cookies', mode: 'hybrid' });
    expect(queries).toMatchObject([{ query: new FakeEmbeddings({ dimension: 4 }).embed('cookies'), limit: 10 }]);
    expect((await store.rankings({ text: 'cookies' })).mode).toBe('dense');
  });

  it('only the litm preset can be written', async () => {
    const store = new QdrantHybridStore({ client: fakeClient({}), collection: 'lc', payloadPreset: 'llamaindex' });
    expectCode(await rejection(store.addDocuments([{ id: 'a', text: 'x' }])), 'unsupported');
  });
});

// ---------------------------------------------------------------------------------------------

describe('payload presets', () => {
  it('litm: the payload is the chunk record, mapped by the shared chunkToCandidate', () => {
    const point = { id: pointIdForChunk(record.id), score: 0.3, payload: JSON.parse(JSON.stringify(record)) as Record<string, unknown> };
    expect(pointToCandidate(point, 'litm', 0.9)).toEqual(chunkToCandidate(record, 0.3, 0.9));
  });

  it('litm: a foreign payload is corrupt, naming the point and the preset', () => {
    const error = expectCode(
      (() => {
        try {
          pointToCandidate({ id: 7, score: 1, payload: { content: 'x' } }, 'litm');
        } catch (e) {
          return e;
        }
      })(),
      'corrupt',
    );
    expect(error.message).toMatch(/Point 7/);
    expect(error.message).toMatch(/payloadPreset/);
  });

  it('langchain-js: content + metadata as @langchain/qdrant writes them', () => {
    const doc = new Document({
      pageContent: 'Cookies need butter.',
      metadata: { source: 'cookies.md', title: 'Cookies', loc: { lines: { from: 1, to: 3 } } },
    });
    // @langchain/qdrant's addVectors payload (customPayload undefined disappears in JSON).
    const payload = JSON.parse(JSON.stringify({ content: doc.pageContent, metadata: doc.metadata, customPayload: undefined })) as Record<
      string,
      unknown
    >;
    const candidate = pointToCandidate({ id: 'b7c3a0e2-0000-4000-8000-000000000001', score: 0.42, payload }, 'langchain-js', 0.42);
    expect(CandidateSchema.parse(candidate)).toEqual({
      id: 'b7c3a0e2-0000-4000-8000-000000000001',
      text: 'Cookies need butter.',
      score: 0.42,
      similarity: 0.42,
      sourceId: 'cookies.md',
      title: 'Cookies',
      metadata: { source: 'cookies.md', title: 'Cookies', loc: { lines: { from: 1, to: 3 } } },
    });
  });

  it('langchain-python: page_content + metadata; the point id is the fallback source', () => {
    const candidate = pointToCandidate({ id: 12, score: 1.5, payload: { page_content: 'Tea.', metadata: null } }, 'langchain-python');
    expect(candidate).toEqual({ id: '12', text: 'Tea.', score: 1.5, sourceId: '12', metadata: {} });
  });

  it('llamaindex (TS): node text from _node_content, flattened metadata, ref doc as source, char span', () => {
    const node = new TextNode({
      id_: 'node-1',
      text: 'Sourdough needs a starter.',
      metadata: { file_name: 'bread.md', topic: 'baking' },
      startCharIdx: 10,
      endCharIdx: 36,
      relationships: { [NodeRelationship.SOURCE]: { nodeId: 'doc-bread', metadata: { file_name: 'bread.md', topic: 'baking' } } },
    });
    const payload = nodeToMetadata(node);
    const candidate = pointToCandidate({ id: 'node-1', score: 0.6, payload }, 'llamaindex', 0.6);
    expect(CandidateSchema.parse(candidate)).toEqual({
      id: 'node-1',
      text: 'Sourdough needs a starter.',
      score: 0.6,
      similarity: 0.6,
      sourceId: 'doc-bread',
      title: 'bread.md',
      span: { start: 10, end: 36 },
      metadata: { file_name: 'bread.md', topic: 'baking' },
    });
  });

  it('llamaindex (Python): snake_case node JSON and "None" refs fall back to the node id', () => {
    const payload = {
      _node_content: JSON.stringify({ id_: 'n2', text: 'Tomatoes like sun.', start_char_idx: 0, end_char_idx: 18 }),
      _node_type: 'TextNode',
      document_id: 'None',
      doc_id: 'None',
      ref_doc_id: 'None',
      lang: 'en',
    };
    expect(pointToCandidate({ id: 'n2', score: 2, payload }, 'llamaindex')).toEqual({
      id: 'n2',
      text: 'Tomatoes like sun.',
      score: 2,
      sourceId: 'n2',
      span: { start: 0, end: 18 },
      metadata: { lang: 'en' },
    });
  });

  it('clamps float overshoot of the cosine into [-1, 1]', () => {
    const candidate = pointToCandidate({ id: 1, score: 1, payload: { page_content: 'x' } }, 'langchain-python', 1.0000001);
    expect(candidate.similarity).toBe(1);
  });
});

describe('collection config', () => {
  const info = (params: Record<string, unknown>, payloadSchema: Record<string, unknown> = {}): Schemas['CollectionInfo'] =>
    ({
      status: 'green',
      optimizer_status: 'ok',
      segments_count: 1,
      config: { params },
      payload_schema: payloadSchema,
    }) as unknown as Schemas['CollectionInfo'];

  it('creates a named cosine dense vector and an IDF sparse vector (or the unnamed vector)', () => {
    expect(buildCreateCollection({ dense: 'dense', sparse: 'bm25' }, 384)).toEqual({
      vectors: { dense: { size: 384, distance: 'Cosine' } },
      sparse_vectors: { bm25: { modifier: 'idf' } },
    });
    expect(buildCreateCollection({ dense: '', sparse: null }, 3)).toEqual({ vectors: { size: 3, distance: 'Cosine' } });
  });

  it('names every difference of an existing collection', () => {
    const check = checkCollection(
      info(
        { vectors: { dense: { size: 8, distance: 'Dot' } }, sparse_vectors: { bm25: {} } },
        { sourceId: { data_type: 'integer', points: 0 } },
      ),
      { vectors: { dense: 'dense', sparse: 'bm25' }, size: 16, payloadIndexes: { sourceId: 'keyword', acl: 'keyword' } },
    );
    expect(check.mismatches).toEqual([
      'dense vector "dense" has size 8, the embeddings give 16',
      'dense vector "dense" uses Dot distance, cosine is required',
      'sparse vector "bm25" has modifier "none", "idf" is required for BM25',
      'payload index "sourceId" has type integer, keyword is required',
    ]);
    expect(check.missingIndexes).toEqual([['acl', 'keyword']]);
  });

  it('compares sharding, replication, the tenant index and the recorded model, each when asked', () => {
    const existing = info(
      {
        vectors: { dense: { size: 8, distance: 'Cosine' } },
        sparse_vectors: { bm25: { modifier: 'idf' } },
        shard_number: 3,
        replication_factor: 2,
        write_consistency_factor: 1,
      },
      { tenant: { data_type: 'keyword', points: 0 } },
    );
    (existing.config as { metadata?: unknown }).metadata = { litm_pack: { embedding_model: 'model-a', dense_dimension: 8 } };
    const vectors = { dense: 'dense', sparse: 'bm25' };
    expect(checkCollection(existing, { vectors, size: 8, payloadIndexes: {} }).mismatches).toEqual([]);
    const check = checkCollection(existing, {
      vectors,
      size: 8,
      payloadIndexes: { tenant: { type: 'keyword', is_tenant: true } },
      embeddingModel: 'model-b',
      cluster: { shardingMethod: 'custom', shardNumber: 6, replicationFactor: 2, writeConsistencyFactor: 2 },
    });
    expect(check.mismatches).toEqual([
      expect.stringMatching(/^its dense vectors come from embedding model "model-a" \(8 dimensions\) and this store embeds with "model-b"/),
      expect.stringMatching(/^it uses automatic sharding and tenancy "shard-key" needs sharding_method "custom"/),
      expect.stringMatching(/^shard_number is 3, this store asks for 6/),
      expect.stringMatching(/^write_consistency_factor is 1, this store asks for 2/),
      'payload index "tenant" is not a tenant index (is_tenant: true is required; recreate the index)',
    ]);
  });

  it('creates a custom-sharded, replicated collection with metadata when asked', () => {
    expect(
      buildCreateCollection({ dense: 'dense', sparse: 'bm25' }, 4, {
        metadata: { litm_pack: { dense_dimension: 4 } },
        cluster: { shardingMethod: 'custom', shardNumber: 2, replicationFactor: 3, writeConsistencyFactor: 2 },
      }),
    ).toEqual({
      vectors: { dense: { size: 4, distance: 'Cosine' } },
      sparse_vectors: { bm25: { modifier: 'idf' } },
      sharding_method: 'custom',
      shard_number: 2,
      replication_factor: 3,
      write_consistency_factor: 2,
      metadata: { litm_pack: { dense_dimension: 4 } },
    });
    expect(buildCreateCollection({ dense: '', sparse: null }, 3, { cluster: { shardingMethod: 'auto' } })).toEqual({
      vectors: { size: 3, distance: 'Cosine' },
    });
  });

  it('reports missing vectors with what the collection has', () => {
    const check = checkCollection(info({ vectors: { size: 4, distance: 'Cosine' } }), {
      vectors: { dense: 'dense', sparse: 'bm25' },
      size: undefined,
      payloadIndexes: {},
    });
    expect(check.mismatches[0]).toMatch(/dense vector "dense" is missing \(collection has dense: \(unnamed\); sparse: none\)/);
    expect(check.mismatches[1]).toMatch(/sparse vector "bm25" is missing/);
  });

  it('ensureCollection throws config_mismatch naming the differences; no I/O before it is called', async () => {
    const calls: string[] = [];
    const client = fakeClient({
      collectionExists: () => {
        calls.push('collectionExists');
        return Promise.resolve({ exists: true });
      },
      getCollection: () => {
        calls.push('getCollection');
        return Promise.resolve(
          info({ vectors: { dense: { size: 4, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } }),
        );
      },
    });
    const store = new QdrantHybridStore({ client, collection: 'docs', vectorSize: 8 });
    expect(calls).toEqual([]);
    const error = expectCode(await rejection(store.ensureCollection()), 'config_mismatch');
    expect(error.message).toMatch(/"docs".*size 4, the embeddings give 8/);
  });
});

// ---------------------------------------------------------------------------------------------

describe('options', () => {
  it('are validated at construction with a message that says how to fix them', () => {
    const error = expectCode(
      (() => {
        try {
          return new QdrantHybridStore({ collection: 'docs' });
        } catch (e) {
          return e;
        }
      })(),
      'invalid_input',
    );
    expect(error.message).toMatch(/either client .* or url/);
    expect(() => new QdrantHybridStore({ url: 'ftp://x', collection: 'docs' })).toThrow(/http/);
    expect(() => new QdrantHybridStore({ url: 'http://x:6333', collection: 'docs', idfCorpus: 'visible' })).toThrow(/idfCorpus/);
  });

  it('never serialises the API key', () => {
    const store = new QdrantHybridStore({ url: 'https://user:pw@qdrant.test', apiKey: 'sekret-key-123', collection: 'docs' });
    const json = JSON.stringify(store);
    expect(json).not.toContain('sekret-key-123');
    expect(json).not.toContain('pw');
    expect(Object.keys(store)).toEqual([]);
    expect(JSON.parse(json)).toMatchObject({ collection: 'docs', url: 'https://qdrant.test/', payloadPreset: 'litm' });
  });
});

// ---------------------------------------------------------------------------------------------

describe('faults through the real client (fake fetch)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  function storeWithFetch(
    respond: (url: string, init: RequestInit | undefined, call: number) => Promise<Response> | Response,
    options: { timeoutMs?: number; retries?: number } = {},
  ) {
    let call = 0;
    const fetchMock = vi.fn(async (input: string | URL | Request, init?: RequestInit) => respond(urlOf(input), init, ++call));
    vi.stubGlobal('fetch', fetchMock);
    const store = new QdrantHybridStore({
      url: 'http://qdrant.test:6333',
      collection: 'docs',
      // Keyword-only writes on purpose (no check of the collection's vectors before them: see lexical-writes.test.ts).
      lexicalOnly: true,
      retries: options.retries ?? 0,
      retryBaseDelayMs: 1,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
    return { store, fetchMock };
  }

  const qdrantError = (status: number, message: string, headers: Record<string, string> = {}) =>
    Response.json({ status: { error: message }, time: 0 }, { status, headers });

  it("4xx → bad_request with Qdrant's message and status", async () => {
    const { store } = storeWithFetch(() => qdrantError(400, 'Wrong input: Not existing vector name error: bm25'));
    const error = expectCode(await rejection(store.search({ text: 'tea', mode: 'lexical' })), 'bad_request');
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/Not existing vector name error: bm25/);
    expect(error.cause).toBeDefined();
  });

  it("404 on a missing collection → not_found naming the collection (the caller's to fix, exit 2)", async () => {
    const { store } = storeWithFetch(() => qdrantError(404, "Not found: Collection `docs` doesn't exist!"));
    const error = expectCode(await rejection(store.search({ text: 'tea', mode: 'lexical' })), 'not_found');
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/collection "docs" does not exist/);
  });

  it('429 → rate_limited with retryAfterMs from Retry-After', async () => {
    const { store } = storeWithFetch(() => qdrantError(429, 'Too many requests', { 'retry-after': '7' }));
    const error = expectCode(await rejection(store.search({ text: 'tea', mode: 'lexical' })), 'rate_limited');
    expect(error.retryAfterMs).toBe(7000);
    expect(error.status).toBe(429);
  });

  it('5xx → server_error', async () => {
    const { store } = storeWithFetch(() => qdrantError(503, 'Service internal error: overloaded'));
    const error = expectCode(await rejection(store.search({ text: 'tea', mode: 'lexical' })), 'server_error');
    expect(error.status).toBe(503);
    expect(error.message).toMatch(/overloaded/);
  });

  it('connection refused → connection_failed', async () => {
    const { store } = storeWithFetch(() => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6333'), { code: 'ECONNREFUSED' }),
      });
    });
    const error = expectCode(await rejection(store.search({ text: 'tea', mode: 'lexical' })), 'connection_failed');
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it('a slow server → timeout after timeoutMs; a caller abort → aborted', async () => {
    const hang = (_url: string, init: RequestInit | undefined) =>
      new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError')));
      });
    const { store } = storeWithFetch(hang, { timeoutMs: 30 });
    // The fetch never settles: only the store's own timer can end the call.
    expectCode(await rejection(store.search({ text: 'tea', mode: 'lexical' })), 'timeout');

    const { store: patient } = storeWithFetch(hang, { timeoutMs: 10_000 });
    const controller = new AbortController();
    const pending = patient.search({ text: 'tea', mode: 'lexical', signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user left')), 10);
    expectCode(await rejection(pending), 'aborted');
  });

  it('reads are retried after 5xx and succeed; writes are not retried', async () => {
    const { store, fetchMock } = storeWithFetch(
      (url, _init, call) => {
        if (url.endsWith('/points/query')) {
          return call < 3 ? qdrantError(502, 'bad gateway') : Response.json({ result: { points: [] }, status: 'ok', time: 0 });
        }
        if (url.includes('/points/scroll')) return Response.json({ result: { points: [], next_page_offset: null }, status: 'ok', time: 0 });
        // The collection's record (read once before the first ingest, for its indexed-text recipe).
        if (url.endsWith('/collections/docs')) {
          const params = { vectors: { dense: { size: 8, distance: 'Cosine' } }, sparse_vectors: { bm25: { modifier: 'idf' } } };
          return Response.json({
            result: { config: { params, metadata: { litm_pack: { indexed_text: 'title-headings@1' } } } },
            status: 'ok',
            time: 0,
          });
        }
        return qdrantError(503, 'busy');
      },
      { retries: 3 },
    );
    await expect(store.search({ text: 'tea', mode: 'lexical' })).resolves.toEqual([]);
    expect(fetchMock).toHaveBeenCalledTimes(3);
    fetchMock.mockClear();
    expectCode(await rejection(store.addDocuments([{ id: 'a', text: 'Green tea.' }])), 'server_error');
    const requests = fetchMock.mock.calls.map(([url, init]) => `${init?.method ?? 'GET'} ${new URL(urlOf(url)).pathname}`);
    expect(requests).toEqual(['GET /collections/docs', 'POST /collections/docs/points/scroll', 'PUT /collections/docs/points']);
  });
});

describe('error mapping (pure)', () => {
  const context = { operation: 'search', collection: 'docs' };

  it('maps the client error classes', () => {
    expectCode(toQdrantError(new QdrantClientTimeoutError('timed out'), context), 'timeout');
    const limited = expectCode(toQdrantError(new QdrantClientResourceExhaustedError('slow down', '3'), context), 'rate_limited');
    expect(limited.retryAfterMs).toBe(3000);
    expect(limited.cause).toBeInstanceOf(QdrantClientResourceExhaustedError);
  });

  it('leaves LitmPackErrors alone and maps anything unknown to server_error with the cause', () => {
    const own = new LitmPackError('invalid_input', 'x');
    expect(toQdrantError(own, context)).toBe(own);
    const odd = new RangeError('weird');
    const mapped = expectCode(toQdrantError(odd, context), 'server_error');
    expect(mapped.cause).toBe(odd);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('retries (typed fake client)', () => {
  function policy(waits: number[], overrides: Partial<CallPolicy> = {}): CallPolicy {
    return {
      timeoutMs: 1000,
      retries: 3,
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 1000,
      random: () => 0.5,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
      ...overrides,
    };
  }
  const context = { operation: 'queryBatch', collection: 'docs' };
  const unavailable = () => Object.assign(new Error('Service Unavailable'), { status: 503, data: null, headers: new Headers() });

  it('a read that fails then succeeds is retried with exponential backoff and jitter', async () => {
    let attempts = 0;
    const client: Pick<QdrantClientLike, 'queryBatch'> = {
      queryBatch: () => {
        attempts += 1;
        if (attempts < 3) return Promise.reject(unavailable());
        return Promise.resolve([{ points: [] }, { points: [] }]);
      },
    };
    const waits: number[] = [];
    const result = await callQdrant(() => client.queryBatch('docs', { searches: [] }), context, policy(waits), { read: true });
    expect(result).toHaveLength(2);
    expect(attempts).toBe(3);
    expect(waits).toEqual([50, 100]); // 0.5 × 100·2^0, 0.5 × 100·2^1
  });

  it('is bounded: after `retries` more attempts the last error is thrown', async () => {
    let attempts = 0;
    const waits: number[] = [];
    const error = await rejection(
      callQdrant(
        () => {
          attempts += 1;
          return Promise.reject(unavailable());
        },
        context,
        policy(waits, { retries: 2 }),
        { read: true },
      ),
    );
    expectCode(error, 'server_error');
    expect(attempts).toBe(3);
  });

  it('honours Retry-After, and gives up when it is longer than retryMaxDelayMs', async () => {
    const limited = (seconds: string) =>
      Object.assign(new Error('Too Many Requests'), { status: 429, data: null, headers: new Headers({ 'retry-after': seconds }) });
    let attempts = 0;
    const waits: number[] = [];
    await callQdrant(
      () => {
        attempts += 1;
        if (attempts === 1) return Promise.reject(limited('0.8'));
        return Promise.resolve('ok');
      },
      context,
      policy(waits),
      { read: true },
    );
    expect(waits).toEqual([800]);

    const error = expectCode(
      await rejection(callQdrant(async () => Promise.reject(limited('30')), context, policy([]), { read: true })),
      'rate_limited',
    );
    expect(error.retryAfterMs).toBe(30_000);
  });

  it('does not retry writes, bad requests or timeouts', async () => {
    for (const [read, failure] of [
      [false, unavailable()],
      [true, Object.assign(new Error('Bad Request'), { status: 400, data: { status: { error: 'bad' } }, headers: new Headers() })],
      [true, new QdrantClientTimeoutError('slow')],
    ] as const) {
      let attempts = 0;
      await rejection(
        callQdrant(
          () => {
            attempts += 1;
            return Promise.reject(failure);
          },
          context,
          policy([]),
          { read },
        ),
      );
      expect(attempts).toBe(1);
    }
  });
});
