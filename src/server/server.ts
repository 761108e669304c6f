/**
 * The HTTP API on Fastify: routes that parse with the service's schemas and call the service, API keys →
 * principals, per-client and global rate limits (@fastify/rate-limit), a body limit, one JSON log line per
 * request, the MCP tools over Streamable HTTP at /mcp, and a graceful close.
 */
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { LitmPackError, isLitmPackError, parseOrThrow } from '../base/errors.js';
import { toCanonicalJson } from '../core/pack.js';
import type { Pack } from '../core/schemas.js';
import { RerankStageSchema } from '../refine/stages.js';
import { EmbeddingsSchema } from '../retrieve/schemas.js';
import { errorAnswer, parseRequest, type ErrorBody } from '../service/errors.js';
import { resolveLimits, type ServiceLimitsInput } from '../service/limits.js';
import { packageVersion } from '../service/version.js';
import { serveBriefing, serveBundle, serveVerify, servePack, serveRankings, type ServiceContext } from '../service/service.js';
import { ApiKeys, type Caller } from './auth.js';
import {
  BRIEFING_QUERY_KINDS,
  BUNDLE_QUERY_KINDS,
  HTTP_ALIASES,
  decodeQuery,
  httpSchemas,
  toBriefingRequest,
  toBundleRequest,
  toInspectRequest,
  type ResponseFormat,
} from './http-requests.js';
import { REPORT_CSP, renderPackReport } from '../inspect/index.js';
import { openApiDocument } from './openapi.js';
import { StoreSchema } from '../retrieve/schemas.js';


export const DEFAULT_BODY_LIMIT = 1024 * 1024;

const RateLimitSchema = z.strictObject({
  /** Requests per window one client (an API key, else an IP address) may make. */
  perClient: z.number().int().positive().default(3),
  /** Requests per window all clients together may make. */
  global: z.number().int().positive().default(10),
  windowMs: z.number().int().positive().default(1000),
});

const LogSinkSchema = z.custom<LogSink>((value) => typeof value === 'object' && value !== null && typeof (value as LogSink).write === 'function', {
  message: 'log must have a write(line) method (a stream such as process.stdout)',
});

export const ServerOptionsSchema = z.strictObject({
  store: StoreSchema,
  /** API keys and the principals each one reads as; without keys every caller is anonymous. */
  apiKeys: z.instanceof(ApiKeys).optional(),
  /** Reject callers without a valid key (401) instead of serving them as anonymous. */
  requireAuth: z.boolean().default(false),
  /** `false` turns rate limiting off (benchmarks, a server behind a gateway that limits). */
  rateLimit: z.union([z.literal(false), RateLimitSchema]).default({ perClient: 3, global: 10, windowMs: 1000 }),
  /** Largest request body in bytes. */
  bodyLimit: z.number().int().positive().default(DEFAULT_BODY_LIMIT),
  /** Defaults and limits of the requests (budgets, pins, clusters, query length...). */
  limits: z.custom<ServiceLimitsInput>((value) => typeof value === 'object' && value !== null).optional(),
  /** Where the request log goes, one JSON line per request; `false` for none. */
  log: z.union([z.literal(false), LogSinkSchema]).default(false),
  /** Put the query text in the log lines (off by default: queries can be personal data). */
  logQueries: z.boolean().default(false),
  /**
   * Embeddings of the store's model: sentence selection blends in sentence vectors (else BM25 alone), and
   * briefings from clusters without a prompt start from the chunks nearest the centroid (else lexical).
   */
  embeddings: EmbeddingsSchema.optional(),
  /**
   * A reranker over the top of every bundle's pool (and a briefing's prompt results), e.g.
   * `{ reranker: new HttpReranker({ url }), topN: 50, timeoutMs: 10000 }`; a request may turn it off with
   * `rerank: false`. A reranker that fails or times out is bypassed and reported in `pack.degraded`.
   */
  rerank: RerankStageSchema.optional(),
  /** Serve the MCP tools over Streamable HTTP at /mcp. */
  mcp: z.boolean().default(true),
});
export type ServerOptions = z.input<typeof ServerOptionsSchema>;

/** Anything with `write(line)`: process.stdout, a file stream. */
export interface LogSink {
  write(line: string): unknown;
}

/** One line of the request log. */
export interface RequestLogLine {
  time: string;
  method: string;
  route: string;
  status: number;
  principal: string;
  latencyMs: number;
  code?: string;
  tool?: string;
  budget?: number;
  usedTokens?: number;
  /** The budget bound: an item was cut or dropped because it did not fit. */
  budgetBound?: boolean;
  items?: number;
  confidence?: string;
  /** Optional stages that failed and were bypassed (`pack.degraded`), when any did. */
  degraded?: Pack['degraded'];
  query?: string;
}

/** What a request's handlers learn, for its log line. */
interface RequestState {
  caller: Caller;
  controller: AbortController;
  code?: string;
  tool?: string;
  pack?: Pack;
  query?: string;
}

const MCP_PATH = '/mcp';
const OPEN_PATHS = new Set(['/healthz']);

function sendError(reply: FastifyReply, status: number, body: ErrorBody, retryAfterSeconds?: number): FastifyReply {
  if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
  if (status === 401) reply.header('www-authenticate', 'Bearer');
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

const issueless = (code: ErrorBody['code'], error: string): ErrorBody => ({ error, code, issues: [] });

/** Errors Fastify raises before a handler runs, as the API's typed answers. */
function frameworkError(error: { code?: string; statusCode?: number; message: string }, bodyLimit: number): { status: number; body: ErrorBody } | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: issueless('too_large', `The request body is larger than ${bodyLimit} bytes`) };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: issueless('invalid_input', 'Send the request body as application/json') };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: issueless('invalid_input', 'The request body is empty: send a JSON object') };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: issueless('invalid_input', 'The request body does not match its Content-Length') };
    default:
      break;
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { status: 400, body: issueless('invalid_input', `The request body is not valid JSON: ${error.message}`) };
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, body: issueless('invalid_input', error.message) };
  }
  return null;
}

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
  const schemas = httpSchemas(limits);
  const apiKeys = config.apiKeys ?? new ApiKeys();
  const states = new WeakMap<FastifyRequest, RequestState>();
  const stateOf = (request: FastifyRequest): RequestState => {
    const state = states.get(request);
    if (state === undefined) throw new Error('litm-pack: request state missing');
    return state;
  };

  const app = Fastify({
    logger: false,
    bodyLimit: config.bodyLimit,
    // Close idle keep-alive sockets on close(); requests in flight finish first.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  // Once closing, every answer asks its client to close the connection, so a keep-alive socket of a request
  // that was in flight does not hold the close open for the keep-alive timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });

  // JSON bodies only: a form or text body is answered 415, not parsed as something else.
  app.removeContentTypeParser('text/plain');
  await app.register(rateLimit, { global: false });

  const limiters =
    config.rateLimit === false
      ? null
      : {
          client: app.createRateLimit({
            max: config.rateLimit.perClient,
            timeWindow: config.rateLimit.windowMs,
            keyGenerator: (request) => {
              const { caller } = stateOf(request);
              return caller.kind === 'key' ? `key:${caller.id}` : `ip:${request.ip}`;
            },
          }),
          all: app.createRateLimit({ max: config.rateLimit.global, timeWindow: config.rateLimit.windowMs, keyGenerator: () => 'all' }),
        };

  /** Applies the per-client, then the global limit; answers 429 and returns false when one is exceeded. */
  const withinRateLimits = async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    if (limiters === null) return true;
    for (const limiter of [limiters.client, limiters.all]) {
      const result = await limiter(request);
      if (!result.isAllowed && result.isExceeded) {
        stateOf(request).code = 'rate_limited';
        sendError(reply, 429, issueless('rate_limited', `Too many requests: at most ${result.max} per ${result.timeWindow} ms; retry after ${result.ttlInSeconds} s`), Math.max(1, result.ttlInSeconds));
        return false;
      }
    }
    return true;
  };

  app.addHook('onRequest', async (request, reply) => {
    const caller = apiKeys.callerFor(request.headers.authorization);
    const controller = new AbortController();
    states.set(request, { caller, controller });
    // A client that goes away before its answer aborts the store call.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) controller.abort();
    });
    const path = request.routeOptions.url ?? request.url;
    if (OPEN_PATHS.has(path)) return undefined;
    // MCP messages are counted once parsed, and only tool calls (see the /mcp route).
    if (path !== MCP_PATH && !(await withinRateLimits(request, reply))) return reply;
    if (caller.kind === 'invalid') {
      stateOf(request).code = 'unauthorized';
      return sendError(reply, 401, issueless('unauthorized', 'The API key is not valid: send Authorization: Bearer <key> with a configured key'));
    }
    if (caller.kind === 'anonymous' && config.requireAuth) {
      stateOf(request).code = 'unauthorized';
      return sendError(reply, 401, issueless('unauthorized', 'An API key is required: send Authorization: Bearer <key>'));
    }
    return undefined;
  });

  if (config.log !== false) {
    const sink = config.log;
    app.addHook('onResponse', async (request, reply) => {
      const state = states.get(request);
      const line: RequestLogLine = {
        time: new Date().toISOString(),
        method: request.method,
        route: request.routeOptions.url ?? request.url.split('?')[0] ?? request.url,
        status: reply.statusCode,
        principal: state?.caller.id ?? 'anonymous',
        latencyMs: Math.round(reply.elapsedTime * 100) / 100,
      };
      if (state?.code !== undefined) line.code = state.code;
      if (state?.tool !== undefined) line.tool = state.tool;
      const pack = state?.pack;
      if (pack !== undefined) {
        line.budget = pack.budget.maxTokens;
        line.usedTokens = pack.budget.usedTokens;
        line.budgetBound = pack.truncated;
        line.items = pack.items.length;
        line.confidence = pack.coverage.confidence;
        if (pack.degraded.length > 0) line.degraded = pack.degraded;
      }
      if (config.logQueries && state?.query !== undefined) line.query = state.query;
      sink.write(`${JSON.stringify(line)}\n`);
    });
  }

  app.setErrorHandler((error, request, reply) => {
    const state = states.get(request);
    if (isLitmPackError(error)) {
      const answer = errorAnswer(error);
      if (state !== undefined) state.code = answer.body.code;
      return sendError(reply, answer.status, answer.body, answer.retryAfterSeconds);
    }
    const known = frameworkError(error as { code?: string; statusCode?: number; message: string }, config.bodyLimit);
    const answer = known ?? errorAnswer(error);
    if (state !== undefined) state.code = answer.body.code;
    return sendError(reply, answer.status, answer.body);
  });

  app.setNotFoundHandler((request, reply) => {
    const state = states.get(request);
    if (state !== undefined) state.code = 'not_found';
    return sendError(reply, 404, issueless('not_found', `No route ${request.method} ${request.url.split('?')[0]}`));
  });

  const contextOf = (request: FastifyRequest): ServiceContext => {
    const state = stateOf(request);
    return {
      store: config.store,
      principals: state.caller.principals,
      signal: state.controller.signal,
      ...(config.embeddings === undefined ? {} : { embeddings: config.embeddings }),
      ...(config.rerank === undefined ? {} : { rerank: config.rerank }),
    };
  };

  const sendPack = (reply: FastifyReply, pack: Pack, format: ResponseFormat) => {
    if (format === 'md') return reply.type('text/markdown; charset=utf-8').send(pack.context);
    if (format === 'xml') return reply.type('application/xml; charset=utf-8').send(pack.context);
    return reply.type('application/json; charset=utf-8').send(toCanonicalJson(pack));
  };

  const bundleHandler = (fromQuery: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = fromQuery ? decodeQuery(request.query, BUNDLE_QUERY_KINDS) : request.body;
    const http = parseRequest(schemas.bundle, raw, HTTP_ALIASES);
    const state = stateOf(request);
    state.query = http.q;
    if (http.k !== undefined && http.debug !== 'rankings') {
      const message = 'k applies to debug=rankings only';
      throw new LitmPackError('invalid_input', message, { details: { requestIssues: [{ path: ['k'], message }] } });
    }
    if (http.debug === 'rankings' && http.format !== 'json') {
      const message = 'debug=rankings needs format json';
      throw new LitmPackError('invalid_input', message, { details: { requestIssues: [{ path: ['debug'], message }] } });
    }
    const serviceRequest = toBundleRequest(http);
    const context = contextOf(request);
    if (http.debug === 'rankings') {
      const rankings = await serveRankings(
        { query: http.q, mode: http.mode, filter: http.filter, diversity: http.diversity, k: http.k ?? limits.defaultRankingsDepth },
        context,
      );
      const pack = await serveBundle(serviceRequest, context);
      state.pack = pack;
      return reply.type('application/json; charset=utf-8').send(`{"pack":${toCanonicalJson(pack)},"rankings":${JSON.stringify(rankings)}}`);
    }
    const pack = await serveBundle(serviceRequest, context);
    state.pack = pack;
    return sendPack(reply, pack, http.format);
  };

  const briefingHandler = (fromQuery: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = fromQuery ? decodeQuery(request.query, BRIEFING_QUERY_KINDS) : request.body;
    const http = parseRequest(schemas.briefing, raw, HTTP_ALIASES);
    const state = stateOf(request);
    if (http.prompt !== undefined) state.query = http.prompt;
    const pack = await serveBriefing(toBriefingRequest(http), contextOf(request), limits);
    state.pack = pack;
    return sendPack(reply, pack, http.format);
  };

  app.get('/api/bundle', bundleHandler(true));
  app.post('/api/bundle', bundleHandler(false));
  app.get('/api/briefing', briefingHandler(true));
  app.post('/api/briefing', briefingHandler(false));

  app.post('/api/pack', async (request, reply) => {
    const parsed = parseRequest(schemas.pack, request.body, HTTP_ALIASES);
    const state = stateOf(request);
    state.query = parsed.query;
    const pack = await servePack(parsed, contextOf(request));
    state.pack = pack;
    return sendPack(reply, pack, 'json');
  });

  app.post('/api/citations/verify', async (request, reply) => {
    const parsed = parseRequest(schemas.verify, request.body, HTTP_ALIASES);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(await serveVerify(parsed, contextOf(request))));
  });

  const sendReport = (reply: FastifyReply, pack: unknown) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', REPORT_CSP).send(renderPackReport(pack));

  // The HTML report of a bundle for these parameters (the same as /api/bundle's).
  app.get('/inspect', async (request, reply) => {
    const http = parseRequest(schemas.inspect, decodeQuery(request.query, BUNDLE_QUERY_KINDS), HTTP_ALIASES);
    const state = stateOf(request);
    state.query = http.q;
    const pack = await serveBundle(toInspectRequest(http), contextOf(request));
    state.pack = pack;
    return sendReport(reply, pack);
  });

  // The HTML report of a pack sent as the body (a stored pack, e.g. from an evaluation run).
  app.post('/inspect', async (request, reply) => sendReport(reply, request.body));

  app.get('/healthz', async (_request, reply) => reply.type('application/json; charset=utf-8').send('{"status":"ok"}'));

  const openapi = JSON.stringify(openApiDocument(schemas, packageVersion()));
  app.get('/api/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(openapi));

  if (config.mcp) {
    const mountMcp = await import('./mcp-route.js');
    mountMcp.registerMcpRoute(app, {
      store: config.store,
      limits: config.limits,
      embeddings: config.embeddings,
      rerank: config.rerank,
      stateOf: (request) => stateOf(request),
      withinRateLimits,
      closing: () => closing,
    });
  }

  return app;
}

export type { RequestState };

/** A listening server. */
export interface RunningServer {
  app: FastifyInstance;
  /** `http://host:port` */
  url: string;
  port: number;
  /** Stops accepting connections, lets requests in flight finish, then resolves. */
  close(): Promise<void>;
}

/** Creates the API and listens (port 0: an ephemeral port; the host defaults to 127.0.0.1). */
export async function startServer(options: ServerOptions & { port?: number; host?: string }): Promise<RunningServer> {
  const { port = 0, host = '127.0.0.1', ...serverOptions } = options;
  const app = await createServer(serverOptions);
  await app.listen({ port, host });
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { app, url: `http://${shownHost}:${boundPort}`, port: boundPort, close: () => app.close() };
}
