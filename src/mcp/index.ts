// litm-pack/mcp: the MCP tools (assemble_bundle, get_briefing, get_rag_context, pack_candidates, verify_citations) over a store,
// on stdio or any transport of the MCP SDK. Loads the SDK; the package root does not.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, type McpServerOptions } from './tools.js';

export { createMcpServer, DEGRADED_META_KEY, McpServerOptionsSchema, TOOL_DESCRIPTIONS } from './tools.js';
export type { McpServerOptions, ToolCallEvent } from './tools.js';

/**
 * Serves the tools on this process's stdin/stdout until stdin ends or `close()` is called. Nothing else may
 * write to stdout meanwhile: it carries the protocol.
 */
export async function serveStdio(options: McpServerOptions): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  const server = createMcpServer(options);
  const transport = new StdioServerTransport();
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  transport.onclose = () => resolveClosed();
  const close = async () => {
    await server.close();
    resolveClosed();
  };
  // The client ends the session by closing our stdin.
  process.stdin.once('end', () => void close());
  await server.connect(transport);
  return { closed, close };
}
