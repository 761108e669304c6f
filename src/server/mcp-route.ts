/**
 * The MCP tools over Streamable HTTP at /mcp, stateless, for both protocol eras: a 2025-era POST (`initialize`,
 * then requests without the per-request envelope) is answered by a protocol server made for that request over
 * the SDK's streamable transport (JSON answers, no session); a 2026-07-28 POST (the `_meta` envelope, the
 * `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers, `server/discover`) by the SDK's per-request handler,
 * which applies that revision's header and error rules. Both build their server from one tool registry, bound
 * to the caller's principals (from the API key), so no request can carry one caller's access into another's.
 *
 * Before any of that: a batch longer than `maxBatchMessages` is refused whole, and each message is counted
 * against the rate limits by what it is (work, or housekeeping: initialize, notifications, ping, discover).
 */
import { WebStandardStreamableHTTPServerTransport, createMcpHandler, isLegacyRequest, type Server } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { mcpRegistry, protocolServer, type McpCaller } from '../mcp/protocol.js';
import { SURFACE_DEFAULTS } from '../service/limits.js';
import { issueless, recordPack, sendError, type CallCounts, type RequestState, type ServerContext } from './context.js';

/** Messages that keep a session going rather than ask for work: counted apart, against generous limits. */
function isHousekeeping(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const { method } = message as { method?: unknown };
  // A client's answer to a server request carries no method.
  if (method === undefined) return 'result' in message || 'error' in message;
  return (
    typeof method === 'string' &&
    (method === 'initialize' || method === 'ping' || method === 'server/discover' || method.startsWith('notifications/'))
  );
}

/** The calls a JSON-RPC body makes, by kind: one per request or notification, every message of a batch counted. */
function callsIn(messages: readonly unknown[]): CallCounts {
  const housekeeping = messages.filter(isHousekeeping).length;
  return { housekeeping, work: Math.max(messages.length === 0 ? 1 : 0, messages.length - housekeeping) };
}

const methodNotAllowed = (reply: FastifyReply) =>
  reply
    .code(405)
    .header('allow', 'POST')
    .type('application/json; charset=utf-8')
    .send(
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this server is stateless, POST JSON-RPC messages to /mcp' },
        id: null,
      }),
    );

/** The web request the SDK reads: the method, the headers and the URL of the Fastify request (its body is passed parsed). */
function webRequestOf(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  // The body is not given again: the SDK takes the one Fastify parsed (and measured against the body limit).
  headers.delete('content-length');
  headers.delete('transfer-encoding');
  return new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, { method: request.method, headers, signal });
}

/** Sends the SDK's answer through Fastify (so the hooks that log, count and close connections see it). */
async function sendResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') reply.header(name, value);
  });
  if (response.body === null) return reply.send();
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return reply.send(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>));
  }
  return reply.send(Buffer.from(await response.arrayBuffer()));
}

// eslint-disable-next-line @typescript-eslint/require-await -- a fastify plugin without a `done` parameter must return a promise
export async function mcpRoute(app: FastifyInstance, options: ServerContext): Promise<void> {
  const { config, limits } = options;
  // Options, limits and argument schemas once; a server per request, bound to its caller.
  const registry = mcpRegistry({
    store: config.store,
    ...(config.limits === undefined ? {} : { limits: config.limits }),
    ...(config.embeddings === undefined ? {} : { embeddings: config.embeddings }),
    ...(config.rerank === undefined ? {} : { rerank: config.rerank }),
    ...(config.ledger === undefined ? {} : { ledger: config.ledger }),
    textContent: config.textContent,
  });
  // The caller of each request the modern handler serves, found again by the request its factory is given.
  const callers = new WeakMap<Request, McpCaller>();
  const modern = createMcpHandler(
    (context) => {
      const caller = context.requestInfo === undefined ? undefined : callers.get(context.requestInfo);
      if (caller === undefined) throw new Error('litm-pack: an MCP request without its caller');
      return protocolServer(registry, caller);
    },
    { legacy: 'reject' },
  );
  app.addHook('onClose', async () => {
    await modern.close();
  });

  const callerOf = (state: RequestState): McpCaller => ({
    principals: state.caller.principals,
    id: state.caller.id,
    // One budget for every resource read of this request (a batch of reads answers at most this much together).
    readBudget: { remaining: limits.maxRequestReadBytes },
    onToolCall: (event) => {
      state.tool = event.tool;
      if (event.pack !== undefined) recordPack(state, event.kind ?? 'bundle', event.pack, event.mode);
      if (event.code !== undefined) state.code = event.code;
      if (event.query !== undefined) state.query = event.query;
    },
  });

  app.post('/mcp', async (request, reply) => {
    const state = options.stateOf(request);
    const body = request.body;
    const messages = Array.isArray(body) ? body : [body];
    if (messages.length > limits.maxBatchMessages) {
      state.code = 'too_large';
      return sendError(
        reply,
        413,
        issueless(
          'too_large',
          `A batch of ${messages.length} messages is more than this server takes in one request (${limits.maxBatchMessages}): send them in smaller batches`,
        ),
      );
    }
    // Every answer repeats its request's id: one too long to repeat is refused before anything runs.
    if (
      messages.some(
        (message) =>
          typeof (message as { id?: unknown } | null)?.id === 'string' &&
          (message as { id: string }).id.length > SURFACE_DEFAULTS.maxJsonRpcIdChars,
      )
    ) {
      state.code = 'invalid_input';
      return sendError(
        reply,
        400,
        issueless(
          'invalid_input',
          `A JSON-RPC id longer than ${SURFACE_DEFAULTS.maxJsonRpcIdChars} characters is not accepted: use a shorter id`,
        ),
      );
    }
    if (!(await options.withinRateLimits(request, reply, callsIn(messages)))) return reply;
    const webRequest = webRequestOf(request, state.controller.signal);
    const caller = callerOf(state);
    try {
      if (Array.isArray(body) || (await isLegacyRequest(webRequest, body))) {
        return await sendResponse(reply, await serveLegacy(protocolServer(registry, caller), webRequest, body));
      }
      callers.set(webRequest, caller);
      return await sendResponse(reply, await modern.fetch(webRequest, { parsedBody: body }));
    } catch {
      state.code = 'internal_error';
      if (reply.sent) return reply;
      return reply
        .code(500)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    }
  });
  app.get('/mcp', async (_request, reply) => methodNotAllowed(reply));
  app.delete('/mcp', async (_request, reply) => methodNotAllowed(reply));
}

/**
 * A 2025-era request (or a batch, which only that era has), served as before the 2026 revision: a protocol
 * server of its own over the SDK's streamable transport, without a session, answering JSON.
 */
async function serveLegacy(server: Server, request: Request, body: unknown): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  }
}
