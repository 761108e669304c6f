/** What the API says about itself: `GET /healthz` (liveness) and `GET /api/openapi.json`. */
import type { FastifyInstance } from 'fastify';
import { packageVersion } from '../../service/version.js';
import type { ServerContext } from '../context.js';
import { openApiDocument } from '../openapi.js';

export async function metaRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.type('application/json; charset=utf-8').send('{"status":"ok"}'));
  const openapi = JSON.stringify(openApiDocument(ctx.schemas, packageVersion()));
  app.get('/api/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(openapi));
}
