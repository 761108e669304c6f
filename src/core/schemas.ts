import { z } from 'zod';
import { ENCODINGS, type Tokenizer } from '../tokenize/types.js';
import { BoundedCache } from '../base/bounded-cache.js';
import { BoundedMetadataSchema } from '../base/metadata.js';
import { FORMATS, HEADER_STYLES, ZONE_ROLES } from '../render/formats.js';

export const PACK_SCHEMA_ID = 'litm-pack/pack@1' as const;

/** Upper limit on `maxTokens`; larger than any model's context today, small enough to catch unit mistakes. */
export const MAX_BUDGET_TOKENS = 2_000_000;

const finite = () => z.number().refine(Number.isFinite, { message: 'must be a finite number' });

export const SpanSchema = z
  .object({ start: z.number().int().nonnegative(), end: z.number().int().nonnegative() })
  .refine((span) => span.end >= span.start, { message: 'span.end must be >= span.start' });
export type Span = z.infer<typeof SpanSchema>;

const positiveInt = z.number().int().positive();
const seconds = z.number().refine(Number.isFinite, { message: 'must be a finite number' }).pipe(z.number().min(0));

/**
 * A printed page label (PDF /PageLabels: `iv`, `A-3`, `Appendix 2`): letters, digits, marks, dashes, dots and
 * spaces, at most 32 characters. Nothing a rendered header would have to escape, and no bracket that could forge
 * a `[n]` block.
 */
export const PAGE_LABEL = /^[\p{L}\p{N}\p{M}](?:[\p{L}\p{N}\p{M}\p{Pd}. ]{0,31})$/u;

/**
 * Where a chunk sits in its source, as the source kind has it: `page` (1-based; a chunk's first page) and its
 * printed `label` when the document numbers its pages otherwise (`iv`, `A-3`), `lines` ([start, end], 1-based,
 * inclusive), `time` ([startSeconds, endSeconds]). Every field is optional and absent fields are left out of the
 * canonical JSON, so chunks without a locator (or without a label) read and hash as before.
 */
export const LocatorSchema = z.strictObject({
  page: positiveInt.optional(),
  // A refinement, not a `pattern`: JSON Schema validators outside JavaScript (Python's `re`) read no `\p{L}`.
  label: z
    .string()
    .max(32)
    .refine((label) => PAGE_LABEL.test(label), { message: 'a page label is letters, digits, dashes, dots and spaces (at most 32)' })
    .optional(),
  lines: z
    .tuple([positiveInt, positiveInt])
    .refine(([start, end]) => end >= start, { message: 'lines end must be >= start' })
    .optional(),
  time: z
    .tuple([seconds, seconds])
    .refine(([start, end]) => end >= start, { message: 'time end must be >= start' })
    .optional(),
});
export type Locator = z.infer<typeof LocatorSchema>;

/**
 * An ISO 8601 timestamp: a date (`2024-05-01`), or a date and time with `Z`, with an offset (`+02:00`) or
 * with neither. A date and time without an offset is read as UTC, as a date alone already is in JavaScript,
 * so that no result depends on the machine's time zone (rule 7). Rejecting such values would break stores
 * and collections that already hold them; UTC is what they almost always mean.
 */
export const TimestampSchema = z.iso.datetime({ offset: true, local: true }).or(z.iso.date());

const TIMESTAMP_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?$/u;

/**
 * Milliseconds since the epoch of a `TimestampSchema` value (UTC when it names no offset); NaN for anything
 * else. Computed here rather than with `Date.parse`, which reads a date-time without an offset in the
 * process's local time zone.
 */
export function timestampMillis(timestamp: string): number {
  // Remembered: the same timestamps (a store's indexing times) come back pack after pack.
  return timestampMillisMemo.get(timestamp) ?? timestampMillisMemo.set(timestamp, millisOf(timestamp));
}

/** Up to 20,000 timestamps of at most 64 characters (longer ones are not remembered). */
const timestampMillisMemo = new BoundedCache<string, number>(20_000, (key) => (key.length <= 64 ? 1 : Infinity));

function millisOf(timestamp: string): number {
  const parts = TIMESTAMP_PARTS.exec(timestamp);
  if (parts === null) return Number.NaN;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', offset = 'Z'] = parts;
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps the years 0 to 99 to 1900 to 1999.
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  at.setUTCHours(Number(hour), Number(minute), Number(second), 0);
  const offsetMinutes =
    offset === 'Z' ? 0 : (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
  return at.getTime() + (fraction === '' ? 0 : Number(`0.${fraction}`) * 1000) - offsetMinutes * 60_000;
}

/**
 * One retrieved chunk: the input to packing. `score` is higher-is-better (the fused score);
 * `similarity` is the true dense cosine when known (drives the coverage signal).
 * `tokens` is an optional hint: the text's token count for the configured encoding (a number), or
 * counts keyed by encoding name. A wrong hint can never break the budget: the context is re-counted.
 */
export const CandidateSchema = z.object({
  id: z.string().min(1, 'id must be a non-empty string'),
  text: z.string(),
  score: finite(),
  sourceId: z.string().min(1).optional(),
  version: z.string().optional(),
  title: z.string().optional(),
  url: z.string().optional(),
  section: z.array(z.string()).optional(),
  span: SpanSchema.optional(),
  similarity: finite().pipe(z.number().min(-1).max(1)).optional(),
  kind: z.string().optional(),
  /** ISO 8601; a date-time without an offset is UTC (see `TimestampSchema`). */
  timestamp: TimestampSchema.optional(),
  /** ISO 8601 time the chunk was first indexed (stores set it); the newest kept one is in `coverage`. */
  indexedAt: z.iso.datetime({ offset: true, local: true }).optional(),
  tokens: z.union([z.number().int().nonnegative(), z.record(z.string(), z.number().int().nonnegative())]).optional(),
  /** Carried through to adapters; at most MAX_METADATA_DEPTH levels deep and MAX_METADATA_SIZE as JSON. */
  metadata: BoundedMetadataSchema.optional(),
  /** Page, lines or time of the chunk in its source (shown in the header, kept in the citation). */
  locator: LocatorSchema.optional(),
  /**
   * The source this one belongs to (an e-mail attachment names its message): when chunks of both would be
   * kept, the attachment's is kept and the parent's dropped (`attachment-preferred`).
   */
  parentId: z.string().min(1).optional(),
});
export type Candidate = z.infer<typeof CandidateSchema>;
/** What callers may pass (before defaults). */
export type CandidateInput = z.input<typeof CandidateSchema>;

export const FormatSchema = z.enum(FORMATS);
export type PackFormat = z.infer<typeof FormatSchema>;
export const EncodingSchema = z.enum(ENCODINGS);

/** How much provenance each block's header shows (see `HEADER_STYLES`); the citations keep all of it. */
export const HeaderSchema = z.enum(HEADER_STYLES);
export type HeaderStyle = z.infer<typeof HeaderSchema>;
/** The header a pack shows when none is asked for (chosen by measurement: BENCHMARKS.md, headers). */
export const DEFAULT_HEADER: HeaderStyle = 'compact';

/**
 * The order of a bundle's blocks. `litm` (Lost in the Middle): best first, second best last, and so on
 * inwards; `document`: sources in the order of their best item, a source's items in span order;
 * `chronological`: by `timestamp`, oldest first, items without one after, ties in `litm` order; `rank`: best
 * first, straight down. Which items are kept does not depend on it.
 */
export const ORDERS = ['litm', 'document', 'chronological', 'rank'] as const;
export const OrderSchema = z.enum(ORDERS);
export type BundleOrder = z.infer<typeof OrderSchema>;

export const CoverageThresholdsSchema = z
  .strictObject({
    /** confidence is `strong` when the top similarity is at least this and at least `strongMinItems` items are kept. */
    strong: z.number().min(-1).max(1).default(0.55),
    strongMinItems: z.number().int().positive().default(3),
    /** confidence is `partial` when the top similarity is at least this. */
    partial: z.number().min(-1).max(1).default(0.4),
  })
  .refine((t) => t.partial <= t.strong, { message: 'coverage.partial must be <= coverage.strong' });
export type CoverageThresholds = z.output<typeof CoverageThresholdsSchema>;

export const DedupeOptionsSchema = z.strictObject({
  /** Word 5-gram shingle Jaccard at or above which two texts are near duplicates. 1 turns near-duplicate detection off. */
  nearDuplicateThreshold: z.number().gt(0).max(1).default(0.8),
  /**
   * Shingle overlap coefficient (shared ÷ the smaller text's shingles) at or above which the smaller text
   * counts as contained in the other: a chunk that repeats a kept paragraph plus a little more, or a
   * paragraph already inside a kept chunk. 1 turns containment detection off. The default (half of the
   * smaller text's 5-grams verbatim in the other) was chosen on the HotpotQA dev sample in BENCHMARKS.md.
   */
  containmentThreshold: z.number().gt(0).max(1).default(0.5),
  /** Shingle width in words. */
  shingleSize: z.number().int().min(1).max(16).default(5),
});
export type DedupeOptions = z.output<typeof DedupeOptionsSchema>;

const tokenizerSchema = z.custom<Tokenizer>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Tokenizer).name === 'string' &&
    typeof (value as Tokenizer).count === 'function',
  { message: 'tokenizer must be an object with a string `name` and a `count(text)` function' },
);

/**
 * A pipeline stage that failed and was bypassed (a reranker that timed out, sentence embeddings that
 * failed): the pack was still built, without that stage, and says so. `code` is a `LitmPackErrorCode`.
 */
export const DegradedSchema = z.strictObject({
  stage: z.string().min(1),
  code: z.string().min(1),
});
export type Degraded = z.infer<typeof DegradedSchema>;

/**
 * Sentence vectors computed before packing (the pipeline embeds; packing is synchronous): the query's vector
 * and each sentence's, keyed by the sha256 (hex) of the sentence's exact text.
 */
const sentenceVectorsSchema = z.custom<{ query: readonly number[]; sentences: ReadonlyMap<string, readonly number[]> }>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { query?: unknown }).query) &&
    (value as { sentences?: unknown }).sentences instanceof Map,
  { message: 'compress.vectors must be { query: number[], sentences: Map<sha256 of the sentence text, number[]> }' },
);

/**
 * Query-aware sentence selection (`mode: 'sentences'`): each candidate keeps its sentences most relevant to
 * the query, in source order, joined by " … " where sentences between them were left out. The defaults were
 * chosen on the HotpotQA dev sample (BENCHMARKS.md, packing).
 */
export const CompressOptionsSchema = z.strictObject({
  mode: z.literal('sentences', { message: "compress.mode must be 'sentences'" }),
  /** Blend of BM25 (lexical) and cosine (dense) sentence relevance when vectors are given. */
  weights: z
    .strictObject({ lexical: z.number().min(0).max(1), dense: z.number().min(0).max(1) })
    .refine((w) => w.lexical + w.dense > 0, { message: 'compress.weights must not both be 0' })
    .default({ lexical: 0.75, dense: 0.25 }),
  /** A sentence is kept when its relevance reaches this fraction of the pool's most relevant sentence. */
  minRelevance: z.number().min(0).max(1).default(0.6),
  /** Sentences kept on each side of a kept sentence (context around it). */
  window: z.number().int().min(0).max(20).default(0),
  /** Every candidate keeps at least this many of its most relevant sentences. */
  minSentences: z.number().int().min(1).max(100).default(2),
  /**
   * How the budget is shared: sentences are taken by relevance, and a candidate's first sentence counts this
   * much more. 1: every candidate gets its best sentence before any gets a second; 0: relevance alone.
   */
  spread: z.number().min(0).max(1).default(0),
  vectors: sentenceVectorsSchema.optional(),
});
export type CompressOptions = z.input<typeof CompressOptionsSchema>;
export type ParsedCompressOptions = z.output<typeof CompressOptionsSchema>;

/**
 * The candidate pool a pipeline searched for a pack: `limit`, what it asked the store for (after widening: see
 * `assembleBundle`), and `candidates`, how many candidates retrieval handed to packing (a reranker keeps its
 * head). Recorded in the pack as `pool`.
 */
export const PoolSchema = z.strictObject({
  candidates: z.number().int().nonnegative(),
  limit: z.number().int().positive(),
});
export type Pool = z.infer<typeof PoolSchema>;

/** Options shared by bundles and briefings. */
export const PackOptionsBaseSchema = z.strictObject({
  query: z.string({ message: 'query must be a string' }).refine((q) => q.trim().length > 0, { message: 'query must not be empty' }),
  candidates: z.array(CandidateSchema),
  maxTokens: z
    .number({ error: (issue) => (issue.input === undefined ? 'maxTokens is required' : 'maxTokens must be a number') })
    .int('maxTokens must be a whole number')
    .min(1, 'maxTokens must be at least 1')
    .max(MAX_BUDGET_TOKENS, `maxTokens must be at most ${MAX_BUDGET_TOKENS}`),
  encoding: EncodingSchema.default('o200k_base'),
  /** A tokenizer of your own; overrides `encoding`. */
  tokenizer: tokenizerSchema.optional(),
  format: FormatSchema.default('markdown'),
  /** How much provenance each block's header shows: `full`, `compact` or `minimal` (the citations keep all of it). */
  header: HeaderSchema.default(DEFAULT_HEADER),
  /** At most this many kept items from one source. */
  maxPerSource: z.number().int().positive().optional(),
  /** Candidates scoring below this are dropped with reason `below-min-score`. */
  minScore: finite().optional(),
  /** `false` turns off near-duplicate detection (same id and same normalised text are always merged). */
  dedupe: z
    .union([z.literal(false), DedupeOptionsSchema])
    .default({ nearDuplicateThreshold: 0.8, containmentThreshold: 0.5, shingleSize: 5 }),
  coverage: CoverageThresholdsSchema.default({ strong: 0.55, strongMinItems: 3, partial: 0.4 }),
  /** A candidate that does not fit whole is cut only if at least this many tokens of it fit. */
  minTruncatedTokens: z.number().int().positive().default(32),
  /** Stages that degraded before packing (retrieval pipelines pass them on); reported in `pack.degraded`. */
  degraded: z.array(DegradedSchema).default([]),
  /** Sentence selection inside each candidate (see `CompressOptionsSchema`); absent: whole candidates. */
  compress: CompressOptionsSchema.optional(),
  /** The retrieval pool the candidates came from (retrieval pipelines pass it on); recorded in `pack.pool`. */
  pool: PoolSchema.optional(),
});

/** Options as parsed, what bundles and briefings share. */
export type ParsedPackOptions = z.output<typeof PackOptionsBaseSchema>;

export const BundleOptionsSchema = PackOptionsBaseSchema.extend({
  /** The order of the blocks (see `ORDERS`); a briefing's order is its zones. */
  order: OrderSchema.default('litm'),
});
export type BundleOptions = z.input<typeof BundleOptionsSchema>;
export type ParsedBundleOptions = z.output<typeof BundleOptionsSchema>;

export const BriefingOptionsSchema = PackOptionsBaseSchema.extend({
  /** The task prompt; empty for a briefing built from pins or clusters alone. */
  query: z.string({ message: 'query must be a string' }),
  /** Source ids or chunk ids that open the grounding zone, in this order (a source's chunks in document order). */
  pins: z.array(z.string().min(1)).default([]),
  /** Candidate ids filled right after the pins, in this order, before the rest by score (e.g. each cluster's share). */
  precedence: z.array(z.string().min(1)).default([]),
  /**
   * Score multipliers by candidate `kind` (e.g. `{ insight: 1.2, segment: 1 }`; other kinds 1): they bias which
   * candidates are taken and which lead the grounding zone. Items report their own, unweighted score.
   */
  tierWeights: z.record(z.string(), finite().pipe(z.number().min(0))).optional(),
  /** How many non-pinned items join the grounding zone (insights first). */
  groundingCount: z.number().int().nonnegative().default(2),
  /** Caller-supplied facts kept in stable slots; never generated. */
  entity: z.string().min(1).nullable().default(null),
  contradictions: z.array(z.string().min(1)).default([]),
  gaps: z.array(z.string().min(1)).default([]),
});
export type BriefingOptions = z.input<typeof BriefingOptionsSchema>;
export type ParsedBriefingOptions = z.output<typeof BriefingOptionsSchema>;

// ---------------------------------------------------------------------------------------------
// The pack (output)

export const ItemRoleSchema = z.enum(ZONE_ROLES);
export type ItemRole = z.infer<typeof ItemRoleSchema>;

export const PackItemSchema = z.object({
  /** 1-based position in `context`; shown there as `[ref]`. */
  ref: z.number().int().positive(),
  id: z.string(),
  sourceId: z.string(),
  role: ItemRoleSchema,
  /** Relevance rank among kept items (1 = best). */
  rank: z.number().int().positive(),
  score: z.number(),
  /**
   * The candidate's text, or a prefix of it cut at a boundary (`truncated`), or with `compress` its selected
   * sentences joined by " … " (`truncated` when the budget narrowed them). Empty for a pin pointer.
   */
  text: z.string(),
  /** Tokens of the item's text as rendered (the candidate's hint when it applies); the budget itself is counted on the whole context. For a pin pointer: the full text's count. */
  tokens: z.number().int().nonnegative(),
  truncated: z.boolean(),
  /** True for a pinned item that did not fit and is shown as a one-line pointer. */
  pointer: z.boolean(),
});
export type PackItem = z.infer<typeof PackItemSchema>;

export const CitationSchema = z.object({
  ref: z.number().int().positive(),
  sourceId: z.string(),
  chunkId: z.string(),
  version: z.string().optional(),
  title: z.string().optional(),
  url: z.string().optional(),
  section: z.array(z.string()).optional(),
  span: SpanSchema.optional(),
  /** sha256 (hex) of the candidate's full original text. */
  textSha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** With sentence selection: the exact source range of every kept sentence, in order. */
  spans: z.array(SpanSchema).optional(),
  /** With sentence selection: sha256 (hex) of the item's text as kept (its sentences and elision markers). */
  keptTextSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /** Page, lines or time of the chunk in its source, when the source kind has them. */
  locator: LocatorSchema.optional(),
  /** The source this one belongs to (an attachment's message). */
  parentId: z.string().optional(),
});
export type Citation = z.infer<typeof CitationSchema>;

export const ConfidenceSchema = z.enum(['strong', 'partial', 'weak', 'unknown']);
export type Confidence = z.infer<typeof ConfidenceSchema>;

export const CoverageSchema = z.object({
  itemCount: z.number().int().nonnegative(),
  distinctSourceCount: z.number().int().nonnegative(),
  /** Best kept item's dense similarity; -1 when unknown. */
  topSimilarity: z.number(),
  confidence: ConfidenceSchema,
  /** Median score of kept items; null when nothing is kept. */
  scoreP50: z.number().nullable(),
  /** Earliest and latest `timestamp` of kept items; null when none has one. */
  dateRange: z.object({ from: z.string(), to: z.string() }).nullable(),
  /**
   * Whether the dense arm answered (some candidate carries a dense similarity). False with confidence
   * `unknown` means lexical-only retrieval (no embeddings, or the dense index unavailable), not weak evidence.
   */
  denseAvailable: z.boolean(),
  /** The newest `indexedAt` among kept items: how fresh the index behind the pack is; null when unknown. */
  newestIndexedAt: z.string().nullable(),
});
export type Coverage = z.infer<typeof CoverageSchema>;

/**
 * `attachment-preferred`: a chunk of a source whose attachment (a source naming it as `parentId`) also had a
 * chunk kept; the attachment's chunk is kept instead (`duplicateOf` names it), so the pair is cited once.
 */
export const DropReasonSchema = z.enum(['duplicate', 'near-duplicate', 'budget', 'source-cap', 'below-min-score', 'attachment-preferred']);
export type DropReason = z.infer<typeof DropReasonSchema>;

export const DroppedSchema = z.object({
  id: z.string(),
  reason: DropReasonSchema,
  /** For duplicates: the id of the item it duplicates. */
  duplicateOf: z.string().optional(),
});
export type Dropped = z.infer<typeof DroppedSchema>;

export const BriefingSlotsSchema = z.object({
  entity: z.string().nullable(),
  contradictions: z.array(z.string()),
  gaps: z.array(z.string()),
  /** Pins that matched no candidate. */
  missingPins: z.array(z.string()),
});
export type BriefingSlots = z.infer<typeof BriefingSlotsSchema>;

export const PackSchema = z.object({
  schema: z.literal(PACK_SCHEMA_ID),
  kind: z.enum(['bundle', 'briefing']),
  query: z.string(),
  format: FormatSchema,
  /** The header style `context` was rendered with. */
  header: HeaderSchema,
  context: z.string(),
  items: z.array(PackItemSchema),
  citations: z.array(CitationSchema),
  coverage: CoverageSchema,
  budget: z.object({
    maxTokens: z.number().int().positive(),
    usedTokens: z.number().int().nonnegative(),
    encoding: z.string(),
  }),
  /** Briefing: the caveats block (already at the end of `context`); bundle: null. */
  caveats: z.string().nullable(),
  /** Briefing: caller-supplied slots; bundle: null. */
  briefing: BriefingSlotsSchema.nullable(),
  /** True when any item was cut or any candidate was dropped for budget. */
  truncated: z.boolean(),
  dropped: z.array(DroppedSchema),
  /** Optional stages that failed and were bypassed; empty when nothing degraded. Sorted by stage, then code. */
  degraded: z.array(DegradedSchema),
  /** The candidate pool retrieval searched (a pipeline's pack); absent when the caller gave the candidates. */
  pool: PoolSchema.optional(),
  /** sha256 of the canonical JSON of the pack without `packHash`. */
  packHash: z.string().regex(/^[0-9a-f]{64}$/),
});
export type Pack = z.infer<typeof PackSchema>;
