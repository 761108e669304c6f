/**
 * Requests started in the order they arrived, one per turn of the event loop.
 *
 * A server on one event loop reads its sockets in batches: each poll returns the sockets that have data, and the
 * loop runs every request of that batch before it polls again. Under load a client whose answer went out late in a
 * batch sends its next request just after the next poll, so that request waits for a whole batch it is not part
 * of, then for its own: about one request in a batch waits twice as long as the rest (at 32 connections the 99th
 * percentile is twice the median, whatever the work per request; `bench/serve-fairness.ts` shows it on a server
 * that does nothing but wait a fixed time). Here a request that arrives while others are waiting joins the
 * queue, and one request starts per turn, after the loop has polled the sockets again, so every request that
 * has arrived is in line, in order, before the next one starts. An idle server starts a request at once.
 *
 * Only the start is ordered: a request that then waits on I/O (a Qdrant call) lets the next one start, so
 * requests still overlap their waits.
 */
export class ArrivalQueue {
  #waiting: Array<() => void> = [];
  #head = 0;
  #scheduled = false;

  /** Runs `start` now when nothing is waiting and no request started in this turn, else after those before it. */
  enqueue(start: () => void): void {
    if (!this.#scheduled && this.#head === this.#waiting.length) {
      this.#schedule();
      start();
      return;
    }
    this.#waiting.push(start);
    if (!this.#scheduled) this.#schedule();
  }

  /** Requests waiting for their turn. */
  get length(): number {
    return this.#waiting.length - this.#head;
  }

  #schedule(): void {
    this.#scheduled = true;
    setImmediate(this.#next);
  }

  readonly #next = (): void => {
    this.#scheduled = false;
    if (this.#head === this.#waiting.length) return;
    const start = this.#waiting[this.#head]!;
    this.#head += 1;
    // The array is emptied when it has been read to the end, or compacted once most of it has been read.
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
    // The turn after this one is claimed first, so a start that throws does not leave the others waiting.
    this.#schedule();
    start();
  };
}
