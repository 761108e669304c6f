/**
 * Maximal marginal relevance as Qdrant computes it (lib/shard/src/query/mmr, Qdrant 1.15+), so the memory
 * store and a Qdrant collection select the same points for the same `diversity`:
 *
 * - λ = 1 − diversity (f32), so 0 = pure relevance and 1 = maximum diversity. LangChain's `lambda` runs the
 *   other way (1 = relevance); `@langchain/qdrant` 1.0.3 passes its `lambda` as Qdrant's `diversity`.
 * - relevance = similarity of candidate and query; the first pick is the most relevant;
 * - then, repeatedly, the candidate maximising λ·relevance − (1 − λ)·max similarity to the picked ones;
 * - ties go to the last candidate in iteration order, which (as in Qdrant's `IndexSet` with `swap_remove`)
 *   changes as candidates are picked.
 *
 * Qdrant returns the picked points with their original score; what a store does with the order is its own
 * business (both stores sort by score).
 */

const f32 = Math.fround;

/** Indices of the picked candidates, in pick order. */
export function maximalMarginalRelevance(
  relevance: readonly number[],
  similarity: (a: number, b: number) => number,
  diversity: number,
  limit: number,
): number[] {
  const n = relevance.length;
  if (n === 0 || limit <= 0) return [];
  if (n < 2) return [0];
  const lambda = f32(1 - f32(diversity));
  const remaining = Array.from({ length: n }, (_, i) => i);
  const picked: number[] = [];
  // Max over the picked of each candidate's similarity, kept up to date as picks are added (same result as
  // recomputing the max each round, in O(n) per round).
  const closest = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);

  const take = (position: number) => {
    const index = remaining[position] as number;
    // swap_remove: the last element moves into the hole.
    remaining[position] = remaining[remaining.length - 1] as number;
    remaining.pop();
    picked.push(index);
    for (const other of remaining) {
      const s = f32(similarity(other, index));
      if (s > (closest[other] as number)) closest[other] = s;
    }
  };

  let first = 0;
  for (let p = 1; p < remaining.length; p += 1) {
    if (f32(relevance[remaining[p] as number] as number) >= f32(relevance[remaining[first] as number] as number)) first = p;
  }
  take(first);
  while (picked.length < limit && remaining.length > 0) {
    let best = 0;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (let p = 0; p < remaining.length; p += 1) {
      const index = remaining[p] as number;
      const score = f32(f32(lambda * f32(relevance[index] as number)) - f32(f32(1 - lambda) * (closest[index] as number)));
      if (score >= bestScore) {
        bestScore = score;
        best = p;
      }
    }
    take(best);
  }
  return picked;
}
