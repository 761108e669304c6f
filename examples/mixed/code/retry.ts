import { EventEmitter } from 'node:events';

const DEFAULT_BASE_MS = 100;
const DEFAULT_CAP_MS = 30_000;

/**
 * Delay before retry attempt `attempt` (0-based): exponential backoff with full jitter, capped at `capMs`.
 * Full jitter spreads retries of many clients over the whole window instead of synchronising them.
 */
export function computeBackoff(attempt: number, baseMs = DEFAULT_BASE_MS, capMs = DEFAULT_CAP_MS, random = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/** The states of a circuit breaker. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * Stops calling a failing dependency for a while: after `threshold` consecutive failures the breaker opens
 * and every call fails fast until `resetAfterMs` has passed; then one trial call is let through (half-open).
 */
export class CircuitBreaker extends EventEmitter {
  private failures = 0;
  private openedAt = 0;
  private state: BreakerState = 'closed';

  constructor(
    private readonly threshold = 5,
    private readonly resetAfterMs = 10_000,
    private readonly now = Date.now,
  ) {
    super();
  }

  /** Whether a call may go through now. */
  allows(): boolean {
    if (this.state === 'open' && this.now() - this.openedAt >= this.resetAfterMs) this.transition('half-open');
    return this.state !== 'open';
  }

  /** Records the outcome of a call: a success closes the breaker, a failure counts towards opening it. */
  record(ok: boolean): void {
    if (ok) {
      this.failures = 0;
      this.transition('closed');
      return;
    }
    this.failures += 1;
    if (this.state === 'half-open' || this.failures >= this.threshold) {
      this.openedAt = this.now();
      this.transition('open');
    }
  }

  private transition(next: BreakerState): void {
    if (next === this.state) return;
    this.state = next;
    this.emit('state', next);
  }
}
