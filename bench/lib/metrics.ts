/**
 * nDCG@k as BEIR computes it (pytrec_eval `ndcg_cut`): gain = relevance grade, discount log2(rank + 1),
 * ideal DCG from the judged documents. Unjudged documents count as non-relevant.
 */
export function ndcgAt(ranked: string[], relevant: Map<string, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    const grade = relevant.get(id) ?? 0;
    if (grade > 0) dcg += grade / Math.log2(i + 2);
  });
  const ideal = [...relevant.values()]
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

/** Share of the relevant documents found in the first k results. */
export function recallAt(ranked: string[], relevant: Map<string, number>, k: number): number {
  const wanted = [...relevant].filter(([, g]) => g > 0).map(([id]) => id);
  if (wanted.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return wanted.filter((id) => top.has(id)).length / wanted.length;
}

export function mean(values: number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** Keeps the first occurrence of each key, in order. */
export function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
