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
