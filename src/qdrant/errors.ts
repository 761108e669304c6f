import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../base/retry-after.js';
import { upstreamStatusCode } from '../base/http-status.js';
import { LitmPackError, isLitmPackError } from '../base/errors.js';

/**
 * Every fault the Qdrant store reports is translated here, once: transport failures, the client's own error
 * classes, HTTP answers and deadlines all become a `LitmPackError` with a code, the HTTP status when there was
 * one, Qdrant's own message, and the original error as `cause`.
 */

/** What was being done when a call failed; it goes into messages and `details`. */
export interface QdrantCallContext {
  /** e.g. `search`, `upsert`, `scroll`, `getCollection`. */
  operation: string;
  collection: string;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Codes worth another attempt for an idempotent read. */
const RETRYABLE_CODES = new Set(['connection_failed', 'rate_limited', 'server_error'] as const);

export function isRetryable(error: LitmPackError): boolean {
  return (RETRYABLE_CODES as Set<string>).has(error.code);
}

/**
 * A non-2xx answer with its raw headers: `QdrantRestClient`'s `QdrantHttpError`, or the official client's
 * `ApiError` (checked structurally: two copies may be loaded).
 */
interface HttpErrorLike {
  status: number;
  statusText?: string;
  data?: unknown;
  headers?: { get(name: string): string | null };
}

function isHttpErrorLike(error: unknown): error is HttpErrorLike {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as { status?: unknown; data?: unknown };
  return typeof candidate.status === 'number' && 'data' in candidate;
}

/** Qdrant answers errors as `{ status: { error: "..." }, time }`; older versions and proxies send plain text. */
export function qdrantErrorMessage(data: unknown): string | undefined {
  if (typeof data === 'string') return data.trim() === '' ? undefined : data.trim().slice(0, 500);
  if (typeof data !== 'object' || data === null) return undefined;
  const status = (data as { status?: unknown }).status;
  if (typeof status === 'object' && status !== null) {
    const message = (status as { error?: unknown }).error;
    if (typeof message === 'string') return message;
  }
  if (typeof status === 'string') return status;
  return undefined;
}

function errorName(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The system error code (`ECONNREFUSED`...) of an error or of one of its causes (undici nests them). */
function systemCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return code;
    // AggregateError (happy eyeballs tries IPv4 and IPv6) keeps the real errors in `errors`.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      for (const inner of errors) {
        const innerCode = systemCode(inner);
        if (innerCode !== undefined) return innerCode;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function fromHttpError(error: HttpErrorLike, context: QdrantCallContext): LitmPackError {
  const { status } = error;
  const qdrantMessage = qdrantErrorMessage(error.data) ?? error.statusText ?? `HTTP ${status}`;
  const where = `Qdrant ${context.operation} on collection "${context.collection}"`;
  const details = { operation: context.operation, collection: context.collection };
  const retryAfterMs = parseRetryAfter(error.headers?.get('retry-after'));
  if (status === 429) {
    return new LitmPackError('rate_limited', `${where} was rate limited (429): ${qdrantMessage}`, {
      cause: error,
      status,
      details,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status === 404 && /collection/i.test(qdrantMessage)) {
    // The caller's to fix (a name, or a collection not made yet), like a missing store file: not a fault.
    return new LitmPackError(
      'not_found',
      `Qdrant collection "${context.collection}" does not exist (${context.operation}, 404): ${qdrantMessage}. ` +
        'Create it with ensureCollection() or check the collection name.',
      { cause: error, status, details: { ...details, missing: 'collection' } },
    );
  }
  if (status === 401 || status === 403) {
    return new LitmPackError(
      upstreamStatusCode(status),
      `${where} was refused (${status}): ${qdrantMessage}. Check the Qdrant API key (apiKey, or QDRANT_API_KEY for the CLI)`,
      {
        cause: error,
        status,
        details,
      },
    );
  }
  if (status >= 400 && status < 500) {
    return new LitmPackError('bad_request', `${where} was rejected (${status}): ${qdrantMessage}`, {
      cause: error,
      status,
      details,
    });
  }
  return new LitmPackError('server_error', `${where} failed (${status}): ${qdrantMessage}`, {
    cause: error,
    status,
    details,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/**
 * Translates anything a Qdrant call can throw into a `LitmPackError`. `LitmPackError`s pass through unchanged.
 * `signal` is the caller's signal: an abort it caused is `aborted`, any other abort is a `timeout`.
 */
export function toQdrantError(error: unknown, context: QdrantCallContext, signal?: AbortSignal): LitmPackError {
  if (isLitmPackError(error)) return error;
  const details = { operation: context.operation, collection: context.collection };
  const where = `Qdrant ${context.operation} on collection "${context.collection}"`;
  const name = errorName(error);

  if (signal?.aborted === true && (name === 'AbortError' || error === signal.reason)) {
    return new LitmPackError('aborted', `${where} was aborted by the caller`, { cause: error, details });
  }
  if (name === 'QdrantClientTimeoutError' || name === 'TimeoutError' || name === 'AbortError') {
    return new LitmPackError('timeout', `${where} timed out: ${errorMessage(error)}`, { cause: error, details });
  }
  if (name === 'QdrantClientResourceExhaustedError') {
    // An injected official client parses Retry-After itself into `retry_after` (seconds), from the header's
    // first character only; that is all it leaves. The store's own client reads the whole header.
    const seconds = (error as { retry_after?: unknown }).retry_after;
    const retryAfterMs =
      typeof seconds === 'number' && Number.isFinite(seconds) ? Math.min(MAX_RETRY_AFTER_MS, Math.round(seconds * 1000)) : undefined;
    return new LitmPackError('rate_limited', `${where} was rate limited (429): ${errorMessage(error)}`, {
      cause: error,
      status: 429,
      details,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (error instanceof Error && error.message.startsWith('Invalid retryAfter value')) {
    // The client throws this plain error when a 429's Retry-After is not a number of seconds.
    return new LitmPackError('rate_limited', `${where} was rate limited (429): ${error.message}`, {
      cause: error,
      status: 429,
      details,
    });
  }
  if (isHttpErrorLike(error)) return fromHttpError(error, context);
  if (name === 'QdrantClientUnexpectedResponseError') {
    return new LitmPackError('server_error', `${where} got an unexpected answer: ${errorMessage(error)}`, {
      cause: error,
      details,
    });
  }
  const code = systemCode(error);
  if (code !== undefined || (error instanceof TypeError && /fetch failed/i.test(error.message))) {
    return new LitmPackError(
      'connection_failed',
      `Could not reach Qdrant for ${context.operation} on collection "${context.collection}"` +
        `${code === undefined ? '' : ` (${code})`}: ${errorMessage(error)}. Check the url and that the server is running.`,
      { cause: error, details },
    );
  }
  return new LitmPackError('server_error', `${where} failed: ${errorMessage(error)}`, { cause: error, details });
}

/** The error for a call that outlived its `timeoutMs`. */
export function timeoutError(context: QdrantCallContext, timeoutMs: number): LitmPackError {
  return new LitmPackError('timeout', `Qdrant ${context.operation} on collection "${context.collection}" timed out after ${timeoutMs} ms`, {
    cause: new DOMException(`deadline of ${timeoutMs} ms exceeded`, 'TimeoutError'),
    details: { operation: context.operation, collection: context.collection, timeoutMs },
  });
}

/** The error for a call the caller's signal aborted. */
export function abortedError(context: QdrantCallContext, reason: unknown): LitmPackError {
  return new LitmPackError('aborted', `Qdrant ${context.operation} on collection "${context.collection}" was aborted by the caller`, {
    cause: reason,
    details: { operation: context.operation, collection: context.collection },
  });
}

export { MAX_RETRY_AFTER_MS, parseRetryAfter };
