/**
 * The MCP tools: one registry, served on every protocol revision (protocol.ts binds it to the SDK). Each tool
 * parses its arguments with the service's schema (the same messages as the HTTP API, naming each argument as
 * sent), calls the service, and answers structured content that validates against the output schema it
 * declares, a text block a model can route on when its host shows only text (the context and a trailer with
 * the confidence and the citations, text.ts), and a `resource_link` per citation. Every refusal, whatever
 * refuses it, is one shape: `isError` with `{ error, code, issues }` as structured content and as the text.
 */
import { z } from 'zod';
import { ServedStoreOptionsShape } from '../service/options.js';
import { packJson } from '../core/finish.js';
import { FormatSchema, PackSchema, type Pack, type PackFormat } from '../core/schemas.js';
import { invalidInput } from '../base/errors.js';
import type { Granularity } from '../llm/units.js';
import { AnthropicSearchResultSchema, GranularitySchema, searchResultsOf } from '../service/anthropic.js';
import { PrincipalsSchema, type SearchMode } from '../store/schemas.js';
import type { ServiceLimits } from '../service/limits.js';
import { CONTEXT_DEFAULTS, oneOf, requestSchemas } from '../service/requests.js';
import { ErrorBodySchema, RagContextSchema, RankingsSchema, StaleAnswerSchema, VerifyAnswerSchema } from '../service/responses.js';
import {
  serveBriefing,
  serveBundle,
  serveCorpusBriefing,
  servePack,
  serveRagContext,
  serveRankings,
  serveVerify,
  type ServiceContext,
} from '../service/service.js';
import { serveStale } from '../service/stale.js';
import { citationUri } from './resources.js';
import { packText } from './text.js';

export const McpServerOptionsSchema = z.strictObject({
  ...ServedStoreOptionsShape,
  /**
   * What this server's caller may read: documents without an ACL, and those whose ACL names one of these;
   * `'all'` for every document (a trusted local agent). Default `[]`: documents without an ACL only.
   */
  principals: PrincipalsSchema.default([]),
  /** Who this server's caller is in the ledger (default `mcp`). */
  caller: z.string().min(1, 'caller must be a non-empty string').default('mcp'),
  /** Called after every tool call, refused ones too (the HTTP server's request log uses it). */
  onToolCall: z
    .custom<(event: ToolCallEvent) => void>((value) => typeof value === 'function', { message: 'onToolCall must be a function' })
    .optional(),
});
export type McpServerOptions = z.input<typeof McpServerOptionsSchema>;
export type ParsedMcpServerOptions = z.output<typeof McpServerOptionsSchema>;

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
  'Read coverage.confidence before you answer (also on the "litm-pack:" line after the context): "strong" → answer from the context and cite blocks as [n]; ' +
  '"partial" or "weak" → the corpus may not hold the answer: widen the search (rephrase, another mode, a larger budget) or ask the user; ' +
  '"unknown" → there is no dense similarity (lexical search only): judge the passages yourself.';

export const TOOL_DESCRIPTIONS = {
  assemble_bundle:
    'Retrieve the passages that best ground an answer to `query`, deduplicated and fitted exactly to `budget` tokens, ' +
    'best passage first and second best last, each block numbered [n]; returns the context as text (followed by a ' +
    'line with the confidence and the list of citations) and the whole pack (items, citations with source, version ' +
    'and text hash, coverage, dropped, degraded) as structured content. ' +
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
  corpus_briefing_pack:
    "A briefing for `query` within `max_tokens` (RFC-093's corpus_briefing_pack): the strongest passages for the query, " +
    'the rest of the evidence, then a caveats block of computed facts; pins and clusters as get_briefing takes them. ' +
    `${CONFIDENCE_ROUTING} Do not use it to answer a single question: use assemble_bundle.`,
  get_rag_context:
    'One call for a retrieval-augmented prompt: returns exactly {context, hits, token_estimate, truncated}. `context` ' +
    'is at most `max_tokens` tokens (default 4000, from a pool of `limit` 20), ready to paste into a prompt, with blocks ' +
    'numbered [n]; `hits` names the source of each [n] (with message_id for an e-mail); `truncated` says relevant ' +
    'text did not fit. The text block also ends with a "litm-pack:" line carrying the confidence; when you must decide ' +
    'whether the corpus answers the question at all, use assemble_bundle and read coverage.confidence.',
  get_rankings:
    "For tuning retrieval, not for answering: each search arm's raw ranking (dense, lexical) beside the fused one, " +
    '`k` deep, under the same access rules as a bundle. Do not use it to ground an answer: use assemble_bundle.',
  verify_citations:
    'Check whether citations (or a whole pack\'s) still hold against the current corpus: each one is "current" (same ' +
    'text at the same place), "moved" (same text elsewhere in the source), "changed" (the passage is gone; the closest ' +
    'current passage is reported) or "missing" (the source is gone or you may not read it). Use it before trusting an ' +
    'old pack or answer; do not use it to retrieve (assemble_bundle).',
  list_stale_citations:
    'The citations this server handed out that have gone stale since: served in a pack, and now "changed", "moved" or ' +
    '"missing" in the corpus; newest first, a page at a time (give nextCursor as cursor), each with the packs that ' +
    'served it. Only citations of sources you may read. Use it to find answers grounded in text that no longer holds; ' +
    'to check one pack you have, use verify_citations.',
  pack_candidates:
    'Pack passages you already retrieved yourself into the canonical pack (deduplicated, budgeted, ordered, cited): ' +
    'the same input always gives the same bytes, for evaluation harnesses. It does not search: to retrieve from the ' +
    'corpus, use assemble_bundle.',
} as const;

/** How an agent chooses between the tools: the server's `instructions`. */
export const SERVER_INSTRUCTIONS =
  'litm-pack packs retrieved context from a corpus: extractive, deduplicated, fitted exactly to a token budget, ' +
  'every block numbered [n] and cited (source, version, text hash). To answer a question, call assemble_bundle and ' +
  'read coverage.confidence (also on the "litm-pack:" line after the context): strong → answer and cite [n]; partial or ' +
  'weak → widen the search or ask; unknown → lexical only, judge yourself. To prepare for a task, call get_briefing ' +
  '(or corpus_briefing_pack with query and max_tokens). For a context string to paste into a prompt, get_rag_context. ' +
  'To pack passages you already have, pack_candidates. Before trusting an old pack, verify_citations; to find served ' +
  'citations that went stale, list_stale_citations (when offered). get_rankings is for tuning retrieval only. The ' +
  'sources are resources (litm://sources/{sourceId}); every citation links to the chunk it cites.';

/** Every tool reads and never changes the corpus, gives the same answer for the same corpus, and reaches nothing outside it. */
const TOOL_ANNOTATIONS = Object.freeze({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });

/**
 * get_rag_context's answer holds exactly context, hits, token_estimate and truncated; when an optional stage
 * (reranker, sentence embeddings) failed and was bypassed, the result's `_meta` carries `pack.degraded` under
 * this key.
 */
export const DEGRADED_META_KEY = 'litm-pack/degraded';

/** A `resource_link` block, as MCP defines it. */
interface ResourceLinkBlock {
  type: 'resource_link';
  uri: string;
  name: string;
  mimeType: string;
  description: string;
}

/** What a tool answers, before it is put in the protocol's shape. */
interface ToolAnswer {
  /** The pack the call made (for the log, the metrics and the ledger). */
  pack?: Pack;
  structured: Record<string, unknown>;
  /** The text a model reads (`textContent: 'context'`). */
  text: string;
  links: ResourceLinkBlock[];
  meta?: Record<string, unknown>;
}

/** One tool: its listing and how a call with parsed arguments is answered. */
export interface Tool {
  title: string;
  kind?: ToolCallEvent['kind'];
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  queryOf(args: Record<string, unknown>): string | undefined;
  call(args: never, context: ServiceContext): Promise<ToolAnswer>;
}

/** The structured content of a pack: the pack itself, as plain JSON. */
const structured = (pack: Pack) => JSON.parse(packJson(pack)) as Record<string, unknown>;

/** A `resource_link` per citation: the cited chunk, readable with `resources/read`. */
function citationLinks(pack: Pack): ResourceLinkBlock[] {
  return pack.citations.map((citation) => ({
    type: 'resource_link' as const,
    uri: citationUri(citation),
    name: `[${citation.ref}] ${citation.title ?? citation.sourceId}`,
    mimeType: 'text/plain',
    description: `The passage cited as [${citation.ref}]: chunk ${citation.chunkId} of ${citation.sourceId}${citation.version === undefined ? '' : `, version ${citation.version}`}`,
  }));
}

const stringArg = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The tools over one set of limits; `list_stale_citations` only with a ledger. */
export function toolsOf(limits: ServiceLimits, options: { ledger: boolean }): Map<string, Tool> {
  const schemas = requestSchemas(limits);
  const packAnswer = (pack: Pack, links = true): ToolAnswer => ({
    pack,
    structured: structured(pack),
    text: packText(pack),
    links: links ? citationLinks(pack) : [],
  });
  // The packing tools also answer format "anthropic": the pack (its context in markdown) and its items as Anthropic
  // search_result blocks beside it, in the structured content's `search_results`.
  const anthropicShape = {
    format: z
      .enum([...FormatSchema.options, 'anthropic'], oneOf([...FormatSchema.options, 'anthropic']))
      .default(CONTEXT_DEFAULTS.format)
      .describe('Format of the context text; anthropic: markdown, and the items as Anthropic search_result blocks in search_results.'),
    granularity: GranularitySchema.optional(),
  };
  const packWithBlocks = PackSchema.extend({ search_results: z.array(AnthropicSearchResultSchema).optional() });
  /** The service request without the door's own fields, and the blocks to add (null: none asked for). */
  const splitFormat = <T extends { format: string; granularity?: Granularity | undefined }>(args: T) => {
    const { format, granularity, ...rest } = args;
    if (granularity !== undefined && format !== 'anthropic') {
      throw invalidInput('granularity goes with format anthropic (it says what each search_result text block holds)', ['granularity']);
    }
    const request = { ...rest, format: format === 'anthropic' ? CONTEXT_DEFAULTS.format : (format as PackFormat) };
    return { request, anthropic: format === 'anthropic', granularity };
  };
  const packingAnswer = async <T extends { format: string; granularity?: Granularity | undefined }>(
    args: T,
    serve: (request: Omit<T, 'format' | 'granularity'> & { format: PackFormat }) => Promise<Pack>,
  ): Promise<ToolAnswer> => {
    const { request, anthropic, granularity } = splitFormat(args);
    const answer = packAnswer(await serve(request));
    if (!anthropic || answer.pack === undefined) return answer;
    return { ...answer, structured: { ...answer.structured, search_results: searchResultsOf(answer.pack, granularity) } };
  };
  const tools = new Map<string, Tool>([
    [
      'assemble_bundle',
      {
        kind: 'bundle',
        title: 'Assemble a cited context bundle',
        description: TOOL_DESCRIPTIONS.assemble_bundle,
        input: schemas.bundle.extend(anthropicShape),
        output: packWithBlocks,
        queryOf: (args) => stringArg(args.query),
        call: async (args: z.output<typeof schemas.bundle> & { granularity?: Granularity }, context) =>
          packingAnswer(args, (request) => serveBundle(request, context)),
      },
    ],
    [
      'get_briefing',
      {
        kind: 'briefing',
        title: 'Get a task briefing',
        description: TOOL_DESCRIPTIONS.get_briefing,
        input: schemas.briefing.extend(anthropicShape),
        output: packWithBlocks,
        queryOf: (args) => stringArg(args.prompt),
        call: async (args: z.output<typeof schemas.briefing> & { granularity?: Granularity }, context) =>
          packingAnswer(args, (request) => serveBriefing(request, context, limits)),
      },
    ],
    [
      'corpus_briefing_pack',
      {
        kind: 'briefing',
        title: 'Corpus briefing pack',
        description: TOOL_DESCRIPTIONS.corpus_briefing_pack,
        input: schemas.corpusBriefing.extend(anthropicShape),
        output: packWithBlocks,
        queryOf: (args) => stringArg(args.query),
        call: async (args: z.output<typeof schemas.corpusBriefing> & { granularity?: Granularity }, context) =>
          packingAnswer(args, (request) => serveCorpusBriefing(request, context, limits)),
      },
    ],
    [
      'get_rag_context',
      {
        kind: 'bundle',
        title: 'Get RAG context',
        description: TOOL_DESCRIPTIONS.get_rag_context,
        input: schemas.rag,
        output: RagContextSchema,
        queryOf: (args) => stringArg(args.query),
        call: async (args: z.output<typeof schemas.rag>, context) => {
          const { rag, pack } = await serveRagContext(args, context);
          // The answer is exactly its four fields; stages that degraded are told beside it, in _meta.
          return {
            pack,
            structured: { ...rag },
            text: packText(pack),
            links: citationLinks(pack),
            ...(pack.degraded.length === 0 ? {} : { meta: { [DEGRADED_META_KEY]: pack.degraded } }),
          };
        },
      },
    ],
    [
      'get_rankings',
      {
        title: 'Get the raw rankings',
        description: TOOL_DESCRIPTIONS.get_rankings,
        input: schemas.rankings,
        output: RankingsSchema,
        queryOf: (args) => stringArg(args.query),
        call: async (args: z.output<typeof schemas.rankings>, context) => {
          const rankings = await serveRankings(args, context);
          const arm = (name: string, ranked: { id: string; sourceId: string; score: number; position: number }[] | null) =>
            ranked === null
              ? [`${name}: did not run`]
              : [`${name}:`, ...ranked.map((r) => `${r.position}. ${r.sourceId} ${r.id} ${r.score}`)];
          const text = [
            `mode ${rankings.mode}`,
            ...arm('fused', rankings.fused),
            ...arm('dense', rankings.dense),
            ...arm('lexical', rankings.lexical),
          ].join('\n');
          return { structured: { ...rankings }, text, links: [] };
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
        queryOf: (args) => stringArg(args.query),
        // The candidates are the caller's own: nothing in the store to link to.
        call: async (args: z.output<typeof schemas.pack>, context) => packAnswer(await servePack(args, context), false),
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
          return { structured: { ...answer }, text: lines.join('\n'), links: [] };
        },
      },
    ],
  ]);
  if (options.ledger) {
    tools.set('list_stale_citations', {
      title: 'List stale citations',
      description: TOOL_DESCRIPTIONS.list_stale_citations,
      input: schemas.stale,
      output: StaleAnswerSchema,
      queryOf: () => undefined,
      call: async (args: z.output<typeof schemas.stale>, context) => {
        const answer = await serveStale(args, context, limits);
        const lines = answer.citations.map(
          (c) =>
            `${c.status} ${c.sourceId} ${c.chunkId}${c.citedVersion === null ? '' : ` (cited ${c.citedVersion}${c.currentVersion === null ? '' : `, now ${c.currentVersion}`})`} served ${c.servedCount}× last ${c.lastServedAt}`,
        );
        const summary = `${answer.citations.length} stale citation${answer.citations.length === 1 ? '' : 's'} (${answer.checked} checked)${answer.nextCursor === null ? '' : `; more: cursor ${answer.nextCursor}`}`;
        return { structured: { ...answer }, text: [...lines, summary].join('\n'), links: [] };
      },
    });
  }
  return tools;
}

/** The tools as `tools/list` lists them (JSON Schemas built once). */
export function listingOf(tools: Map<string, Tool>) {
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
    annotations: { title: tool.title, ...TOOL_ANNOTATIONS },
  }));
}
