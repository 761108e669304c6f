// litm-pack/mcp: the MCP tools (assemble_bundle, get_briefing, get_rag_context, pack_candidates, verify_citations) over a store,
// on stdio or any transport of the MCP SDK. Loads the SDK; the package root does not.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer, type McpServerOptions } from './tools.js';

export { createMcpServer, DEGRADED_META_KEY, McpServerOptionsSchema, TOOL_DESCRIPTIONS } from './tools.js';
export type { McpServerOptions, ToolCallEvent } from './tools.js';

/** How long a close waits for tool calls in flight. */
const CLOSE_GRACE_MS = 30_000;

/**
 * Serves the tools on this process's stdin/stdout until stdin ends or `close()` is called. Nothing else may
 * write to stdout meanwhile: it carries the protocol. `close()` lets tool calls in flight answer first (for up to 30 s).
 */
export async function serveStdio(options: McpServerOptions): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  const server = createMcpServer(options);
  const transport = new StdioServerTransport();
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  // Requests read and not answered yet, by JSON-RPC id: a close waits for their answers (the SDK's own close
  // would drop them). Set before connect, which chains its handler after this one.
  const unanswered = new Set<string | number>();
  let drained: (() => void) | undefined;
  const answered = (id: string | number) => {
    unanswered.delete(id);
    if (unanswered.size === 0) drained?.();
  };
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) unanswered.add(message.id);
    // A cancelled request gets no answer.
    else if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === 'string' || typeof id === 'number') answered(id);
    }
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    if (!('method' in message) && 'id' in message && message.id !== undefined) answered(message.id);
  };
  transport.onclose = () => resolveClosed();
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      if (unanswered.size > 0) {
        // Bounded, so a call that never answers cannot keep the process alive.
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, CLOSE_GRACE_MS).unref();
        });
      }
      await server.close();
      resolveClosed();
    })());
  // The client ends the session by closing our stdin.
  process.stdin.once('end', () => void close());
  await server.connect(transport);
  return { closed, close };
}
