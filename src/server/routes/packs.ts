/**
 * The pack routes: `GET|POST /api/bundle` and `/api/briefing`, `POST /api/pack`, `POST /api/citations/verify`,
 * `GET /api/citations/stale`.
 * Each parses with the HTTP schema (the service's, spelled as on the wire), calls the service, and answers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidInput } from '../../base/errors.js';
import { packJson } from '../../core/finish.js';
import { parseRequest } from '../../service/errors.js';
import { serveBriefing, serveBundle, servePack, serveRankings, serveVerify } from '../../service/service.js';
import { recordPack, sendPack, type ServerContext } from '../context.js';
import {
  BRIEFING_QUERY_KINDS,
  BUNDLE_QUERY_KINDS,
  HTTP_ALIASES,
  STALE_QUERY_KINDS,
  decodeQuery,
  toBriefingRequest,
  toBundleRequest,
} from '../http-requests.js';
import { serveStale } from '../../service/stale.js';

// eslint-disable-next-line @typescript-eslint/require-await -- a fastify plugin without a `done` parameter must return a promise
export async function packRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const { schemas, limits } = ctx;

  const bundleHandler = (fromQuery: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = fromQuery ? decodeQuery(request.query, BUNDLE_QUERY_KINDS) : request.body;
    const http = parseRequest(schemas.bundle, raw, HTTP_ALIASES);
    const state = ctx.stateOf(request);
    state.query = http.q;
    if (http.k !== undefined && http.debug !== 'rankings') throw invalidInput('k applies to debug=rankings only', ['k']);
    if (http.debug === 'rankings' && http.format !== 'json') throw invalidInput('debug=rankings needs format json', ['debug']);
    const serviceRequest = toBundleRequest(http);
    const context = ctx.serviceContextOf(request);
    if (http.debug === 'rankings') {
      const rankings = await serveRankings(
        { query: http.q, mode: http.mode, filter: http.filter, diversity: http.diversity, k: http.k ?? limits.defaultRankingsDepth },
        context,
      );
      const pack = await serveBundle(serviceRequest, context);
      recordPack(state, 'bundle', pack, http.mode);
      return reply.type('application/json; charset=utf-8').send(`{"pack":${packJson(pack)},"rankings":${JSON.stringify(rankings)}}`);
    }
    const pack = await serveBundle(serviceRequest, context);
    recordPack(state, 'bundle', pack, http.mode);
    return sendPack(reply, pack, http.format, http.granularity);
  };

  const briefingHandler = (fromQuery: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = fromQuery ? decodeQuery(request.query, BRIEFING_QUERY_KINDS) : request.body;
    const http = parseRequest(schemas.briefing, raw, HTTP_ALIASES);
    const state = ctx.stateOf(request);
    if (http.prompt !== undefined) state.query = http.prompt;
    const pack = await serveBriefing(toBriefingRequest(http), ctx.serviceContextOf(request), limits);
    recordPack(state, 'briefing', pack, http.mode);
    return sendPack(reply, pack, http.format, http.granularity);
  };

  app.get('/api/bundle', bundleHandler(true));
  app.post('/api/bundle', bundleHandler(false));
  app.get('/api/briefing', briefingHandler(true));
  app.post('/api/briefing', briefingHandler(false));

  app.post('/api/pack', async (request, reply) => {
    const parsed = parseRequest(schemas.pack, request.body, HTTP_ALIASES);
    const state = ctx.stateOf(request);
    state.query = parsed.query;
    const pack = await servePack(parsed, ctx.serviceContextOf(request));
    recordPack(state, 'pack', pack);
    return sendPack(reply, pack, 'json');
  });

  // The stale feed: served citations now changed, moved or missing, newest first, a page at a time.
  app.get('/api/citations/stale', async (request, reply) => {
    const parsed = parseRequest(schemas.stale, decodeQuery(request.query, STALE_QUERY_KINDS), HTTP_ALIASES);
    return reply
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(await serveStale(parsed, ctx.serviceContextOf(request), limits)));
  });

  app.post('/api/citations/verify', async (request, reply) => {
    const parsed = parseRequest(schemas.verify, request.body, HTTP_ALIASES);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(await serveVerify(parsed, ctx.serviceContextOf(request))));
  });
}
