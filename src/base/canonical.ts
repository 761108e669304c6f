import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted (code-unit order) at every level and `undefined` members omitted,
 * so the same value always gives the same bytes. Written here rather than taken from a package because
 * it is a dozen lines and the byte format is part of our contract (packHash depends on it).
 */
export function canonicalStringify(value: unknown): string {
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

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
