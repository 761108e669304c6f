/**
 * A Streamable HTTP front for a stdio MCP server, so that the conformance suite (which only speaks HTTP)
 * can test `litm-pack mcp`. Each MCP session the suite opens (2025-era: `initialize` first) gets its own child
 * process; the requests of the stateless 2026-07-28 revision (no session: the envelope in each request's
 * `_meta`) go to one child of their own, each request's id made unique on the way in and given back on the way
 * out. The child's answers are relayed as they are (no MCP logic here), so the stdio server is what answers;
 * the revision's HTTP rules (routing headers, statuses) are the HTTP server's, not tested through this bridge.
 *
 *   node --import tsx test/conformance/stdio-bridge.ts [--max-lifetime SECONDS] -- COMMAND ARG...
 *
 * Listens on 127.0.0.1 on an ephemeral port and prints `LISTENING http://127.0.0.1:PORT/mcp`. Stops when
 * its stdin ends (the harness that started it went away), on SIGTERM/SIGINT, or after --max-lifetime.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

const separator = process.argv.indexOf('--');
const [command, ...commandArgs] = separator < 0 ? [] : process.argv.slice(separator + 1);
if (command === undefined) {
  process.stderr.write('usage: stdio-bridge.ts [--max-lifetime SECONDS] -- COMMAND ARG...\n');
  process.exit(2);
}
const lifetimeFlag = process.argv.indexOf('--max-lifetime');
const maxLifetimeMs = lifetimeFlag > 0 && lifetimeFlag < separator ? Number(process.argv[lifetimeFlag + 1]) * 1000 : 600_000;

/** A session idle this long is closed (the suite does not end its sessions), so children do not pile up. */
const IDLE_MS = 20_000;
const MAX_SESSIONS = 32;
const MAX_BODY = 4 * 1024 * 1024;

interface Session {
  http: StreamableHTTPServerTransport;
  stdio: StdioClientTransport;
  lastActive: number;
  /** progressToken → the request it belongs to, so progress goes out on that request's stream. */
  progress: Map<string | number, RequestId>;
}

const sessions = new Map<string, Session>();

const jsonRpcError = (res: ServerResponse, status: number, code: number, message: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts a child and a session transport, each relaying what it receives to the other. */
async function openSession(): Promise<Session> {
  const stdio = new StdioClientTransport({ command: command!, args: commandArgs, stderr: 'inherit' });
  const session: Session = {
    stdio,
    http: new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, session);
      },
    }),
    lastActive: Date.now(),
    progress: new Map(),
  };
  const { http } = session;
  http.onmessage = (message: JSONRPCMessage) => {
    session.lastActive = Date.now();
    if ('method' in message && 'id' in message) {
      const token = (message.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta?.progressToken;
      if (typeof token === 'string' || typeof token === 'number') session.progress.set(token, message.id);
    }
    stdio.send(message).catch((error: unknown) => process.stderr.write(`stdio-bridge: send to the child failed: ${String(error)}\n`));
  };
  stdio.onmessage = (message: JSONRPCMessage) => {
    session.lastActive = Date.now();
    let relatedRequestId: RequestId | undefined;
    if ('method' in message && message.method === 'notifications/progress') {
      const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken;
      if (typeof token === 'string' || typeof token === 'number') relatedRequestId = session.progress.get(token);
    }
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      for (const [token, id] of session.progress) if (id === message.id) session.progress.delete(token);
    }
    http.send(message, relatedRequestId === undefined ? undefined : { relatedRequestId }).catch((error: unknown) => {
      process.stderr.write(`stdio-bridge: send to the HTTP client failed: ${String(error)}\n`);
    });
  };
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    if (http.sessionId !== undefined) sessions.delete(http.sessionId);
    void http.close();
    void stdio.close();
  };
  // Either side ending ends the session: a child that exits, a client that sends DELETE.
  http.onclose = close;
  stdio.onclose = close;
  await stdio.start();
  await http.start();
  return session;
}

/** The child that answers the stateless revision's requests, and the HTTP answers waiting on it by relayed id. */
interface Stateless {
  stdio: StdioClientTransport;
  pending: Map<number, { res: ServerResponse; id: RequestId }>;
}
let stateless: Stateless | undefined;
let relayed = 0;

async function statelessChild(): Promise<Stateless> {
  if (stateless !== undefined) return stateless;
  const stdio = new StdioClientTransport({ command: command!, args: commandArgs, stderr: 'inherit' });
  const child: Stateless = { stdio, pending: new Map() };
  stdio.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message || !('id' in message) || typeof message.id !== 'number') return;
    const waiting = child.pending.get(message.id);
    if (waiting === undefined) return;
    child.pending.delete(message.id);
    waiting.res.writeHead(200, { 'content-type': 'application/json' });
    waiting.res.end(JSON.stringify({ ...message, id: waiting.id }));
  };
  stdio.onclose = () => {
    if (stateless === child) stateless = undefined;
    for (const { res } of child.pending.values()) if (!res.headersSent) jsonRpcError(res, 502, -32603, 'The stdio server went away');
  };
  await stdio.start();
  // The first request with a valid envelope pins a stdio connection to the revision (the SDK's opening rule);
  // after it every request is checked on its own, as over HTTP. This one's answer is not relayed.
  await stdio.send({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: STATELESS_ENVELOPE } });
  stateless = child;
  return child;
}

const STATELESS_ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

/**
 * A message for the stateless child: any single request or notification outside a session but the 2025-era
 * `initialize` (which opens a session); the child's own checks answer one whose envelope is missing or wrong.
 */
function isStatelessMessage(body: unknown): body is JSONRPCMessage & { method: string; id?: RequestId } {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || typeof (body as { method?: unknown }).method !== 'string')
    return false;
  const meta = (body as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  return !isInitializeRequest(body) || (meta !== undefined && 'io.modelcontextprotocol/protocolVersion' in meta);
}

/** Only loopback Host names: this bridge must not be reachable through DNS rebinding while it runs. */
function loopbackHost(req: IncomingMessage): boolean {
  try {
    const { hostname } = new URL(`http://${req.headers.host ?? ''}`);
    return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  } catch {
    return false;
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp')
    return jsonRpcError(res, 404, -32000, 'Not found: the MCP endpoint is /mcp');
  if (!loopbackHost(req)) return jsonRpcError(res, 403, -32000, `Invalid Host header: ${req.headers.host ?? ''}`);
  let body: unknown;
  if (req.method === 'POST') {
    const text = await readBody(req);
    try {
      body = JSON.parse(text);
    } catch {
      return jsonRpcError(res, 400, -32700, 'Parse error');
    }
  }
  const header = req.headers['mcp-session-id'];
  const sessionId = Array.isArray(header) ? header[0] : header;
  const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
  if (existing !== undefined) {
    existing.lastActive = Date.now();
    return existing.http.handleRequest(req, res, body);
  }
  if (sessionId !== undefined) return jsonRpcError(res, 404, -32001, 'Session not found');
  if (req.method === 'POST' && isStatelessMessage(body)) {
    const child = await statelessChild();
    if (body.id === undefined) {
      await child.stdio.send(body);
      res.writeHead(202).end();
      return;
    }
    relayed += 1;
    const id = relayed;
    child.pending.set(id, { res, id: body.id });
    res.once('close', () => child.pending.delete(id));
    await child.stdio.send({ ...body, id });
    return;
  }
  if (req.method !== 'POST' || !isInitializeRequest(body)) {
    return jsonRpcError(res, 400, -32000, 'Bad Request: no session; start one with an initialize request');
  }
  if (sessions.size >= MAX_SESSIONS) return jsonRpcError(res, 503, -32000, 'Too many open sessions');
  const session = await openSession();
  await session.http.handleRequest(req, res, body);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    process.stderr.write(`stdio-bridge: ${String(error)}\n`);
    if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal error');
    else res.end();
  });
});

let stopping = false;
function stop(why: string): void {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`stdio-bridge: stopping (${why})\n`);
  for (const session of sessions.values()) {
    void session.http.close();
    void session.stdio.close();
  }
  void stateless?.stdio.close();
  server.close();
  server.closeAllConnections();
  // The children get a moment to exit on their closed stdin; then the bridge goes regardless.
  setTimeout(() => process.exit(0), 2000).unref();
}

const reaper = setInterval(() => {
  const now = Date.now();
  for (const session of [...sessions.values()]) {
    if (now - session.lastActive > IDLE_MS) {
      void session.http.close();
      void session.stdio.close();
    }
  }
}, 5000);
reaper.unref();

process.once('SIGTERM', () => stop('SIGTERM'));
process.once('SIGINT', () => stop('SIGINT'));
process.stdin.on('end', () => stop('stdin closed'));
process.stdin.resume();
setTimeout(() => stop('max lifetime reached'), maxLifetimeMs).unref();

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.stdout.write(`LISTENING http://127.0.0.1:${port}/mcp\n`);
});
