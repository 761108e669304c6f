import { timestampMillis, type BundleOrder, type Candidate } from './schemas.js';

/**
 * Lost-in-the-Middle order: given items best first (rank 1..n), returns them in context order with the
 * strongest at the edges: rank 1 first, rank 2 last, rank 3 second, rank 4 second to last, and so on.
 * Rank 1 is first for every n (LangChain's and LlamaIndex's LongContextReorder put it last when n is even).
 */
export function orderForLongContext<T>(bestFirst: readonly T[]): T[] {
  const front: T[] = [];
  const back: T[] = [];
  bestFirst.forEach((item, index) => {
    if (index % 2 === 0) front.push(item);
    else back.push(item);
  });
  return [...front, ...back.reverse()];
}

/**
 * A bundle's blocks in the order asked for, given them best first (see `ORDERS`). Every order is a total
 * order (ties fall back to the Lost-in-the-Middle position, itself from the relevance rank), so the same
 * items always come out the same way.
 */
export function orderBlocks<T>(bestFirst: readonly T[], order: BundleOrder, candidateOf: (item: T) => Candidate): T[] {
  if (order === 'rank') return [...bestFirst];
  const litm = orderForLongContext(bestFirst);
  if (order === 'litm') return litm;
  const litmPosition = new Map(litm.map((item, index) => [item, index] as const));
  const rank = new Map(bestFirst.map((item, index) => [item, index] as const));
  const byLitm = (a: T, b: T) => (litmPosition.get(a) as number) - (litmPosition.get(b) as number);
  if (order === 'chronological') {
    const at = (item: T) => {
      const timestamp = candidateOf(item).timestamp;
      return timestamp === undefined ? Number.NaN : timestampMillis(timestamp);
    };
    return [...litm].sort((a, b) => {
      const x = at(a);
      const y = at(b);
      if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) === Number.isNaN(y) ? byLitm(a, b) : Number.isNaN(x) ? 1 : -1;
      return x !== y ? x - y : byLitm(a, b);
    });
  }
  // document: each source where its best item ranks; inside a source, by span (items without one after, by rank).
  const sourceOf = (item: T) => candidateOf(item).sourceId ?? candidateOf(item).id;
  const sourceRank = new Map<string, number>();
  for (const item of bestFirst) if (!sourceRank.has(sourceOf(item))) sourceRank.set(sourceOf(item), sourceRank.size);
  const start = (item: T) => candidateOf(item).span?.start ?? Infinity;
  return [...bestFirst].sort((a, b) => {
    const bySource = (sourceRank.get(sourceOf(a)) as number) - (sourceRank.get(sourceOf(b)) as number);
    if (bySource !== 0) return bySource;
    const x = start(a);
    const y = start(b);
    if (x !== y) return x < y ? -1 : 1;
    return (rank.get(a) as number) - (rank.get(b) as number);
  });
}
