/**
 * The MCP tools: each one parses with the service's schema (the SDK validates the arguments against it and
 * advertises it as the tool's input schema), calls the service, and answers a text block plus
 * `structuredContent` that validates against the declared output schema. Errors answer `isError` with the
 * same `{ error, code, issues }` body as the HTTP API.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { toCanonicalJson } from '../core/pack.js';
import { PackSchema, type Pack } from '../core/schemas.js';
import { RerankStageSchema } from '../refine/stages.js';
import { EmbeddingsSchema } from '../retrieve/schemas.js';
import { errorAnswer, parseRequest, type ErrorBody } from '../service/errors.js';
import { resolveLimits, type ServiceLimits, type ServiceLimitsInput } from '../service/limits.js';
import { bundleRequestShape, requestSchemas } from '../service/requests.js';
import { RagContextSchema, VerifyAnswerSchema } from '../service/responses.js';
import { packageVersion } from '../service/version.js';
import { serveBriefing, serveBundle, servePack, serveVerify, ragContextOf, type ServiceContext } from '../service/service.js';
import { StoreSchema } from '../retrieve/schemas.js';

export const McpServerOptionsSchema = z.strictObject({
  store: StoreSchema,
  /**
   * What this server's caller may read: documents without an ACL, and those whose ACL names one of these.
   * Default `[]`: documents without an ACL only.
   */
  principals: z.array(z.string().min(1)).readonly().default([]),
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
  /** Called after every tool call (the HTTP server's request log uses it). */
  onToolCall: z.custom<(event: ToolCallEvent) => void>((value) => typeof value === 'function', { message: 'onToolCall must be a function' }).optional(),
});
export type McpServerOptions = z.input<typeof McpServerOptionsSchema>;

/** What one tool call did, for request logs. */
export interface ToolCallEvent {
  tool: string;
  /** Absent when the call failed. */
  pack?: Pack;
  /** The error code when the call failed. */
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
  const { query, budget, mode, filter, limit, diversity, rerank, compress } = bundleRequestShape(limits);
  return z.strictObject({
    query,
    max_tokens: budget.describe('Token budget of the context (exact).'),
    limit,
    filter,
    mode,
    diversity,
    rerank,
    compress,
  });
}

/**
 * get_rag_context's answer holds exactly context, hits, token_estimate and truncated; when an optional stage
 * (reranker, sentence embeddings) failed and was bypassed, the result's `_meta` carries `pack.degraded` under
 * this key.
 */
export const DEGRADED_META_KEY = 'litm-pack/degraded';

function errorResult(error: unknown): CallToolResult & { body: ErrorBody } {
  const { body } = errorAnswer(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], body };
}

/** The structured content of a pack: the pack itself, as plain JSON. */
const structured = (pack: Pack) => JSON.parse(toCanonicalJson(pack)) as Record<string, unknown>;

/**
 * An MCP server with the litm-pack tools over `store`. Connect it to a transport (stdio, Streamable HTTP).
 *
 * @example
 * const server = createMcpServer({ store: await MemoryHybridStore.load('.litm-store/store.json') });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(input: McpServerOptions): McpServer {
  const options = parseOrThrow(McpServerOptionsSchema, input, 'MCP server options');
  return mcpServers(options)({ principals: options.principals, ...(options.onToolCall === undefined ? {} : { onToolCall: options.onToolCall }) });
}

/** What differs between the callers of one set of tools: whom they act for, and who hears of each call. */
export interface McpCaller {
  principals: readonly string[];
  onToolCall?: (event: ToolCallEvent) => void;
}

/**
 * The options checked, the limits resolved and the argument schemas built once; then one MCP server per
 * caller (the HTTP route makes one per request, bound to the caller's principals).
 */
export function createMcpServers(input: Omit<McpServerOptions, 'principals' | 'onToolCall'>): (caller: McpCaller) => McpServer {
  return mcpServers(parseOrThrow(McpServerOptionsSchema, input, 'MCP server options'));
}

function mcpServers(options: z.output<typeof McpServerOptionsSchema>): (caller: McpCaller) => McpServer {
  const limits = resolveLimits(options.limits);
  const schemas = requestSchemas(limits);
  const ragSchema = ragContextSchema(limits);
  return (caller) => toolServer(options, limits, schemas, ragSchema, caller);
}

function toolServer(
  options: z.output<typeof McpServerOptionsSchema>,
  limits: ServiceLimits,
  schemas: ReturnType<typeof requestSchemas>,
  ragSchema: ReturnType<typeof ragContextSchema>,
  caller: McpCaller,
): McpServer {
  const context: ServiceContext = {
    store: options.store,
    principals: [...caller.principals],
    ...(options.embeddings === undefined ? {} : { embeddings: options.embeddings }),
    ...(options.rerank === undefined ? {} : { rerank: options.rerank }),
  };
  const server = new McpServer({ name: 'litm-pack', version: packageVersion() });

  /** Runs one tool call: the service, the result, the event. */
  const run = async (tool: string, query: string | undefined, body: () => Promise<{ pack?: Pack; result: CallToolResult }>) => {
    const started = performance.now();
    try {
      const { pack, result } = await body();
      caller.onToolCall?.({ tool, ...(pack === undefined ? {} : { pack }), ...(query === undefined ? {} : { query }), latencyMs: performance.now() - started });
      return result;
    } catch (error) {
      const result = errorResult(error);
      caller.onToolCall?.({ tool, code: result.body.code, ...(query === undefined ? {} : { query }), latencyMs: performance.now() - started });
      const { body: _body, ...toolResult } = result;
      return toolResult;
    }
  };

  server.registerTool(
    'assemble_bundle',
    { title: 'Assemble a cited context bundle', description: TOOL_DESCRIPTIONS.assemble_bundle, inputSchema: schemas.bundle, outputSchema: PackSchema, annotations: { readOnlyHint: true, openWorldHint: false } },
    (args) =>
      run('assemble_bundle', args.query, async () => {
        const pack = await serveBundle(args, context);
        return { pack, result: { content: [{ type: 'text', text: pack.context }], structuredContent: structured(pack) } };
      }),
  );

  server.registerTool(
    'get_briefing',
    { title: 'Get a task briefing', description: TOOL_DESCRIPTIONS.get_briefing, inputSchema: schemas.briefing, outputSchema: PackSchema, annotations: { readOnlyHint: true, openWorldHint: false } },
    (args) =>
      run('get_briefing', args.prompt, async () => {
        const pack = await serveBriefing(args, context, limits);
        return { pack, result: { content: [{ type: 'text', text: pack.context }], structuredContent: structured(pack) } };
      }),
  );

  server.registerTool(
    'get_rag_context',
    { title: 'Get RAG context', description: TOOL_DESCRIPTIONS.get_rag_context, inputSchema: ragSchema, outputSchema: RagContextSchema, annotations: { readOnlyHint: true, openWorldHint: false } },
    (args) =>
      run('get_rag_context', args.query, async () => {
        const { max_tokens, ...rest } = args;
        const pack = await serveBundle(parseRequest(schemas.bundle, { ...rest, budget: max_tokens }), context);
        const rag = ragContextOf(pack);
        // The answer is exactly its four fields; stages that degraded are told beside it, in _meta.
        const meta = pack.degraded.length === 0 ? {} : { _meta: { [DEGRADED_META_KEY]: pack.degraded } };
        return { pack, result: { content: [{ type: 'text', text: rag.context }], structuredContent: { ...rag }, ...meta } };
      }),
  );

  server.registerTool(
    'pack_candidates',
    { title: 'Pack candidates', description: TOOL_DESCRIPTIONS.pack_candidates, inputSchema: schemas.pack, outputSchema: PackSchema, annotations: { readOnlyHint: true, openWorldHint: false } },
    (args) =>
      run('pack_candidates', args.query, async () => {
        const pack = await servePack(args, context);
        return { pack, result: { content: [{ type: 'text', text: toCanonicalJson(pack) }], structuredContent: structured(pack) } };
      }),
  );

  server.registerTool(
    'verify_citations',
    { title: 'Verify citations', description: TOOL_DESCRIPTIONS.verify_citations, inputSchema: schemas.verify, outputSchema: VerifyAnswerSchema, annotations: { readOnlyHint: true, openWorldHint: false } },
    (args) =>
      run('verify_citations', undefined, async () => {
        const answer = await serveVerify(args, context);
        const lines = answer.checks.map((check) => `${check.ref === null ? '-' : `[${check.ref}]`} ${check.sourceId}: ${check.status}`);
        return { result: { content: [{ type: 'text' as const, text: lines.join('\n') }], structuredContent: { ...answer } } };
      }),
  );

  return server;
}
