import { z } from 'zod';
import { LitmPackError } from './errors.js';

// Cancellation and bounded concurrency, shared by the stores and citation checks.

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) {
    throw new LitmPackError('aborted', 'The operation was aborted', { cause: signal.reason });
  }
}

/**
 * Runs `work` over `items` with at most `limit` in flight. The first failure stops new work from starting,
 * waits for what is in flight, and is thrown.
 */
export async function runBounded<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        throwIfAborted(signal);
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

/** An `AbortSignal` option. */
export const AbortSignalSchema = z.custom<AbortSignal>((value) => value instanceof AbortSignal, {
  message: 'signal must be an AbortSignal',
});
