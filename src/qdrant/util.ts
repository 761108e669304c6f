import { canonicalStringify } from '../base/canonical.js';
import type { ChunkRecord } from '../store/schemas.js';

/** The payload is exactly the chunk record, without undefined fields (as JSON would drop them). */
export function payloadOf(record: ChunkRecord): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) payload[key] = value;
  return payload;
}

export function sameRecord(a: ChunkRecord, b: ChunkRecord): boolean {
  return canonicalStringify(a) === canonicalStringify(b);
}

/** Drops credentials and query from a URL so it can be logged. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return '(invalid url)';
  }
}

/** The dense vector of a scrolled point (named, or the bare list of the unnamed vector), when it has one. */
export function storedDenseVector(vector: unknown, name: string): number[] | undefined {
  if (Array.isArray(vector)) return name === '' ? (vector as number[]) : undefined;
  if (typeof vector !== 'object' || vector === null) return undefined;
  const named = (vector as Record<string, unknown>)[name];
  return Array.isArray(named) && named.every((x) => typeof x === 'number') ? named : undefined;
}
