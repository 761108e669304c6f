// litm-pack/mcp: the MCP tools (assemble_bundle, get_briefing, corpus_briefing_pack, get_rag_context, get_rankings,
// pack_candidates, verify_citations, list_stale_citations) and the corpus as resources, over a store, on stdio or
// any serving entry of the MCP SDK, for protocol revisions 2025-11-25 and 2026-07-28. Loads the SDK; the package
// root does not.
import {
  UnsupportedProtocolVersionError,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Server,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio as serveSdkStdio } from '@modelcontextprotocol/server/stdio';
import { STATELESS_REVISIONS, mcpRegistry, protocolServer, type McpCaller } from './protocol.js';
import type { McpServerOptions } from './tools.js';

export { DEGRADED_META_KEY, McpServerOptionsSchema, SERVER_INSTRUCTIONS, TOOL_DESCRIPTIONS } from './tools.js';
export type { McpServerOptions, ToolCallEvent } from './tools.js';
export { mcpServerFactory } from './protocol.js';
export type { McpCaller } from './protocol.js';
export { NEXT_PAGE_META_KEY } from './resources.js';
export { CitationLedger } from '../service/ledger.js';
export type { LedgerOptions } from '../service/ledger.js';
export { TRAILER_PREFIX, packText, packTrailer } from './text.js';

/** How long a close waits for tool calls in flight. */
const CLOSE_GRACE_MS = 30_000;

/**
 * An MCP server with the litm-pack tools and the corpus as resources, over `store`, bound to the caller the
 * options describe (`principals`). Connect it to a transport for a 2025-era session; to serve every revision,
 * give `mcpServerFactory(options)` to the SDK's `createMcpHandler` or `serveStdio`, or use `serveStdio` here.
 *
 * @example
 * const server = createMcpServer({ store: await MemoryHybridStore.load('.litm-store/store.json') });
 * await server.connect(transport);
 */
export function createMcpServer(input: McpServerOptions): Server {
  const registry = mcpRegistry(input);
  return protocolServer(registry, { principals: registry.options.principals });
}

/**
 * The answer to a `server/discover` whose envelope names a revision this server does not serve. The SDK's
 * stdio entry checks the revision of the message that opens a connection, and the tools check every request
 * of theirs (protocol.ts); a later discover is answered by the SDK without a look at it, so it is checked here.
 */
function discoverRefusal(message: JSONRPCMessage): JSONRPCMessage | null {
  if (!('method' in message) || message.method !== 'server/discover' || !('id' in message)) return null;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const requested = meta?.['io.modelcontextprotocol/protocolVersion'];
  if (typeof requested !== 'string' || STATELESS_REVISIONS.includes(requested)) return null;
  const error = new UnsupportedProtocolVersionError({ supported: [...STATELESS_REVISIONS], requested });
  return { jsonrpc: '2.0', id: message.id, error: { code: error.code, message: error.message, data: error.data } };
}

/**
 * The stdio transport with its requests counted: a close waits for the answers of requests read and not
 * answered yet (the transport's own close would drop them).
 */
class DrainingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly #inner: Transport;
  readonly #unanswered = new Set<string | number>();
  #drained: (() => void) | undefined;

  constructor(inner: Transport, whenClosed: () => void) {
    this.#inner = inner;
    inner.onmessage = (message, extra) => {
      const refusal = discoverRefusal(message);
      if (refusal !== null) {
        void inner.send(refusal).catch((error: unknown) => this.onerror?.(error as Error));
        return;
      }
      if ('method' in message && 'id' in message) this.#unanswered.add(message.id);
      // A cancelled request gets no answer.
      else if ('method' in message && message.method === 'notifications/cancelled') {
        const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
        if (typeof id === 'string' || typeof id === 'number') this.#answered(id);
      }
      this.onmessage?.(message, extra);
    };
    inner.onclose = () => {
      this.onclose?.();
      whenClosed();
    };
    inner.onerror = (error) => this.onerror?.(error);
  }

  #answered(id: string | number): void {
    this.#unanswered.delete(id);
    if (this.#unanswered.size === 0) this.#drained?.();
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    await this.#inner.send(message, options);
    if (!('method' in message) && 'id' in message && message.id !== undefined && message.id !== null) this.#answered(message.id);
  }

  /** Resolves once every request read has its answer, or after `ms`, whichever comes first. */
  drain(ms: number): Promise<void> {
    if (this.#unanswered.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#drained = resolve;
      // Bounded, so a call that never answers cannot keep the process alive.
      setTimeout(resolve, ms).unref();
    });
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/**
 * Serves the tools on this process's stdin/stdout until stdin ends or `close()` is called, for a client of
 * either protocol era (the first message decides: `initialize` opens a 2025-era session, a request carrying
 * the 2026-07-28 envelope or `server/discover` a stateless one). Nothing else may write to stdout meanwhile:
 * it carries the protocol. `close()` lets tool calls in flight answer first (for up to 30 s).
 */
// Async (a promise, as before the SDK's serving entry took the connection) so callers await it the same way.
// eslint-disable-next-line @typescript-eslint/require-await
export async function serveStdio(options: McpServerOptions): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  const registry = mcpRegistry(options);
  const caller: McpCaller = { principals: registry.options.principals };
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const transport = new DrainingTransport(new StdioServerTransport(), () => resolveClosed());
  const handle = serveSdkStdio(() => protocolServer(registry, caller), { transport });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await transport.drain(CLOSE_GRACE_MS);
      await handle.close();
      resolveClosed();
    })());
  return { closed, close };
}
