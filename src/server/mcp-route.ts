/**
 * The MCP tools over Streamable HTTP at /mcp, stateless: every POST gets its own MCP server bound to the
 * caller's principals (from the API key), so no session can carry one caller's access into another's call.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createMcpServers } from '../mcp/tools.js';
import { recordPack, type ServerContext } from './context.js';

/** The calls a JSON-RPC body makes: one per request or notification, every message of a batch counted. */
function callsIn(body: unknown): number {
  return Array.isArray(body) ? body.length : 1;
}

const methodNotAllowed = (reply: FastifyReply) =>
  reply
    .code(405)
    .header('allow', 'POST')
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless, POST JSON-RPC messages to /mcp' }, id: null }));

export async function mcpRoute(app: FastifyInstance, options: ServerContext): Promise<void> {
  const { config } = options;
  // Options, limits and argument schemas once; a server per request, bound to its caller.
  const serverFor = createMcpServers({
    store: config.store,
    ...(config.limits === undefined ? {} : { limits: config.limits }),
    ...(config.embeddings === undefined ? {} : { embeddings: config.embeddings }),
    ...(config.rerank === undefined ? {} : { rerank: config.rerank }),
  });
  app.post('/mcp', async (request, reply) => {
    const state = options.stateOf(request);
    if (!(await options.withinRateLimits(request, reply, callsIn(request.body)))) return reply;
    const server = serverFor({
      principals: state.caller.principals,
      onToolCall: (event) => {
        state.tool = event.tool;
        if (event.pack !== undefined) recordPack(state, event.kind ?? 'bundle', event.pack, event.mode);
        if (event.code !== undefined) state.code = event.code;
        if (event.query !== undefined) state.query = event.query;
      },
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    if (options.closing()) reply.raw.setHeader('connection', 'close');
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch {
      state.code = 'internal_error';
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
    return reply;
  });
  app.get('/mcp', async (_request, reply) => methodNotAllowed(reply));
  app.delete('/mcp', async (_request, reply) => methodNotAllowed(reply));
}
