import type { RankTable } from './rank-table.js';

/**
 * Byte-pair merge counts, as tiktoken merges: repeatedly merge the adjacent pair whose concatenation has
 * the lowest rank, the leftmost one on ties, until no pair is a token; the count is the number of parts.
 *
 * Short pieces (nearly all of them) use flat arrays and a linear scan per merge, as tiktoken's own core
 * does. Long ones (a base64 blob, minified code) use a linked list and a heap, O(n log n): js-tiktoken's
 * merge is quadratic with a large constant and takes seconds on a 4,000-character run without spaces.
 */
const SHORT = 64;

// Scratch arrays for short pieces, reused (counting is synchronous).
const starts = new Int32Array(SHORT + 1);
const pairRanks = new Int32Array(SHORT + 1);

/** Number of tokens byte-pair encoding gives for `bytes[0, length)` (one pre-tokenised piece). */
export function bytePairCount(bytes: Uint8Array, length: number, table: RankTable): number {
  if (length <= 1) return length;
  if (length > SHORT) return bytePairCountLong(bytes, length, table);
  // parts: [starts[i], starts[i + 1]); pairRanks[i]: rank of parts i and i + 1 merged, or -1.
  let parts = length;
  for (let i = 0; i <= length; i += 1) starts[i] = i;
  for (let i = 0; i + 1 < parts; i += 1) pairRanks[i] = table.pairRank(bytes[i]!, bytes[i + 1]!);
  while (parts > 1) {
    let best = -1;
    let bestRank = 0x7fffffff;
    for (let i = 0; i + 1 < parts; i += 1) {
      const rank = pairRanks[i]!;
      if (rank >= 0 && rank < bestRank) {
        bestRank = rank;
        best = i;
      }
    }
    if (best < 0) break;
    // Merge parts best and best + 1: drop boundary best + 1.
    for (let i = best + 1; i < parts; i += 1) starts[i] = starts[i + 1]!;
    for (let i = best + 1; i + 1 < parts; i += 1) pairRanks[i] = pairRanks[i + 1]!;
    parts -= 1;
    if (best + 1 < parts) pairRanks[best] = table.rank(bytes, starts[best]!, starts[best + 2]!);
    if (best > 0) pairRanks[best - 1] = table.rank(bytes, starts[best - 1]!, starts[best + 1]!);
  }
  return parts;
}

interface Part {
  start: number;
  end: number;
  prev: Part | null;
  next: Part | null;
  alive: boolean;
}

interface HeapEntry {
  rank: number;
  start: number;
  part: Part;
  /** The pair's bounds as they were when queued: a merge on either side makes the entry stale. */
  mid: number;
  end: number;
}

function less(a: HeapEntry, b: HeapEntry): boolean {
  return a.rank < b.rank || (a.rank === b.rank && a.start < b.start);
}

class MinHeap {
  readonly items: HeapEntry[] = [];
  push(entry: HeapEntry): void {
    const items = this.items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(items[i] as HeapEntry, items[parent] as HeapEntry)) break;
      [items[i], items[parent]] = [items[parent] as HeapEntry, items[i] as HeapEntry];
      i = parent;
    }
  }
  pop(): HeapEntry | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && less(items[l] as HeapEntry, items[m] as HeapEntry)) m = l;
        if (r < items.length && less(items[r] as HeapEntry, items[m] as HeapEntry)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m] as HeapEntry, items[i] as HeapEntry];
        i = m;
      }
    }
    return top;
  }
}

function bytePairCountLong(bytes: Uint8Array, length: number, table: RankTable): number {
  const heap = new MinHeap();
  const parts: Part[] = [];
  for (let i = 0; i < length; i += 1) {
    const part: Part = { start: i, end: i + 1, prev: parts[i - 1] ?? null, next: null, alive: true };
    if (part.prev) part.prev.next = part;
    parts.push(part);
  }
  const consider = (part: Part | null) => {
    if (part === null || part.next === null) return;
    const next = part.next;
    const rank = table.rank(bytes, part.start, next.end);
    if (rank >= 0) heap.push({ rank, start: part.start, part, mid: part.end, end: next.end });
  };
  for (const part of parts) consider(part);
  let count = length;
  for (let entry = heap.pop(); entry !== undefined; entry = heap.pop()) {
    const { part } = entry;
    const next = part.next;
    if (!part.alive || next === null || part.end !== entry.mid || next.end !== entry.end) continue;
    part.end = next.end;
    part.next = next.next;
    if (next.next) next.next.prev = part;
    next.alive = false;
    count -= 1;
    consider(part.prev);
    consider(part);
  }
  return count;
}
