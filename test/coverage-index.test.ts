import { describe, expect, it } from 'vitest';
import { packBriefing, packBundle, MemoryHybridStore } from '../src/index.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';

const docs = [
  { id: 'a.md', text: 'Refunds are issued within 14 days of a return.' },
  { id: 'b.md', text: 'Refunds for gift cards are never issued.' },
];

function clockAt(...isos: string[]) {
  let i = 0;
  return () => new Date(isos[Math.min(i++, isos.length - 1)]!);
}

describe('coverage: denseAvailable and newestIndexedAt (the stale-index signal)', () => {
  it('says the dense arm answered when candidates carry similarity, and not when retrieval was lexical only', async () => {
    const dense = new MemoryHybridStore({ embeddings: new FakeEmbeddings() });
    await dense.addDocuments(docs);
    const hybrid = await dense.search({ text: 'refunds issued', limit: 5 });
    expect(packBundle({ query: 'refunds', candidates: hybrid, maxTokens: 500 }).coverage.denseAvailable).toBe(true);
    const lexical = await dense.search({ text: 'refunds issued', mode: 'lexical', limit: 5 });
    const bm25Only = packBundle({ query: 'refunds', candidates: lexical, maxTokens: 500 }).coverage;
    expect(bm25Only).toMatchObject({ denseAvailable: false, confidence: 'unknown', topSimilarity: -1 });
    // The pool decides, not only what was kept: a budget too small for anything still knows dense answered.
    expect(packBundle({ query: 'refunds', candidates: hybrid, maxTokens: 1 }).coverage).toMatchObject({
      itemCount: 0,
      denseAvailable: true,
    });
    expect(packBriefing({ query: 'refunds', candidates: lexical, maxTokens: 500 }).coverage.denseAvailable).toBe(false);
  });

  it('reports the newest indexedAt among kept items; candidates from a store carry indexedAt', async () => {
    const store = new MemoryHybridStore({ now: clockAt('2025-01-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z') });
    await store.addDocuments([docs[0]!]);
    await store.addDocuments([docs[1]!]);
    const candidates = await store.search({ text: 'refunds issued', limit: 5 });
    expect(candidates.map((c) => c.indexedAt).sort()).toEqual(['2025-01-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z']);
    expect(packBundle({ query: 'refunds', candidates, maxTokens: 500 }).coverage.newestIndexedAt).toBe('2025-03-01T00:00:00.000Z');
    const older = candidates.filter((c) => c.sourceId === 'a.md');
    expect(packBundle({ query: 'refunds', candidates: older, maxTokens: 500 }).coverage.newestIndexedAt).toBe('2025-01-01T00:00:00.000Z');
    const none = candidates.map(({ indexedAt: _i, ...c }) => c);
    expect(packBundle({ query: 'refunds', candidates: none, maxTokens: 500 }).coverage.newestIndexedAt).toBeNull();
  });

  it('rejects an indexedAt that is not an ISO date-time', () => {
    expect(() =>
      packBundle({ query: 'q', maxTokens: 100, candidates: [{ id: 'x', text: 't', score: 1, indexedAt: 'yesterday' }] }),
    ).toThrow(/indexedAt/);
  });
});
