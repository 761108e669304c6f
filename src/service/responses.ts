/** What the services answer, as zod schemas: the MCP tools' output schemas and the OpenAPI document use them. */
import { z } from 'zod';
import { SearchModeSchema } from '../store/schemas.js';
import { LocatorSchema, SpanSchema } from '../core/schemas.js';
import { CitationCheckSchema, ClosestPassageSchema } from '../verify/verify.js';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const RagHitSchema = z.strictObject({
  /** `[ref]` of the hit in the context. */
  ref: z.number().int().positive(),
  source_id: z.string(),
  chunk_id: z.string(),
  score: z.number(),
  title: z.string().optional(),
  url: z.string().optional(),
  version: z.string().optional(),
  section: z.array(z.string()).optional(),
  span: SpanSchema.optional(),
  /** Page, lines or time of the chunk in its source, when its kind has them. */
  locator: LocatorSchema.optional(),
  /** The source this one is an attachment of. */
  parent_id: z.string().optional(),
  /** An e-mail's Message-ID (without angle brackets), for the hits of e-mail chunks. */
  message_id: z.string().optional(),
  /** sha256 of the chunk's full text (pins the citation to a version of the text). */
  text_sha256: sha256,
});
export type RagHit = z.infer<typeof RagHitSchema>;

/** `get_rag_context`'s answer: exactly these four fields. */
export const RagContextSchema = z.strictObject({
  context: z.string(),
  hits: z.array(RagHitSchema),
  /** Tokens of `context` (exact, with the pack's encoding). */
  token_estimate: z.number().int().nonnegative(),
  /** True when something relevant did not fit the budget (an item cut or dropped for budget). */
  truncated: z.boolean(),
});
export type RagContext = z.infer<typeof RagContextSchema>;

const RankedChunkSchema = z.strictObject({
  id: z.string(),
  sourceId: z.string(),
  score: z.number(),
  position: z.number().int().positive(),
});

export const RankingsSchema = z.strictObject({
  mode: SearchModeSchema,
  dense: z.array(RankedChunkSchema).nullable(),
  lexical: z.array(RankedChunkSchema).nullable(),
  fused: z.array(RankedChunkSchema),
});

export const ErrorBodySchema = z.strictObject({
  error: z.string(),
  code: z.string(),
  issues: z.array(z.strictObject({ path: z.array(z.union([z.string(), z.number()])), message: z.string() })),
});

/** The answer of a citation check: one check per citation, in input order. */
export const VerifyAnswerSchema = z.strictObject({ checks: z.array(CitationCheckSchema) });
export type VerifyAnswer = z.infer<typeof VerifyAnswerSchema>;

/** A pack that served a stale citation. `caller` is told to the caller it was served to, and to a full view. */
const StalePackSchema = z.strictObject({
  packHash: z.string(),
  servedAt: z.string(),
  kind: z.enum(['bundle', 'briefing']),
  caller: z.string().optional(),
});

/** A served citation whose status is now changed, moved or missing, with the packs that served it. */
const StaleCitationSchema = z.strictObject({
  sourceId: z.string(),
  chunkId: z.string(),
  status: z.enum(['changed', 'moved', 'missing']),
  title: z.string().optional(),
  locator: LocatorSchema.optional(),
  textSha256: sha256,
  citedVersion: z.string().nullable(),
  /** The version the store holds now; null when `missing`. */
  currentVersion: z.string().nullable(),
  citedSpan: SpanSchema.nullable(),
  /** `moved`: where the cited text is now. */
  span: SpanSchema.nullable(),
  /** `changed`: the closest current passage. */
  closest: ClosestPassageSchema.nullable(),
  firstServedAt: z.string(),
  lastServedAt: z.string(),
  /** Packs that served it (in the window asked for). */
  servedCount: z.number().int().nonnegative(),
  /** The newest of them. */
  packs: z.array(StalePackSchema),
});
export type StaleCitation = z.infer<typeof StaleCitationSchema>;

/** One page of the stale feed. */
export const StaleAnswerSchema = z.strictObject({
  citations: z.array(StaleCitationSchema),
  /** Give it as `cursor` for the next page; null when the feed is read to its end. */
  nextCursor: z.string().nullable(),
  /** Served citations this page checked against the store. */
  checked: z.number().int().nonnegative(),
});
export type StaleAnswer = z.infer<typeof StaleAnswerSchema>;
