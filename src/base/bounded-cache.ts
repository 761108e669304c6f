/**
 * A memo that forgets everything at once when full: each entry has a weight (1 by default, or e.g. the
 * characters of its key), and a `set` that would take the total past `maxWeight` clears the map first.
 * The caches it serves hold values that depend on a text alone (escaped bodies, piece counts, normalised texts)
 * and are hit far more than they are filled; clearing costs nothing per hit, where a least-recently-used order
 * would cost bookkeeping on every hit of the packing loop. Keys heavier than `maxWeight` are not remembered.
 */
export class BoundedCache<K, V> {
  readonly #map = new Map<K, V>();
  #weight = 0;

  constructor(
    readonly maxWeight: number,
    readonly weigh: (key: K, value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  /** Remembers `value` under `key` (clearing the cache first when it would be over its weight) and returns it. */
  set(key: K, value: V): V {
    const weight = this.weigh(key, value);
    if (weight > this.maxWeight) return value;
    if (this.#weight + weight > this.maxWeight) {
      this.#map.clear();
      this.#weight = 0;
    }
    this.#map.set(key, value);
    this.#weight += weight;
    return value;
  }

  get size(): number {
    return this.#map.size;
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
