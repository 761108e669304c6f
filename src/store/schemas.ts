/**
 * The store-facing vocabulary both stores, the pipeline and every door share: search modes, fusion,
 * embeddings, filters, the search and read requests, the documents ingested and the chunk records kept.
 * Types are derived from these schemas, so a shape is written once.
 */
import { z } from 'zod';
import { AbortSignalSchema } from '../base/abort.js';
import { BoundedMetadataSchema } from '../base/metadata.js';
import { LocatorSchema, PAGE_LABEL, TimestampSchema } from '../core/schemas.js';
import { isLangChainEmbeddings, isLlamaIndexEmbedding, toEmbeddingsLike, type EmbeddingsInput } from './embeddings.js';
import type { Filter } from './filter.js';

/** `hybrid` (dense + BM25 fused), `dense` or `lexical` (BM25). */
export const SEARCH_MODES = ['hybrid', 'dense', 'lexical'] as const;
export const SearchModeSchema = z.enum(SEARCH_MODES);
export type SearchMode = z.infer<typeof SearchModeSchema>;

/** Largest `limit` of one search (either store). */
export const MAX_SEARCH_LIMIT = 10_000;

const finiteNonNegative = z.number().refine(Number.isFinite, { message: 'must be finite' }).pipe(z.number().min(0));

/** How hybrid search fuses its arms: Qdrant's `rrf` (optional `k`, arm weights) or `dbsf`. */
export const FusionSchema = z.discriminatedUnion('method', [
  z.strictObject({
    method: z.literal('rrf'),
    k: z.number().int().min(1).optional(),
    weights: z.strictObject({ dense: finiteNonNegative, lexical: finiteNonNegative }).optional(),
  }),
  z.strictObject({ method: z.literal('dbsf') }),
]);
export type Fusion = z.infer<typeof FusionSchema>;

/** MMR in the store's search: 0 (or absent) = pure relevance, 1 = maximum diversity (needs dense vectors). */
export const DiversitySchema = z.number().min(0).max(1);

/**
 * Embeddings as the stores and the pipeline take them: LangChain's `embedQuery`/`embedDocuments`, or a
 * LlamaIndex `BaseEmbedding` (`getTextEmbeddingsBatch`/`getQueryEmbedding`), which is adapted to the former.
 */
export const EmbeddingsSchema = z
  .custom<EmbeddingsInput>((value) => isLangChainEmbeddings(value) || isLlamaIndexEmbedding(value), {
    message:
      'embeddings must have embedQuery(text) and embedDocuments(texts) (LangChain), or getTextEmbeddingsBatch(texts) and getQueryEmbedding(query) (a LlamaIndex BaseEmbedding)',
  })
  .transform(toEmbeddingsLike);

/** A `filter` option. The stores check the filter language itself (`validateFilter`); this only catches values that cannot be one. */
export const FilterSchema = z.custom<Filter>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
  message: 'filter must be a filter object ({ must?, should?, must_not? })',
});

/**
 * Other libraries' names for `limit` (LangChain's `k`, LlamaIndex's `similarityTopK`...): refused with a
 * message naming `limit`, so a caller learns the one name instead of having two.
 */
export const LIMIT_ALIASES: Readonly<Record<string, string>> = { k: 'limit', topK: 'limit', top_k: 'limit', similarityTopK: 'limit' };

/**
 * Whom a read is for: principals (only chunks without an ACL, or whose ACL shares one of them, are read), or
 * `'all'` for a full view (the store's owner: ingest, pruning, a trusted local tool). Absent, a read is
 * anonymous: documents without an ACL only. Access is never wider than asked for.
 */
export const PrincipalsSchema = z.union([z.array(z.string()), z.literal('all')], {
  message: "principals must be a list of principals, or 'all' for a full view",
});
export type Principals = z.infer<typeof PrincipalsSchema>;

export const SearchRequestSchema = z.strictObject({
  text: z.string({ message: 'text must be a string' }).refine((text) => text.trim().length > 0, { message: 'text must not be empty' }),
  mode: SearchModeSchema.default('hybrid'),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(10),
  filter: FilterSchema.optional(),
  /** Only chunks without an ACL, or whose ACL shares one of these, are searched; `'all'`: every chunk. Default: anonymous. */
  principals: PrincipalsSchema.default([]),
  fusion: FusionSchema.optional(),
  /** MMR over the pool's dense vectors (Qdrant's `mmr`): 0 = pure relevance (off), 1 = maximum diversity. */
  diversity: DiversitySchema.optional(),
  signal: AbortSignalSchema.optional(),
});
export type SearchRequest = z.input<typeof SearchRequestSchema>;
export type ParsedSearchRequest = z.output<typeof SearchRequestSchema>;

/** Default and upper bound of `getChunks`' `limit`. */
export const GET_CHUNKS_DEFAULT_LIMIT = 10_000;
export const GET_CHUNKS_MAX_LIMIT = 100_000;

/** Chunks fetched by source, id or filter (no query): pins, clusters and citation checks read these. */
export const GetChunksRequestSchema = z
  .strictObject({
    /** Chunks of these sources. */
    sourceIds: z.array(z.string().min(1, 'source ids must be non-empty strings')).optional(),
    /** Chunks with these chunk ids. */
    ids: z.array(z.string().min(1, 'chunk ids must be non-empty strings')).optional(),
    filter: FilterSchema.optional(),
    /** As in search: only chunks these principals may read (or that have no ACL); `'all'`: every chunk. Default: anonymous. */
    principals: PrincipalsSchema.default([]),
    /** At most this many chunks. */
    limit: z.number().int().min(1).max(GET_CHUNKS_MAX_LIMIT).default(GET_CHUNKS_DEFAULT_LIMIT),
    signal: AbortSignalSchema.optional(),
  })
  .refine((request) => request.sourceIds !== undefined || request.ids !== undefined || request.filter !== undefined, {
    // Without any of them the request would read the whole store.
    message: 'give at least one of sourceIds, ids or filter',
  });
export type GetChunksRequest = z.input<typeof GetChunksRequestSchema>;
export type ParsedGetChunksRequest = z.output<typeof GetChunksRequestSchema>;

export const AddDocumentsOptionsSchema = z.strictObject({
  /** Called after each document with the number done and the total. */
  onProgress: z
    .custom<(done: number, total: number) => void>((value) => typeof value === 'function', {
      message: 'onProgress must be a function',
    })
    .optional(),
  signal: AbortSignalSchema.optional(),
});
export type AddDocumentsOptions = z.input<typeof AddDocumentsOptionsSchema>;

// ---------------------------------------------------------------------------------------------
// Documents in, chunks kept

const jsonValue: z.ZodType<unknown> = z.lazy(() =>
  z.union([
    z.string(),
    z.number().refine(Number.isFinite, { message: 'must be a finite number' }),
    z.boolean(),
    z.null(),
    z.array(jsonValue),
    z.record(z.string(), jsonValue),
  ]),
);

/** Metadata stored in the payload and in saved files: plain JSON, the limits checked before its values. */
const StoredMetadataSchema = BoundedMetadataSchema.pipe(z.record(z.string(), jsonValue));

const offset = z.number().int().nonnegative();
const finiteSeconds = z.number().refine(Number.isFinite, { message: 'must be a finite number' }).pipe(z.number().min(0));

/**
 * A span of a document's text with its place in the source, given by loaders of structured formats (pages,
 * definitions, cues, HTML sections). With regions, the chunker reads only the text inside them, never lets a
 * chunk cross from one region into another (except between neighbours that both `merge`), takes a chunk's
 * `section` from its region and computes its locator: `page`, `lines` counted from the region's `line`, and
 * `time` from the first to the last region of the chunk.
 */
const RegionObject = z.strictObject({
  start: offset,
  end: offset,
  /** The section path of chunks in this region (a heading path, a symbol path such as `CircuitBreaker.record`). */
  section: z.array(z.string()).optional(),
  /** 1-based page of the source. */
  page: z.number().int().positive().optional(),
  /** The page's printed label (PDF /PageLabels) when it differs from its number: the locator's `label`. */
  pageLabel: z
    .string()
    .refine((label) => PAGE_LABEL.test(label), { message: 'a page label is letters, digits, dashes, dots and spaces (at most 32)' })
    .optional(),
  /** 1-based line of the source on which `start` lies; the text of the region holds the source's lines as they are. */
  line: z.number().int().positive().optional(),
  /** [startSeconds, endSeconds] of the region (a transcript cue). */
  time: z.tuple([finiteSeconds, finiteSeconds]).optional(),
  /** `paragraph` (default): blank lines separate units that merge up to the bound; `whole`: the region is one unit, split only when over the bound. */
  unit: z.enum(['paragraph', 'whole']).optional(),
  /** Neighbouring regions that both merge share a chunk while it fits (transcript cues). */
  merge: z.boolean().optional(),
  /**
   * Where a `whole` region that does not fit is split: regions inside it (a class's members), chunked as
   * regions themselves. Without them an over-long region is split at line, sentence and word boundaries.
   */
  get parts() {
    return z.array(RegionObject).optional();
  },
});
export const RegionSchema = RegionObject.refine((region) => region.end >= region.start, { message: 'region end must be >= start' });
export interface Region {
  start: number;
  end: number;
  section?: string[] | undefined;
  page?: number | undefined;
  pageLabel?: string | undefined;
  line?: number | undefined;
  time?: [number, number] | undefined;
  unit?: 'paragraph' | 'whole' | undefined;
  merge?: boolean | undefined;
  parts?: Region[] | undefined;
}

/** A document to ingest: markdown or plain text (loaders turn other formats into these). */
export const IngestDocumentSchema = z
  .strictObject({
    /** The source id (a file path, URL, ticket number...). */
    id: z.string().min(1, 'id must be a non-empty string'),
    text: z.string({ message: 'text must be a string' }),
    version: z.string().optional(),
    title: z.string().optional(),
    url: z.string().optional(),
    /** ISO 8601; copied to every chunk as `timestamp`. */
    timestamp: TimestampSchema.optional(),
    metadata: StoredMetadataSchema.optional(),
    /**
     * Principals allowed to read this document; absent: readable by everyone. An empty list would be
     * ambiguous (public, as Qdrant's is_empty reads it, or readable by no one?).
     */
    acl: z.array(z.string().min(1)).min(1, 'acl must name at least one principal; omit it for a document everyone may read').optional(),
    /** Named sets of sources this one belongs to (briefings draw representative context per cluster); filterable. */
    clusters: z.array(z.string().min(1, 'cluster names must be non-empty strings')).optional(),
    /** Tier of every chunk of this document (`insight`, `segment`, or any string). */
    kind: z.string().min(1, 'kind must be a non-empty string').optional(),
    /** The source this document belongs to (an e-mail attachment names its message's id). */
    parentId: z.string().min(1, 'parentId must be a non-empty string').optional(),
    /**
     * Structure from the loader (pages, definitions, cues): in text order, not overlapping, inside the text.
     * Absent: the text is chunked as markdown (headings, paragraphs).
     */
    regions: z
      .array(RegionSchema)
      .superRefine((regions, ctx) => {
        for (let i = 1; i < regions.length; i += 1) {
          if (regions[i]!.start < regions[i - 1]!.end)
            ctx.addIssue({ code: 'custom', message: 'regions must be in text order and must not overlap', path: [i] });
        }
      })
      .optional(),
  })
  .refine((doc) => doc.regions === undefined || doc.regions.every((region) => region.end <= doc.text.length), {
    message: 'regions must lie inside the text',
    path: ['regions'],
  });
export type IngestDocument = z.infer<typeof IngestDocumentSchema>;

const nonNegativeInt = z.number().int().nonnegative();

/**
 * One chunk as both stores keep it (the Qdrant payload, the saved memory-store file). Produced by ingest's
 * chunker; turned into a `Candidate` at search time. Records read back from disk or a collection are
 * validated with it.
 */
export const ChunkRecordSchema = z.strictObject({
  /** Deterministic chunk id (the chunk key); Qdrant point ids are UUIDv5 of it. */
  id: z.string().min(1),
  sourceId: z.string().min(1),
  version: z.string().optional(),
  title: z.string().optional(),
  url: z.string().optional(),
  /** Markdown heading path, outermost first. */
  section: z.array(z.string()),
  /** Exact: `document.text.slice(span.start, span.end) === text`. */
  span: z
    .strictObject({ start: nonNegativeInt, end: nonNegativeInt })
    .refine((span) => span.end >= span.start, { message: 'span.end must be >= span.start' }),
  text: z.string(),
  textSha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** ISO 8601 time of first ingest of this chunk content. */
  indexedAt: z.string().min(1),
  timestamp: TimestampSchema.optional(),
  kind: z.string().optional(),
  /** Token counts keyed by encoding name (e.g. `{ o200k_base: 212, cl100k_base: 220 }`). */
  tokens: z.record(z.string(), nonNegativeInt),
  /** Principals allowed to read; absent = everyone. */
  acl: z.array(z.string().min(1)).optional(),
  /** Clusters of the chunk's source. */
  clusters: z.array(z.string().min(1)).optional(),
  metadata: StoredMetadataSchema.optional(),
  /** Page, lines or time of the chunk in its source (from the loader's regions). */
  locator: LocatorSchema.optional(),
  /** The source this chunk's source belongs to (an attachment's message). */
  parentId: z.string().min(1).optional(),
});
export type ChunkRecord = z.infer<typeof ChunkRecordSchema>;
