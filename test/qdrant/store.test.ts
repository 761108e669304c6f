import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { TextNode } from '@llamaindex/core/schema';
import { nodeToMetadata } from '@llamaindex/core/vector-store';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CandidateSchema,
  type Candidate,
  encodeBm25Document,
  chunkDocument,
  MemoryHybridStore,
  type Fusion,
  type IngestDocument,
  type SearchMode,
  type SearchRequest,
} from '../../src/index.js';
import { QdrantHybridStore, type QdrantClientLike } from '../../src/qdrant/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { DistinctEmbeddings, admin, clock, collectionNames, failure, url, wrapClient } from './helpers.js';
import { urlOf } from '../helpers/fetch-call.js';

const collectionName = collectionNames('litm');

afterEach(() => {
  vi.restoreAllMocks();
});

/** Counts the client calls the store makes (the HTTP requests are counted separately with a fetch spy). */
function countingClient(client: QdrantClientLike): { client: QdrantClientLike; calls: string[] } {
  const calls: string[] = [];
  return {
    client: wrapClient(client, (method, _call, run) => {
      calls.push(method);
      return run();
    }),
    calls,
  };
}

const corpus: IngestDocument[] = [
  {
    id: 'cookies.md',
    version: '1',
    metadata: { lang: 'en', topic: 'baking' },
    timestamp: '2024-03-01T00:00:00Z',
    text: '# Cookies\n\nRecipe for baking chocolate chip cookies with brown butter.\n\n## Storage\n\nKeep cookies in a tin for a week.',
  },
  {
    id: 'bread.md',
    version: '1',
    metadata: { lang: 'en', topic: 'baking' },
    text: '# Bread\n\nSourdough bread needs a lively starter and a hot oven.\n\nRye bread is denser and keeps longer.',
  },
  {
    id: 'cars.md',
    version: '1',
    metadata: { lang: 'en', topic: 'cars' },
    text: '# Cars\n\nChange the engine oil of your car every ten thousand kilometres.\n\nCheck tyre pressure monthly, also before a long drive.',
  },
  {
    id: 'garden.md',
    version: '1',
    metadata: { lang: 'en', topic: 'garden' },
    text: 'Tomatoes need plenty of sun and regular water.\n\nCompost feeds the soil; mulch keeps water in the ground.',
  },
  {
    id: 'tea.md',
    version: '1',
    metadata: { lang: 'en', topic: 'drinks' },
    text: 'Green tea brews best below boiling water.\n\nBlack tea with milk pairs with chocolate biscuits.',
  },
];

const secret: IngestDocument = {
  id: 'merger.md',
  version: '1',
  acl: ['legal'],
  text: 'The merger code name is BLUEBIRD and the chocolate cookies budget is secret.',
};

const MODES: SearchMode[] = ['hybrid', 'dense', 'lexical'];

async function qdrantStore(label: string, options: Partial<ConstructorParameters<typeof QdrantHybridStore>[0]> = {}) {
  const embeddings = new FakeEmbeddings();
  const store = new QdrantHybridStore({ url, collection: collectionName(label), embeddings, now: clock(), ...options });
  await store.ensureCollection();
  return { store, embeddings };
}

// ---------------------------------------------------------------------------------------------

describe('ensureCollection', () => {
  it('creates dense + IDF sparse vectors and payload indexes, then accepts the same config', async () => {
    const name = collectionName('create');
    const store = new QdrantHybridStore({ url, collection: name, embeddings: new FakeEmbeddings({ dimension: 32 }) });
    await expect(store.ensureCollection()).resolves.toEqual({
      created: true,
      indexesCreated: ['sourceId', 'acl', 'timestamp', 'clusters', 'kind'],
    });
    const info = await admin.getCollection(name);
    expect(info.config.params.vectors).toMatchObject({ dense: { size: 32, distance: 'Cosine' } });
    expect(info.config.params.sparse_vectors).toMatchObject({ bm25: { modifier: 'idf' } });
    expect(Object.keys(info.payload_schema ?? {}).sort()).toEqual(['acl', 'clusters', 'kind', 'sourceId', 'timestamp']);
    expect(info.payload_schema).toMatchObject({ clusters: { data_type: 'keyword' }, kind: { data_type: 'keyword' } });
    await expect(store.ensureCollection()).resolves.toEqual({ created: false, indexesCreated: [] });
  });

  it('throws config_mismatch naming what differs', async () => {
    const name = collectionName('mismatch');
    await new QdrantHybridStore({ url, collection: name, vectorSize: 16 }).ensureCollection();
    const wrongSize = new QdrantHybridStore({ url, collection: name, embeddings: new FakeEmbeddings({ dimension: 24 }) });
    const sizeError = await failure(wrongSize.ensureCollection(), 'config_mismatch');
    expect(sizeError.message).toMatch(/dense vector "dense" has size 16, the embeddings give 24/);
    const wrongNames = new QdrantHybridStore({
      url,
      collection: name,
      vectorSize: 16,
      denseVectorName: 'text',
      sparseVectorName: 'splade',
    });
    const namesError = await failure(wrongNames.ensureCollection(), 'config_mismatch');
    expect(namesError.message).toMatch(/dense vector "text" is missing/);
    expect(namesError.message).toMatch(/sparse vector "splade" is missing/);
  });

  it('sees a sparse vector without the IDF modifier as a mismatch', async () => {
    const name = collectionName('noidf');
    await admin.createCollection(name, {
      vectors: { dense: { size: 64, distance: 'Cosine' } },
      sparse_vectors: { bm25: {} },
    });
    const store = new QdrantHybridStore({ url, collection: name, embeddings: new FakeEmbeddings() });
    const error = await failure(store.ensureCollection(), 'config_mismatch');
    expect(error.message).toMatch(/"idf" is required/);
  });
});

describe('ingest', () => {
  it('is idempotent and replaces a source on a new version, with the same counts as the memory store', async () => {
    // Small chunks, so a document is several chunks and a new version shares some of them.
    const { store, embeddings } = await qdrantStore('ingest', { chunkTokens: 16 });
    const memory = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), now: clock(), chunkTokens: 16, idfCorpus: 'all' });

    const first = await store.addDocuments(corpus);
    expect(first).toEqual(await memory.addDocuments(corpus));
    expect(first.added).toBeGreaterThan(corpus.length);
    expect(first.unchanged).toBe(0);

    const embeddedBefore = embeddings.embeddedTexts.length;
    const again = await store.addDocuments(corpus);
    expect(again).toEqual({ added: 0, unchanged: first.added, removed: 0 });
    expect(again).toEqual(await memory.addDocuments(corpus));
    expect(embeddings.embeddedTexts.length).toBe(embeddedBefore);

    const v2: IngestDocument = {
      ...corpus[1]!,
      version: '2',
      text: '# Bread\n\nSourdough bread needs a lively starter and a hot oven.\n\nSpelt bread is nutty and quick.',
    };
    const replaced = await store.addDocuments([v2]);
    expect(replaced).toEqual(await memory.addDocuments([v2]));
    expect(replaced.removed).toBeGreaterThan(0);
    expect(replaced.unchanged + replaced.added).toBe(chunkDocument(v2, { maxTokens: 16, indexedAt: 'x' }).length);
    // Only new text needed an embedding; chunks whose text is unchanged kept their vectors.
    const embeddedNow = embeddings.embeddedTexts.slice(embeddedBefore);
    expect(embeddedNow.length).toBeGreaterThan(0);
    expect(embeddedNow.every((text) => !corpus[1]!.text.includes(text))).toBe(true);

    const rye = await store.search({ text: 'rye bread denser', mode: 'lexical', limit: 20 });
    expect(rye.map((c) => c.text).join(' ')).not.toContain('Rye');
    const bread = await store.search({ text: 'bread', mode: 'lexical', limit: 20 });
    expect(bread.filter((c) => c.sourceId === 'bread.md').every((c) => c.version === '2')).toBe(true);
    const { points } = await admin.scroll(store.collection, {
      filter: { must: [{ key: 'sourceId', match: { value: 'bread.md' } }] },
      limit: 100,
    });
    expect(points.map((p) => p.payload?.id).sort()).toEqual(
      chunkDocument(v2, { maxTokens: 16, indexedAt: 'x' })
        .map((r) => r.id)
        .sort(),
    );
  });
});

describe('search', () => {
  let store: QdrantHybridStore;

  beforeAll(async () => {
    ({ store } = await qdrantStore('search'));
    await store.addDocuments([...corpus, secret]);
  });

  it('each mode finds the obvious chunk; similarity is present iff dense ran', async () => {
    for (const mode of MODES) {
      const results = await store.search({ text: 'chocolate chip cookies recipe', mode });
      expect(results[0]!.text, mode).toContain('chocolate chip cookies');
      for (const c of results) expect(CandidateSchema.parse(c)).toEqual(c);
      const similarities = results.map((c) => c.similarity);
      if (mode === 'lexical') expect(similarities.every((s) => s === undefined)).toBe(true);
      else expect(similarities.every((s) => typeof s === 'number')).toBe(true);
    }
  });

  it('hybrid similarity is the true dense cosine of each returned point', async () => {
    const text = 'tea with milk and chocolate';
    const hybrid = await store.search({ text, limit: 5 });
    const dense = await store.search({ text, mode: 'dense', limit: 50 });
    const cosine = new Map(dense.map((c) => [c.id, c.score]));
    for (const c of hybrid) expect(c.similarity).toBeCloseTo(cosine.get(c.id)!, 6);
  });

  it('each search is one HTTP request', async () => {
    const spy = vi.spyOn(globalThis, 'fetch');
    for (const mode of MODES) {
      spy.mockClear();
      await store.search({
        text: 'engine oil',
        mode,
        filter: { must: [{ key: 'metadata.topic', match: { value: 'cars' } }] },
        principals: ['hr'],
      });
      expect(spy, mode).toHaveBeenCalledTimes(1);
    }
    expect(urlOf(spy.mock.calls[0]![0])).toMatch(/\/points\/query$/);
    spy.mockClear();
    await store.search({ text: 'engine oil' });
    expect(spy).toHaveBeenCalledTimes(1);
    expect(urlOf(spy.mock.calls[0]![0])).toMatch(/\/points\/query\/batch$/);
  });

  it('the client sees one queryBatch call for hybrid, after one read of the collection per store (counting wrapper)', async () => {
    const { client, calls } = countingClient(new QdrantClient({ url, checkCompatibility: false }));
    const counted = new QdrantHybridStore({ client, collection: store.collection, embeddings: new FakeEmbeddings() });
    await counted.search({ text: 'tomatoes sun' });
    await counted.search({ text: 'tomatoes sun' });
    await counted.search({ text: 'sourdough' });
    expect(calls).toEqual(['getCollection', 'queryBatch', 'queryBatch', 'queryBatch']);
  });

  it('filters restrict every mode inside the engine query', async () => {
    const filter = { must: [{ key: 'metadata.topic', match: { value: 'baking' } }] };
    for (const mode of MODES) {
      const results = await store.search({ text: 'chocolate water oil bread', mode, filter, limit: 50 });
      expect(results.length, mode).toBeGreaterThan(0);
      expect(new Set(results.map((c) => c.sourceId)), mode).toEqual(new Set(['cookies.md', 'bread.md']));
    }
    await expect(store.search({ text: 'chocolate', filter: { should: [] }, limit: 50 })).rejects.toMatchObject({
      name: 'LitmPackError',
      code: 'invalid_input',
    });
  });

  it('ACL: restricted text is never returned to other principals, by any mode', async () => {
    for (const mode of MODES) {
      for (const principals of [[], ['hr'], ['sales', 'hr']]) {
        const results = await store.search({ text: 'BLUEBIRD merger code name chocolate cookies', mode, principals, limit: 100 });
        expect(results.length, mode).toBeGreaterThan(0);
        expect(
          results.some((c) => c.text.includes('BLUEBIRD')),
          `${mode} ${principals.join(',')}`,
        ).toBe(false);
        expect(results.some((c) => c.sourceId === 'merger.md')).toBe(false);
      }
      const allowed = await store.search({ text: 'BLUEBIRD merger code name', mode, principals: ['legal'], limit: 5 });
      expect(allowed[0]!.sourceId, mode).toBe('merger.md');
    }
  });
});

describe('faults', () => {
  it('a closed port → connection_failed', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
      });
    });
    const store = new QdrantHybridStore({ url: `http://127.0.0.1:${port}`, collection: 'x', retries: 1, retryBaseDelayMs: 1 });
    const error = await failure(store.search({ text: 'tea', mode: 'lexical' }), 'connection_failed');
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.cause).toBeDefined();
  });

  it('a server that does not answer within timeoutMs → timeout', async () => {
    // A listener that accepts and never answers: the timeout is the only way out, whatever the machine's speed
    // (a 1 ms timeout against the engine raced its answer, and lost on a fast run).
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    const port = await new Promise<number>((resolve) => {
      silent.listen(0, '127.0.0.1', () => {
        const address = silent.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
    try {
      const store = new QdrantHybridStore({
        url: `http://127.0.0.1:${port}`,
        collection: collectionName('timeout'),
        embeddings: new FakeEmbeddings(),
        timeoutMs: 200,
        retries: 0,
      });
      await failure(store.search({ text: 'tea' }), 'timeout');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('an unknown collection → not_found naming it, with the 404', async () => {
    const missing = `litm_${randomUUID().slice(0, 8)}_missing`;
    const store = new QdrantHybridStore({ url, collection: missing, embeddings: new FakeEmbeddings() });
    for (const mode of MODES) {
      const error = await failure(store.search({ text: 'tea', mode }), 'not_found');
      expect(error.status).toBe(404);
      expect(error.message).toContain(missing);
    }
  });

  it('a wrong vector name → config_mismatch naming the vectors the collection has', async () => {
    const { store: good } = await qdrantStore('wrongname');
    await good.addDocuments([corpus[0]!]);
    for (const mode of MODES) {
      const store = new QdrantHybridStore({ url, collection: good.collection, sparseVectorName: 'nope', embeddings: new FakeEmbeddings() });
      const error = await failure(store.search({ text: 'cookies', mode }), 'config_mismatch');
      expect(error.message, mode).toMatch(/has no sparse vector "nope" \(it has dense: "dense" 64-d; sparse: "bm25"/);
      expect(error.message, mode).toMatch(/payloadPreset "litm"/);
    }
  });
});

describe('collections other tools wrote (payload presets)', () => {
  const texts = ['Cookies need brown butter and chocolate.', 'Sourdough bread needs a lively starter.', 'Change the engine oil yearly.'];

  it('langchain-js: unnamed dense vector, content + metadata; lexical is unsupported_mode, hybrid runs dense-only', async () => {
    const name = collectionName('lcjs');
    const embeddings = new FakeEmbeddings();
    // What @langchain/qdrant's ensureCollection and addVectors send.
    await admin.createCollection(name, { vectors: { size: embeddings.dimension, distance: 'Cosine' } });
    await admin.upsert(name, {
      wait: true,
      points: texts.map((text, i) => ({
        id: randomUUID(),
        vector: embeddings.embed(text),
        payload: { content: text, metadata: { source: `doc-${i}.md` } },
      })),
    });
    const store = new QdrantHybridStore({ url, collection: name, embeddings, payloadPreset: 'langchain-js' });
    await expect(store.ensureCollection()).resolves.toEqual({ created: false, indexesCreated: [] });
    const results = await store.search({ text: 'engine oil', mode: 'dense', limit: 2 });
    expect(results[0]).toMatchObject({ text: texts[2], sourceId: 'doc-2.md', metadata: { source: 'doc-2.md' } });
    expect(results[0]!.similarity).toBeCloseTo(results[0]!.score, 6);
    const error = await failure(store.search({ text: 'engine oil', mode: 'lexical' }), 'unsupported_mode');
    expect(error.message).toMatch(/without one/);
    expect(await store.search({ text: 'engine oil', mode: 'hybrid', limit: 2 })).toEqual(results);
  });

  it('langchain-python with a fastembed Qdrant/bm25 sparse vector: every mode, one request for hybrid', async () => {
    const name = collectionName('lcpy');
    const embeddings = new FakeEmbeddings();
    // langchain-qdrant (Python) in hybrid mode: unnamed dense vector + "langchain-sparse" with IDF.
    await admin.createCollection(name, {
      vectors: { size: embeddings.dimension, distance: 'Cosine' },
      sparse_vectors: { 'langchain-sparse': { modifier: 'idf' } },
    });
    await admin.upsert(name, {
      wait: true,
      points: texts.map((text, i) => ({
        id: randomUUID(),
        vector: { '': embeddings.embed(text), 'langchain-sparse': encodeBm25Document(text) },
        payload: { page_content: text, metadata: { source: `doc-${i}.md` } },
      })),
    });
    const store = new QdrantHybridStore({ url, collection: name, embeddings, payloadPreset: 'langchain-python' });
    await store.ensureCollection();
    const spy = vi.spyOn(globalThis, 'fetch');
    for (const mode of MODES) {
      spy.mockClear();
      const results = await store.search({ text: 'sourdough starter', mode, limit: 2 });
      expect(spy, mode).toHaveBeenCalledTimes(1);
      expect(results[0], mode).toMatchObject({ text: texts[1], sourceId: 'doc-1.md' });
    }
  });

  it('llamaindex: node text from _node_content, flattened metadata', async () => {
    const name = collectionName('llama');
    const embeddings = new FakeEmbeddings();
    await admin.createCollection(name, { vectors: { size: embeddings.dimension, distance: 'Cosine' } });
    await admin.upsert(name, {
      wait: true,
      points: texts.map((text, i) => {
        const node = new TextNode({ text, metadata: { file_name: `doc-${i}.md` } });
        return { id: node.id_, vector: embeddings.embed(text), payload: nodeToMetadata(node) };
      }),
    });
    const store = new QdrantHybridStore({ url, collection: name, embeddings, payloadPreset: 'llamaindex' });
    const [top] = await store.search({ text: 'chocolate cookies', mode: 'dense', limit: 1 });
    expect(top).toMatchObject({ text: texts[0], title: 'doc-0.md', metadata: { file_name: 'doc-0.md' } });
  });

  it('a litm collection without embeddings serves lexical search (hybrid degrades to it)', async () => {
    const store = new QdrantHybridStore({ url, collection: collectionName('lexonly'), vectorSize: 8 });
    await store.ensureCollection();
    await store.addDocuments(corpus);
    const hybrid = await store.search({ text: 'sourdough oven' });
    expect(hybrid).toEqual(await store.search({ text: 'sourdough oven', mode: 'lexical' }));
    expect(hybrid[0]!.sourceId).toBe('bread.md');
    expect(hybrid[0]!.similarity).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------

/**
 * Same ranking up to ties: the same ids with close scores, and wherever the order differs the two
 * items' scores are tied (within eps) — Qdrant leaves ties in engine order.
 */
function expectSameRanking(actual: Candidate[], expected: Candidate[], label: string, eps = 1e-5): void {
  expect(actual.map((c) => c.id).sort(), label).toEqual(expected.map((c) => c.id).sort());
  const expectedById = new Map(expected.map((c) => [c.id, c]));
  for (const [i, c] of actual.entries()) {
    const e = expectedById.get(c.id)!;
    expect(Math.abs(c.score - e.score), `${label}: score of ${c.id}`).toBeLessThanOrEqual(eps * Math.max(1, Math.abs(e.score)));
    if (e.similarity !== undefined || c.similarity !== undefined) {
      expect(Math.abs((c.similarity ?? NaN) - (e.similarity ?? NaN)), `${label}: similarity of ${c.id}`).toBeLessThanOrEqual(1e-5);
    }
    const atSamePosition = expected[i]!;
    if (atSamePosition.id !== c.id) {
      expect(Math.abs(atSamePosition.score - e.score), `${label}: ${c.id} vs ${atSamePosition.id} at ${i}`).toBeLessThanOrEqual(eps);
    }
  }
}

describe('parity with MemoryHybridStore', () => {
  let qdrant: QdrantHybridStore;
  let memory: MemoryHybridStore;

  beforeAll(async () => {
    ({ store: qdrant } = await qdrantStore('parity', { chunkTokens: 16, embeddings: new DistinctEmbeddings() }));
    // Qdrant computes BM25 IDF over the whole collection: the memory store's idfCorpus "all".
    memory = new MemoryHybridStore({ embeddings: new DistinctEmbeddings(), now: clock(), chunkTokens: 16, idfCorpus: 'all' });
    await qdrant.addDocuments([...corpus, secret]);
    await memory.addDocuments([...corpus, secret]);
  });

  const queries = [
    'chocolate chip cookies',
    'bread oven starter',
    'water for tomatoes and tea',
    'engine oil tyre pressure before a drive',
    'keep it for a week',
  ];
  const fusions: Fusion[] = [{ method: 'rrf' }, { method: 'rrf', k: 60, weights: { dense: 1, lexical: 3 } }, { method: 'dbsf' }];

  it('lexical and dense rankings match (scores, similarity and order)', async () => {
    for (const text of queries) {
      for (const mode of ['lexical', 'dense'] as const) {
        const request: SearchRequest = { text, mode, limit: 50 };
        expectSameRanking(await qdrant.search(request), await memory.search(request), `${mode} "${text}"`);
      }
    }
  });

  it('hybrid fused order matches for rrf, weighted rrf and dbsf, with filters and principals', async () => {
    for (const text of queries) {
      for (const fusion of fusions) {
        for (const extra of [{}, { principals: ['hr'] }, { filter: { must_not: [{ key: 'metadata.topic', match: { value: 'cars' } }] } }]) {
          const request: SearchRequest = { text, fusion, limit: 50, ...extra };
          expectSameRanking(
            await qdrant.search(request),
            await memory.search(request),
            `hybrid ${JSON.stringify(fusion)} "${text}" ${JSON.stringify(extra)}`,
            1e-4,
          );
        }
      }
    }
  });

  it('a small limit cuts the same fused list', async () => {
    for (const text of queries) {
      const request: SearchRequest = { text, limit: 3 };
      expectSameRanking(await qdrant.search(request), await memory.search(request), `hybrid limit 3 "${text}"`, 1e-4);
    }
  });
});
