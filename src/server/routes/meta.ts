/**
 * What the API says about itself: `GET /healthz` (liveness: the process answers), `GET /readyz` (readiness: the
 * store answers a cheap read) and `GET /api/openapi.json`. Both checks stay outside keys and rate limits (guard.ts).
 */
import type { FastifyInstance } from 'fastify';
import { withTimeout } from '../../refine/contain.js';
import type { Store } from '../../store/types.js';
import { errorAnswer } from '../../service/errors.js';
import { packageVersion } from '../../service/version.js';
import type { ServerContext } from '../context.js';
import { openApiDocument } from '../openapi.js';

/** A source id no store holds: the readiness read finds nothing, and costs a lookup. */
const PROBE_SOURCE = 'litm-pack:readiness-probe';

/** A store that serves a file and follows it (the CLI's `ReloadingStore`): checked now, and whether its file still loads. */
interface FollowedFile {
  refresh(): Promise<boolean>;
  readonly reloadError?: Error | undefined;
}

const followsFile = (store: Store): store is Store & FollowedFile =>
  typeof (store as Partial<FollowedFile>).refresh === 'function' && 'reloadError' in store;

/**
 * The cheapest read a store answers: chunks of one (absent) source, at most one, as an anonymous caller; a
 * store without `getChunks` is asked for one lexical result. Qdrant is reached; a served store file is checked
 * now (a file that is gone, unreadable or corrupt makes the server unready, though it keeps serving the
 * version it loaded before); a fault is thrown with its code.
 */
async function checkStore(store: Store, signal: AbortSignal): Promise<void> {
  if (followsFile(store)) {
    await store.refresh();
    if (store.reloadError !== undefined) throw store.reloadError;
  }
  if (typeof store.getChunks === 'function') {
    await store.getChunks({ sourceIds: [PROBE_SOURCE], limit: 1, principals: [], signal });
    return;
  }
  await store.search({ text: 'readiness', mode: 'lexical', limit: 1, principals: [], signal });
}

// eslint-disable-next-line @typescript-eslint/require-await -- a fastify plugin without a `done` parameter must return a promise
export async function metaRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const json = 'application/json; charset=utf-8';
  app.get('/healthz', async (_request, reply) => reply.type(json).send('{"status":"ok"}'));

  app.get('/readyz', async (request, reply) => {
    const state = ctx.stateOf(request);
    try {
      await withTimeout('The store readiness check', ctx.config.readinessTimeoutMs, state.controller.signal, (signal) =>
        checkStore(ctx.config.store, signal),
      );
    } catch (error) {
      // A probe answers anyone: a store's message can name hosts or paths, so only its code is told.
      const { body } = errorAnswer(error);
      state.code = body.code;
      const told = { error: `The store is not ready (${body.code}); see the server's log`, code: body.code, issues: [] };
      return reply
        .code(503)
        .type(json)
        .send(JSON.stringify({ status: 'unready', ...told }));
    }
    return reply.type(json).send('{"status":"ready"}');
  });

  const openapi = JSON.stringify(openApiDocument(ctx.schemas, packageVersion()));
  app.get('/api/openapi.json', async (_request, reply) => reply.type(json).send(openapi));
}
