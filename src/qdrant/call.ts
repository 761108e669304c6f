import { abortedError, isRetryable, timeoutError, toQdrantError, type QdrantCallContext } from './errors.js';

/** How calls to Qdrant are bounded and retried. */
export interface CallPolicy {
  /** Deadline of one attempt, in milliseconds. */
  timeoutMs: number;
  /** Further attempts for reads (search, scroll, collection info) after a retryable fault. Writes never retry. */
  retries: number;
  /** First backoff step; each retry doubles it (full jitter). */
  retryBaseDelayMs: number;
  /** Largest wait between attempts. A `Retry-After` longer than this is not waited for: the error is thrown. */
  retryMaxDelayMs: number;
  /** Injectable for tests. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface CallOptions {
  /** Only idempotent reads are retried. */
  read: boolean;
  signal?: AbortSignal | undefined;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the caller's abort reason, passed on as given
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the caller's abort reason, passed on as given
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs one attempt under the deadline and the caller's signal. The official client takes no per-call signal
 * (its own timeout middleware replaces `init.signal`), so the attempt is raced: when the deadline or the caller
 * wins, its result is discarded. A client built by the store from `url` also gets `timeoutMs` as its own
 * timeout, so the abandoned HTTP request is cancelled too.
 */
function attempt<T>(run: () => Promise<T>, context: QdrantCallContext, timeoutMs: number, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const onAbort = (): void => {
      if (finish()) reject(abortedError(context, signal?.reason));
    };
    const timer = setTimeout(() => {
      if (finish()) reject(timeoutError(context, timeoutMs));
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    let promise: Promise<T>;
    try {
      promise = run();
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what run() threw, passed on as thrown
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => {
        if (finish()) resolve(value);
      },
      (error: unknown) => {
        if (finish()) reject(toQdrantError(error, context, signal));
      },
    );
  });
}

/** Exponential backoff with full jitter: a random wait in [0, min(max, base·2^attempt)]. */
export function backoffDelay(attemptIndex: number, policy: CallPolicy): number {
  const random = policy.random ?? Math.random;
  const ceiling = Math.min(policy.retryMaxDelayMs, policy.retryBaseDelayMs * 2 ** attemptIndex);
  return Math.round(random() * ceiling);
}

/**
 * Calls Qdrant with the deadline, the caller's signal and, for reads, bounded retries of retryable faults
 * (connection failures, 429, 5xx), honouring the server's `Retry-After`. Every failure is a `LitmPackError`.
 */
export async function callQdrant<T>(
  run: () => Promise<T>,
  context: QdrantCallContext,
  policy: CallPolicy,
  options: CallOptions,
): Promise<T> {
  const sleep = policy.sleep ?? defaultSleep;
  const attempts = options.read ? policy.retries + 1 : 1;
  for (let index = 0; ; index += 1) {
    if (options.signal?.aborted === true) throw abortedError(context, options.signal.reason);
    try {
      return await attempt(run, context, policy.timeoutMs, options.signal);
    } catch (error) {
      const typed = toQdrantError(error, context, options.signal);
      if (!isRetryable(typed) || index === attempts - 1) throw typed;
      if (typed.retryAfterMs !== undefined && typed.retryAfterMs > policy.retryMaxDelayMs) throw typed;
      const wait = Math.max(typed.retryAfterMs ?? 0, backoffDelay(index, policy));
      try {
        await sleep(wait, options.signal);
      } catch (reason) {
        throw abortedError(context, reason);
      }
    }
  }
}
