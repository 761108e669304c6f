// Batched ingest into the Qdrant store: the same result as one document at a time and as the memory store,
// with one scroll per batch, upserts of many points, one delete per batch that needs one, bounded requests
// in flight, and a failure that stops the ingest without leaving a source without chunks.
import { describe, expect, it } from 'vitest';
import { isLitmPackError, chunkDocument, MemoryHybridStore, type IngestDocument } from '../../src/index.js';
import { QdrantHybridStore, QdrantRestClient, type QdrantClientLike } from '../../src/qdrant/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { clock, collectionNames, url, wrapClient } from './helpers.js';

const collectionName = collectionNames('ingest');

/** Records every call and how many were in flight; `fail` makes the nth call of a method throw. */
function watchedClient(fail?: { method: keyof QdrantClientLike; nth: number }) {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client = wrapClient(new QdrantRestClient({ url }), async (method, call, run) => {
    calls.push(method);
    if (fail !== undefined && fail.method === method && call === fail.nth) throw new Error(`injected ${method} failure`);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      return await run();
    } finally {
      inFlight -= 1;
    }
  });
  return { client, calls, maxInFlight: () => maxInFlight };
}

const corpus: IngestDocument[] = Array.from({ length: 11 }, (_, i) => ({
  id: `doc-${String(i).padStart(2, '0')}.md`,
  version: '1',
  text: `# Note ${i}\n\nParagraph one of note ${i} talks about topic ${i % 3}.\n\nParagraph two of note ${i} is about ovens and tea.\n\nA third paragraph, number ${i}, closes it.`,
}));

const count = (calls: string[], name: string) => calls.filter((c) => c === name).length;

describe('batched ingest', () => {
  it('one scroll per batch, one upsert per batch here, the same counts as the memory store; re-ingest writes nothing', async () => {
    const { client, calls, maxInFlight } = watchedClient();
    const store = new QdrantHybridStore({
      client,
      collection: collectionName('batches'),
      embeddings: new FakeEmbeddings(),
      chunkTokens: 16,
      now: clock(),
      ingestBatchSize: 3,
      ingestConcurrency: 2,
    });
    await store.ensureCollection();
    const memory = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), chunkTokens: 16, now: clock(), idfCorpus: 'all' });
    calls.length = 0;
    const progress: number[] = [];
    const first = await store.addDocuments(corpus, { onProgress: (done) => progress.push(done) });
    expect(first).toEqual(await memory.addDocuments(corpus));
    expect(count(calls, 'scroll')).toBe(4); // 11 documents in batches of 3
    expect(count(calls, 'upsert')).toBe(4);
    expect(count(calls, 'delete')).toBe(0);
    expect(maxInFlight()).toBeLessThanOrEqual(2);
    expect(progress).toHaveLength(4);
    expect(progress.at(-1)).toBe(corpus.length);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    calls.length = 0;
    const again = await store.addDocuments(corpus);
    expect(again).toEqual({ added: 0, unchanged: first.added, removed: 0 });
    expect(calls.filter((c) => c !== 'scroll')).toEqual([]);

    // New versions of documents in different batches: replaced, stale chunks deleted once per batch.
    const v2 = corpus.map((doc, i) =>
      i % 4 === 0 ? { ...doc, version: '2', text: `# Note ${i}\n\nOnly a short new text for ${i}.` } : doc,
    );
    calls.length = 0;
    const replaced = await store.addDocuments(v2);
    expect(replaced).toEqual(await memory.addDocuments(v2));
    expect(replaced.removed).toBeGreaterThan(0);
    expect(count(calls, 'delete')).toBe(3); // documents 0, 4 and 8 changed, in three batches
    for (const doc of v2) {
      const stored = await store.getChunks({ sourceIds: [doc.id] });
      expect(stored.map((c) => c.id)).toEqual(chunkDocument(doc, { maxTokens: 16, indexedAt: 'x' }).map((c) => c.id));
      for (const c of stored) expect(doc.text.slice(c.span.start, c.span.end)).toBe(c.text);
      expect(stored.every((c) => c.version === doc.version)).toBe(true);
    }
  });

  it('the same points as one document at a time', async () => {
    const batched = new QdrantHybridStore({ url, collection: collectionName('same-a'), vectorSize: 8, chunkTokens: 16, now: clock() });
    const single = new QdrantHybridStore({
      url,
      collection: collectionName('same-b'),
      vectorSize: 8,
      chunkTokens: 16,
      now: clock(),
      ingestBatchSize: 1,
      ingestConcurrency: 1,
    });
    for (const store of [batched, single]) {
      await store.ensureCollection();
      await store.addDocuments(corpus);
    }
    const all = async (store: QdrantHybridStore) => store.getChunks({ sourceIds: corpus.map((d) => d.id) });
    expect(await all(batched)).toEqual(await all(single));
  });

  it('a failed upsert stops the ingest with the error; no later batch starts; earlier batches stay', async () => {
    const { client, calls } = watchedClient({ method: 'upsert', nth: 2 });
    const store = new QdrantHybridStore({
      client,
      collection: collectionName('fail'),
      vectorSize: 8,
      chunkTokens: 16,
      ingestBatchSize: 3,
      ingestConcurrency: 1,
      retries: 0,
    });
    await store.ensureCollection();
    calls.length = 0;
    const error = await store.addDocuments(corpus).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isLitmPackError(error)).toBe(true);
    expect(String((error as Error).message)).toMatch(/injected upsert failure/);
    expect(count(calls, 'scroll')).toBe(2);
    expect(count(calls, 'upsert')).toBe(2);
    const kept = await store.getChunks({ sourceIds: corpus.map((d) => d.id) });
    expect([...new Set(kept.map((c) => c.sourceId))]).toEqual(corpus.slice(0, 3).map((d) => d.id));
  });
});
