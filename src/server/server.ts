/**
 * The HTTP API on Fastify: route plugins that parse with the service's schemas and call the service
 * (routes/packs.ts, routes/inspect.ts, routes/meta.ts, the MCP tools over Streamable HTTP at /mcp), behind
 * one guard (API keys → principals, per-client and global rate limits, typed errors; guard.ts), with a body
 * limit, one JSON log line per request (request-log.ts), and a graceful close.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { createServer as createHttpServer } from 'node:http';
import { parseOrThrow } from '../base/errors.js';
import { resolveLimits } from '../service/limits.js';
import type { ServiceContext } from '../service/service.js';
import { ApiKeys } from './auth.js';
import type { ServerContext } from './context.js';
import { installGuard } from './guard.js';
import { httpSchemas } from './http-requests.js';
import { ServerOptionsSchema, exposureProblem, type ServerOptions } from './options.js';
import { installRequestLog } from './request-log.js';
import { inspectRoutes } from './routes/inspect.js';
import { metaRoutes } from './routes/meta.js';
import { packRoutes } from './routes/packs.js';

export { DEFAULT_BODY_LIMIT, ServerOptionsSchema } from './options.js';
export type { LogSink, RequestLogLine, ServerOptions } from './options.js';

/**
 * Builds the HTTP API (not listening yet: call `listen`, or use `startServer`). Use `app.inject()` to call
 * it in process.
 *
 * @example
 * const app = await createServer({ store, apiKeys: new ApiKeys({ keys: [...] }), log: process.stdout });
 * await app.listen({ port: 8787, host: '127.0.0.1' });
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  const config = parseOrThrow(ServerOptionsSchema, options, 'server options');
  const limits = resolveLimits(config.limits);
  const app = Fastify({
    logger: false,
    bodyLimit: config.bodyLimit,
    // Node checks request deadlines on an interval (30 s by default): checked often enough for the deadline to hold.
    serverFactory: (handler) =>
      createHttpServer({ requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs) }, handler),
    // Close idle keep-alive sockets on close(); requests in flight finish first.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  // JSON bodies only: a form or text body is answered 415, not parsed as something else.
  app.removeContentTypeParser('text/plain');
  const guard = await installGuard(app, config, config.apiKeys ?? new ApiKeys());
  if (config.log !== false) installRequestLog(app, config.log, config.logQueries, guard.stateIfAny);

  const serviceContextOf = (request: FastifyRequest): ServiceContext => {
    const state = guard.stateOf(request);
    return {
      store: config.store,
      principals: state.caller.principals,
      signal: state.controller.signal,
      ...(config.embeddings === undefined ? {} : { embeddings: config.embeddings }),
      ...(config.rerank === undefined ? {} : { rerank: config.rerank }),
    };
  };
  const ctx: ServerContext = {
    config,
    limits,
    schemas: httpSchemas(limits),
    stateOf: guard.stateOf,
    serviceContextOf,
    withinRateLimits: guard.withinRateLimits,
    closing: guard.closing,
  };
  await app.register(packRoutes, ctx);
  await app.register(inspectRoutes, ctx);
  await app.register(metaRoutes, ctx);
  if (config.mcp) {
    const { mcpRoute } = await import('./mcp-route.js');
    await app.register(mcpRoute, ctx);
  }
  return app;
}

export type { RequestState } from './context.js';

/** A listening server. */
export interface RunningServer {
  app: FastifyInstance;
  /** `http://host:port` */
  url: string;
  port: number;
  /** Stops accepting connections, lets requests in flight finish, then resolves. */
  close(): Promise<void>;
}

/**
 * Creates the API and listens (port 0: an ephemeral port; the host defaults to 127.0.0.1). On an address other
 * than loopback, a server without API keys would serve every unrestricted document to the network: it refuses
 * to start unless `allowAnonymous` says that is meant.
 */
export async function startServer(options: ServerOptions & { port?: number; host?: string }): Promise<RunningServer> {
  const { port = 0, host = '127.0.0.1', ...serverOptions } = options;
  const exposed = exposureProblem(host, serverOptions.apiKeys?.size ?? 0, serverOptions.allowAnonymous === true);
  if (exposed !== null) throw exposed;
  const app = await createServer(serverOptions);
  await app.listen({ port, host });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { app, url: `http://${shownHost}:${boundPort}`, port: boundPort, close: () => app.close() };
}
