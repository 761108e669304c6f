import { canonicalStringify } from '../base/canonical.js';
import { LitmPackError } from '../base/errors.js';
import type { ChunkRecord } from '../retrieve/types.js';

// Small helpers of the Qdrant store.

export { runBounded, throwIfAborted } from '../base/abort.js';

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
  return Array.isArray(named) && named.every((x) => typeof x === 'number') ? (named as number[]) : undefined;
}

/** What an embeddings call returned must be `expected` non-empty finite vectors of the collection's dimension. */
export function checkEmbeddingVectors(
  vectors: unknown,
  expected: number,
  call: string,
  dimension: number | undefined,
  collection: string,
): asserts vectors is number[][] {
  if (!Array.isArray(vectors) || vectors.length !== expected) {
    throw new LitmPackError('invalid_input', `embeddings.${call} returned a wrong number of vectors, expected ${expected}`);
  }
  for (const vector of vectors) {
    if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new LitmPackError('invalid_input', `embeddings.${call} returned a vector that is not a non-empty array of finite numbers`);
    }
    if (dimension !== undefined && vector.length !== dimension) {
      throw new LitmPackError(
        'config_mismatch',
        `embeddings.${call} returned a vector of dimension ${vector.length}; collection "${collection}" holds dimension ${dimension}`,
      );
    }
  }
}
