import { z } from 'zod';

// Limits on the `metadata` of a candidate, a document to ingest or a stored chunk. Metadata is carried,
// copied, compared and saved by recursive code (structured clone, canonical JSON, validation); without a
// bound, metadata nested ten thousand levels deep overflows the stack, and megabytes of it per chunk cost
// time on every pack. Real metadata (loader fields, page numbers, tags, nested `loc` objects) is a few
// levels deep and a few kilobytes.

/** Levels of nested objects and arrays, counting `metadata` itself: `{ a: { b: 1 } }` has 2. */
export const MAX_METADATA_DEPTH = 32;
/** Size of `metadata` as JSON text, in UTF-16 code units, not counting string escapes. */
export const MAX_METADATA_SIZE = 1_048_576;

/**
 * What is wrong with `metadata` against the limits (or a value JSON cannot carry), or null when it is within them. Iterative, and stops at
 * the first limit crossed, so checking costs at most the limits whatever the input (a cycle counts as
 * nesting without end).
 */
function metadataLimitProblem(metadata: unknown): string | null {
  let size = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value: metadata, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === 'string') size += value.length + 2;
    else if (typeof value === 'number') size += String(value).length;
    else if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') {
      // Metadata is carried as JSON (canonical JSON, the pack's hash, saved stores): refused here, whatever the
      // candidate's rank, rather than failing later only when its item is kept.
      return `metadata holds a ${typeof value}, which JSON cannot carry; convert it to a number or a string`;
    } else if (typeof value === 'boolean') size += value ? 4 : 5;
    else if (value === null || value === undefined) size += 4;
    else if (typeof value === 'object') {
      if (depth >= MAX_METADATA_DEPTH) {
        return `metadata is nested deeper than MAX_METADATA_DEPTH (${MAX_METADATA_DEPTH} levels of objects and arrays); flatten it`;
      }
      if (Array.isArray(value)) {
        size += 1 + Math.max(value.length, 1);
        for (const element of value) stack.push({ value: element, depth: depth + 1 });
      } else {
        const keys = Object.keys(value);
        size += 1 + Math.max(keys.length, 1);
        for (const key of keys) {
          size += key.length + 3;
          stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1 });
        }
      }
    }
    if (size > MAX_METADATA_SIZE) {
      return `metadata is larger than MAX_METADATA_SIZE (${MAX_METADATA_SIZE.toLocaleString('en-US')} characters as JSON); keep large values out of metadata`;
    }
  }
  return null;
}

/**
 * A metadata object (string keys, any values) within the limits. Its values are not looked into by zod, so a
 * recursive schema piped after it never sees input that could overflow the stack.
 */
export const BoundedMetadataSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  const problem = metadataLimitProblem(value);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});
