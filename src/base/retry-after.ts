/**
 * The longest `Retry-After` believed: one hour. A larger delay (or a date further ahead) is read as this, so
 * a wrong header cannot tell callers to wait for days.
 */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Parses an HTTP `Retry-After` value, the whole of it: a delay in seconds (`30`, `3600`) or an HTTP date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`), into milliseconds from `now`, capped at `MAX_RETRY_AFTER_MS`.
 * Returns undefined when absent or unreadable; a date in the past is 0. One reader for every HTTP client of
 * the package (Qdrant, embeddings, rerankers).
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.min(MAX_RETRY_AFTER_MS, Math.round(Number(trimmed) * 1000));
  // HTTP dates always name a weekday or month: this keeps Date.parse's loose forms ("1", "2024") out.
  if (!/[a-z]{3}/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - now));
}
