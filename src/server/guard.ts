/**
 * The hooks every route runs behind, in this order: each request's state and abort signal; the `Host` and
 * `Origin` checks (403: no web page reaches the server through a rebinding DNS name); API keys → the caller,
 * refused callers answered 401 before they are counted (a stranger never spends a valid key's budget); then
 * the per-caller and global rate limits (429). Also the error handler that turns every failure into the API's
 * typed answer (a JSON-RPC error on /mcp), the not-found answer, and a graceful close (answers ask clients to
 * close their connections once the server is closing).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLitmPackError } from '../base/errors.js';
import { errorAnswer } from '../service/errors.js';
import type { ApiKeys } from './auth.js';
import { frameworkError, issueless, sendError, type CallCounts, type CallKind, type RequestState } from './context.js';
import type { ServerConfig } from './options.js';

const MCP_PATH = '/mcp';
// Liveness and readiness: probes (a load balancer, Kubernetes) carry no key, may name any Host, and must never be rate limited.
const OPEN_PATHS = new Set(['/healthz', '/readyz']);

/** Host names a loopback request carries; always allowed (no web page can make a browser send them for its own name). */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function hostnameOf(host: string | undefined): string | null {
  if (host === undefined || host === '') return null;
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** Why a request's `Host` or `Origin` is refused, or null when both are allowed. */
function rebindingProblem(request: FastifyRequest, config: ServerConfig): string | null {
  const anyHost = config.allowedHosts.includes('*');
  const allowedHost = (name: string | null) => name !== null && (anyHost || LOOPBACK_NAMES.has(name) || config.allowedHosts.includes(name));
  const host = hostnameOf(request.headers.host);
  if (!allowedHost(host)) {
    return `Host ${JSON.stringify(request.headers.host ?? '')} is not allowed: add it with --allowed-hosts (allowedHosts in code)`;
  }
  const origin = request.headers.origin;
  if (origin === undefined || config.allowedOrigins.includes('*')) return null;
  let parsed: URL | null;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = null;
  }
  if (parsed !== null && (config.allowedOrigins.includes(parsed.origin) || allowedHost(parsed.hostname.toLowerCase()))) return null;
  return `Origin ${JSON.stringify(origin)} is not allowed: add it with --allowed-origins (allowedOrigins in code)`;
}

/** Functions, not methods: they are handed on alone (none reads `this`). */
interface Guard {
  stateOf: (request: FastifyRequest) => RequestState;
  /** The state of a request the guard saw (undefined for one refused before, e.g. a malformed request line). */
  stateIfAny: (request: FastifyRequest) => RequestState | undefined;
  withinRateLimits: (request: FastifyRequest, reply: FastifyReply, calls?: CallCounts) => Promise<boolean>;
  closing: () => boolean;
}

export async function installGuard(app: FastifyInstance, config: ServerConfig, apiKeys: ApiKeys): Promise<Guard> {
  const states = new WeakMap<FastifyRequest, RequestState>();
  const stateOf = (request: FastifyRequest): RequestState => {
    const state = states.get(request);
    if (state === undefined) throw new Error('litm-pack: request state missing');
    return state;
  };

  // Once closing, every answer asks its client to close the connection, so a keep-alive socket of a request
  // that was in flight does not hold the close open for the keep-alive timeout.
  let closing = false;
  // Without a `done` parameter, a hook that returns no promise is done when it returns.
  app.addHook('preClose', () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });

  await app.register(rateLimit, { global: false });
  const limits = config.rateLimit;
  const limiter = (max: number, key: (request: FastifyRequest) => string) =>
    app.createRateLimit({ max, timeWindow: limits === false ? 1000 : limits.windowMs, keyGenerator: key });
  const callerKey = (request: FastifyRequest) => {
    const { caller } = stateOf(request);
    return caller.kind === 'key' ? `key:${caller.id}` : `ip:${request.ip}`;
  };
  // With keys configured, anonymous callers share a bucket of their own: however many addresses they come
  // from, they never spend what the keyed callers share.
  const anonymousApart = apiKeys.size > 0;
  const limiters =
    limits === false
      ? null
      : {
          work: {
            client: limiter(limits.perClient, callerKey),
            keyed: limiter(limits.global, () => 'all'),
            anonymous: limiter(limits.anonymousGlobal, () => 'anonymous'),
          },
          housekeeping: {
            client: limiter(limits.housekeepingPerClient, callerKey),
            all: limiter(limits.housekeepingGlobal, () => 'all'),
          },
        };

  /** The limiters one call of this request's caller passes through, in order. */
  const chainOf = (request: FastifyRequest, kind: CallKind) => {
    if (limiters === null) return [];
    if (kind === 'housekeeping') return [limiters.housekeeping.client, limiters.housekeeping.all];
    const anonymous = anonymousApart && stateOf(request).caller.kind !== 'key';
    return [limiters.work.client, anonymous ? limiters.work.anonymous : limiters.work.keyed];
  };

  /**
   * Counts this request's calls (one REST call, or each JSON-RPC message of an MCP POST by its kind); answers
   * 429 and returns false past a limit.
   */
  const withinRateLimits = async (request: FastifyRequest, reply: FastifyReply, calls: CallCounts = { work: 1 }): Promise<boolean> => {
    if (limiters === null) return true;
    for (const kind of ['housekeeping', 'work'] as const) {
      const chain = chainOf(request, kind);
      for (let call = 0; call < (calls[kind] ?? 0); call += 1) {
        for (const limit of chain) {
          const result = await limit(request);
          if (!result.isAllowed && result.isExceeded) {
            stateOf(request).code = 'rate_limited';
            const what = kind === 'housekeeping' ? 'housekeeping messages (initialize, notifications, ping)' : 'calls';
            sendError(
              reply,
              429,
              issueless(
                'rate_limited',
                `Too many ${what}: at most ${result.max} per ${result.timeWindow} ms; retry after ${result.ttlInSeconds} s`,
              ),
              Math.max(1, result.ttlInSeconds),
            );
            return false;
          }
        }
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
    // Probes answer whatever Host they carry (a pod IP, a service name): they reveal nothing.
    if (OPEN_PATHS.has(path)) return undefined;
    const rebinding = rebindingProblem(request, config);
    if (rebinding !== null) {
      stateOf(request).code = 'forbidden';
      return sendError(reply, 403, issueless('forbidden', rebinding));
    }
    // Refused callers are answered before anything is counted: they never spend another caller's budget.
    if (caller.kind === 'invalid') {
      stateOf(request).code = 'unauthorized';
      return sendError(
        reply,
        401,
        issueless('unauthorized', 'The API key is not valid: send Authorization: Bearer <key> with a configured key'),
      );
    }
    if (caller.kind === 'anonymous' && config.requireAuth) {
      stateOf(request).code = 'unauthorized';
      return sendError(reply, 401, issueless('unauthorized', 'An API key is required: send Authorization: Bearer <key>'));
    }
    // MCP counts each JSON-RPC message of a POST once it is parsed (see the /mcp route).
    if (path !== MCP_PATH && !(await withinRateLimits(request, reply))) return reply;
    return undefined;
  });

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

  return { stateOf, stateIfAny: (request) => states.get(request), withinRateLimits, closing: () => closing };
}
