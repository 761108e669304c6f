import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainCandidate, parsePackOptions } from '../src/core/candidates.js';
import { BundleOptionsSchema, CandidateSchema } from '../src/core/schemas.js';
import { MemoryHybridStore, packBundle } from '../src/index.js';

// Values near every rule's edge: each field draws from valid values, invalid ones and the wrong types.
const anyOf = <T>(...values: T[]) => fc.constantFrom(...values);
const number = anyOf(0, -0, 1, 2, 0.5, -1, -0.5, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, -Number.POSITIVE_INFINITY);
const text = anyOf('', 'a', 'doc.md', '0', ' ');
const wrong = anyOf<unknown>(null, undefined, true, 3, 'x', [], {}, ['a'], { a: 1 });
const time = anyOf(
  '2026-12-02T03:33:25.000Z',
  '2026-12-02T03:33:25',
  '2026-12-02T03:33:25+02:00',
  '2026-12-02',
  '2026-13-02T00:00:00Z',
  '2026-12-02T25:00:00Z',
  'yesterday',
  '',
);
const smallInt = anyOf(0, 1, 2, 3);
const span = fc.oneof(
  fc.record({ start: smallInt, end: smallInt }),
  fc.record({ start: number, end: number }),
  fc.record({ start: number, end: number, extra: number }),
  wrong,
);
const tokens = fc.oneof(number, fc.dictionary(anyOf('o200k_base', 'cl100k_base', '', '__proto__x'), number, { maxKeys: 3 }), wrong);
const locator = fc.oneof(
  fc.record({ page: number, lines: fc.tuple(number, number), time: fc.tuple(number, number) }, { requiredKeys: [] }),
  fc.record({ lines: fc.tuple(smallInt, smallInt), time: fc.tuple(fc.oneof(smallInt, anyOf(-0.5, 0.5)), smallInt) }, { requiredKeys: [] }),
  fc.record({ page: number, other: number }),
  fc.record({ lines: fc.array(number, { maxLength: 3 }) }),
  wrong,
);
const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: wrong });

/** Each field's values near the edge of what it accepts (or any value); `extra` is a key the schema does not know. */
const edges: Record<string, fc.Arbitrary<unknown>> = {
  id: field(text),
  text: field(text),
  score: field(number),
  sourceId: field(text),
  version: field(text),
  title: field(text),
  url: field(text),
  kind: field(text),
  parentId: field(text),
  section: field(fc.array(field(text), { maxLength: 3 })),
  span,
  similarity: field(number),
  timestamp: field(time),
  indexedAt: field(time),
  tokens,
  locator,
  metadata: field(fc.dictionary(text, number, { maxKeys: 2 })),
  extra: number,
};
/** Any mix of those fields. */
const candidate = fc.record(edges, { requiredKeys: [] });

/** Candidates of the shape stores return. */
const plain = fc.record(
  {
    id: anyOf('a', 'b#0'),
    text: text,
    score: anyOf(0, 1.5, -3),
    sourceId: anyOf('doc.md'),
    version: anyOf('v1'),
    title: anyOf('Title'),
    section: fc.array(anyOf('A', 'B'), { maxLength: 2 }),
    span: fc.nat(100).map((start) => ({ start, end: start + 5 })),
    similarity: anyOf(-1, 0, 0.7, 1),
    indexedAt: anyOf('2026-12-02T03:33:25.000Z'),
    timestamp: anyOf('2026-12-02', '2026-12-02T03:33:25+02:00'),
    tokens: fc.oneof(fc.nat(), fc.record({ o200k_base: fc.nat(), cl100k_base: fc.nat() })),
    locator: fc.oneof(fc.record({ page: fc.integer({ min: 1, max: 9 }) }), fc.record({ lines: anyOf([1, 4] as [number, number]) })),
  },
  { requiredKeys: ['id', 'text', 'score'] },
);

/** A plain candidate with one field replaced by one of its edge values. */
const nearPlain = fc
  .tuple(
    plain,
    fc.constantFrom(...Object.keys(edges)).chain((key) => edges[key]!.map((value) => [key, value] as const)),
  )
  .map(([value, [key, replacement]]) => ({ ...value, [key]: replacement }));

/** JSON.stringify replacer writing every object's keys in sorted order (the schema writes its own key order). */
function sortedKeys(_key: string, member: unknown): unknown {
  if (typeof member !== 'object' || member === null || Array.isArray(member)) return member;
  return Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

describe('the candidate fast path', () => {
  it('takes only candidates the schema accepts and returns unchanged', () => {
    let taken = 0;
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(candidate, plain, nearPlain), (value) => {
        if (CandidateSchema.safeParse(value).success) accepted += 1;
        if (!isPlainCandidate(value)) return;
        taken += 1;
        const parsed = CandidateSchema.safeParse(value);
        expect(parsed.success).toBe(true);
        // As JSON (what a taken candidate can hold: no undefined, NaN or infinity), so null-prototype inputs compare too.
        expect(JSON.stringify(parsed.data, sortedKeys)).toBe(JSON.stringify(value, sortedKeys));
      }),
      { numRuns: 20_000 },
    );
    // The generator reaches both sides: candidates the fast path takes, and ones only the schema can judge.
    expect(taken).toBeGreaterThan(200);
    expect(accepted).toBeGreaterThan(taken);
  });

  it('takes every candidate of the shape stores return', () => {
    fc.assert(
      fc.property(plain, (value) => {
        expect(CandidateSchema.safeParse(value).success).toBe(true);
        expect(isPlainCandidate(value)).toBe(true);
      }),
    );
  });

  it('gives the same options, and the schema refusal, either way', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments([
      { id: 'a.md', title: 'Refunds', text: 'Refunds are paid within 14 days of the return.\n\nA receipt is needed.' },
      { id: 'b.md', text: 'Parcels ship in two days. Labels are printed at the store.' },
    ]);
    const candidates = await store.search({ text: 'refund parcel', mode: 'lexical', limit: 10 });
    expect(candidates.length).toBeGreaterThan(1);
    expect(candidates.every((c) => isPlainCandidate(c))).toBe(true);
    const input = { query: 'refunds', candidates, maxTokens: 200 };
    expect(parsePackOptions(BundleOptionsSchema, input, 'packBundle options')).toStrictEqual(BundleOptionsSchema.parse(input));
    // One candidate the fast path cannot take sends all of them through the schema, with its message and path.
    const bad = [...candidates, { id: 'c', text: 'x', score: Number.NaN }];
    expect(() => packBundle({ query: 'refunds', candidates: bad, maxTokens: 200 })).toThrow(/candidates\.2\.score|score/);
  });
});
