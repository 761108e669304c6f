/** `GET /inspect` (the HTML report of a bundle for /api/bundle's parameters) and `POST /inspect` (of a pack sent as the body). */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { REPORT_CSP } from '../../inspect/page.js';
import { renderPackReport } from '../../inspect/pack-report.js';
import { parseRequest } from '../../service/errors.js';
import { serveBundle } from '../../service/service.js';
import { recordPack, type ServerContext } from '../context.js';
import { BUNDLE_QUERY_KINDS, HTTP_ALIASES, decodeQuery, toInspectRequest } from '../http-requests.js';

// eslint-disable-next-line @typescript-eslint/require-await -- a fastify plugin without a `done` parameter must return a promise
export async function inspectRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  const sendReport = (reply: FastifyReply, pack: unknown) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', REPORT_CSP).send(renderPackReport(pack));

  app.get('/inspect', async (request, reply) => {
    const http = parseRequest(ctx.schemas.inspect, decodeQuery(request.query, BUNDLE_QUERY_KINDS), HTTP_ALIASES);
    const state = ctx.stateOf(request);
    state.query = http.q;
    const pack = await serveBundle(toInspectRequest(http), ctx.serviceContextOf(request));
    recordPack(state, 'bundle', pack, http.mode);
    return sendReport(reply, pack);
  });

  // A stored pack (e.g. from an evaluation run).
  app.post('/inspect', async (request, reply) => sendReport(reply, request.body));
}
