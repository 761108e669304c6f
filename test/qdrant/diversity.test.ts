import { beforeAll, describe, expect, it } from 'vitest';
import { type Candidate, MemoryHybridStore, type SearchMode, type SearchRequest } from '../../src/index.js';
import { QdrantHybridStore } from '../../src/qdrant/index.js';
import { TopicEmbeddings, topicCorpus } from '../helpers/topic-embeddings.js';
import { collectionNames, url } from './helpers.js';

// Diversity (MMR) must pick the same points in both stores: the memory store runs Qdrant's algorithm, the
// Qdrant store asks the engine for `{ nearest, mmr: { diversity, candidates_limit } }`.

const collection = collectionNames('litm')('diversity');
const now = () => new Date(Date.UTC(2025, 0, 1));

let qdrant: QdrantHybridStore;
let memory: MemoryHybridStore;

beforeAll(async () => {
  qdrant = new QdrantHybridStore({ url, collection, embeddings: new TopicEmbeddings(), now });
  await qdrant.ensureCollection();
  memory = new MemoryHybridStore({ embeddings: new TopicEmbeddings(), now, idfCorpus: 'all' });
  await qdrant.addDocuments(topicCorpus());
  await memory.addDocuments(topicCorpus());
});

/** The same points (MMR's choice), the same scores and cosines; order may differ only between tied scores. */
function expectSame(q: Candidate[], m: Candidate[], label: string) {
  expect(q.map((c) => c.id).sort(), label).toEqual(m.map((c) => c.id).sort());
  const byId = new Map(m.map((c) => [c.id, c]));
  q.forEach((c, i) => {
    const other = byId.get(c.id)!;
    expect(Math.abs(c.score - other.score), `${label}: score of ${c.id}`).toBeLessThanOrEqual(1e-4);
    expect(c.similarity, `${label}: similarity of ${c.id}`).toBeDefined();
    expect(Math.abs(c.similarity! - other.similarity!), `${label}: similarity of ${c.id}`).toBeLessThanOrEqual(1e-5);
    expect(Math.abs(c.score - m[i]!.score), `${label}: ${c.id} vs ${m[i]!.id} at ${i}`).toBeLessThanOrEqual(1e-4);
  });
}

const topics = (candidates: Candidate[]) => new Set(candidates.map((c) => c.sourceId!.split('-')[0])).size;

describe('diversity (MMR): the memory store and Qdrant pick the same points', () => {
  const queries = ['topic-tea guide', 'topic-bread guide for beginners', 'guide notes part'];
  const modes: SearchMode[] = ['dense', 'hybrid', 'lexical'];

  it('in every mode, at several diversities and limits, with the ACL inside the query', async () => {
    let changed = 0;
    for (const text of queries) {
      for (const mode of modes) {
        for (const diversity of [0.3, 0.6, 1]) {
          for (const extra of [
            { limit: 5 },
            { limit: 8, principals: ['staff'] },
            { limit: 4, filter: { must_not: [{ key: 'sourceId', match: { value: 'tea-0.md' } }] } },
          ]) {
            const request: SearchRequest = { text, mode, diversity, ...extra };
            const label = `${mode} "${text}" diversity ${diversity} ${JSON.stringify(extra)}`;
            const fromQdrant = await qdrant.search(request);
            const fromMemory = await memory.search(request);
            expectSame(fromQdrant, fromMemory, label);
            expect(fromMemory.length, label).toBe(extra.limit);
            const plain = await memory.search({ ...request, diversity: 0 });
            if (plain.map((c) => c.id).join() !== fromMemory.map((c) => c.id).join()) changed += 1;
          }
        }
      }
    }
    // The corpus makes MMR matter: most requests pick other points than plain relevance would.
    expect(changed).toBeGreaterThan(40);
  });

  it('spreads a pool of near duplicates over topics, and diversity 0 is plain search', async () => {
    for (const store of [qdrant, memory]) {
      // The full view: tea-4 (readable by staff only) is one of the near duplicates.
      const plain = await store.search({ text: 'topic-tea guide', mode: 'dense', limit: 5, principals: 'all' });
      const diverse = await store.search({ text: 'topic-tea guide', mode: 'dense', limit: 5, diversity: 0.7, principals: 'all' });
      expect(topics(plain)).toBe(1);
      expect(topics(diverse)).toBeGreaterThanOrEqual(3);
      // The best match is always the first pick.
      expect(diverse.map((c) => c.id)).toContain(plain[0]!.id);
      expect(await store.search({ text: 'topic-tea guide', mode: 'dense', limit: 5, diversity: 0, principals: 'all' })).toEqual(plain);
    }
  });

  it("keeps the mode's own score (BM25, fused) and reports the dense cosine as similarity", async () => {
    for (const mode of ['lexical', 'hybrid'] as const) {
      const plain = await qdrant.search({ text: 'topic-music guide', mode, limit: 25 });
      const diverse = await qdrant.search({ text: 'topic-music guide', mode, limit: 5, diversity: 0.5 });
      for (const c of diverse) expect(c.score).toBeCloseTo(plain.find((p) => p.id === c.id)!.score, 5);
      // Candidates come back in score order, as without diversity.
      expect(diverse.map((c) => c.score)).toEqual([...diverse.map((c) => c.score)].sort((a, b) => b - a));
    }
  });
});

describe('diversity inside a tenant', () => {
  // The same MMR as the memory store over the tenant's own points: another tenant's near duplicates, on the
  // same shard (payload tenancy) or another shard key, never enter the pool.
  for (const tenancy of ['payload', 'shard-key'] as const) {
    it(`tenancy "${tenancy}": the tenant's points only, as the memory store picks them, for search and rankings`, async (ctx) => {
      const cluster = (await (await fetch(`${url}/cluster`)).json()) as { result?: { status?: string } };
      if (tenancy === 'shard-key' && cluster.result?.status !== 'enabled') ctx.skip(); // a standalone server: reported as skipped
      const admin = new QdrantHybridStore({
        url,
        collection: collectionNames('litm')(`diversity-${tenancy}`),
        embeddings: new TopicEmbeddings(),
        tenancy,
        now,
      });
      await admin.ensureCollection();
      const [own, other] = [admin.forTenant('acme'), admin.forTenant('globex')];
      for (const store of [own, other]) await store.ensureCollection();
      const corpus = topicCorpus();
      const ownDocs = corpus.filter((d) => !d.id.startsWith('bread'));
      // The other tenant holds what would crowd the pool: many bread near duplicates.
      const otherDocs = corpus.filter((d) => d.id.startsWith('bread')).map((d) => ({ ...d, id: `globex-${d.id}` }));
      await own.addDocuments(ownDocs);
      await other.addDocuments(otherDocs);
      // IDF is per shard in Qdrant: a shard key holds one tenant, a payload-tenant collection holds them all
      // (the tenant is a filter). The memory store gets the same corpus for its IDF, and the same filter.
      const reference = new MemoryHybridStore({ embeddings: new TopicEmbeddings(), now, idfCorpus: 'all' });
      await reference.addDocuments(tenancy === 'payload' ? [...ownDocs, ...otherDocs] : ownDocs);
      const tenantFilter = { must_not: [{ key: 'sourceId', match: { any: otherDocs.map((d) => d.id) } }] };
      for (const mode of ['dense', 'hybrid', 'lexical'] as const) {
        const request: SearchRequest = { text: 'topic-bread guide', mode, limit: 4, diversity: 0.6 };
        const found = await own.search(request);
        expect(
          found.every((c) => !c.sourceId!.startsWith('globex-') && !c.sourceId!.startsWith('bread')),
          mode,
        ).toBe(true);
        expectSame(found, await reference.search({ ...request, filter: tenantFilter }), `${tenancy} ${mode}`);
        const rankings = await own.rankings(request);
        expect(
          rankings.fused.map((e) => e.id),
          mode,
        ).toEqual(found.map((c) => c.id));
      }
    });
  }
});
