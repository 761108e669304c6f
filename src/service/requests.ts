/**
 * The requests the HTTP API and the MCP tools accept, as zod schemas built from the configured limits.
 * Parameter names are the callers' (snake_case, as on the wire); every message names the parameter as the
 * caller spelled it (`budget must be a whole number`), because it is built from the issue's own path.
 */
import { z } from 'zod';
import {
  CandidateSchema,
  DEFAULT_HEADER,
  EncodingSchema,
  FormatSchema,
  HeaderSchema,
  OrderSchema,
  TimestampSchema,
} from '../core/schemas.js';
import { SEARCH_MODES } from '../store/schemas.js';

import { VerifiableCitationSchema, VerifiablePackSchema } from '../verify/verify.js';
import type { ServiceLimits } from './limits.js';

type RawIssue = { path?: readonly PropertyKey[] | undefined; input?: unknown };

/** The parameter an issue is about, as the caller spelled it (`budget`, `candidates.3.score`). */
function nameOf(issue: RawIssue): string {
  const path = issue.path ?? [];
  return path.length === 0 ? 'the request' : path.map(String).join('.');
}

/** An error message that starts with the parameter's name; a missing value says it is required. */
export function says(text: string) {
  return {
    error: (issue: RawIssue) => (issue.input === undefined ? `${nameOf(issue)} is required` : `${nameOf(issue)} ${text}`),
  };
}

export const oneOf = (values: readonly string[]) => says(`must be one of ${values.join(', ')}`);

const SCOPE_MODES = ['prefer', 'strict'] as const;
const COMPRESS_MODES = ['none', 'sentences'] as const;
const PACK_KINDS = ['bundle', 'briefing'] as const;

// zod 4's number() rejects Infinity and NaN already.
const number = () => z.number(says('must be a number'));

/** MMR in the store's search. */
const diversity = () =>
  number()
    .min(0, says('must be between 0 and 1'))
    .max(1, says('must be between 0 and 1'))
    .optional()
    .describe(
      "Maximal marginal relevance over the pool's dense vectors: 0 (or absent) = pure relevance, 1 = maximum diversity. Needs a store with embeddings; otherwise refused (unsupported).",
    );

function text(limits: ServiceLimits, missing?: string) {
  return z
    .string(
      missing === undefined
        ? says('must be a string')
        : { error: (issue: RawIssue) => (issue.input === undefined ? missing : `${nameOf(issue)} must be a string`) },
    )
    .max(limits.maxQueryChars, says(`must be at most ${limits.maxQueryChars} characters`))
    .refine((value) => value.trim().length > 0, says('must not be empty'));
}

function wholeNumber(min: number, max: number) {
  return z
    .number(says('must be a whole number'))
    .int(says('must be a whole number'))
    .min(min, says(`must be at least ${min}`))
    .max(max, says(`must be at most ${max}`));
}

function stringList(max: number, what: string) {
  return z
    .array(z.string(says('must be a string')).min(1, says('must not be empty')), says(`must be a list of ${what}`))
    .max(max, says(`must list at most ${max} ${what}`));
}

/** Parameters every request that searches the store takes. */
function retrievalShape(limits: ServiceLimits) {
  return {
    mode: z
      .enum(SEARCH_MODES, oneOf(SEARCH_MODES))
      .default('hybrid')
      .describe('Search mode: hybrid (dense + BM25 fused), dense or lexical (BM25).'),
    filter: z
      .record(
        z.string(),
        z.unknown(),
        says('must be a filter object in Qdrant form, e.g. {"must":[{"key":"sourceId","match":{"value":"a.md"}}]}'),
      )
      .optional()
      .describe("Payload filter in Qdrant's filter language (the subset both stores implement)."),
    limit: wholeNumber(1, limits.maxPool)
      .default(limits.defaultPool)
      .describe('Candidate pool: how many chunks to retrieve before packing.'),
    diversity: diversity(),
    rerank: z
      .boolean(says('must be true or false'))
      .optional()
      .describe(
        "Rerank the top of the pool with the server's reranker: on by default when the server has one, false turns it off; true on a server without one is refused (unsupported). A reranker that fails or times out is bypassed and reported in pack.degraded.",
      ),
  };
}

/** The context's format and tokenizer when a request names none (and always, for `get_rag_context`). */
export const CONTEXT_DEFAULTS = Object.freeze({ format: 'markdown', encoding: 'o200k_base' } as const);

/** Packing parameters of every request. */
function packingShape(defaultBudget: number, maxBudget: number) {
  return {
    budget: wholeNumber(1, maxBudget)
      .default(defaultBudget)
      .describe('Token budget: the context never has more tokens than this (exact, counted with encoding).'),
    format: z
      .enum(FormatSchema.options, oneOf(FormatSchema.options))
      .default(CONTEXT_DEFAULTS.format)
      .describe('Format of the context text.'),
    header: z
      .enum(HeaderSchema.options, oneOf(HeaderSchema.options))
      .default(DEFAULT_HEADER)
      .describe(
        "What each block's header shows: full (title, source, version, section, locator), compact (title or source, locator) or minimal (title or source). The citations keep every field.",
      ),
    encoding: z
      .enum(EncodingSchema.options, oneOf(EncodingSchema.options))
      .default(CONTEXT_DEFAULTS.encoding)
      .describe('Tokenizer the budget is counted with.'),
    max_per_source: wholeNumber(1, 10_000).optional().describe('At most this many items from one source.'),
    min_score: number().optional().describe('Candidates scoring below this are dropped (reason below-min-score).'),
    compress: z
      .enum(COMPRESS_MODES, oneOf(COMPRESS_MODES))
      .default('none')
      .describe(
        'sentences: keep only the sentences of each item most relevant to the query, in order, joined by " … ", each cited by its exact span (BM25, blended with sentence vectors when the server has embeddings); none: whole items.',
      ),
  };
}

/** A bundle's block order (a briefing's order is its zones). */
function order() {
  return z
    .enum(OrderSchema.options, oneOf(OrderSchema.options))
    .describe(
      "Order of the blocks: litm (best first, second best last; the default), document (sources by their best item, a source's items in span order), chronological (by timestamp, oldest first) or rank (best first, straight down).",
    );
}

const unit = () => number().gt(0, says('must be greater than 0')).max(1, says('must be at most 1'));
const similarity = () => number().min(-1, says('must be between -1 and 1')).max(1, says('must be between -1 and 1'));

export function bundleRequestShape(limits: ServiceLimits) {
  return {
    query: text(limits).describe('What to find context for.'),
    ...retrievalShape(limits),
    ...packingShape(limits.bundleDefaultBudget, limits.bundleMaxBudget),
    order: order().default('litm'),
  };
}

/**
 * The HTTP API's `q`, which says it is missing as the Wikantik contract words it: `q (query) parameter
 * required` (the code stays `invalid_input`, with the issue on `q`).
 */
export function httpQueryParameter(limits: ServiceLimits) {
  return text(limits, 'q (query) parameter required').describe('What to find context for.');
}

/**
 * `get_rag_context`'s arguments (maildb's contract): a bundle's, with the budget spelled `max_tokens`, and
 * maildb's defaults (`max_tokens` 4000, `limit` 20) unless the server configures others.
 */
function ragRequestShape(limits: ServiceLimits) {
  const {
    query,
    budget: _budget,
    limit: _limit,
    format: _format,
    encoding: _encoding,
    max_per_source: _maxPerSource,
    min_score: _minScore,
    ...rest
  } = bundleRequestShape(limits);
  return {
    query,
    max_tokens: wholeNumber(1, limits.bundleMaxBudget).default(limits.ragDefaultBudget).describe('Token budget of the context (exact).'),
    limit: wholeNumber(1, limits.maxPool)
      .default(limits.ragDefaultPool)
      .describe('Candidate pool: how many chunks to retrieve before packing.'),
    ...rest,
  };
}

/**
 * `corpus_briefing_pack`'s arguments (RFC-093): a briefing whose prompt is `query`, its budget spelled
 * `max_tokens`; pins, clusters and the rest as `get_briefing` takes them.
 */
function corpusBriefingRequestShape(limits: ServiceLimits) {
  const { prompt: _prompt, budget: _budget, ...rest } = briefingRequestShape(limits);
  return {
    query: text(limits).describe('What the briefing is for (its prompt).'),
    max_tokens: wholeNumber(1, limits.briefingMaxBudget)
      .default(limits.briefingDefaultBudget)
      .describe('Token budget of the briefing (exact).'),
    ...rest,
  };
}

/** The statuses of a served citation that has gone stale (`verifyCitations`' statuses but `current`). */
export const STALE_STATUSES = ['changed', 'moved', 'missing'] as const;

/** The stale feed: served citations whose status is now changed, moved or missing, newest first. */
export function staleRequestShape(limits: ServiceLimits) {
  const status = z.enum(STALE_STATUSES, oneOf(STALE_STATUSES));
  return {
    since: TimestampSchema.optional().describe(
      'Only citations served at or after this time (ISO 8601, e.g. 2026-07-01 or 2026-07-01T09:00:00Z).',
    ),
    status: z
      .union(
        [status, z.array(status, says(`must be a list of ${STALE_STATUSES.join(', ')}`)).min(1, says('must not be empty'))],
        oneOf(STALE_STATUSES),
      )
      .optional()
      .describe('Only these statuses (one, or a list); default all three.'),
    limit: wholeNumber(1, limits.maxStalePage).default(limits.defaultStalePage).describe('Citations per page.'),
    cursor: z
      .string(says('must be a string'))
      .max(2000, says('must be a cursor this server gave'))
      .optional()
      .describe('The nextCursor of the page before.'),
  };
}

export function briefingRequestShape(limits: ServiceLimits) {
  return {
    prompt: text(limits).optional().describe('What the briefing is for; optional when pins or clusters are given.'),
    pins: stringList(limits.maxPins, 'pins')
      .optional()
      .describe('Source ids, chunk ids or ingested paths to put first, verbatim while they fit.'),
    clusters: stringList(limits.maxClusters, 'clusters').optional().describe('Named clusters to draw representative context from.'),
    scope_mode: z
      .enum(SCOPE_MODES, oneOf(SCOPE_MODES))
      .default('prefer')
      .describe('prefer: widen beyond pins and clusters with prompt results; strict: stay inside them.'),
    tier_weights: z
      .record(z.string(), number().min(0, says('must be at least 0')), says('must be an object of weights per kind'))
      .optional()
      .describe('Selection weight per tier (kind), e.g. {"insight": 1.2, "segment": 1}.'),
    ...retrievalShape(limits),
    ...packingShape(limits.briefingDefaultBudget, limits.briefingMaxBudget),
  };
}

export function packRequestShape(limits: ServiceLimits) {
  return {
    query: text(limits).describe('The query the pack answers.'),
    candidates: z
      .array(CandidateSchema, says('must be a list of candidates'))
      .max(limits.maxCandidates, says(`must hold at most ${limits.maxCandidates} candidates`))
      .describe('Candidates to pack (the Candidate shape: id, text, score, sourceId?, similarity?, ...).'),
    kind: z
      .enum(PACK_KINDS, oneOf(PACK_KINDS))
      .default('bundle')
      .describe('bundle (Lost-in-the-Middle order) or briefing (grounding, evidence, caveats).'),
    rerank: z
      .boolean(says('must be true or false'))
      .optional()
      .describe(
        "Rerank the candidates with the server's reranker first (off by default, so the same input always gives the same bytes); true on a server without one is refused (unsupported).",
      ),
    pins: stringList(limits.maxPins, 'pins').optional().describe('Briefing: source or chunk ids that open the grounding zone.'),
    ...packingShape(limits.packDefaultBudget, limits.packMaxBudget),
    order: order().optional(),
    compress: z
      .enum(COMPRESS_MODES, oneOf(COMPRESS_MODES))
      .default('none')
      .describe(
        'sentences: keep only the sentences of each item most relevant to the query (BM25 alone, so the same input always gives the same bytes); none: whole items.',
      ),
    dedupe: z
      .union(
        [
          z.literal(false),
          z.strictObject({
            near_duplicate_threshold: unit().optional(),
            containment_threshold: unit().optional(),
            shingle_size: wholeNumber(1, 16).optional(),
          }),
        ],
        says('must be false or an object {near_duplicate_threshold?, containment_threshold?, shingle_size?}'),
      )
      .optional()
      .describe('Near-duplicate detection thresholds; false turns it off.'),
    coverage: z
      .strictObject({
        strong: similarity().optional(),
        strong_min_items: wholeNumber(1, 10_000).optional(),
        partial: similarity().optional(),
      })
      .refine((t) => t.partial === undefined || t.strong === undefined || t.partial <= t.strong, {
        error: (issue: RawIssue) => `${nameOf(issue)}.partial must be at most ${nameOf(issue)}.strong`,
      })
      .optional()
      .describe('Similarity thresholds of the coverage confidence (strong, strong_min_items, partial).'),
  };
}

export function rankingsRequestShape(limits: ServiceLimits) {
  const { mode, filter } = retrievalShape(limits);
  return {
    query: text(limits).describe('What to rank chunks for.'),
    mode,
    filter,
    diversity: diversity(),
    k: wholeNumber(1, limits.maxRankingsDepth).default(limits.defaultRankingsDepth).describe("Depth of each arm's ranking."),
  };
}

export function verifyRequestShape(limits: ServiceLimits) {
  return {
    pack: VerifiablePackSchema.optional().describe(
      'A pack (its citations are checked), e.g. the canonical JSON an earlier request returned.',
    ),
    citations: z
      .array(VerifiableCitationSchema, says('must be a list of citations'))
      .max(limits.maxCandidates, says(`must hold at most ${limits.maxCandidates} citations`))
      .optional()
      .describe('Or the citations alone.'),
  };
}

/** The request schemas for one set of limits (built once per server). */
export function requestSchemas(limits: ServiceLimits) {
  return {
    bundle: z.strictObject(bundleRequestShape(limits)),
    briefing: z.strictObject(briefingRequestShape(limits)),
    pack: z.strictObject(packRequestShape(limits)),
    rankings: z.strictObject(rankingsRequestShape(limits)),
    verify: z.strictObject(verifyRequestShape(limits)),
    rag: z.strictObject(ragRequestShape(limits)),
    corpusBriefing: z.strictObject(corpusBriefingRequestShape(limits)),
    stale: z.strictObject(staleRequestShape(limits)),
  };
}
export type RequestSchemas = ReturnType<typeof requestSchemas>;

export type BundleRequest = z.output<RequestSchemas['bundle']>;
export type BriefingRequest = z.output<RequestSchemas['briefing']>;
export type PackRequest = z.output<RequestSchemas['pack']>;
export type RankingsRequest = z.output<RequestSchemas['rankings']>;
export type VerifyRequest = z.output<RequestSchemas['verify']>;
export type RagRequest = z.output<RequestSchemas['rag']>;
export type CorpusBriefingRequest = z.output<RequestSchemas['corpusBriefing']>;
export type StaleRequest = z.output<RequestSchemas['stale']>;
