import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RRF_K,
  bm25Idf,
  bm25Score,
  compareScored,
  fuseDbsf,
  fuseRrf,
  normaliseDistribution,
  rrfPositionScore,
  sharesTerm,
  type ScoredId,
} from '../src/store/fusion.js';
import { cosineSimilarity } from '../src/base/vectors.js';

const ranked = (...ids: string[]): ScoredId[] => ids.map((id, i) => ({ id, score: 100 - i }));
const f32 = Math.fround;

describe('rrf (Qdrant reciprocal_rank_fusion.rs)', () => {
  it('uses k = 2 and 0-based positions by default: 1 / (k + position)', () => {
    expect(DEFAULT_RRF_K).toBe(2);
    expect(fuseRrf([ranked('a')])).toEqual([{ id: 'a', score: 0.5 }]);
    expect(rrfPositionScore(0)).toBe(0.5);
    expect(rrfPositionScore(2)).toBe(f32(0.25));
    expect(rrfPositionScore(0, 60)).toBe(f32(1 / 60));
  });

  it('reproduces the engine test values bit for bit (f32)', () => {
    const fused = fuseRrf([ranked('2', '1'), ranked('1', '2', '3'), ranked('5', '3', '1')]);
    expect(fused.map((p) => p.id)).toEqual(['1', '2', '3', '5']);
    // 1: 1/3 + 1/2 + 1/4; 2: 1/2 + 1/3; 3: 1/4 + 1/3; 5: 1/2 (values asserted in Qdrant's own tests)
    expect(fused.map((p) => p.score)).toEqual([f32(1.0833334), f32(0.8333334), f32(0.5833334), 0.5]);
  });

  it('applies weights by stretching positions: 1 / ((position + 1) / weight + k - 1)', () => {
    const fused = fuseRrf([ranked('a', 'b'), ranked('b', 'a')], { weights: [3, 1] });
    // a: 1/(1/3 + 1) + 1/(2 + 1) = 0.75 + 0.3333; b: 1/(2/3 + 1) + 1/(1 + 1) = 0.6 + 0.5
    expect(fused.map((p) => p.id)).toEqual(['b', 'a']);
    expect(fused[0]!.score).toBeCloseTo(1.1, 6);
    expect(fused[1]!.score).toBeCloseTo(0.75 + 1 / 3, 6);
  });

  it('gives a zero-weight arm no contribution and rejects a weight count that does not match', () => {
    const fused = fuseRrf([ranked('a'), ranked('b')], { weights: [1, 0] });
    expect(fused).toEqual([
      { id: 'a', score: 0.5 },
      { id: 'b', score: 0 },
    ]);
    expect(() => fuseRrf([ranked('a'), ranked('b')], { weights: [1] })).toThrow(RangeError);
    expect(() => fuseRrf([ranked('a')], { k: 0 })).toThrow(RangeError);
  });

  it('breaks ties by id ascending, whatever the input order', () => {
    expect(fuseRrf([ranked('b', 'a'), ranked('a', 'b')]).map((p) => p.id)).toEqual(['a', 'b']);
    expect(fuseRrf([ranked('a', 'b'), ranked('b', 'a')]).map((p) => p.id)).toEqual(['a', 'b']);
  });

  it('ignores the arms’ scores, only their order', () => {
    const a = fuseRrf([
      [
        { id: 'x', score: 1000 },
        { id: 'y', score: -5 },
      ],
    ]);
    const b = fuseRrf([
      [
        { id: 'x', score: 0.1 },
        { id: 'y', score: 0.09 },
      ],
    ]);
    expect(a).toEqual(b);
  });
});

describe('dbsf (Qdrant score_fusion.rs)', () => {
  it('normalises each arm by mean ± 3 sample standard deviations and sums', () => {
    const fused = fuseDbsf([
      [
        { id: 'a', score: 0.9 },
        { id: 'b', score: 0.5 },
        { id: 'c', score: 0.1 },
      ],
      [
        { id: 'b', score: 10 },
        { id: 'd', score: 2 },
      ],
    ]);
    // arm 1: mean 0.5, sd 0.4 -> [-0.7, 1.7]; arm 2: mean 6, sd sqrt(32) -> [6 - 3·5.657, 6 + 3·5.657]
    const sd2 = Math.sqrt(32);
    const norm2 = (x: number) => (x - (6 - 3 * sd2)) / (6 * sd2);
    const expected = new Map([
      ['a', (0.9 + 0.7) / 2.4],
      ['b', 0.5 + norm2(10)],
      ['c', (0.1 + 0.7) / 2.4],
      ['d', norm2(2)],
    ]);
    expect(fused.map((p) => p.id)).toEqual(['b', 'a', 'd', 'c']);
    for (const p of fused) expect(p.score).toBeCloseTo(expected.get(p.id)!, 5);
  });

  it('scores a single-item arm and an arm of equal scores 0.5', () => {
    expect(normaliseDistribution([{ id: 'a', score: 7 }])).toEqual([{ id: 'a', score: 0.5 }]);
    expect(
      normaliseDistribution([
        { id: 'a', score: 3 },
        { id: 'b', score: 3 },
      ]).map((p) => p.score),
    ).toEqual([0.5, 0.5]);
    expect(normaliseDistribution([])).toEqual([]);
  });

  it('does not clamp: an outlier beyond 3 sd scores above 1', () => {
    const arm = [{ id: 'out', score: 100 }, ...Array.from({ length: 10 }, (_, i) => ({ id: `z${i}`, score: 0 }))];
    const normalised = normaliseDistribution(arm);
    expect(normalised[0]!.score).toBeGreaterThan(1);
    expect(normalised[1]!.score).toBeLessThan(0.5);
  });

  it('orders ties by id', () => {
    const fused = fuseDbsf([[{ id: 'b', score: 1 }], [{ id: 'a', score: 1 }]]);
    expect(fused).toEqual([
      { id: 'a', score: 0.5 },
      { id: 'b', score: 0.5 },
    ]);
  });
});

describe('bm25 with Qdrant’s IDF modifier', () => {
  it('computes ln((N − df + 0.5) / (df + 0.5) + 1)', () => {
    expect(bm25Idf(10, 2)).toBeCloseTo(Math.log(4.4), 6);
    expect(bm25Idf(10, 0)).toBeCloseTo(Math.log(22), 6);
    expect(bm25Idf(1, 1)).toBeCloseTo(Math.log(1 + 0.5 / 1.5), 6);
    expect(bm25Idf(5, 5)).toBeGreaterThan(0);
  });

  it('scores the dot product of IDF-weighted query weights with document weights over shared terms', () => {
    const query = { indices: [1, 5, 9], values: [1, 1, 1] };
    const doc = { indices: [1, 2, 9], values: [0.5, 0.7, 2] };
    const idf = (index: number) => (index === 1 ? 2 : 3);
    expect(bm25Score(query, doc, idf)).toBeCloseTo(0.5 * 2 + 2 * 3, 6);
    expect(sharesTerm(query, doc)).toBe(true);
    expect(sharesTerm(query, { indices: [2, 3], values: [1, 1] })).toBe(false);
    expect(bm25Score(query, { indices: [2], values: [1] }, idf)).toBe(0);
  });
});

describe('cosine and ordering', () => {
  it('is exact cosine, 0 for a zero vector, clamped to [-1, 1]', () => {
    expect(cosineSimilarity([1, 0], [0, 3])).toBe(0);
    expect(cosineSimilarity([2, 2], [5, 5])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([1, 2], [-1, -2])).toBeCloseTo(-1, 12);
    expect(cosineSimilarity([0, 0], [1, 1])).toBe(0);
    expect(cosineSimilarity([1, 2, 3], [4, 5, 6])).toBeCloseTo(32 / (Math.sqrt(14) * Math.sqrt(77)), 12);
    // Vectors of different lengths come from two models: a typed error, never a truncated comparison.
    expect(() => cosineSimilarity([1], [1, 2])).toThrow(expect.objectContaining({ name: 'LitmPackError', code: 'invalid_input' }));
    const c = cosineSimilarity([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]);
    expect(c).toBeLessThanOrEqual(1);
  });

  it('orders by score desc, then id asc', () => {
    const items = [
      { id: 'b', score: 1 },
      { id: 'c', score: 2 },
      { id: 'a', score: 1 },
    ];
    expect([...items].sort(compareScored).map((p) => p.id)).toEqual(['c', 'a', 'b']);
  });
});
