/**
 * The HTTP API on Fastify: route plugins that parse with the service's schemas and call the service
 * (routes/packs.ts, routes/inspect.ts, routes/meta.ts, the MCP tools over Streamable HTTP at /mcp), behind
 * one guard (API keys → principals, per-client and global rate limits, typed errors; guard.ts), with a body
 * limit, one line per request (request-log.ts) from which the log, the Prometheus metrics (metrics.ts) and the
 * request's OpenTelemetry span (request-spans.ts) are all written, and a graceful close.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { createServer as createHttpServer } from 'node:http';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { resolveLimits } from '../service/limits.js';
import type { ServiceContext } from '../service/service.js';
import { ArrivalQueue } from './arrival-queue.js';
import { ApiKeys } from './auth.js';
import type { RequestState, ServerContext } from './context.js';

import { installGuard } from './guard.js';
import { httpSchemas } from './http-requests.js';
import { ServerOptionsSchema, exposureProblem, type ServerOptions, isLoopback } from './options.js';
import { ServerMetrics, listenMetrics, metricsRoute } from './metrics.js';
import { installRequestObservers, logWriter, type RequestObserver } from './request-log.js';
import { installRequestSpans } from './request-spans.js';
import { inspectRoutes } from './routes/inspect.js';
import { metaRoutes } from './routes/meta.js';
import { packRoutes } from './routes/packs.js';

/**
 * Builds the HTTP API (not listening yet: call `listen`, or use `startServer`). Use `app.inject()` to call
 * it in process.
 *
 * @example
 * const app = await createServer({ store, apiKeys: new ApiKeys({ keys: [...] }), log: process.stdout });
 * await app.listen({ port: 8787, host: '127.0.0.1' });
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  return (await buildServer(options)).app;
}

/** The API and its metrics (which `startServer` may serve on a port of their own). */
async function buildServer(options: ServerOptions): Promise<{ app: FastifyInstance; metrics: ServerMetrics }> {
  const config = parseOrThrow(ServerOptionsSchema, options, 'server options');
  const limits = resolveLimits(config.limits);
  const app = Fastify({
    logger: false,
    bodyLimit: config.bodyLimit,
    // Node checks request deadlines on an interval (30 s by default): checked often enough for the deadline to hold.
    // Requests start in the order they arrived, one per turn of the event loop (see ArrivalQueue: under load,
    // reading sockets in batches would make about one request a batch wait twice as long as the rest).
    serverFactory: (handler) => {
      const arrivals = new ArrivalQueue();
      return createHttpServer(
        { requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs) },
        (request, response) => arrivals.enqueue(() => handler(request, response)),
      );
    },
    // Close idle keep-alive sockets on close(); requests in flight finish first.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  // JSON bodies only: a form or text body is answered 415, not parsed as something else.
  app.removeContentTypeParser('text/plain');
  // Before the guard's hooks and every route: refused requests get a span too, and every handler runs in its span.
  // eslint-disable-next-line prefer-const -- set once the guard exists, read later by the closure made before it
  let states: ((request: FastifyRequest) => RequestState | undefined) | undefined;
  const endSpan = installRequestSpans(app, (request) => states?.(request));
  const metrics = new ServerMetrics(config.store, config.ledger);
  metrics.trackRoutes(app);
  const guard = await installGuard(app, config, config.apiKeys ?? new ApiKeys());
  states = guard.stateIfAny;
  const observers: RequestObserver[] = [(line) => metrics.observe(line), endSpan];
  if (config.log !== false) observers.push(logWriter(config.log, config.logQueries, guard.stateIfAny));
  installRequestObservers(app, guard.stateIfAny, observers);

  const serviceContextOf = (request: FastifyRequest): ServiceContext => {
    const state = guard.stateOf(request);
    return {
      store: config.store,
      principals: state.caller.principals,
      signal: state.controller.signal,
      caller: state.caller.id,
      ...(config.ledger === undefined ? {} : { ledger: config.ledger }),
      maxPool: limits.maxPool,
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
  if (config.metrics) await app.register(metricsRoute, { metrics });
  if (config.mcp) {
    const { mcpRoute } = await import('./mcp-route.js');
    await app.register(mcpRoute, ctx);
  }
  return { app, metrics };
}

/** A listening server. */
export interface RunningServer {
  app: FastifyInstance;
  /** `http://host:port` */
  url: string;
  port: number;
  /** `http://host:port/metrics` when the metrics have a listener of their own (`metricsPort`). */
  metricsUrl?: string;
  /** Stops accepting connections, lets requests in flight finish, then resolves. */
  close(): Promise<void>;
}

/** Where `startServer` listens. */
export interface ListenOptions {
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Serve `GET /metrics` on this port (0: any free one) instead of on the API, without keys: a listener for a
   * scraper, on `metricsHost` (default 127.0.0.1, so only this machine reaches it).
   */
  metricsPort?: number;
  metricsHost?: string;
}

const hostUrl = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * Creates the API and listens (port 0: an ephemeral port; the host defaults to 127.0.0.1). On an address other
 * than loopback, a server without API keys would serve every unrestricted document to the network: it refuses
 * to start unless `allowAnonymous` says that is meant.
 */
export async function startServer(options: ServerOptions & ListenOptions): Promise<RunningServer> {
  const { port = 0, host = '127.0.0.1', metricsPort, metricsHost = '127.0.0.1', ...serverOptions } = options;
  const exposed = exposureProblem(host, serverOptions.apiKeys?.size ?? 0, serverOptions.allowAnonymous === true);
  if (exposed !== null) throw exposed;
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65_535)) {
    throw new LitmPackError('invalid_input', `metricsPort must be a port number (0 to 65535), not ${metricsPort}`);
  }
  const { app, metrics } = await buildServer(metricsPort === undefined ? serverOptions : { ...serverOptions, metrics: false });
  await app.listen({ port, host });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const running: RunningServer = { app, url: hostUrl(host, boundPort), port: boundPort, close: () => app.close() };
  if (metricsPort === undefined) return running;
  const listener = await listenMetrics(metrics, metricsPort, metricsHost, isLoopback(metricsHost)).catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  running.metricsUrl = `${hostUrl(metricsHost, listener.port)}/metrics`;
  running.close = async () => {
    await Promise.all([app.close(), new Promise<void>((resolve) => listener.server.close(() => resolve()))]);
  };
  return running;
}
