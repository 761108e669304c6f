/**
 * What the route plugins share: each request's state (its caller, its abort signal, and what its handler
 * learnt for the log line), the resolved limits and schemas, the service context of a request, and the
 * answers every route sends (a pack in a format, an error body).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { packJson } from '../core/finish.js';
import type { Pack } from '../core/schemas.js';
import type { SearchMode } from '../store/schemas.js';
import type { ServiceLimits } from '../service/limits.js';
import { boundedBody, type ErrorBody } from '../service/errors.js';
import { SURFACE_DEFAULTS } from '../service/limits.js';
import type { ServiceContext } from '../service/service.js';
import type { Caller } from './auth.js';
import type { httpSchemas, ResponseFormat } from './http-requests.js';
import { searchResultsOf } from '../service/anthropic.js';
import type { Granularity } from '../llm/units.js';
import type { ServerConfig } from './options.js';

/** The request kinds that make a pack: from the store (bundle, briefing) or from the caller's candidates (pack). */
export type PackKind = 'bundle' | 'briefing' | 'pack';

/** What a request's handlers learn, for its log line (and the metrics and span read from that line). */
export interface RequestState {
  caller: Caller;
  controller: AbortController;
  code?: string;
  tool?: string;
  pack?: Pack;
  kind?: PackKind;
  /** The search mode of a pack retrieved from the store. */
  mode?: SearchMode;
  query?: string;
}

/** Records the pack a request made, with its kind and (when retrieved from the store) its search mode. */
export function recordPack(state: RequestState, kind: PackKind, pack: Pack, mode?: SearchMode): void {
  state.pack = pack;
  state.kind = kind;
  if (mode !== undefined) state.mode = mode;
}

/** Work (a REST call, a tool call, a resource read or list) or MCP housekeeping (initialize, notifications, ping). */
export type CallKind = 'work' | 'housekeeping';
/** How many calls of each kind one request makes. */
export type CallCounts = Partial<Record<CallKind, number>>;

export interface ServerContext {
  config: ServerConfig;
  limits: ServiceLimits;
  schemas: ReturnType<typeof httpSchemas>;
  stateOf(request: FastifyRequest): RequestState;
  /** The service context of a request: the store, the caller's principals, its abort signal, the server's stages. */
  serviceContextOf(request: FastifyRequest): ServiceContext;
  /** Counts a request's calls by kind against the per-caller, then the shared limits; answers 429 and returns false past one. */
  withinRateLimits(request: FastifyRequest, reply: FastifyReply, calls?: CallCounts): Promise<boolean>;
  /** True once the server is closing (answers then ask the client to close the connection). */
  closing(): boolean;
}

export function sendPack(reply: FastifyReply, pack: Pack, format: ResponseFormat, granularity?: Granularity) {
  if (format === 'md') return reply.type('text/markdown; charset=utf-8').send(pack.context);
  if (format === 'xml') return reply.type('application/xml; charset=utf-8').send(pack.context);
  if (format === 'anthropic') {
    const results = JSON.stringify(searchResultsOf(pack, granularity));
    return reply.type('application/json; charset=utf-8').send(`{"pack":${packJson(pack)},"search_results":${results}}`);
  }
  return reply.type('application/json; charset=utf-8').send(packJson(pack));
}

/** The id of a single JSON-RPC request of a bounded length (a parsed body), else null. */
function jsonRpcIdOf(body: unknown): string | number | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { id } = body as { id?: unknown };
  if (typeof id === 'number' && Number.isFinite(id)) return id;
  return typeof id === 'string' && id.length <= SURFACE_DEFAULTS.maxJsonRpcIdChars ? id : null;
}

/** JSON-RPC's code for a refusal outside a method's own errors (the SDK uses it for the same refusals). */
const JSON_RPC_SERVER_ERROR = -32000;

/**
 * An error answer: the API's `{ error, code, issues }` body, or on /mcp a JSON-RPC error carrying that body as
 * its `data`, so an MCP client shows a refusal (401, 403, 413, 429...) as what it is.
 */
export function sendError(reply: FastifyReply, status: number, error: ErrorBody, retryAfterSeconds?: number): FastifyReply {
  const body = boundedBody(error);
  // The answer to a single JSON-RPC request carries its id (2026-07-28 has no null ids); else null.
  const id = jsonRpcIdOf(reply.request.body);
  if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
  if (status === 401) reply.header('www-authenticate', 'Bearer');
  const path = reply.request.routeOptions.url ?? reply.request.url.split('?')[0];
  const payload = path === '/mcp' ? { jsonrpc: '2.0', error: { code: JSON_RPC_SERVER_ERROR, message: body.error, data: body }, id } : body;
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(payload));
}

export const issueless = (code: ErrorBody['code'], error: string): ErrorBody => ({ error, code, issues: [] });

/** Errors Fastify raises before a handler runs, as the API's typed answers. */
export function frameworkError(
  error: { code?: string; statusCode?: number; message: string },
  bodyLimit: number,
): { status: number; body: ErrorBody } | null {
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
