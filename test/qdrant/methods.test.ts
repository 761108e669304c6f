// getChunks, deleteSources, rankings and the recorded embedding model on the Qdrant store, against the
// Qdrant engine (or a real server with QDRANT_URL).
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { QdrantClient } from '@qdrant/js-client-rest';
import { QdrantHybridStore, type QdrantHybridStoreOptions } from '../../src/qdrant/index.js';
import type { IngestDocument, SearchMode } from '../../src/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { DistinctEmbeddings, NamedEmbeddings, admin, collectionNames, failure, url } from './helpers.js';
import { urlOf } from '../helpers/fetch-call.js';

const collectionName = collectionNames('methods');

afterEach(() => {
  vi.restoreAllMocks();
});

const docs: IngestDocument[] = [
  { id: 'b/bread.md', text: '# Bread\n\nSourdough bread needs a lively starter.\n\nRye bread keeps longer.\n\nBake it in a hot oven.' },
  {
    id: 'a/tea.md',
    text: 'Green tea brews best below boiling water.\n\nBlack tea with milk pairs with biscuits.',
    metadata: { kind: 'insight' },
  },
  { id: 'c/cars.md', text: 'Change the engine oil every ten thousand kilometres.\n\nCheck tyre pressure monthly.' },
  { id: 'legal/merger.md', text: 'The merger code name is BLUEBIRD.\n\nThe bread budget is secret.', acl: ['legal'] },
];

async function openStore(label: string, options: Partial<QdrantHybridStoreOptions> = {}) {
  const store = new QdrantHybridStore({
    url,
    collection: collectionName(label),
    embeddings: new DistinctEmbeddings(),
    chunkTokens: 12,
    ...options,
  });
  await store.ensureCollection();
  return store;
}

const requestsOf = (spy: { mock: { calls: [input: string | URL | Request, init?: RequestInit][] } }) =>
  spy.mock.calls.map(([input, init]) => {
    const target = new URL(urlOf(input));
    return `${init?.method ?? 'GET'} ${target.pathname}${target.search}`;
  });

describe('getChunks', () => {
  let store: QdrantHybridStore;
  beforeAll(async () => {
    store = await openStore('get');
    await store.addDocuments(docs);
  });

  it("returns a source's chunks as stored, in document order, in one request", async () => {
    const spy = vi.spyOn(globalThis, 'fetch');
    const chunks = await store.getChunks({ sourceIds: ['b/bread.md'] });
    expect(requestsOf(spy)).toEqual([expect.stringMatching(/^POST \/collections\/.*\/points\/scroll$/)]);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.sourceId === 'b/bread.md')).toBe(true);
    const starts = chunks.map((c) => c.span.start);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const text = docs[0]!.text;
    for (const c of chunks) expect(text.slice(c.span.start, c.span.end)).toBe(c.text);
  });

  it('orders sources as listed, else by id; ids and filters select too; limit cuts that order', async () => {
    const listed = await store.getChunks({ sourceIds: ['c/cars.md', 'a/tea.md'] });
    expect([...new Set(listed.map((c) => c.sourceId))]).toEqual(['c/cars.md', 'a/tea.md']);
    const byFilter = await store.getChunks({
      filter: { must_not: [{ key: 'sourceId', match: { value: 'c/cars.md' } }] },
      principals: 'all',
    });
    // The full view sees every chunk the filter selects; without principals the read is anonymous (as in search).
    expect([...new Set(byFilter.map((c) => c.sourceId))]).toEqual(['a/tea.md', 'b/bread.md', 'legal/merger.md']);
    const anonymous = await store.getChunks({ filter: { must_not: [{ key: 'sourceId', match: { value: 'c/cars.md' } }] } });
    expect([...new Set(anonymous.map((c) => c.sourceId))]).toEqual(['a/tea.md', 'b/bread.md']);
    const [first, second] = listed;
    const byId = await store.getChunks({ ids: [second!.id, first!.id] });
    expect(byId.map((c) => c.id)).toEqual([first!.id, second!.id]);
    expect(await store.getChunks({ sourceIds: ['c/cars.md', 'a/tea.md'], limit: 1 })).toEqual([first]);
    const insights = await store.getChunks({ filter: { must: [{ key: 'kind', match: { value: 'insight' } }] } });
    expect(insights.length).toBeGreaterThan(0);
    expect(insights.every((c) => c.sourceId === 'a/tea.md' && c.kind === 'insight')).toBe(true);
  });

  it('applies the ACL as search does: a restricted source answers like one that does not exist', async () => {
    expect(await store.getChunks({ sourceIds: ['legal/merger.md'], principals: ['alice'] })).toEqual([]);
    expect(await store.getChunks({ sourceIds: ['legal/merger.md'], principals: [] })).toEqual([]);
    expect(await store.getChunks({ sourceIds: ['nowhere.md'], principals: ['alice'] })).toEqual([]);
    const legal = await store.getChunks({ sourceIds: ['legal/merger.md'], principals: ['legal'] });
    expect(legal.length).toBeGreaterThan(0);
    const all = await store.getChunks({
      filter: { must: [{ key: 'sourceId', match: { any: docs.map((d) => d.id) } }] },
      principals: ['alice'],
    });
    expect(all.some((c) => c.sourceId === 'legal/merger.md')).toBe(false);
  });

  it('refuses a request that names nothing, and foreign payloads', async () => {
    const error = await failure(store.getChunks({ principals: ['a'] }), 'invalid_input');
    expect(error.message).toMatch(/sourceIds, ids or filter/);
    const foreign = new QdrantHybridStore({ url, collection: store.collection, payloadPreset: 'langchain-js' });
    await failure(foreign.getChunks({ sourceIds: ['x'] }), 'unsupported');
  });
});

describe('deleteSources', () => {
  it('removes every chunk of the sources with one count and one waited delete, and says what existed', async () => {
    const store = await openStore('delete');
    await store.addDocuments(docs);
    const before = await store.getChunks({ sourceIds: ['b/bread.md', 'c/cars.md'] });
    const spy = vi.spyOn(globalThis, 'fetch');
    const result = await store.deleteSources(['b/bread.md', 'c/cars.md', 'never.md', 'b/bread.md']);
    expect(result).toEqual({ sources: 2, chunks: before.length });
    expect(requestsOf(spy)).toEqual([
      expect.stringMatching(/^POST \/collections\/.*\/facet$/),
      expect.stringMatching(/^POST \/collections\/.*\/points\/delete\?wait=true$/),
    ]);
    expect(await store.getChunks({ sourceIds: ['b/bread.md', 'c/cars.md'] })).toEqual([]);
    expect((await store.search({ text: 'sourdough bread', mode: 'lexical' })).some((c) => c.sourceId === 'b/bread.md')).toBe(false);
    expect((await store.getChunks({ sourceIds: ['a/tea.md'] })).length).toBeGreaterThan(0);
    spy.mockClear();
    await expect(store.deleteSources(['b/bread.md'])).resolves.toEqual({ sources: 0, chunks: 0 });
    expect(requestsOf(spy)).toHaveLength(1);
    spy.mockClear();
    await expect(store.deleteSources([])).resolves.toEqual({ sources: 0, chunks: 0 });
    expect(spy).not.toHaveBeenCalled();
    await failure(store.deleteSources([''] as string[]), 'invalid_input');
  });
});

describe('rankings', () => {
  let store: QdrantHybridStore;
  beforeAll(async () => {
    store = await openStore('rankings');
    await store.addDocuments(docs);
  });

  const MODES: SearchMode[] = ['hybrid', 'dense', 'lexical'];

  it("fused is exactly what search returns; each arm is that arm's own search; one request", async () => {
    for (const mode of MODES) {
      for (const extra of [{}, { principals: ['legal'] }, { filter: { must_not: [{ key: 'sourceId', match: { value: 'a/tea.md' } }] } }]) {
        const request = { text: 'bread starter tea', mode, limit: 4, ...extra };
        const spy = vi.spyOn(globalThis, 'fetch');
        const rankings = await store.rankings(request);
        expect(spy, mode).toHaveBeenCalledTimes(1);
        spy.mockRestore();
        const label = `${mode} ${JSON.stringify(extra)}`;
        expect(rankings.mode).toBe(mode);
        const searched = await store.search(request);
        expect(rankings.fused, label).toEqual(
          searched.map((c, i) => ({ id: c.id, sourceId: c.sourceId, score: c.score, position: i + 1 })),
        );
        const arm = async (armMode: 'dense' | 'lexical') =>
          (await store.search({ ...request, mode: armMode })).map((c, i) => ({
            id: c.id,
            sourceId: c.sourceId,
            score: c.score,
            position: i + 1,
          }));
        if (mode === 'lexical') expect(rankings.dense).toBeNull();
        else expect(rankings.dense, label).toEqual(await arm('dense'));
        if (mode === 'dense') expect(rankings.lexical).toBeNull();
        else expect(rankings.lexical, label).toEqual(await arm('lexical'));
      }
    }
  });

  it('never shows restricted chunks in any arm', async () => {
    const rankings = await store.rankings({ text: 'merger code name bluebird bread budget', limit: 20, principals: ['alice'] });
    for (const list of [rankings.dense, rankings.lexical, rankings.fused]) {
      expect(list!.length).toBeGreaterThan(0);
      expect(list!.some((entry) => entry.sourceId === 'legal/merger.md')).toBe(false);
    }
    const allowed = await store.rankings({ text: 'merger code name bluebird', limit: 20, principals: ['legal'] });
    expect(allowed.lexical![0]!.sourceId).toBe('legal/merger.md');
  });
});

describe('the embedding model the collection records', () => {
  it('is written at creation with the dimension, and a different model is refused with config_mismatch', async () => {
    const name = collectionName('model');
    const a = new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-a') });
    await a.ensureCollection();
    const info = await admin.getCollection(name);
    expect((info.config as { metadata?: unknown }).metadata).toEqual({
      litm_pack: { embedding_model: 'model-a', dense_dimension: 32, indexed_text: 'title-headings@1' },
    });
    await a.addDocuments(docs.slice(0, 2));

    const b = new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-b') });
    const error = await failure(b.ensureCollection(), 'config_mismatch');
    expect(error.message).toMatch(
      /dense vectors come from embedding model "model-a" \(32 dimensions\) and this store embeds with "model-b"/,
    );
    // Without ensureCollection, the first dense write reads the record and refuses too (nothing written).
    await failure(b.addDocuments([{ id: 'new.md', text: 'Fresh text.' }]), 'config_mismatch');
    expect(await a.getChunks({ sourceIds: ['new.md'] })).toEqual([]);
    // A store that never called ensureCollection reads the record once, before its first dense query.
    const reader = new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-b') });
    const spy = vi.spyOn(globalThis, 'fetch');
    const refused = await failure(reader.search({ text: 'green tea' }), 'config_mismatch');
    expect(refused.message).toMatch(/"model-a".*"model-b"/);
    expect(spy).toHaveBeenCalledTimes(1);
    const same = new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-a') });
    spy.mockClear();
    await same.search({ text: 'green tea' });
    await same.search({ text: 'black tea', mode: 'dense' });
    expect(spy).toHaveBeenCalledTimes(3);
    spy.mockRestore();
    // Lexical search compares no vectors: allowed.
    await expect(b.search({ text: 'tea', mode: 'lexical' })).resolves.not.toHaveLength(0);

    // An embedder that names no model, or the same model, is let through.
    await expect(
      new QdrantHybridStore({ url, collection: name, embeddings: new FakeEmbeddings({ dimension: 32 }) }).ensureCollection(),
    ).resolves.toBeDefined();
    const again = new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-a') });
    await again.ensureCollection();
    await expect(again.search({ text: 'green tea' })).resolves.not.toHaveLength(0);
  });

  it('a tenant store from forTenant reuses what its parent read of the record: one request per search', async () => {
    const name = collectionName('tenant-record');
    const parent = new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-a'), tenancy: 'payload' });
    await parent.ensureCollection();
    await parent.forTenant('acme').addDocuments([{ id: 'tea.md', text: 'Green tea brews best below boiling water.' }]);
    const spy = vi.spyOn(globalThis, 'fetch');
    await expect(parent.forTenant('acme').search({ text: 'green tea' })).resolves.not.toHaveLength(0);
    expect(spy).toHaveBeenCalledTimes(1);
    spy.mockRestore();
  });

  it('a query embedder of another dimension is refused before any request', async () => {
    const name = collectionName('dims');
    await new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-a', 32) }).ensureCollection();
    const wide = new QdrantHybridStore({ url, collection: name, embeddings: new FakeEmbeddings({ dimension: 48 }) });
    const error = await failure(wide.ensureCollection(), 'config_mismatch');
    expect(error.message).toMatch(/has size 32, the embeddings give 48/);
  });

  it('a collection created without a model learns it at the first dense ingest (also through the official client)', async () => {
    const name = collectionName('learn');
    await new QdrantHybridStore({ url, collection: name, vectorSize: 32 }).ensureCollection();
    expect((await admin.getCollection(name)).config).toMatchObject({ metadata: { litm_pack: { dense_dimension: 32 } } });
    const official = new QdrantClient({ url, checkCompatibility: false });
    const writer = new QdrantHybridStore({ client: official, collection: name, embeddings: new NamedEmbeddings('model-a') });
    await writer.addDocuments(docs.slice(0, 1));
    expect((await admin.getCollection(name)).config).toMatchObject({
      metadata: { litm_pack: { embedding_model: 'model-a', dense_dimension: 32 } },
    });
    await failure(
      new QdrantHybridStore({ url, collection: name, embeddings: new NamedEmbeddings('model-c') }).ensureCollection(),
      'config_mismatch',
    );

    // The official client drops `metadata` from a create body; the store writes it afterwards.
    const viaOfficial = collectionName('official');
    await new QdrantHybridStore({
      client: official,
      collection: viaOfficial,
      embeddings: new NamedEmbeddings('model-a'),
    }).ensureCollection();
    expect((await admin.getCollection(viaOfficial)).config).toMatchObject({
      metadata: { litm_pack: { embedding_model: 'model-a', dense_dimension: 32 } },
    });
  });
});
