/**
 * The MCP tools and resources, on the SDK's protocol server. Each tool parses its arguments with the service's
 * schema (the same messages as the HTTP API, naming each argument as sent), calls the service, and answers a
 * text block, a `resource_link` per citation (so an agent can open what it cites), and `structuredContent`
 * that validates against the output schema it declares. Every refusal, whatever refuses it, is one shape:
 * `isError` with `{ error, code, issues }` as structured content and as the text. The sources are resources
 * (`litm://sources/{sourceId}`, resources.ts), read under the caller's principals.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ContentBlock,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isLitmPackError, parseOrThrow } from '../base/errors.js';
import { packJson } from '../core/finish.js';
import { PackSchema, type Pack } from '../core/schemas.js';
import { RerankStageSchema } from '../refine/stages.js';
import { EmbeddingsSchema, PrincipalsSchema, SearchModeSchema, type Principals, type SearchMode } from '../store/schemas.js';
import { StoreSchema } from '../store/types.js';
import { errorAnswer, parseRequest, type ErrorBody } from '../service/errors.js';
import { resolveLimits, type ServiceLimits, type ServiceLimitsInput } from '../service/limits.js';
import { bundleRequestShape, requestSchemas } from '../service/requests.js';
import { ErrorBodySchema, RagContextSchema, VerifyAnswerSchema } from '../service/responses.js';
import { packageVersion } from '../service/version.js';
import { serveBriefing, serveBundle, servePack, serveVerify, ragContextOf, type ServiceContext } from '../service/service.js';
import { SOURCE_TEMPLATE, citationUri, listSources, readSource, sourceUri } from './resources.js';

export const McpServerOptionsSchema = z.strictObject({
  store: StoreSchema,
  /**
   * What this server's caller may read: documents without an ACL, and those whose ACL names one of these;
   * `'all'` for every document (a trusted local agent). Default `[]`: documents without an ACL only.
   */
  principals: PrincipalsSchema.default([]),
  /** Defaults and limits of the tools' arguments (budgets, pins, clusters, query length...). */
  limits: z.custom<ServiceLimitsInput>((value) => typeof value === 'object' && value !== null, { message: 'limits must be an object' }).optional(),
  /**
   * Embeddings of the store's model: sentence selection blends in sentence vectors (else BM25 alone), and
   * briefings from clusters without a prompt start from the chunks nearest the centroid (else lexical).
   */
  embeddings: EmbeddingsSchema.optional(),
  /**
   * A reranker over the top of every bundle's pool (and a briefing's prompt results), e.g.
   * `{ reranker: new HttpReranker({ url }), topN: 50, timeoutMs: 10000 }`; a call may turn it off with
   * `rerank: false`. A reranker that fails or times out is bypassed and reported in `pack.degraded`.
   */
  rerank: RerankStageSchema.optional(),
  /** Called after every tool call, refused ones too (the HTTP server's request log uses it). */
  onToolCall: z.custom<(event: ToolCallEvent) => void>((value) => typeof value === 'function', { message: 'onToolCall must be a function' }).optional(),
});
export type McpServerOptions = z.input<typeof McpServerOptionsSchema>;

/** What one tool call did, for request logs. */
export interface ToolCallEvent {
  tool: string;
  /** Absent when the call failed. */
  pack?: Pack;
  /** The request kind of a tool that makes a pack: from the store (bundle, briefing) or from candidates (pack). */
  kind?: 'bundle' | 'briefing' | 'pack';
  /** The search mode of a call that searched the store. */
  mode?: SearchMode;
  /** The error code when the call failed or was refused. */
  code?: string;
  query?: string;
  latencyMs: number;
}

const CONFIDENCE_ROUTING =
  'Read coverage.confidence before you answer: "strong" → answer from the context and cite blocks as [n]; ' +
  '"partial" or "weak" → the corpus may not hold the answer: widen the search (rephrase, another mode, a larger budget) or ask the user; ' +
  '"unknown" → there is no dense similarity (lexical search only): judge the passages yourself.';

export const TOOL_DESCRIPTIONS = {
  assemble_bundle:
    'Retrieve the passages that best ground an answer to `query`, deduplicated and fitted exactly to `budget` tokens, ' +
    'best passage first and second best last, each block numbered [n]; returns the context as text and the whole pack ' +
    '(items, citations with source, version and text hash, coverage, dropped, degraded) as structured content. ' +
    'compress "sentences" keeps only the relevant sentences of each passage (more sources per token); diversity ' +
    '(0..1) trades relevance for less repetition. ' +
    `${CONFIDENCE_ROUTING} ` +
    'Do not use it to pack passages you already have (pack_candidates), to prepare for a task (get_briefing), ' +
    'or when you only need a context string for a prompt (get_rag_context).',
  get_briefing:
    'A briefing to read before starting a task: pinned sources first (verbatim while they fit), the strongest passages ' +
    'for the prompt, the rest of the evidence, then a caveats block of computed facts (coverage, confidence, dates, ' +
    'what did not fit, pins not found). Give at least one of prompt, pins, clusters. A pin you may not see is ' +
    `reported as not found. ${CONFIDENCE_ROUTING} Do not use it to answer a single question: use assemble_bundle.`,
  get_rag_context:
    'One call for a retrieval-augmented prompt: returns exactly {context, hits, token_estimate, truncated}. `context` ' +
    'is at most `max_tokens` tokens, ready to paste into a prompt, with blocks numbered [n]; `hits` names the source ' +
    'of each [n]; `truncated` says relevant text did not fit. It carries no confidence signal: when you must decide ' +
    'whether the corpus answers the question at all, use assemble_bundle and read coverage.confidence.',
  verify_citations:
    'Check whether citations (or a whole pack\'s) still hold against the current corpus: each one is "current" (same ' +
    'text at the same place), "moved" (same text elsewhere in the source), "changed" (the passage is gone; the closest ' +
    'current passage is reported) or "missing" (the source is gone or you may not read it). Use it before trusting an ' +
    'old pack or answer; do not use it to retrieve (assemble_bundle).',
  pack_candidates:
    'Pack passages you already retrieved yourself into the canonical pack (deduplicated, budgeted, ordered, cited): ' +
    'the same input always gives the same bytes, for evaluation harnesses. It does not search: to retrieve from the ' +
    'corpus, use assemble_bundle.',
} as const;

/** get_rag_context's arguments: the bundle's, with the budget spelled `max_tokens`. */
function ragContextSchema(limits: ServiceLimits) {
  const { query, budget, mode, filter, limit, diversity, rerank, compress, order, header } = bundleRequestShape(limits);
  return z.strictObject({
    query,
    max_tokens: budget.describe('Token budget of the context (exact).'),
    limit,
    filter,
    mode,
    diversity,
    rerank,
    compress,
    order,
    header,
  });
}

/**
 * get_rag_context's answer holds exactly context, hits, token_estimate and truncated; when an optional stage
 * (reranker, sentence embeddings) failed and was bypassed, the result's `_meta` carries `pack.degraded` under
 * this key.
 */
export const DEGRADED_META_KEY = 'litm-pack/degraded';

/** A refusal or failure, in the one shape every tool answers it with. */
function errorResult(error: unknown): CallToolResult & { body: ErrorBody } {
  const { body } = errorAnswer(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: { ...body }, body };
}

/** The structured content of a pack: the pack itself, as plain JSON. */
const structured = (pack: Pack) => JSON.parse(packJson(pack)) as Record<string, unknown>;

/** A `resource_link` per citation: the cited chunk, readable with `resources/read`. */
function citationLinks(pack: Pack): ContentBlock[] {
  return pack.citations.map((citation) => ({
    type: 'resource_link' as const,
    uri: citationUri(citation),
    name: `[${citation.ref}] ${citation.title ?? citation.sourceId}`,
    mimeType: 'text/plain',
    description: `The passage cited as [${citation.ref}]: chunk ${citation.chunkId} of ${citation.sourceId}${citation.version === undefined ? '' : `, version ${citation.version}`}`,
  }));
}

/** One tool: its listing and how a call with parsed arguments is answered. */
interface Tool {
  title: string;
  kind?: ToolCallEvent['kind'];
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  queryOf(args: Record<string, unknown>): string | undefined;
  call(args: never, context: ServiceContext): Promise<{ pack?: Pack; result: CallToolResult }>;
}

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

function toolsOf(limits: ServiceLimits): Map<string, Tool> {
  const schemas = requestSchemas(limits);
  const ragSchema = ragContextSchema(limits);
  const packAnswer = (pack: Pack, text: string, links: boolean) => ({
    pack,
    result: { content: [{ type: 'text' as const, text }, ...(links ? citationLinks(pack) : [])], structuredContent: structured(pack) },
  });
  return new Map<string, Tool>([
    [
      'assemble_bundle',
      {
        kind: 'bundle',
        title: 'Assemble a cited context bundle',
        description: TOOL_DESCRIPTIONS.assemble_bundle,
        input: schemas.bundle,
        output: PackSchema,
        queryOf: (args) => args.query as string,
        call: async (args: z.output<typeof schemas.bundle>, context) => {
          const pack = await serveBundle(args, context);
          return packAnswer(pack, pack.context, true);
        },
      },
    ],
    [
      'get_briefing',
      {
        kind: 'briefing',
        title: 'Get a task briefing',
        description: TOOL_DESCRIPTIONS.get_briefing,
        input: schemas.briefing,
        output: PackSchema,
        queryOf: (args) => args.prompt as string | undefined,
        call: async (args: z.output<typeof schemas.briefing>, context) => {
          const pack = await serveBriefing(args, context, limits);
          return packAnswer(pack, pack.context, true);
        },
      },
    ],
    [
      'get_rag_context',
      {
        kind: 'bundle',
        title: 'Get RAG context',
        description: TOOL_DESCRIPTIONS.get_rag_context,
        input: ragSchema,
        output: RagContextSchema,
        queryOf: (args) => args.query as string,
        call: async (args: z.output<typeof ragSchema>, context) => {
          const { max_tokens, ...rest } = args;
          const pack = await serveBundle(parseRequest(schemas.bundle, { ...rest, budget: max_tokens }), context);
          const rag = ragContextOf(pack);
          // The answer is exactly its four fields; stages that degraded are told beside it, in _meta.
          const meta = pack.degraded.length === 0 ? {} : { _meta: { [DEGRADED_META_KEY]: pack.degraded } };
          return { pack, result: { content: [{ type: 'text', text: rag.context }, ...citationLinks(pack)], structuredContent: { ...rag }, ...meta } };
        },
      },
    ],
    [
      'pack_candidates',
      {
        kind: 'pack',
        title: 'Pack candidates',
        description: TOOL_DESCRIPTIONS.pack_candidates,
        input: schemas.pack,
        output: PackSchema,
        queryOf: (args) => args.query as string,
        // The candidates are the caller's own: nothing in the store to link to.
        call: async (args: z.output<typeof schemas.pack>, context) => {
          const pack = await servePack(args, context);
          return packAnswer(pack, packJson(pack), false);
        },
      },
    ],
    [
      'verify_citations',
      {
        title: 'Verify citations',
        description: TOOL_DESCRIPTIONS.verify_citations,
        input: schemas.verify,
        output: VerifyAnswerSchema,
        queryOf: () => undefined,
        call: async (args: z.output<typeof schemas.verify>, context) => {
          const answer = await serveVerify(args, context);
          const lines = answer.checks.map((check) => `${check.ref === null ? '-' : `[${check.ref}]`} ${check.sourceId}: ${check.status}`);
          return { result: { content: [{ type: 'text' as const, text: lines.join('\n') }], structuredContent: { ...answer } } };
        },
      },
    ],
  ]);
}

/** The JSON Schemas the tools are listed with, built once. */
function listingOf(tools: Map<string, Tool>) {
  // As the SDK lists zod schemas: draft-07, inputs as they are sent, outputs as they are answered.
  const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'draft-7', io }) as Record<string, unknown>;
  return [...tools].map(([name, tool]) => ({
    name,
    title: tool.title,
    description: tool.description,
    inputSchema: { ...json(tool.input, 'input'), type: 'object' as const },
    // A refusal's structured content is the error body: the schema says so, so a client validating every
    // structured result accepts both.
    outputSchema: { type: 'object' as const, ...json(z.union([tool.output, ErrorBodySchema]), 'output') },
    annotations: READ_ONLY,
  }));
}

/**
 * An MCP server with the litm-pack tools and the corpus as resources, over `store`. Connect it to a transport
 * (stdio, Streamable HTTP).
 *
 * @example
 * const server = createMcpServer({ store: await MemoryHybridStore.load('.litm-store/store.json') });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(input: McpServerOptions): Server {
  const options = parseOrThrow(McpServerOptionsSchema, input, 'MCP server options');
  return mcpServers(options)({ principals: options.principals, ...(options.onToolCall === undefined ? {} : { onToolCall: options.onToolCall }) });
}

/** What differs between the callers of one set of tools: whom they act for, and who hears of each call. */
export interface McpCaller {
  principals: Principals | readonly string[];
  onToolCall?: (event: ToolCallEvent) => void;
}

/**
 * The options checked, the limits resolved and the tools and their schemas built once; then one MCP server per
 * caller (the HTTP route makes one per request, bound to the caller's principals).
 */
export function createMcpServers(input: Omit<McpServerOptions, 'principals' | 'onToolCall'>): (caller: McpCaller) => Server {
  return mcpServers(parseOrThrow(McpServerOptionsSchema, input, 'MCP server options'));
}

function mcpServers(options: z.output<typeof McpServerOptionsSchema>): (caller: McpCaller) => Server {
  const limits = resolveLimits(options.limits);
  const tools = toolsOf(limits);
  const listing = listingOf(tools);
  return (caller) => protocolServer(options, tools, listing, caller, limits.maxPool);
}

function protocolServer(
  options: z.output<typeof McpServerOptionsSchema>,
  tools: Map<string, Tool>,
  listing: ReturnType<typeof listingOf>,
  caller: McpCaller,
  maxPool: number,
): Server {
  const principals: Principals = caller.principals === 'all' ? 'all' : [...caller.principals];
  const context: ServiceContext = {
    store: options.store,
    principals,
    maxPool,
    ...(options.embeddings === undefined ? {} : { embeddings: options.embeddings }),
    ...(options.rerank === undefined ? {} : { rerank: options.rerank }),
  };
  // Nothing here changes while a session lasts: no list_changed notifications are ever sent, so none are offered.
  const server = new Server(
    { name: 'litm-pack', version: packageVersion() },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false } } },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: raw } = request.params;
    const tool = tools.get(name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found: the tools are ${[...tools.keys()].join(', ')}`);
    const started = performance.now();
    const args = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const query = typeof tool.queryOf(args) === 'string' ? tool.queryOf(args) : undefined;
    try {
      const parsed = parseRequest(tool.input, raw ?? {});
      const { pack, result } = await tool.call(parsed as never, { ...context, signal: extra.signal });
      const mode = tool.kind === 'pack' ? undefined : SearchModeSchema.safeParse((parsed as { mode?: unknown }).mode).data;
      caller.onToolCall?.({
        tool: name,
        ...(pack === undefined ? {} : { pack }),
        ...(pack === undefined || tool.kind === undefined ? {} : { kind: tool.kind }),
        ...(mode === undefined ? {} : { mode }),
        ...(query === undefined ? {} : { query }),
        latencyMs: performance.now() - started,
      });
      return result;
    } catch (error) {
      // The caller's own cancellation is the protocol's business, not a tool error.
      if (extra.signal.aborted && !isLitmPackError(error)) throw error;
      const { body, ...result } = errorResult(error);
      caller.onToolCall?.({ tool: name, code: body.code, ...(query === undefined ? {} : { query }), latencyMs: performance.now() - started });
      return result;
    }
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: SOURCE_TEMPLATE,
        name: 'source',
        title: 'A source of the corpus',
        description:
          'The text of a source you may read (source ids as citations name them, percent-encoded), or one chunk of it (chunk: a citation\'s chunkId), or a span (start, end: a citation\'s span). A source you may not read is not found, as one that does not exist.',
        mimeType: 'text/plain',
      },
    ],
  }));

  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const page = await asProtocolError(() => listSources(options.store, principals, request.params?.cursor, extra.signal));
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

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const read = await asProtocolError(() => readSource(options.store, uri, principals, extra.signal));
    return { contents: [{ uri, mimeType: 'text/plain', text: read.text }] };
  });

  return server;
}

/** JSON-RPC error codes of resource requests: MCP's "resource not found", else invalid params or internal. */
const RESOURCE_NOT_FOUND = -32002;

/** Runs a resource request; its typed errors become the protocol errors MCP defines for resources. */
async function asProtocolError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isLitmPackError(error)) throw error;
    const { body } = errorAnswer(error);
    const code = error.code === 'not_found' ? RESOURCE_NOT_FOUND : errorAnswer(error).status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError;
    throw new McpError(code, body.error, body satisfies z.input<typeof ErrorBodySchema>);
  }
}
