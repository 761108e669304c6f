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
  if (Array.isArray(value)) {
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalStringify(v))).join(',')}]`;
  }
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalStringify((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** A copy of `value` with object keys sorted and undefined members dropped: what `canonicalStringify` writes. */
export function canonicalize(value: unknown): unknown {
  return JSON.parse(canonicalStringify(value)) as unknown;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
