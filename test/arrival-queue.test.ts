import { describe, expect, it } from 'vitest';
import { ArrivalQueue } from '../src/server/arrival-queue.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ArrivalQueue', () => {
  it('starts a request at once when nothing is waiting', () => {
    const queue = new ArrivalQueue();
    const started: string[] = [];
    queue.enqueue(() => started.push('a'));
    expect(started).toEqual(['a']);
    expect(queue.length).toBe(0);
  });

  it('starts the others in the order they arrived, one per turn of the event loop', async () => {
    const queue = new ArrivalQueue();
    const started: string[] = [];
    // Four arrive in one turn (as a poll that finds four sockets with data): the first starts, three wait.
    for (const name of ['a', 'b', 'c', 'd']) queue.enqueue(() => started.push(name));
    expect(started).toEqual(['a']);
    expect(queue.length).toBe(3);
    await turn();
    expect(started).toEqual(['a', 'b']);
    // One that arrives now waits behind those that arrived before it.
    queue.enqueue(() => started.push('e'));
    await turn();
    expect(started).toEqual(['a', 'b', 'c']);
    await turn();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    await turn();
    expect(started).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(queue.length).toBe(0);
    // Idle again (a turn passed with nothing to start): the next one starts at once.
    await turn();
    queue.enqueue(() => started.push('f'));
    expect(started.at(-1)).toBe('f');
  });

  it('starts the next request when one throws', async () => {
    const queue = new ArrivalQueue();
    const started: string[] = [];
    const errors: unknown[] = [];
    const onError = (error: unknown) => errors.push(error);
    process.prependListener('uncaughtException', onError);
    const original = process.listeners('uncaughtException').filter((listener) => listener !== onError);
    for (const listener of original) process.removeListener('uncaughtException', listener);
    try {
      queue.enqueue(() => started.push('a'));
      queue.enqueue(() => {
        started.push('b');
        throw new Error('boom');
      });
      queue.enqueue(() => started.push('c'));
      for (let i = 0; i < 4; i += 1) await turn();
    } finally {
      process.removeListener('uncaughtException', onError);
      for (const listener of original) process.on('uncaughtException', listener);
    }
    expect(started).toEqual(['a', 'b', 'c']);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('boom');
  });

  it('keeps the order over a long queue (compaction)', async () => {
    const queue = new ArrivalQueue();
    const started: number[] = [];
    for (let i = 0; i < 3000; i += 1) queue.enqueue(() => started.push(i));
    expect(queue.length).toBe(2999);
    while (queue.length > 0) await turn();
    expect(started).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });
});
