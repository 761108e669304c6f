/**
 * Failure containment for optional stages (reranking, sentence embeddings): a stage runs under its own
 * timeout; when it fails or times out the caller falls back and records `{ stage, code }` in `pack.degraded`.
 * Only the caller's own abort still throws: a cancelled request must not come back as a degraded pack.
 */
import { LitmPackError, isLitmPackError, type LitmPackErrorCode } from '../base/errors.js';
import { upstreamStatusCode } from '../base/http-status.js';
import type { Degraded } from '../core/schemas.js';

/** Stage names as they appear in `pack.degraded`. */
export const STAGE_RERANK = 'rerank';
export const STAGE_SENTENCE_EMBEDDINGS = 'sentence-embeddings';

function abortedError(signal: AbortSignal): LitmPackError {
  return new LitmPackError('aborted', 'The operation was aborted', { cause: signal.reason });
}

/**
 * Runs `run` with a signal that aborts after `timeoutMs` or when `outer` aborts. The race does not rely on
 * `run` honouring the signal (a framework compressor or an embeddings client may ignore it): the result is
 * abandoned and a typed `timeout` / `aborted` error thrown instead.
 */
export async function withTimeout<T>(
  what: string,
  timeoutMs: number,
  outer: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (outer?.aborted === true) throw abortedError(outer);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new LitmPackError('timeout', `${what} took longer than ${timeoutMs} ms`, { details: { timeoutMs } });
      controller.abort(error);
      reject(error);
    }, timeoutMs);
    if (outer !== undefined) {
      onAbort = () => {
        const error = abortedError(outer);
        controller.abort(error);
        reject(error);
      };
      outer.addEventListener('abort', onAbort, { once: true });
    }
  });
  const work = run(controller.signal);
  // The loser of the race must not surface later as an unhandled rejection.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) outer?.removeEventListener('abort', onAbort);
  }
}

/**
 * The error code a stage's failure is reported under. Errors of other libraries are read by their HTTP
 * status when they carry one (Cohere's and OpenAI's clients do), else by Node's socket error codes; anything
 * else is a failure inside the stage's provider (`server_error`).
 */
export function faultCode(error: unknown): LitmPackErrorCode {
  if (isLitmPackError(error)) return error.code;
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    status?: unknown;
    statusCode?: unknown;
    code?: unknown;
    name?: unknown;
    cause?: unknown;
  };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status !== undefined) return statusCode(status);
  if (e.name === 'TimeoutError') return 'timeout';
  if (e.name === 'AbortError') return 'aborted';
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined && ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'UND_ERR_SOCKET'].includes(code)) {
    return 'connection_failed';
  }
  if (e.cause !== undefined && e.cause !== error) {
    const inner = faultCode(e.cause);
    if (inner !== 'server_error') return inner;
  }
  return 'server_error';
}

/** How an HTTP status of a stage's service is reported (the one reading, base/http-status.ts). */
export const statusCode = upstreamStatusCode;

/** A stage's outcome: its value, or the fallback and the degradation to report. */
type Contained<T> = { ok: true; value: T } | { ok: false; degraded: Degraded; error: unknown };

/**
 * Runs an optional stage: its value when it succeeds in time; else `{ ok: false }` with the degradation to
 * report. The caller's own abort is rethrown.
 */
export async function contain<T>(
  stage: string,
  timeoutMs: number,
  outer: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<Contained<T>> {
  try {
    return { ok: true, value: await withTimeout(`The ${stage} stage`, timeoutMs, outer, run) };
  } catch (error) {
    if (outer?.aborted === true) throw isLitmPackError(error, 'aborted') ? error : abortedError(outer);
    return { ok: false, degraded: { stage, code: faultCode(error) }, error };
  }
}
