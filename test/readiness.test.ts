// GET /readyz: 200 while the store answers a cheap read, 503 with the store's error code when it does not (or
// does not answer in time); outside keys and rate limits, like /healthz.
import { describe, expect, it } from 'vitest';
import { LitmPackError, type Store } from '../src/index.js';
import { startServer } from '../src/server/index.js';
import { KEYS, fixtureKeys, fixtureStore } from './helpers/serve-fixtures.js';

/** A store that has stopped answering: every read rejects as a store that cannot be reached does. */
function unreachableStore(options: { getChunks: boolean }): Store & { reads: number } {
  const store = {
    reads: 0,
    addDocuments: () => Promise.reject(new LitmPackError('connection_failed', 'connect ECONNREFUSED 10.0.0.7:6333')),
    search: () => {
      store.reads += 1;
      return Promise.reject(new LitmPackError('connection_failed', 'connect ECONNREFUSED 10.0.0.7:6333'));
    },
    ...(options.getChunks
      ? {
          getChunks: () => {
            store.reads += 1;
            return Promise.reject(new LitmPackError('connection_failed', 'connect ECONNREFUSED 10.0.0.7:6333'));
          },
        }
      : {}),
  };
  return store;
}

describe('GET /readyz', () => {
  it('answers 200 ready while the store answers', async () => {
    const server = await startServer({ store: await fixtureStore({ restricted: false }), rateLimit: false });
    try {
      const answer = await fetch(`${server.url}/readyz`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ status: 'ready' });
    } finally {
      await server.close();
    }
  });

  for (const getChunks of [true, false]) {
    it(`answers 503 with the store's code when it stops answering (${getChunks ? 'getChunks' : 'search only'}), naming no host`, async () => {
      const store = unreachableStore({ getChunks });
      const lines: string[] = [];
      const server = await startServer({ store, rateLimit: false, log: { write: (line: string) => lines.push(line) } });
      try {
        const answer = await fetch(`${server.url}/readyz`);
        expect(answer.status).toBe(503);
        const body = (await answer.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ status: 'unready', code: 'connection_failed', issues: [] });
        expect(JSON.stringify(body)).not.toContain('10.0.0.7');
        expect(store.reads).toBe(1);
        // Liveness is another question: the process answers.
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      } finally {
        await server.close();
      }
      expect(JSON.parse(lines[0] as string)).toMatchObject({ route: '/readyz', status: 503, code: 'connection_failed' });
    });
  }

  it('answers 503 timeout when the store does not answer within readinessTimeoutMs', async () => {
    const hung: Store = { addDocuments: () => new Promise(() => undefined), search: () => new Promise(() => undefined) };
    const server = await startServer({ store: hung, rateLimit: false, readinessTimeoutMs: 20 });
    try {
      const answer = await fetch(`${server.url}/readyz`);
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ status: 'unready', code: 'timeout' });
    } finally {
      await server.close();
    }
  });

  it('stays outside keys and rate limits, like /healthz', async () => {
    const server = await startServer({
      store: await fixtureStore({ restricted: false }),
      apiKeys: fixtureKeys(),
      requireAuth: true,
      rateLimit: { perClient: 1, global: 1, windowMs: 3_600_000 },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        statuses.push((await fetch(`${server.url}/readyz`)).status, (await fetch(`${server.url}/healthz`)).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      // The API itself is still guarded: no key 401, and the one call the limit allows is still there to spend.
      expect((await fetch(`${server.url}/api/bundle?q=refunds`)).status).toBe(401);
      expect((await fetch(`${server.url}/api/bundle?q=refunds`, { headers: { authorization: `Bearer ${KEYS.carol}` } })).status).toBe(200);
      expect((await fetch(`${server.url}/api/bundle?q=refunds`, { headers: { authorization: `Bearer ${KEYS.carol}` } })).status).toBe(429);
    } finally {
      await server.close();
    }
  });
});
