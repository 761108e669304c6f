/**
 * Score maths shared by the stores, written to reproduce Qdrant's engine (1.19 line):
 * - RRF: `lib/segment/src/common/reciprocal_rank_fusion.rs`
 * - DBSF: `lib/segment/src/common/score_fusion.rs`
 * - sparse IDF: `lib/segment/src/data_types/query_context.rs` (`fancy_idf`, `remap_idf_weights`)
 *
 * Qdrant scores are `f32`, so every step here rounds through `Math.fround` in the engine's order of
 * operations; the embedded store then ranks (and breaks near-ties) the way the server does.
 * Qdrant leaves ties unordered (hash-map order); litm-pack always orders ties by id ascending.
 */

const f32 = Math.fround;

/** One ranked result: the arms of a hybrid query are lists of these, best first. */
export interface ScoredId {
  id: string;
  score: number;
}

/** Qdrant's server-side default `k` for `rrf` (not 60: the paper's 60 corresponds to k = 61 here). */
export const DEFAULT_RRF_K = 2;

/** Total order used everywhere: score descending, then id ascending (code unit order, locale-free). */
export function compareScored(a: ScoredId, b: ScoredId): number {
  if (a.score !== b.score) return b.score > a.score ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Qdrant's RRF contribution of the item at 0-based `position` of one arm:
 * `1 / ((position + 1) / weight + k - 1)`, i.e. `1 / (k + position)` with weight 1, and 0 for a weight <= 0.
 */
export function rrfPositionScore(position: number, k: number = DEFAULT_RRF_K, weight = 1): number {
  if (weight <= 0) return 0;
  const denominator = f32(f32(f32(f32(position + 1) / f32(weight)) + f32(k)) - 1);
  return f32(1 / denominator);
}

export interface RrfOptions {
  /** Defaults to Qdrant's 2. */
  k?: number;
  /** One weight per arm, in arm order (Qdrant: one per prefetch). Defaults to 1 each. */
  weights?: readonly number[];
}

/**
 * Reciprocal rank fusion of ranked arms (each best first; input scores are ignored, only order counts).
 * Returns every id seen, sorted by fused score desc then id.
 */
export function fuseRrf(arms: readonly (readonly ScoredId[])[], options: RrfOptions = {}): ScoredId[] {
  const k = options.k ?? DEFAULT_RRF_K;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`rrf k must be an integer >= 1, got ${k}`);
  const weights = options.weights;
  if (weights !== undefined && weights.length !== arms.length) {
    // Qdrant rejects this too ("Number of weights in RRF should match number of pre-fetches").
    throw new RangeError(`rrf needs one weight per arm: got ${weights.length}, expected ${arms.length}`);
  }
  const fused = new Map<string, number>();
  arms.forEach((arm, armIndex) => {
    const weight = weights?.[armIndex] ?? 1;
    arm.forEach((item, position) => {
      const contribution = rrfPositionScore(position, k, weight);
      const previous = fused.get(item.id);
      fused.set(item.id, previous === undefined ? contribution : f32(previous + contribution));
    });
  });
  return sortedEntries(fused);
}

/**
 * Distribution-based score fusion: each arm is normalised with its mean ± 3 sample standard deviations
 * mapped to 0..1 (no clamping: outliers fall outside 0..1, as in Qdrant), an arm of one item scores 0.5,
 * an arm whose bounds coincide scores 0.5 throughout; then the normalised scores are summed per id.
 */
export function fuseDbsf(arms: readonly (readonly ScoredId[])[]): ScoredId[] {
  const fused = new Map<string, number>();
  for (const arm of arms) {
    for (const item of normaliseDistribution(arm)) {
      const previous = fused.get(item.id);
      fused.set(item.id, previous === undefined ? item.score : f32(previous + item.score));
    }
  }
  return sortedEntries(fused);
}

/** Qdrant's `distr_norm` for one arm (Welford mean and sample variance in f32). */
export function normaliseDistribution(arm: readonly ScoredId[]): ScoredId[] {
  if (arm.length === 0) return [];
  if (arm.length === 1) return [{ id: arm[0]!.id, score: 0.5 }];
  let mean = 0;
  let aggregate = 0;
  arm.forEach((item, index) => {
    const score = f32(item.score);
    const oldDelta = f32(score - mean);
    mean = f32(mean + f32(oldDelta / (index + 1)));
    const delta = f32(score - mean);
    aggregate = f32(aggregate + f32(oldDelta * delta));
  });
  const variance = f32(aggregate / (arm.length - 1));
  const stdDev = f32(Math.sqrt(variance));
  const min = f32(mean - f32(3 * stdDev));
  const max = f32(mean + f32(3 * stdDev));
  if (min === max) return arm.map((item) => ({ id: item.id, score: 0.5 }));
  const range = f32(max - min);
  return arm.map((item) => ({ id: item.id, score: f32(f32(f32(item.score) - min) / range) }));
}

/**
 * Qdrant's sparse IDF (`fancy_idf`): `ln((N − df + 0.5) / (df + 0.5) + 1)`, where N is the number of
 * vectors in the corpus and df the number of them that contain the term.
 */
export function bm25Idf(documentCount: number, documentFrequency: number): number {
  const n = f32(documentCount);
  const df = f32(documentFrequency);
  return f32(Math.log(f32(f32(f32(f32(n - df) + 0.5) / f32(df + 0.5)) + 1)));
}

/** Sparse vector in Qdrant's shape (indices ascending, unique; parallel values). */
export interface SparseVectorLike {
  indices: readonly number[];
  values: readonly number[];
}

/**
 * Score of one document for a sparse query with Qdrant's IDF modifier: each query weight is multiplied by
 * the term's IDF, then the dot product with the document's weights is taken (f32 throughout).
 * `idf(index)` supplies the IDF of a query term. Returns 0 when no term is shared.
 */
export function bm25Score(query: SparseVectorLike, doc: SparseVectorLike, idf: (index: number) => number): number {
  let score = 0;
  let i = 0;
  let j = 0;
  // Both index lists are ascending: a merge walk finds the shared terms.
  while (i < query.indices.length && j < doc.indices.length) {
    const qi = query.indices[i]!;
    const dj = doc.indices[j]!;
    if (qi === dj) {
      const queryWeight = f32(f32(query.values[i]!) * idf(qi));
      score = f32(score + f32(f32(doc.values[j]!) * queryWeight));
      i += 1;
      j += 1;
    } else if (qi < dj) {
      i += 1;
    } else {
      j += 1;
    }
  }
  return score;
}

/** True when the two sparse vectors share at least one index (Qdrant only scores such documents). */
export function sharesTerm(query: SparseVectorLike, doc: SparseVectorLike): boolean {
  let i = 0;
  let j = 0;
  while (i < query.indices.length && j < doc.indices.length) {
    const qi = query.indices[i]!;
    const dj = doc.indices[j]!;
    if (qi === dj) return true;
    if (qi < dj) i += 1;
    else j += 1;
  }
  return false;
}

function sortedEntries(scores: Map<string, number>): ScoredId[] {
  return [...scores].map(([id, score]) => ({ id, score })).sort(compareScored);
}
