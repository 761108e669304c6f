import { describe, expect, it } from 'vitest';
import { isLitmPackError, LitmPackError, type Filter } from '../src/index.js';
import { aclFilter, combineFilters, getPayloadValues, matchesFilter, validateFilter } from '../src/store/filter.js';

// The example points of Qdrant's filtering documentation.
const points = [
  { id: 1, city: 'London', color: 'green' },
  { id: 2, city: 'London', color: 'red' },
  { id: 3, city: 'London', color: 'blue' },
  { id: 4, city: 'Berlin', color: 'red' },
  { id: 5, city: 'Moscow', color: 'green' },
  { id: 6, city: 'Moscow', color: 'blue' },
];
const ids = (filter: Filter) => points.filter((p) => matchesFilter(validateFilter(filter), p)).map((p) => p.id);
const London = { key: 'city', match: { value: 'London' } };
const red = { key: 'color', match: { value: 'red' } };

function expectError(fn: () => unknown, code: 'unsupported_filter' | 'invalid_input', part?: string) {
  try {
    fn();
  } catch (error) {
    expect(isLitmPackError(error, code)).toBe(true);
    if (part) expect((error as Error).message).toContain(part);
    return;
  }
  throw new Error('expected a LitmPackError');
}

describe('clauses (as in Qdrant’s documentation examples)', () => {
  it('must is AND, should is OR, must_not is NOR', () => {
    expect(ids({ must: [London, red] })).toEqual([2]);
    expect(ids({ should: [London, red] })).toEqual([1, 2, 3, 4]);
    expect(ids({ must_not: [London, red] })).toEqual([5, 6]);
    expect(ids({ must: [London], must_not: [red] })).toEqual([1, 3]);
  });

  it('nests filters recursively', () => {
    expect(ids({ must_not: [{ must: [London, red] }] })).toEqual([1, 3, 4, 5, 6]);
    expect(ids({ should: [{ must: [London, red] }, { must: [{ key: 'city', match: { value: 'Moscow' } }] }] })).toEqual([2, 5, 6]);
  });

  it('accepts a single condition in place of a list', () => {
    expect(ids({ must: London })).toEqual([1, 2, 3]);
  });

  it('treats empty must and must_not as Qdrant does, and rejects an empty should', () => {
    expect(ids({ must: [] })).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ids({ must_not: [] })).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ids({})).toEqual([1, 2, 3, 4, 5, 6]);
    expect(() => validateFilter({ should: [] })).toThrow(/filter\.should is an empty list/);
    expect(() => validateFilter({ must: [{ should: [] }] })).toThrow(LitmPackError);
  });

  it('fails a should when no element matches', () => {
    expect(ids({ should: [{ key: 'city', match: { value: 'Paris' } }] })).toEqual([]);
  });
});

describe('field conditions', () => {
  const record = {
    sourceId: 'a.md',
    version: 'v2',
    n: 5,
    price: 4.5,
    flag: true,
    tags: ['x', 'y'],
    nums: [1, 7],
    metadata: { lang: 'en', nested: { deep: 3 } },
    items: [
      { name: 'p', n: 1 },
      { name: 'q', n: 9 },
    ],
    nothing: null,
  };
  const m = (filter: Filter) => matchesFilter(validateFilter(filter), record);

  it('match.value on keywords, integers and booleans, without coercion', () => {
    expect(m({ must: [{ key: 'sourceId', match: { value: 'a.md' } }] })).toBe(true);
    expect(m({ must: [{ key: 'n', match: { value: 5 } }] })).toBe(true);
    expect(m({ must: [{ key: 'n', match: { value: '5' } }] })).toBe(false);
    expect(m({ must: [{ key: 'flag', match: { value: true } }] })).toBe(true);
    expect(m({ must: [{ key: 'flag', match: { value: 'true' } }] })).toBe(false);
  });

  it('dotted paths reach into metadata; a missing key never matches', () => {
    expect(m({ must: [{ key: 'metadata.lang', match: { value: 'en' } }] })).toBe(true);
    expect(m({ must: [{ key: 'metadata.nested.deep', range: { gte: 3 } }] })).toBe(true);
    expect(m({ must: [{ key: 'metadata.missing', match: { value: 'en' } }] })).toBe(false);
    expect(m({ must: [{ key: 'metadata.missing', match: { except: ['en'] } }] })).toBe(false);
    expect(m({ must: [{ key: 'nothing', match: { except: ['en'] } }] })).toBe(false);
  });

  it('array values match if any element matches', () => {
    expect(m({ must: [{ key: 'tags', match: { value: 'y' } }] })).toBe(true);
    expect(m({ must: [{ key: 'tags', match: { any: ['q', 'x'] } }] })).toBe(true);
    expect(m({ must: [{ key: 'tags', match: { any: ['q'] } }] })).toBe(false);
    // except: at least one element outside the list
    expect(m({ must: [{ key: 'tags', match: { except: ['x'] } }] })).toBe(true);
    expect(m({ must: [{ key: 'tags', match: { except: ['x', 'y'] } }] })).toBe(false);
    expect(m({ must: [{ key: 'nums', range: { gt: 6 } }] })).toBe(true);
    expect(m({ must: [{ key: 'nums', range: { gt: 7 } }] })).toBe(false);
  });

  it('projects through arrays only with []', () => {
    expect(m({ must: [{ key: 'items[].name', match: { value: 'q' } }] })).toBe(true);
    expect(m({ must: [{ key: 'items.name', match: { value: 'q' } }] })).toBe(false);
    expect(m({ must: [{ key: 'items[0].name', match: { value: 'q' } }] })).toBe(false);
    expect(m({ must: [{ key: 'items[1].n', range: { gte: 9, lte: 9 } }] })).toBe(true);
    expect(getPayloadValues(record, 'items[].n')).toEqual([1, 9]);
  });

  it('match.any and match.except', () => {
    expect(m({ must: [{ key: 'version', match: { any: ['v1', 'v2'] } }] })).toBe(true);
    expect(m({ must: [{ key: 'version', match: { except: ['v1', 'v2'] } }] })).toBe(false);
    expect(m({ must: [{ key: 'version', match: { except: ['v1'] } }] })).toBe(true);
    expect(m({ must: [{ key: 'n', match: { any: [4, 5] } }] })).toBe(true);
    // Qdrant: a value of another type than the except list counts as "not in the list".
    expect(m({ must: [{ key: 'n', match: { except: ['5'] } }] })).toBe(true);
  });

  it('range bounds; non-numbers never match', () => {
    expect(m({ must: [{ key: 'price', range: { gt: 4, lt: 5 } }] })).toBe(true);
    expect(m({ must: [{ key: 'price', range: { gte: 4.5, lte: 4.5 } }] })).toBe(true);
    expect(m({ must: [{ key: 'price', range: { gt: 4.5 } }] })).toBe(false);
    expect(m({ must: [{ key: 'sourceId', range: { gte: 0 } }] })).toBe(false);
    expect(m({ must: [{ key: 'flag', range: { gte: 0 } }] })).toBe(false);
  });
});

describe('validation', () => {
  it.each([
    [{ must: [{ key: 'loc', geo_radius: { center: { lat: 0, lon: 0 }, radius: 1 } }] }, 'geo_radius'],
    [{ must: [{ key: 'loc', geo_bounding_box: {} }] }, 'geo_bounding_box'],
    [{ must: [{ key: 'tags', values_count: { gt: 1 } }] }, 'values_count'],
    [{ must: [{ is_empty: { key: 'acl' } }] }, 'is_empty'],
    [{ must: [{ is_null: { key: 'acl' } }] }, 'is_null'],
    [{ must: [{ has_id: [1, 2] }] }, 'has_id'],
    [{ must: [{ has_vector: 'dense' }] }, 'has_vector'],
    [{ must: [{ nested: { key: 'items', filter: {} } }] }, 'nested'],
    [{ must: [{ key: 'text', match: { text: 'hello' } }] }, 'match.text'],
    [{ must: [{ key: 'text', match: { phrase: 'hello' } }] }, 'match.phrase'],
    [{ min_should: { conditions: [], min_count: 1 } }, 'min_should'],
    [{ must: [{ key: 'date', range: { gte: '2024-01-01T00:00:00Z' } }] }, 'datetime'],
    [{ filter: [] }, 'filter'],
    [{ must: [{ key: 'a', match: { value: 1 }, range: { gt: 0 } }] }, 'both match and range'],
  ])('rejects %j naming %s', (filter, part) => {
    expectError(() => validateFilter(filter), 'unsupported_filter', part);
  });

  it.each([
    [null],
    ['city = London'],
    [{ must: ['x'] }],
    [{ must: [{ key: '', match: { value: 'x' } }] }],
    [{ must: [{ key: 'a' }] }],
    [{ must: [{ key: 'a', match: { value: 1.5 } }] }],
    [{ must: [{ key: 'a', match: { any: ['x', 1] } }] }],
    [{ must: [{ key: 'a', match: { any: [true] } }] }],
    [{ must: [{ key: 'a', match: {} }] }],
    [{ must: [{ key: 'a', range: {} }] }],
    [{ must: [{ key: 'a', range: { gt: Number.NaN } }] }],
  ])('rejects the malformed filter %j as invalid_input', (filter) => {
    expectError(() => validateFilter(filter), 'invalid_input');
  });

  it('names the path of the offending part', () => {
    expectError(
      () => validateFilter({ must: [London, { should: [red, { key: 'loc', geo_polygon: {} }] }] }),
      'unsupported_filter',
      'filter.must[1].should[1].geo_polygon',
    );
  });
});

describe('aclFilter', () => {
  const open = { id: 'open' };
  const hr = { id: 'hr', acl: ['hr', 'admins'] };
  const visible = (principals: string[]) => [open, hr].filter((r) => matchesFilter(aclFilter(principals), r)).map((r) => r.id);

  it('shows chunks without an ACL, and chunks whose ACL shares a principal', () => {
    expect(visible(['hr'])).toEqual(['open', 'hr']);
    expect(visible(['sales'])).toEqual(['open']);
    expect(visible([])).toEqual(['open']);
    expect(visible(['sales', 'admins'])).toEqual(['open', 'hr']);
  });

  it('combines with a caller filter by AND', () => {
    const f = combineFilters(validateFilter({ must: [{ key: 'id', match: { value: 'hr' } }] }), aclFilter(['sales']));
    expect(matchesFilter(f!, hr)).toBe(false);
    expect(combineFilters(undefined, undefined)).toBeUndefined();
  });
});
