import Fastify, { type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { packBundle } from '../src/index.js';
import { type RequestState, recordPack } from '../src/server/context.js';
import { installRequestObservers } from '../src/server/request-log.js';
import type { RequestLogLine } from '../src/server/options.js';

describe('request observers', () => {
  it('read the pack a request made, then let it go (a keep-alive connection holds its last request)', async () => {
    const app = Fastify();
    const states = new WeakMap<FastifyRequest, RequestState>();
    const lines: RequestLogLine[] = [];
    let seen: RequestState | undefined;
    installRequestObservers(app, (request) => states.get(request), [(line) => lines.push(line)]);
    app.get('/pack', (request) => {
      const state: RequestState = { caller: { kind: 'anonymous', id: 'anonymous', principals: [] }, controller: new AbortController() };
      states.set(request, state);
      seen = state;
      const pack = packBundle({
        query: 'refunds',
        candidates: [{ id: 'a', text: 'Refunds take 14 days.', score: 1, sourceId: 'policy.md' }],
        maxTokens: 100,
      });
      recordPack(state, 'bundle', pack, 'lexical');
      return { ok: true };
    });
    const response = await app.inject({ method: 'GET', url: '/pack' });
    expect(response.statusCode).toBe(200);
    // The observers saw the pack's fields…
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ kind: 'bundle', mode: 'lexical', items: 1, budget: 100 });
    // …and the request's state no longer holds it once they have.
    expect(seen?.kind).toBe('bundle');
    expect(seen?.pack).toBeUndefined();
    await app.close();
  });
});
