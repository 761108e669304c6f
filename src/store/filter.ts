import { LitmPackError } from '../base/errors.js';

// The filter language: the subset of Qdrant's JSON filter both stores implement, spelled as Qdrant spells it.
export type MatchValue = string | number | boolean;
export interface FieldCondition {
  key: string;
  match?: { value: MatchValue } | { any: MatchValue[] } | { except: MatchValue[] };
  range?: { gt?: number; gte?: number; lt?: number; lte?: number };
}
export type Condition = FieldCondition | Filter;
export interface Filter {
  must?: Condition | Condition[];
  should?: Condition | Condition[];
  must_not?: Condition | Condition[];
}

/**
 * The filter language both stores accept: the subset of Qdrant's JSON filter spelled exactly as Qdrant
 * spells it, evaluated with Qdrant's semantics (`lib/segment/src/payload_storage/query_checker.rs`,
 * `condition_checker.rs`, `json_path/get.rs`):
 * - `must`: all conditions hold (an empty list holds); `must_not`: none holds;
 *   `should`: at least one holds. An empty `should` list is rejected: Qdrant's documentation and its
 *   engine disagree on what it matches (nothing vs. everything), so no reading of it is safe.
 * - a field condition on a missing (or null) key never matches, `match.except` included.
 * - keys are paths into the payload (the chunk record): `a.b`, `a[].b` (project through an array),
 *   `a[0]`; an intermediate array is only entered with `[]` or `[n]`. A leaf array matches when any
 *   of its elements matches.
 * - `match.value` compares keywords, integers and booleans by equality (no type coercion);
 *   `range` only matches numbers.
 * Anything else from Qdrant's language is rejected with `unsupported_filter`, never ignored.
 */

/** `{ is_empty: { key } }`: used by `aclFilter`; not accepted in caller filters. */
export interface IsEmptyCondition {
  is_empty: { key: string };
}

/** A filter as the stores evaluate it: the public language plus the conditions litm-pack adds itself. */
export type EngineCondition = FieldCondition | IsEmptyCondition | EngineFilter;
export interface EngineFilter {
  must?: EngineCondition | EngineCondition[];
  should?: EngineCondition | EngineCondition[];
  must_not?: EngineCondition | EngineCondition[];
}

const CLAUSES = ['must', 'should', 'must_not'] as const;
/** Qdrant conditions and clauses litm-pack knows of but does not implement. */
const UNSUPPORTED_CONDITIONS = ['is_empty', 'is_null', 'has_id', 'has_vector', 'nested', 'min_should'];
const UNSUPPORTED_FIELD_PARTS = ['geo_bounding_box', 'geo_radius', 'geo_polygon', 'values_count', 'is_empty', 'is_null'];
const UNSUPPORTED_MATCH = ['text', 'text_any', 'phrase', 'prefix'];

/**
 * Checks that `filter` uses only the supported subset and is well formed, and returns it typed.
 * Throws `unsupported_filter` naming the unsupported part, or `invalid_input` for a malformed filter.
 */
export function validateFilter(filter: unknown): Filter {
  checkFilter(filter, 'filter', 1);
  return filter as Filter;
}

/**
 * Levels of nested filters a caller's filter may have. Real filters nest a few levels; without a bound, one
 * nested thousands deep overflows the stack of every recursive reader (this check, the stores' evaluation,
 * canonical JSON) and costs time quadratic in its depth.
 */
export const MAX_FILTER_DEPTH = 32;

function checkFilter(value: unknown, path: string, depth: number): void {
  if (depth > MAX_FILTER_DEPTH) invalid(`filter is nested deeper than ${MAX_FILTER_DEPTH} levels of must/should/must_not; flatten it`);
  if (!isPlainObject(value)) invalid(`${path} must be an object with must/should/must_not`);
  for (const key of Object.keys(value)) {
    if ((CLAUSES as readonly string[]).includes(key)) continue;
    if (key === 'min_should') unsupported(`${path}.min_should`);
    unsupported(`${path}.${key}`, `unknown filter clause "${key}"`);
  }
  for (const clause of CLAUSES) {
    const conditions = value[clause];
    if (conditions === undefined || conditions === null) continue;
    const list = Array.isArray(conditions) ? conditions : [conditions];
    if (clause === 'should' && list.length === 0) {
      invalid(`${path}.should is an empty list: leave it out, or give at least one condition`);
    }
    list.forEach((condition, index) =>
      checkCondition(condition, Array.isArray(conditions) ? `${path}.${clause}[${index}]` : `${path}.${clause}`, depth),
    );
  }
}

function checkCondition(value: unknown, path: string, depth: number): void {
  if (!isPlainObject(value)) invalid(`${path} must be a condition object`);
  if ('key' in value) {
    checkFieldCondition(value, path);
    return;
  }
  for (const name of UNSUPPORTED_CONDITIONS) {
    if (name in value) unsupported(`${path}.${name}`, `the "${name}" condition is not supported`);
  }
  // Anything else must be a nested filter (Qdrant treats `{}` as a filter that matches everything).
  checkFilter(value, path, depth + 1);
}

function checkFieldCondition(value: Record<string, unknown>, path: string): void {
  const { key } = value;
  if (typeof key !== 'string' || key.length === 0) invalid(`${path}.key must be a non-empty string`);
  parseKey(key, `${path}.key`);
  for (const part of Object.keys(value)) {
    if (part === 'key' || part === 'match' || part === 'range') continue;
    if (UNSUPPORTED_FIELD_PARTS.includes(part)) unsupported(`${path}.${part}`);
    unsupported(`${path}.${part}`, `unknown field condition "${part}"`);
  }
  const hasMatch = value.match !== undefined && value.match !== null;
  const hasRange = value.range !== undefined && value.range !== null;
  if (hasMatch && hasRange) {
    unsupported(`${path}`, 'a field condition with both match and range (use two conditions in must)');
  }
  if (hasMatch) checkMatch(value.match, `${path}.match`);
  else if (hasRange) checkRange(value.range, `${path}.range`);
  else invalid(`${path} needs a match or range`);
}

function checkMatch(value: unknown, path: string): void {
  if (!isPlainObject(value)) invalid(`${path} must be an object`);
  const keys = Object.keys(value);
  for (const name of UNSUPPORTED_MATCH) {
    if (name in value) unsupported(`${path}.${name}`);
  }
  if (keys.length !== 1) invalid(`${path} must have exactly one of value, any, except`);
  const [kind] = keys as [string];
  const operand = value[kind];
  if (kind === 'value') {
    if (typeof operand === 'string' || typeof operand === 'boolean') return;
    if (typeof operand === 'number' && Number.isSafeInteger(operand)) return;
    invalid(`${path}.value must be a string, an integer or a boolean`);
  }
  if (kind === 'any' || kind === 'except') {
    if (!Array.isArray(operand)) invalid(`${path}.${kind} must be an array`);
    // Qdrant accepts a list of keywords or a list of integers, not a mix and not booleans.
    const allStrings = operand.every((item) => typeof item === 'string');
    const allIntegers = operand.every((item) => typeof item === 'number' && Number.isSafeInteger(item));
    if (!allStrings && !allIntegers) invalid(`${path}.${kind} must be all strings or all integers`);
    return;
  }
  unsupported(`${path}.${kind}`, `unknown match "${kind}"`);
}

function checkRange(value: unknown, path: string): void {
  if (!isPlainObject(value)) invalid(`${path} must be an object`);
  const keys = Object.keys(value);
  if (keys.length === 0) invalid(`${path} needs at least one of gt, gte, lt, lte`);
  for (const bound of keys) {
    if (!['gt', 'gte', 'lt', 'lte'].includes(bound)) invalid(`${path}.${bound} is not a range bound`);
    const limit = value[bound];
    if (limit === null || limit === undefined) continue;
    if (typeof limit === 'string') unsupported(`${path}.${bound}`, 'datetime ranges are not supported');
    if (typeof limit !== 'number' || !Number.isFinite(limit)) invalid(`${path}.${bound} must be a finite number`);
  }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

type PathItem = { key: string } | { index: number } | { wildcard: true };

const keyCache = new Map<string, PathItem[]>();

/** Parses a Qdrant payload key (`a.b`, `a[].b`, `a[2]`, `"quoted.key".b`). */
function parseKey(key: string, where: string): PathItem[] {
  const cached = keyCache.get(key);
  if (cached) return cached;
  const items: PathItem[] = [];
  let rest = key;
  let first = true;
  while (rest.length > 0) {
    if (!first) {
      if (rest.startsWith('.')) rest = rest.slice(1);
      else if (!rest.startsWith('[')) unsupported(where, `cannot parse payload key "${key}"`);
    }
    const quoted = /^"([^"]*)"/.exec(rest);
    const plain = /^[A-Za-z0-9_\-$]+/.exec(rest);
    const bracket = /^\[(\d*)\]/.exec(rest);
    if (!first && bracket) {
      items.push(bracket[1] === '' ? { wildcard: true } : { index: Number(bracket[1]) });
      rest = rest.slice(bracket[0].length);
    } else if (quoted) {
      items.push({ key: quoted[1]! });
      rest = rest.slice(quoted[0].length);
    } else if (plain) {
      items.push({ key: plain[0] });
      rest = rest.slice(plain[0].length);
    } else {
      unsupported(where, `cannot parse payload key "${key}"`);
    }
    first = false;
  }
  if (keyCache.size > 1000) keyCache.clear();
  keyCache.set(key, items);
  return items;
}

/** The values a key points at in a payload, as Qdrant's `get_value_from_json_map` returns them. */
export function getPayloadValues(payload: unknown, key: string): unknown[] {
  const path = parseKey(key, 'key');
  const out: unknown[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (value === undefined) return;
    const item = path[depth];
    if (item === undefined) {
      out.push(value);
      return;
    }
    if ('key' in item) {
      if (isPlainObject(value) && Object.hasOwn(value, item.key)) walk(value[item.key], depth + 1);
    } else if ('index' in item) {
      if (Array.isArray(value)) walk(value[item.index], depth + 1);
    } else if (Array.isArray(value)) {
      for (const element of value) walk(element, depth + 1);
    }
  };
  walk(payload, 0);
  return out;
}

/** Evaluates `filter` (already validated, or built by litm-pack) against one payload. */
export function matchesFilter(filter: EngineFilter, payload: object): boolean {
  const must = asList(filter.must);
  const should = asList(filter.should);
  const mustNot = asList(filter.must_not);
  if (should !== undefined && !should.some((c) => matchesCondition(c, payload))) return false;
  if (must !== undefined && !must.every((c) => matchesCondition(c, payload))) return false;
  if (mustNot !== undefined && mustNot.some((c) => matchesCondition(c, payload))) return false;
  return true;
}

function matchesCondition(condition: EngineCondition, payload: object): boolean {
  if ('key' in condition) return matchesField(condition, payload);
  if ('is_empty' in condition) return isEmptyValue(getPayloadValues(payload, condition.is_empty.key));
  return matchesFilter(condition, payload);
}

function matchesField(condition: FieldCondition, payload: object): boolean {
  const values = getPayloadValues(payload, condition.key);
  // Qdrant: a condition on a missing key only holds for is_empty/is_null, which are not supported here.
  return values.some((value) =>
    Array.isArray(value) ? value.some((element) => checkValue(condition, element)) : checkValue(condition, value),
  );
}

function checkValue(condition: FieldCondition, value: unknown): boolean {
  const { match, range } = condition;
  if (match) {
    if ('value' in match) return value === match.value && isMatchable(value);
    if ('any' in match) return isMatchable(value) && typeof value !== 'boolean' && includes(match.any, value);
    if ('except' in match) {
      // Qdrant: null never matches; a value of another type than the list (or a float) counts as "not in".
      if (value === null) return false;
      if (typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value))) {
        return !includes(match.except, value);
      }
      return true;
    }
    return false;
  }
  if (range) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return false;
    return (
      (range.lt === undefined || range.lt === null || value < range.lt) &&
      (range.gt === undefined || range.gt === null || value > range.gt) &&
      (range.lte === undefined || range.lte === null || value <= range.lte) &&
      (range.gte === undefined || range.gte === null || value >= range.gte)
    );
  }
  return false;
}

/** Keywords, integers and booleans are matchable; floats never equal an integer match value in Qdrant. */
function isMatchable(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isSafeInteger(value));
}

function includes(list: readonly MatchValue[], value: unknown): boolean {
  return list.some((item) => item === value);
}

function isEmptyValue(values: unknown[]): boolean {
  return values.every((value) => value === null || (Array.isArray(value) && value.length === 0));
}

function asList(value: EngineCondition | EngineCondition[] | null | undefined): EngineCondition[] | undefined {
  if (value === undefined || value === null) return undefined;
  return Array.isArray(value) ? value : [value];
}

// ---------------------------------------------------------------------------------------------
// Access control

/** The payload key holding a chunk's principals (`ChunkRecord.acl`). */
export const ACL_KEY = 'acl';

/**
 * The access-control filter for `principals`: a chunk is visible iff it has no `acl` or its `acl` shares
 * a value with `principals`. Both stores put it inside the engine query, next to the caller's filter.
 */
export function aclFilter(principals: readonly string[]): EngineFilter {
  const open: IsEmptyCondition = { is_empty: { key: ACL_KEY } };
  if (principals.length === 0) return { must: [open] };
  return { should: [open, { key: ACL_KEY, match: { any: [...principals] } }] };
}

/** Joins filters with AND; `undefined` parts are skipped, `undefined` when nothing is left. */
export function combineFilters(...filters: (EngineFilter | undefined)[]): EngineFilter | undefined {
  const present = filters.filter((f): f is EngineFilter => f !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return { must: present };
}

// ---------------------------------------------------------------------------------------------

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unsupported(part: string, message?: string): never {
  throw new LitmPackError('unsupported_filter', `Unsupported filter part ${part}: ${message ?? 'not supported by litm-pack stores'}`, {
    details: { part },
  });
}

function invalid(message: string): never {
  throw new LitmPackError('invalid_input', `Invalid filter: ${message}`);
}
