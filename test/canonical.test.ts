import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalStringify, canonicalCopy, canonicalCopyParts } from '../src/base/canonical.js';

// The canonical form as first written (recursive map/filter/sort/join): the bytes packHash covers must not move.
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('non-finite');
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : reference(v))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${reference((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/**
 * Values near JSON: null prototypes, boxed strings, sparse arrays, keys that enumerate out of order ("10", "9")
 * or are special (`__proto__`), and `numbers` beside strings, booleans, null and undefined.
 */
function jsonLike(keys: string[], numbers: fc.Arbitrary<number>[]): fc.Arbitrary<unknown> {
  return fc.anything({
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    key: fc.oneof(fc.string(), fc.constantFrom(...keys)),
    values: [fc.string(), ...numbers, fc.boolean(), fc.constant(null), fc.constant(undefined)],
  });
}

describe('canonicalStringify', () => {
  it('writes the same bytes as the canonical form’s definition, for any JSON-like value (property)', () => {
    const value = jsonLike(['10', '9', '__proto__', 'a', 'B', ''], [fc.double({ noNaN: true, noDefaultInfinity: true })]);
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalStringify(v)).toBe(reference(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('is unchanged by a JSON round trip, so a pack can be hashed on the string it was parsed from', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const json = canonicalStringify(v);
        expect(canonicalStringify(JSON.parse(json))).toBe(json);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('canonicalCopy', () => {
  it('gives what a round trip through canonical JSON gives, for any JSON-like value (property)', () => {
    // Infinities and -0 too: the copy must refuse or normalise them as JSON does.
    const value = jsonLike(['10', '9', '__proto__', 'toJSON', 'a', 'B', ''], [fc.double({ noNaN: true }), fc.constant(-0)]);
    fc.assert(
      fc.property(value, (v) => {
        let expected: { value: unknown } | { error: string };
        try {
          expected = { value: JSON.parse(canonicalStringify(v)) as unknown };
        } catch (error) {
          expected = { error: (error as Error).name };
        }
        let actual: { value: unknown } | { error: string };
        try {
          actual = { value: canonicalCopy(v) };
        } catch (error) {
          actual = { error: (error as Error).name };
        }
        // toStrictEqual tells -0 from 0, an own __proto__ member from a prototype, and sees key order only
        // through the JSON written from the copy, so that is compared too.
        expect(actual).toStrictEqual(expected);
        if ('value' in actual) expect(canonicalStringify(actual.value)).toBe(canonicalStringify(v));
      }),
      { numRuns: 3000 },
    );
  });

  it('shares nothing mutable with the value copied', () => {
    const inner = { b: [1, { c: 2 }] };
    const copy = canonicalCopy({ a: inner }) as { a: { b: [number, { c: number }] } };
    inner.b.push(3);
    (inner.b[1] as { c: number }).c = 9;
    expect(copy).toStrictEqual({ a: { b: [1, { c: 2 }] } });
  });
});

describe('canonicalCopyParts', () => {
  it('writes an object as canonicalStringify does, and with one member more as if it had been there (property)', () => {
    const record = fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom('packHash', 'kind', 'query', '10', '9', '__proto__', 'a', 'z', '')),
      fc.oneof(fc.jsonValue(), fc.dictionary(fc.constantFrom('10', '9', 'x'), fc.integer())),
      { maxKeys: 8 },
    );
    fc.assert(
      fc.property(record, fc.oneof(fc.string(), fc.constantFrom('packHash', 'kind', 'query', '')), fc.jsonValue(), (r, key, value) => {
        fc.pre(!Object.hasOwn(r, key));
        const parts = canonicalCopyParts(r, key);
        expect(parts.parts.join('')).toBe(canonicalStringify(r));
        expect(parts.value).toStrictEqual(JSON.parse(canonicalStringify(r)));
        expect(parts.withMember(canonicalStringify(value))).toBe(canonicalStringify({ ...r, [key]: value }));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes a pack as toCanonicalJson does (the server sends the string written while hashing)', async () => {
    const { packBundle, toCanonicalJson } = await import('../src/index.js');
    const { packJson } = await import('../src/core/finish.js');
    const pack = packBundle({
      query: 'refunds',
      candidates: [
        { id: 'a', text: 'Refunds take 14 days.', score: 2, sourceId: 'policy.md' },
        { id: 'b', text: 'Receipts are needed.', score: 1, sourceId: 'policy.md' },
      ],
      maxTokens: 200,
    });
    expect(packJson(pack)).toBe(toCanonicalJson(pack));
    // A pack changed after packing is written as it is now (toCanonicalJson never reuses the string).
    pack.items.pop();
    expect(toCanonicalJson(pack)).not.toBe(packJson(pack));
  });
});
