import { describe, expect, it } from 'vitest';
import { BoundedCache, cacheFor } from '../src/base/bounded-cache.js';

describe('BoundedCache', () => {
  it('remembers until a set would pass the weight, then forgets everything before remembering the new entry', () => {
    const cache = new BoundedCache<string, number>(10, (key) => key.length);
    expect(cache.set('abcd', 1)).toBe(1);
    cache.set('efgh', 2);
    expect([cache.get('abcd'), cache.get('efgh'), cache.size]).toEqual([1, 2, 2]);
    cache.set('ijk', 3); // 8 + 3 > 10
    expect([cache.get('abcd'), cache.get('efgh'), cache.get('ijk'), cache.size]).toEqual([undefined, undefined, 3, 1]);
  });

  it('counts entries when no weight is given, and never remembers a key heavier than the whole cache', () => {
    const byCount = new BoundedCache<number, string>(2);
    byCount.set(1, 'a');
    byCount.set(2, 'b');
    byCount.set(3, 'c');
    expect([byCount.get(1), byCount.get(3), byCount.size]).toEqual([undefined, 'c', 1]);
    const byChars = new BoundedCache<string, string>(5, (key) => key.length);
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
