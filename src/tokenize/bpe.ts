/**
 * Byte-pair merge count for one long pre-tokenised piece, in O(n log n).
 *
 * js-tiktoken merges by rescanning every adjacent pair after each merge and building a string key per
 * pair, which is quadratic with a large constant: a 4,000-character run without spaces (a base64 blob,
 * minified code) takes seconds. This computes the same result — repeatedly merge the adjacent pair with
 * the lowest rank, the leftmost one on ties — with a linked list and a heap, using js-tiktoken's own rank
 * table, and is used only for pieces long enough for the difference to matter.
 */
export type RankMap = Map<string, number>;

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
  /** The pair's bytes as they were when queued: a merge on either side makes the entry stale. */
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

/** Number of tokens byte-pair encoding gives for `piece` (the bytes of one pre-tokenised piece). */
export function bytePairCount(piece: Uint8Array, ranks: RankMap, maxTokenBytes: number): number {
  if (piece.length <= 1) return piece.length;
  const key = (start: number, end: number) => piece.subarray(start, end).join(',');
  const heap = new MinHeap();
  const parts: Part[] = [];
  for (let i = 0; i < piece.length; i += 1) {
    const part: Part = { start: i, end: i + 1, prev: parts[i - 1] ?? null, next: null, alive: true };
    if (part.prev) part.prev.next = part;
    parts.push(part);
  }
  const consider = (part: Part | null) => {
    if (part === null || part.next === null) return;
    const next = part.next;
    if (next.end - part.start > maxTokenBytes) return;
    const rank = ranks.get(key(part.start, next.end));
    if (rank !== undefined) heap.push({ rank, start: part.start, part, mid: part.end, end: next.end });
  };
  for (const part of parts) consider(part);
  let count = piece.length;
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
