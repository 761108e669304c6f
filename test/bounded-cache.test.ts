import { describe, expect, it } from 'vitest';
import { BoundedCache, cacheFor } from '../src/base/bounded-cache.js';

describe('BoundedCache', () => {
  it('turns a generation when a set would pass half the weight; what is used again survives the turn, the rest goes with the next', () => {
    const cache = new BoundedCache<string, number>(20, (key) => key.length);
    expect(cache.set('abcd', 1)).toBe(1);
    cache.set('efgh', 2);
    expect([cache.get('abcd'), cache.get('efgh'), cache.size]).toEqual([1, 2, 2]);
    cache.set('ijk', 3); // 8 + 3 > 10: abcd and efgh are now the old generation
    expect(cache.size).toBe(1);
    expect(cache.get('abcd')).toBe(1); // found in the old generation and moved into the current one
    expect(cache.size).toBe(2);
    cache.set('lmnop', 4); // 3 + 4 + 5 > 10: the current one (ijk, abcd) becomes old, efgh is dropped
    expect([cache.get('efgh'), cache.get('abcd'), cache.get('ijk'), cache.get('lmnop')]).toEqual([undefined, 1, 3, 4]);
  });

  it('never holds more than its weight', () => {
    const cache = new BoundedCache<number, string>(100, (_key, value) => value.length);
    for (let i = 0; i < 1000; i += 1) {
      cache.set(i, 'x'.repeat(1 + (i % 7)));
      if (i % 3 === 0) cache.get(i - 5);
      let held = 0;
      for (let k = 0; k <= i; k += 1) {
        // A get may move an entry into the current generation; what is reachable stays within both generations.
        const value = cache.get(k);
        if (value !== undefined) held += value.length;
      }
      expect(held).toBeLessThanOrEqual(100 + 7);
    }
  });

  it('counts entries when no weight is given, and never remembers a key heavier than a generation', () => {
    const byCount = new BoundedCache<number, string>(4);
    byCount.set(1, 'a');
    byCount.set(2, 'b');
    byCount.set(3, 'c'); // a new generation: 1 and 2 are old
    byCount.set(4, 'd');
    byCount.set(5, 'e'); // 3 and 4 are old, 1 and 2 are gone
    expect([byCount.get(1), byCount.get(2), byCount.get(3), byCount.get(5)]).toEqual([undefined, undefined, 'c', 'e']);
    const byChars = new BoundedCache<string, string>(10, (key) => key.length);
    byChars.set('ab', 'x');
    expect(byChars.set('abcdefgh', 'y')).toBe('y');
    expect([byChars.get('abcdefgh'), byChars.get('ab')]).toEqual([undefined, 'x']);
  });

  it('cacheFor makes one cache per key, in a Map or a WeakMap', () => {
    const perFormat = new Map<string, BoundedCache<string, number>>();
    const a = cacheFor(perFormat, 'markdown', () => new BoundedCache(1));
    expect(cacheFor(perFormat, 'markdown', () => new BoundedCache(1))).toBe(a);
    expect(cacheFor(perFormat, 'xml', () => new BoundedCache(1))).not.toBe(a);
    const owner = {};
    const perObject = new WeakMap<object, string[]>();
    const list = cacheFor(perObject, owner, () => []);
    expect(cacheFor(perObject, owner, () => ['other'])).toBe(list);
  });
});
