import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted (code-unit order) at every level and `undefined` members omitted,
 * so the same value always gives the same bytes. Written here rather than taken from a package because
 * it is a dozen lines and the byte format is part of our contract (packHash depends on it).
 */
export function canonicalStringify(value: unknown): string {
  // A value already in canonical form (keys in order everywhere, nothing JSON.stringify writes differently) is
  // written by JSON.stringify itself, about twice as fast; packs are built with their keys in order.
  if (typeof value === 'object' && value !== null && inCanonicalForm(value)) return JSON.stringify(value);
  return canonicalWrite(value);
}

/**
 * True when `JSON.stringify(value)` writes what `canonicalWrite` does: plain objects (no prototype but Object's
 * or none) whose keys are in code-unit order, arrays without holes, and otherwise only strings, booleans, null,
 * finite numbers and undefined (which both leave out of an object and write as null in an array).
 */
function inCanonicalForm(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i += 1) if (!(i in value) || !inCanonicalForm(value[i])) return false;
        return true;
      }
      const prototype = Object.getPrototypeOf(value) as unknown;
      if (prototype !== Object.prototype && prototype !== null) return false;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let i = 0; i < keys.length; i += 1) {
        if (i > 0 && keys[i - 1]! >= keys[i]!) return false;
        if (!inCanonicalForm(record[keys[i]!])) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

function canonicalWrite(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new TypeError('canonical JSON cannot hold a non-finite number');
    }
    return JSON.stringify(value) ?? 'null';
  }
  // Written as loops (every pack is hashed through this): no intermediate arrays, and keys are sorted only
  // when they are not in order already, which objects built field by field usually are.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) {
      if (i > 0) out += ',';
      // A hole stays empty, as Array.prototype.join writes it.
      if (i in value) out += value[i] === undefined ? 'null' : canonicalStringify(value[i]);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 1; i < keys.length; i += 1) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${canonicalStringify(member)}`;
  }
  return `${out}}`;
}

/** A copy of `value` with object keys sorted and undefined members dropped: what `canonicalStringify` writes. */
export function canonicalize(value: unknown): unknown {
  return JSON.parse(canonicalStringify(value)) as unknown;
}

/**
 * Thrown inside `copyOf` at the first value JSON would write differently from a plain copy. Made once: a throw
 * of it costs no stack capture, and the catch knows it by identity.
 */
const NOT_PLAIN = new Error('not plain');

/**
 * `canonicalize(value)` without writing and parsing JSON: plain objects copied with their keys in code-unit
 * order and undefined members left out, arrays copied with undefined as null, -0 as 0; strings, booleans, null
 * and finite numbers as they are (a string is immutable, so the copy may share it). Anything else (a class
 * instance, a hole, a non-finite number, a `toJSON`) goes the JSON way, so the result is always what
 * `JSON.parse(canonicalStringify(value))` gives, errors included; a pack's copy costs a walk of its members
 * where the round trip reads and copies every character of its texts.
 */
export function canonicalCopy(value: unknown): unknown {
  return copyWithOrder(value).value;
}

/**
 * The copy, and whether any object of it had to be reordered. An object's integer-like keys enumerate first
 * in numeric order whatever order they were set in ("9" before "10"), so a reordered copy may not enumerate in
 * code-unit order, and only a copy that was not reordered can be written by `JSON.stringify` as canonical JSON.
 */
function copyWithOrder(value: unknown): { value: unknown; reordered: boolean } {
  const state = { reordered: false };
  try {
    return { value: copyOf(value, state), reordered: state.reordered };
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    return { value: canonicalize(value), reordered: true };
  }
}

function copyOf(value: unknown, state: { reordered: boolean }): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw NOT_PLAIN;
      return value === 0 ? 0 : value;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) throw NOT_PLAIN;
        const copy = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i += 1) {
          if (!(i in value)) throw NOT_PLAIN;
          const member = value[i] as unknown;
          copy[i] = member === undefined ? null : copyOf(member, state);
        }
        return copy;
      }
      const prototype = Object.getPrototypeOf(value) as unknown;
      if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function')
        throw NOT_PLAIN;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let i = 1; i < keys.length; i += 1) {
        if (keys[i - 1]! > keys[i]!) {
          keys.sort();
          state.reordered = true;
          break;
        }
      }
      const copy: Record<string, unknown> = {};
      for (const key of keys) {
        const member = record[key];
        if (member === undefined) continue;
        // A member named __proto__ would set the prototype through plain assignment; JSON.parse makes it an own member.
        if (key === '__proto__')
          Object.defineProperty(copy, key, { value: copyOf(member, state), enumerable: true, writable: true, configurable: true });
        else copy[key] = copyOf(member, state);
      }
      return copy;
    }
    default:
      // undefined at the top, a function, a symbol, a bigint: as JSON writes (or refuses) them.
      throw NOT_PLAIN;
  }
}

/**
 * `canonicalCopy(record)`, its canonical JSON in parts (`parts.join('')`; a hash can read them without joining),
 * and that JSON written with one member more, `key` (which the record lacks), at its sorted place:
 * `withMember(json)` equals `canonicalStringify({ ...record, [key]: value })` for `json = canonicalStringify(value)`.
 * A pack is copied, hashed without its hash, then written with it. The copy's members are written in two
 * objects, those before `key` and those after, each by one `JSON.stringify` when nothing had to be reordered
 * (the copy is then in canonical form; see `copyWithOrder`): the JSON is written once, whole.
 */
export function canonicalCopyParts(
  record: Record<string, unknown>,
  key: string,
): { value: Record<string, unknown>; parts: string[]; withMember: (json: string) => string } {
  const copied = copyWithOrder(record);
  const value = copied.value as Record<string, unknown>;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('canonicalCopyParts: not an object');
  if (Object.hasOwn(value, key)) throw new TypeError(`canonicalCopyParts: the record has ${key} already`);
  const write = copied.reordered ? canonicalStringify : JSON.stringify;
  // Null prototypes: a member named __proto__ is then an own member, as in the copy.
  const before: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const after: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const member of Object.keys(value).sort()) (member < key ? before : after)[member] = value[member];
  const head = write(before);
  const tail = write(after);
  const hasHead = head.length > 2;
  const hasTail = tail.length > 2;
  return {
    value,
    parts: [hasHead ? head.slice(0, -1) : '{', hasHead && hasTail ? ',' : '', hasTail ? tail.slice(1) : '}'],
    withMember: (json) => `${head.slice(0, -1)}${hasHead ? ',' : ''}${JSON.stringify(key)}:${json}${hasTail ? ',' : ''}${tail.slice(1)}`,
  };
}

/** The SHA-256 of `text` (UTF-8), or of its parts joined, in hex. */
export function sha256Hex(text: string | readonly string[]): string {
  const hash = createHash('sha256');
  if (typeof text === 'string') hash.update(text, 'utf8');
  else for (const part of text) hash.update(part, 'utf8');
  return hash.digest('hex');
}
