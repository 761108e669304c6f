// Dense vectors: the one cosine, and the one check of what an embedder returned (count, finite numbers,
// dimension), used by both stores, the sentence stage and briefing centroids.
import { LitmPackError } from './errors.js';

/**
 * Exact cosine similarity in double precision, clamped to [-1, 1] against rounding. A zero vector has
 * similarity 0 with everything (Qdrant normalises it to itself, so its dot products are 0). Vectors of
 * different lengths come from different models: `invalid_input`, never a truncated comparison.
 */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) {
    throw new LitmPackError(
      'invalid_input',
      `cosine needs vectors of equal length, got ${a.length} and ${b.length} (vectors of two models?)`,
    );
  }
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (normA === 0 || normB === 0) return 0;
  const cosine = dot / (Math.sqrt(normA) * Math.sqrt(normB));
  return Math.min(1, Math.max(-1, cosine));
}

/** A non-empty array of finite numbers (of `dimension` numbers, when given). */
export function isVector(value: unknown, dimension?: number): value is number[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    (dimension === undefined || value.length === dimension) &&
    value.every((x) => typeof x === 'number' && Number.isFinite(x))
  );
}

/**
 * Checks what `embeddings.<call>` returned for `expected` texts: that many non-empty vectors of finite numbers,
 * all of one dimension, which must be `dimension` when it is known (`where` names what holds it, e.g.
 * `the store` or `collection "docs"`). Returns the dimension.
 */
export function checkEmbedderVectors(
  vectors: unknown,
  expected: number,
  call: string,
  dimension: number | null | undefined,
  where = 'the store',
): number | null {
  if (!Array.isArray(vectors) || vectors.length !== expected) {
    const got = Array.isArray(vectors) ? String(vectors.length) : `a non-array (${typeof vectors}) instead of`;
    throw new LitmPackError('invalid_input', `embeddings.${call} returned ${got} vectors, expected ${expected}`);
  }
  let dim = dimension ?? null;
  for (const vector of vectors) {
    if (!isVector(vector)) {
      throw new LitmPackError('invalid_input', `embeddings.${call} returned a vector that is not a non-empty array of finite numbers`);
    }
    if (dim === null) dim = vector.length;
    else if (vector.length !== dim) {
      throw new LitmPackError(
        'config_mismatch',
        `embeddings.${call} returned a vector of dimension ${vector.length}; ${where} holds dimension ${dim}`,
      );
    }
  }
  return dim;
}
