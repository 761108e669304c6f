/**
 * Packing's input check without the schema's cost for the candidates stores return. `CandidateSchema` takes about
 * 6 µs a candidate (its `tokens` union tries the number first and builds an issue for every record), 0.3 ms of a
 * pack of 50: a tenth of a bundle request. A candidate of the plain shape (known keys only, every value defined,
 * no metadata) is checked here by the same rules, and the schema runs only for the rest, so every refusal still
 * carries the schema's path and message. test/candidates-fast-path.property.test.ts holds the two to one verdict.
 */
import type { z } from 'zod';
import { BoundedCache } from '../base/bounded-cache.js';
import { parseOrThrow } from '../base/errors.js';
import { CandidateSchema, TimestampSchema, type Candidate } from './schemas.js';

/** Keys the fast path knows; `metadata` goes through the schema (its size bound is the schema's). */
const PLAIN_KEYS: ReadonlySet<string> = new Set([
  'id',
  'text',
  'score',
  'sourceId',
  'version',
  'title',
  'url',
  'section',
  'span',
  'similarity',
  'kind',
  'timestamp',
  'indexedAt',
  'tokens',
  'locator',
  'parentId',
]);

const INDEXED_AT = CandidateSchema.shape.indexedAt.unwrap();
/** Date-times seen valid (stores give thousands of chunks a few distinct ones): the schema's verdict, remembered. */
const validIndexedAts = new BoundedCache<string, true>(4096);
const validTimestamps = new BoundedCache<string, true>(4096);
function validTime(schema: z.ZodType, seen: BoundedCache<string, true>, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (seen.get(value) === true) return true;
  if (!schema.safeParse(value).success) return false;
  seen.set(value, true);
  return true;
}

/** True when `value` is a date-time `CandidateSchema` takes as `indexedAt` (remembered: stores repeat a few). */
export function isCandidateIndexedAt(value: unknown): value is string {
  return validTime(INDEXED_AT, validIndexedAts, value);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** An object literal's, JSON.parse's or `Object.create(null)`'s: nothing inherited to read. */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (!isObject(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};
const nonNegativeInt = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const positiveInt = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0;
const finiteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const nonEmpty = (value: unknown) => typeof value === 'string' && value.length > 0;

function plainSpan(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) if (key !== 'start' && key !== 'end') return false;
  return nonNegativeInt(value.start) && nonNegativeInt(value.end) && (value.end as number) >= (value.start as number);
}

function plainTokens(value: unknown): boolean {
  if (typeof value === 'number') return nonNegativeInt(value);
  if (!isPlainObject(value)) return false;
  for (const key in value) if (!nonNegativeInt(value[key])) return false;
  return true;
}

function plainLocator(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    const member = value[key];
    if (key === 'page') {
      if (!positiveInt(member)) return false;
    } else if (key === 'lines') {
      if (!Array.isArray(member) || member.length !== 2 || !positiveInt(member[0]) || !positiveInt(member[1]) || member[1] < member[0])
        return false;
    } else if (key === 'time') {
      if (
        !Array.isArray(member) ||
        member.length !== 2 ||
        !finiteNumber(member[0]) ||
        !finiteNumber(member[1]) ||
        member[0] < 0 ||
        member[1] < member[0]
      )
        return false;
    } else {
      return false;
    }
  }
  return true;
}

/**
 * True when `value` is a candidate of the plain shape that `CandidateSchema` accepts and would return unchanged;
 * false says only "ask the schema" (it may still accept it: extra keys, metadata, an explicit undefined...).
 */
export function isPlainCandidate(value: unknown): value is Candidate {
  if (!isPlainObject(value)) return false;
  if (!nonEmpty(value.id) || typeof value.text !== 'string' || !finiteNumber(value.score)) return false;
  for (const key in value) {
    if (!PLAIN_KEYS.has(key)) return false;
    const member = value[key];
    switch (key) {
      case 'id':
      case 'text':
      case 'score':
        break;
      case 'sourceId':
      case 'parentId':
        if (!nonEmpty(member)) return false;
        break;
      case 'version':
      case 'title':
      case 'url':
      case 'kind':
        if (typeof member !== 'string') return false;
        break;
      case 'section':
        if (!Array.isArray(member)) return false;
        for (let i = 0; i < member.length; i += 1) if (typeof member[i] !== 'string') return false;
        break;
      case 'span':
        if (!plainSpan(member)) return false;
        break;
      case 'similarity':
        if (!finiteNumber(member) || member < -1 || member > 1) return false;
        break;
      case 'timestamp':
        if (!validTime(TimestampSchema, validTimestamps, member)) return false;
        break;
      case 'indexedAt':
        if (!isCandidateIndexedAt(member)) return false;
        break;
      case 'tokens':
        if (!plainTokens(member)) return false;
        break;
      case 'locator':
        if (!plainLocator(member)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * Parses packing options that hold `candidates`: when every candidate is of the plain shape, the schema checks
 * the rest and the candidates are taken as given (a new array; packing never changes a candidate); otherwise the
 * schema checks everything, as before.
 */
export function parsePackOptions<S extends z.ZodType<{ candidates: Candidate[] }>>(schema: S, input: unknown, what: string): z.infer<S> {
  if (isObject(input) && Array.isArray(input.candidates)) {
    const candidates = input.candidates as unknown[];
    let plain = true;
    for (let i = 0; i < candidates.length && plain; i += 1) plain = isPlainCandidate(candidates[i]);
    if (plain) {
      const options = parseOrThrow(schema, { ...input, candidates: [] }, what);
      options.candidates = candidates.slice() as Candidate[];
      return options;
    }
  }
  return parseOrThrow(schema, input, what);
}
