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

/**
 * The canonical JSON of an object, and a way to write it with one more member at its sorted place without
 * serialising the rest again: `withMember(key, json)` equals `canonicalStringify({ ...record, [key]: value })`
 * for a `key` the record lacks and `json = canonicalStringify(value)` (a pack is written once without its hash,
 * hashed, then written with it).
 */
export function canonicalParts(record: Record<string, unknown>): { json: string; withMember(key: string, json: string): string } {
  const keys = Object.keys(record).filter((key) => record[key] !== undefined);
  keys.sort();
  const members = keys.map((key) => `${JSON.stringify(key)}:${canonicalStringify(record[key])}`);
  return {
    json: `{${members.join(',')}}`,
    withMember(key, json) {
      if (Object.hasOwn(record, key) && record[key] !== undefined) throw new TypeError(`canonicalParts: the record has ${key} already`);
      let at = 0;
      while (at < keys.length && keys[at]! < key) at += 1;
      const all = [...members.slice(0, at), `${JSON.stringify(key)}:${json}`, ...members.slice(at)];
      return `{${all.join(',')}}`;
    },
  };
}

/** A copy of `value` with object keys sorted and undefined members dropped: what `canonicalStringify` writes. */
export function canonicalize(value: unknown): unknown {
  return JSON.parse(canonicalStringify(value)) as unknown;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
