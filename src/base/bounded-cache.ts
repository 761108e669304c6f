/**
 * A memo in two generations: each entry has a weight (1 by default, or e.g. the characters of its key), and when
 * a `set` would take the current generation past half of `maxWeight`, that generation becomes the old one (the
 * one before is dropped) and a new one starts. A hit in the old generation moves the entry into the current one,
 * so what is still in use survives the turn and the rest goes with the old generation: at most `maxWeight` held.
 * The caches it serves hold values that depend on a text alone (escaped bodies, piece counts, normalised texts)
 * and are hit far more than they are filled; a hit in the current generation is one Map lookup, where a
 * least-recently-used order would cost bookkeeping on every hit of the packing loop. Keeping what is in use
 * matters beyond the recomputation: a text key looked up again as the same string finds its entry by the hash
 * the string holds, where a fresh copy is hashed and compared in full (about 3 µs for a 1,300-character text).
 * Keys heavier than half of `maxWeight` are not remembered.
 */
export class BoundedCache<K, V> {
  #current = new Map<K, V>();
  #old: Map<K, V> | null = null;
  #weight = 0;
  readonly #generationWeight: number;

  constructor(
    readonly maxWeight: number,
    readonly weigh: (key: K, value: V) => number = () => 1,
  ) {
    this.#generationWeight = Math.max(1, maxWeight / 2);
  }

  get(key: K): V | undefined {
    const value = this.#current.get(key);
    if (value !== undefined || this.#old === null) return value;
    const kept = this.#old.get(key);
    if (kept !== undefined) this.set(key, kept);
    return kept;
  }

  /** Remembers `value` under `key` (turning the generation first when it would be over its weight) and returns it. */
  set(key: K, value: V): V {
    const weight = this.weigh(key, value);
    if (weight > this.#generationWeight) return value;
    if (this.#weight + weight > this.#generationWeight) {
      this.#old = this.#current;
      this.#current = new Map();
      this.#weight = 0;
    }
    this.#current.set(key, value);
    this.#weight += weight;
    return value;
  }

  /** Entries in the current generation. */
  get size(): number {
    return this.#current.size;
  }
}

/** The value of `map` under `key`, made by `make` on first use (one cache per format, tokenizer, …). */
export function cacheFor<K, C>(map: { get(key: K): C | undefined; set(key: K, value: C): unknown }, key: K, make: () => C): C {
  let cache = map.get(key);
  if (cache === undefined) {
    cache = make();
    map.set(key, cache);
  }
  return cache;
}
