/**
 * A hash table from short strings (at most 12 UTF-16 code units, each below U+0100) to small integers,
 * with the key's characters packed into three integers stored in the slot itself. A lookup reads one slot
 * and nothing else: a Map keyed by strings needs a string per lookup (a slice of the text being read) and
 * reads the stored string to confirm a match, and those memory reads are most of what counting tokens or
 * BM25 terms costs. Callers pack the characters as they scan (`packedShift`), so no string is made on a hit.
 */
export const SHORT_KEY_LENGTH = 12;

/** [A-Za-z0-9], by character code. */
export function isAsciiAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/** Where character `i` of a key goes: `(code << packedShift(i))` into integer `i >> 2`. */
export function packedShift(i: number): number {
  return (i & 3) * 8;
}

export class ShortKeyTable {
  /** Per slot: the packed characters (3 ints), then (value + 1) × 16 + length (0 for an empty slot). */
  #slots = new Int32Array(4 * 4096);
  #mask = 4095;
  #size = 0;

  /** Forgets everything when `limit` keys are held (callers' caches stay bounded). */
  constructor(readonly limit: number) {}

  get size(): number {
    return this.#size;
  }

  /** The value stored for the key, or -1. */
  get(a: number, b: number, c: number, length: number): number {
    const slots = this.#slots;
    const mask = this.#mask;
    for (let slot = mix(a, b, c) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 4;
      const meta = slots[at + 3]!;
      if (meta === 0) return -1;
      if (slots[at] === a && slots[at + 1] === b && slots[at + 2] === c && (meta & 15) === length) return (meta >> 4) - 1;
    }
  }

  /** Stores `value` (0 ≤ value < 2^26) for a key `get` did not find. */
  set(a: number, b: number, c: number, length: number, value: number): void {
    if (this.#size >= this.limit) this.clear();
    if ((this.#size + 1) * 2 > this.#mask + 1) this.#grow();
    this.#place(a, b, c, (value + 1) * 16 + length);
    this.#size += 1;
  }

  clear(): void {
    this.#slots = new Int32Array(4 * 4096);
    this.#mask = 4095;
    this.#size = 0;
  }

  #place(a: number, b: number, c: number, meta: number): void {
    const slots = this.#slots;
    let slot = mix(a, b, c) & this.#mask;
    while (slots[slot * 4 + 3] !== 0) slot = (slot + 1) & this.#mask;
    slots[slot * 4] = a;
    slots[slot * 4 + 1] = b;
    slots[slot * 4 + 2] = c;
    slots[slot * 4 + 3] = meta;
  }

  /** Doubles the table (kept at most half full, and small while few keys are held so it stays in cache). */
  #grow(): void {
    const old = this.#slots;
    this.#slots = new Int32Array(old.length * 2);
    this.#mask = old.length / 2 - 1;
    for (let i = 0; i < old.length; i += 4) if (old[i + 3] !== 0) this.#place(old[i]!, old[i + 1]!, old[i + 2]!, old[i + 3]!);
  }
}

function mix(a: number, b: number, c: number): number {
  const h = Math.imul(a ^ Math.imul(b ^ Math.imul(c, 0xc2b2ae35), 0x9e3779b1), 0x85ebca6b);
  return h ^ (h >>> 15);
}
