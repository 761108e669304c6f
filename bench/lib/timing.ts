import { performance } from 'node:perf_hooks';

/** Runs `fn` and returns its result with the elapsed wall time in milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

export const now = (): number => performance.now();

/** A line on stderr (progress never pollutes the markdown printed on stdout). */
export function progress(message: string): void {
  process.stderr.write(`${message}\n`);
}

export function rssMiB(): number {
  return process.memoryUsage().rss / 2 ** 20;
}
