import { describe, expect, it } from 'vitest';
import { isLitmPackError, maximalMarginalRelevance, MemoryHybridStore } from '../src/index.js';
import { TopicEmbeddings, topicCorpus } from './helpers/topic-embeddings.js';

const cosine = (a: number[], b: number[]) => {
  const dot = a.reduce((s, x, i) => s + x * b[i]!, 0);
  return dot / (Math.hypot(...a) * Math.hypot(...b));
};

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe("maximalMarginalRelevance (Qdrant's algorithm)", () => {
  // Three points: a and b are near duplicates, c points elsewhere but is less relevant.
  const vectors = [
    [1, 0.05],
    [1, 0.1],
    [0.3, 1],
  ];
  const query = [1, 0.3];
  const relevance = vectors.map((v) => cosine(v, query));
  const similarity = (x: number, y: number) => cosine(vectors[x]!, vectors[y]!);

  it('diversity 0 is relevance order; more diversity prefers the point unlike the first pick', () => {
    expect(maximalMarginalRelevance(relevance, similarity, 0, 3)).toEqual([1, 0, 2]);
    expect(maximalMarginalRelevance(relevance, similarity, 0.5, 2)).toEqual([1, 2]);
    expect(maximalMarginalRelevance(relevance, similarity, 1, 3)).toEqual([1, 2, 0]);
  });

  it('computes λ·relevance − (1 − λ)·max similarity with λ = 1 − diversity', () => {
    // At diversity 0.2 (λ 0.8): a scores 0.8·rel(a) − 0.2·sim(a,b), c scores 0.8·rel(c) − 0.2·sim(c,b).
    const a = 0.8 * relevance[0]! - 0.2 * similarity(0, 1);
    const c = 0.8 * relevance[2]! - 0.2 * similarity(2, 1);
    expect(maximalMarginalRelevance(relevance, similarity, 0.2, 2)).toEqual([1, a >= c ? 0 : 2]);
  });

  it('breaks exact ties as Qdrant does: the last candidate in (swap-removed) order wins', () => {
    const flat = [0.5, 0.5, 0.5, 0.5];
    expect(maximalMarginalRelevance(flat, () => 0, 0, 4)).toEqual([3, 2, 1, 0]);
    expect(maximalMarginalRelevance([], () => 0, 0.5, 3)).toEqual([]);
    expect(maximalMarginalRelevance([0.9], () => 0, 0.5, 3)).toEqual([0]);
  });
});

describe('MemoryHybridStore diversity', () => {
  it("spreads near duplicates over topics, keeps the mode's score, and agrees with rankings()", async () => {
    const store = new MemoryHybridStore({ embeddings: new TopicEmbeddings() });
    await store.addDocuments(topicCorpus());
    const plain = await store.search({ text: 'topic-bread guide', mode: 'hybrid', limit: 5, principals: 'all' });
    const diverse = await store.search({ text: 'topic-bread guide', mode: 'hybrid', limit: 5, diversity: 0.8, principals: 'all' });
    expect(new Set(plain.map((c) => c.sourceId!.split('-')[0])).size).toBe(1);
    expect(new Set(diverse.map((c) => c.sourceId!.split('-')[0])).size).toBeGreaterThanOrEqual(3);
    const wide = await store.search({ text: 'topic-bread guide', mode: 'hybrid', limit: 50, principals: 'all' });
    for (const c of diverse) expect(c.score).toBe(wide.find((w) => w.id === c.id)!.score);
    const rankings = await store.rankings({ text: 'topic-bread guide', mode: 'hybrid', limit: 5, diversity: 0.8, principals: 'all' });
    expect(rankings.fused.map((r) => r.id)).toEqual(diverse.map((c) => c.id));
  });

  it('rankings() with diversity: fused is exactly what search returns, the arms are the plain arms, in every mode', async () => {
    const store = new MemoryHybridStore({ embeddings: new TopicEmbeddings() });
    await store.addDocuments(topicCorpus());
    for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
      for (const request of [
        { text: 'topic-tea guide', mode, limit: 5, diversity: 0.7 },
        { text: 'guide for beginners', mode, limit: 8, diversity: 0.4, principals: ['staff'] },
      ]) {
        const label = `${mode} ${JSON.stringify(request)}`;
        const rankings = await store.rankings(request);
        const searched = await store.search(request);
        expect(rankings.mode, label).toBe(mode);
        expect(
          rankings.fused.map(({ id, score }) => ({ id, score })),
          label,
        ).toEqual(searched.map(({ id, score }) => ({ id, score })));
        expect(
          rankings.fused.map((r) => r.position),
          label,
        ).toEqual(searched.map((_, i) => i + 1));
        const plain = await store.rankings({ ...request, diversity: 0 });
        expect(rankings.dense, label).toEqual(plain.dense);
        expect(rankings.lexical, label).toEqual(plain.lexical);
        expect(
          rankings.fused.map((r) => r.id),
          label,
        ).not.toEqual(plain.fused.map((r) => r.id));
      }
    }
  });

  it('refuses diversity without embeddings and out of range', async () => {
    const lexicalOnly = new MemoryHybridStore();
    await lexicalOnly.addDocuments(topicCorpus());
    expect(isLitmPackError(await failure(lexicalOnly.search({ text: 'guide', diversity: 0.5 })), 'unsupported')).toBe(true);
    const store = new MemoryHybridStore({ embeddings: new TopicEmbeddings() });
    expect(isLitmPackError(await failure(store.search({ text: 'guide', diversity: 1.5 })), 'invalid_input')).toBe(true);
  });
});
