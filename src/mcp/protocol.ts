/**
 * The tool registry on the MCP SDK's protocol server: one `Server` per caller (per HTTP request, or per stdio
 * connection), built from the same registry for every protocol revision the SDK serves (2025-11-25 and the
 * ones before it through `initialize`; 2026-07-28 through its per-request envelope and `server/discover`).
 * Handlers translate: arguments to the service's request, the service's answer to the protocol's result, its
 * typed errors to the one error body (a tool error) or to a protocol error (resources).
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  UnsupportedProtocolVersionError,
  type CallToolResult,
  type ContentBlock,
  type ServerContext as SdkContext,
} from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { isLitmPackError, parseOrThrow } from '../base/errors.js';
import { SearchModeSchema, type Principals } from '../store/schemas.js';
import { errorAnswer, excerpt, parseRequest, type ErrorBody } from '../service/errors.js';
import { SURFACE_DEFAULTS, resolveLimits, type ServiceLimits } from '../service/limits.js';
import type { ErrorBodySchema } from '../service/responses.js';
import type { ServiceContext } from '../service/service.js';
import { packageVersion } from '../service/version.js';
import { NEXT_PAGE_META_KEY, SOURCE_TEMPLATE, listSources, readSource, sourceUri, type ReadBudget } from './resources.js';
import {
  McpServerOptionsSchema,
  SERVER_INSTRUCTIONS,
  listingOf,
  toolsOf,
  type McpServerOptions,
  type ParsedMcpServerOptions,
  type Tool,
  type ToolCallEvent,
} from './tools.js';

/** What differs between the callers of one set of tools: whom they act for, and who hears of each call. */
export interface McpCaller {
  principals: Principals | readonly string[];
  /** Who the caller is in the citation ledger (an API key's id); the server's `caller` option by default. */
  id?: string;
  onToolCall?: (event: ToolCallEvent) => void;
  /**
   * What the resource reads of this caller's request may still answer, shared by the reads of one JSON-RPC
   * batch; absent, each read has a budget of its own (`maxRequestReadBytes`).
   */
  readBudget?: ReadBudget;
}

/** The options checked, the limits resolved and the tools and their schemas built: once per server. */
interface McpRegistry {
  options: ParsedMcpServerOptions;
  limits: ServiceLimits;
  tools: Map<string, Tool>;
  listing: ReturnType<typeof listingOf>;
}

export function mcpRegistry(input: McpServerOptions): McpRegistry {
  const options = parseOrThrow(McpServerOptionsSchema, input, 'MCP server options');
  const limits = resolveLimits(options.limits);
  const tools = toolsOf(limits, { ledger: options.ledger !== undefined });
  return { options, limits, tools, listing: listingOf(tools) };
}

/** The revisions the per-request envelope may name (the 2025-era ones are negotiated by `initialize`). */
export const STATELESS_REVISIONS: readonly string[] = ['2026-07-28'];
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * A request whose envelope names a revision this server does not serve is refused on its own (the SDK checks
 * the revision of the request that opens a stdio connection; each later one is checked here, as over HTTP).
 */
function checkRevision(ctx: SdkContext): void {
  // The SDK types the envelope as an empty object; its keys are the spec's.
  const requested = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_KEY];
  if (typeof requested === 'string' && !STATELESS_REVISIONS.includes(requested)) {
    throw new UnsupportedProtocolVersionError({ supported: [...STATELESS_REVISIONS], requested });
  }
}

/** A refusal or failure, in the one shape every tool answers it with. */
function errorResult(error: unknown): CallToolResult & { body: ErrorBody } {
  const { body } = errorAnswer(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: { ...body }, body };
}

/**
 * A protocol server with the tools and the corpus as resources, bound to one caller. Nothing in it changes
 * while it lives: no list_changed notifications are ever sent, so none are offered.
 */
export function protocolServer(registry: McpRegistry, caller: McpCaller): Server {
  const { options, limits, tools, listing } = registry;
  const principals: Principals = caller.principals === 'all' ? 'all' : [...caller.principals];
  const context: ServiceContext = {
    store: options.store,
    principals,
    caller: caller.id ?? options.caller,
    maxPool: limits.maxPool,
    ...(options.ledger === undefined ? {} : { ledger: options.ledger }),
    ...(options.embeddings === undefined ? {} : { embeddings: options.embeddings }),
    ...(options.rerank === undefined ? {} : { rerank: options.rerank }),
  };
  const onToolCall = caller.onToolCall ?? options.onToolCall;
  const server = new Server(
    { name: 'litm-pack', title: 'litm-pack', version: packageVersion() },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: SERVER_INSTRUCTIONS,
      // Lists that are the same for every caller of this server may be kept a while (2026-07-28 caching).
      cacheHints: {
        'tools/list': { ttlMs: 300_000, cacheScope: 'public' },
        'resources/templates/list': { ttlMs: 300_000, cacheScope: 'public' },
      },
    },
  );

  server.setRequestHandler('tools/list', (_request, ctx) => {
    checkRevision(ctx);
    return { tools: listing };
  });

  server.setRequestHandler('tools/call', async (request, ctx) => {
    checkRevision(ctx);
    const { name, arguments: raw } = request.params;
    const tool = tools.get(name);
    if (tool === undefined)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Tool ${excerpt(name, 200)} not found: the tools are ${[...tools.keys()].join(', ')}`,
      );
    const started = performance.now();
    const args = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const query = tool.queryOf(args);
    const signal = ctx.mcpReq.signal;
    try {
      const parsed = parseRequest(tool.input, raw ?? {});
      const answer = await tool.call(parsed as never, { ...context, signal });
      const mode =
        tool.kind === undefined || tool.kind === 'pack' ? undefined : SearchModeSchema.safeParse((parsed as { mode?: unknown }).mode).data;
      onToolCall?.({
        tool: name,
        ...(answer.pack === undefined ? {} : { pack: answer.pack }),
        ...(answer.pack === undefined || tool.kind === undefined ? {} : { kind: tool.kind }),
        ...(mode === undefined ? {} : { mode }),
        ...(query === undefined ? {} : { query }),
        latencyMs: performance.now() - started,
      });
      const text = options.textContent === 'json' ? JSON.stringify(answer.structured) : answer.text;
      const result: CallToolResult = {
        content: [{ type: 'text', text }, ...(answer.links as ContentBlock[])],
        structuredContent: answer.structured,
        ...(answer.meta === undefined ? {} : { _meta: answer.meta }),
      };
      return result;
    } catch (error) {
      // The caller's own cancellation is the protocol's business, not a tool error.
      if (signal.aborted && !isLitmPackError(error)) throw error;
      const { body, ...result } = errorResult(error);
      onToolCall?.({ tool: name, code: body.code, ...(query === undefined ? {} : { query }), latencyMs: performance.now() - started });
      return result;
    }
  });

  server.setRequestHandler('resources/templates/list', (_request, ctx) => {
    checkRevision(ctx);
    return {
      resourceTemplates: [
        {
          uriTemplate: SOURCE_TEMPLATE,
          name: 'source',
          title: 'A source of the corpus',
          description:
            'The text of a source you may read (source ids as citations name them, percent-encoded), a page at a time ' +
            `(a long source answers its first page and names the next one, ?from=OFFSET, in the content's _meta["${NEXT_PAGE_META_KEY}"]); ` +
            "or one chunk of it (chunk: a citation's chunkId), or a span (start, end: a citation's span). A source you may not read is not found, as one that does not exist.",
          mimeType: 'text/plain',
        },
      ],
    };
  });

  server.setRequestHandler('resources/list', async (request, ctx) => {
    checkRevision(ctx);
    const page = await asProtocolError(undefined, () =>
      listSources(options.store, principals, request.params?.cursor, limits.resourcesPageSize, ctx.mcpReq.signal),
    );
    return {
      resources: page.sources.map((source) => ({
        uri: sourceUri(source.sourceId),
        name: source.sourceId,
        ...(source.title === undefined ? {} : { title: source.title }),
        mimeType: 'text/plain',
      })),
      ...(page.next === undefined ? {} : { nextCursor: page.next }),
    };
  });

  server.setRequestHandler('resources/read', async (request, ctx) => {
    checkRevision(ctx);
    const { uri } = request.params;
    const budget = caller.readBudget ?? { remaining: limits.maxRequestReadBytes };
    const read = await asProtocolError(uri, () =>
      readSource(options.store, uri, principals, { limits, budget, signal: ctx.mcpReq.signal }),
    );
    return {
      contents: [
        {
          uri,
          mimeType: 'text/plain',
          text: read.text,
          ...(read.next === undefined ? {} : { _meta: { [NEXT_PAGE_META_KEY]: read.next } }),
        },
      ],
    };
  });

  return server;
}

const MAX_TOLD_URI = SURFACE_DEFAULTS.maxToldUriChars;

/**
 * Runs a resource request; its typed errors become protocol errors: a resource that is not found (or may not be
 * read) is Invalid Params with the URI in its data (SEP-2164), other requests' mistakes Invalid Params, faults
 * Internal Error; each carries the API's error body as its data.
 */
async function asProtocolError<T>(uri: string | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isLitmPackError(error)) throw error;
    const { status, body } = errorAnswer(error);
    const code = status < 500 ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError;
    // The URI is told back (SEP-2164) when it is of a sane length; a longer one only as the message's excerpt.
    const told = uri === undefined || error.code !== 'not_found' || uri.length > MAX_TOLD_URI ? {} : { uri };
    const data = { ...(body satisfies z.input<typeof ErrorBodySchema>), ...told };
    throw new ProtocolError(code, body.error, data);
  }
}

/**
 * A factory of protocol servers for the SDK's serving entries (`createMcpHandler`, `serveStdio`): the options
 * checked once, a server per HTTP request or stdio connection, every revision from the same tools.
 */
export function mcpServerFactory(input: McpServerOptions): (caller?: McpCaller) => Server {
  const registry = mcpRegistry(input);
  return (caller) => protocolServer(registry, caller ?? { principals: registry.options.principals });
}
