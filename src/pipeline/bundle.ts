/**
 * Bundles: the one path from a query to a Lost-in-the-Middle pack that every door takes (the library, the CLI,
 * the HTTP API, the MCP tools, both frameworks' retrievers): the store's search (with MMR when `diversity` > 0),
 * the reranker over the pool's head, sentence vectors for selection, then `packBundle`. `packCandidates` is the
 * same path for candidates that are already retrieved (the compressor, the postprocessor, `litm-pack pack`,
 * `POST /api/pack`). Optional stages that fail are reported in `pack.degraded`; store faults are thrown.
 * Framework-neutral: a framework that traces child runs passes `hooks`.
 */
import { StoreSchema } from '../store/types.js';
import { z } from 'zod';
import { AbortSignalSchema } from '../base/abort.js';
import { parseOrThrow } from '../base/errors.js';
import { SPAN_PACK, inSpanSync, packAttributes } from '../base/trace.js';
import { packBriefing } from '../core/briefing.js';
import { packBundle } from '../core/bundle.js';
import {
  CandidateSchema,
  OrderSchema,
  PackOptionsBaseSchema,
  type BundleOrder,
  type Candidate,
  type CompressOptions,
  type Pack,
  type Pool,
} from '../core/schemas.js';
import { PipelineCompressSchema, RerankStageSchema, type ParsedPipelineCompress } from '../refine/stages.js';
import { validateFilter } from '../store/filter.js';
import { DiversitySchema, FilterSchema, FusionSchema, LIMIT_ALIASES, PrincipalsSchema, SearchModeSchema } from '../store/schemas.js';
import { PIPELINE_DEFAULTS, PIPELINE_LIMITS } from './defaults.js';
import { preparePacking, refineCandidates, retrieveCandidates, type PackInputs, type RetrieveRequest, type Retrieved } from './retrieve.js';

/** Where a framework wraps the pipeline's steps (LangChain's child runs `LitmSearch` and `LitmPack`). */
export interface PipelineHooks {
  /** Runs retrieval (the store's search, then the reranker); call `run` with the request (its signal may be replaced). */
  retrieve?: (request: RetrieveRequest, run: (request: RetrieveRequest) => Promise<Retrieved>) => Promise<Retrieved>;
  /** Runs packing (synchronous inside); call `run` and return its pack. */
  pack?: (input: { query: string; candidates: Candidate[] }, run: () => Pack) => Promise<Pack>;
}

const HooksSchema = z.custom<PipelineHooks>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    ['retrieve', 'pack'].every(
      (key) => (value as Record<string, unknown>)[key] === undefined || typeof (value as Record<string, unknown>)[key] === 'function',
    ),
  { message: 'hooks must be an object of functions { retrieve?, pack? }' },
);

/** A query (or a briefing's prompt): a non-empty string. */
export const QuerySchema = z
  .string({ message: 'query must be a string' })
  .refine((q) => q.trim().length > 0, { message: 'query must not be empty' });

/**
 * The packer's options where the pipeline runs: the packer's own, with the table's default budget, `compress`
 * with `embeddings` (the pipeline computes the sentence vectors) and `rerank` (a reranker over the pool's head).
 */
export function packerShape(defaultBudget: number) {
  return {
    ...PackOptionsBaseSchema.omit({ query: true, candidates: true, degraded: true, compress: true, pool: true }).shape,
    maxTokens: PackOptionsBaseSchema.shape.maxTokens.default(defaultBudget),
    compress: PipelineCompressSchema.optional(),
    rerank: RerankStageSchema.optional(),
  };
}

/** A bundle's settings: what a retriever is configured with (all but the store and the query). */
export const BundleSettingsShape = {
  mode: SearchModeSchema.default('hybrid'),
  /** Candidate pool: how many chunks to fetch from the store before packing (widened up to `maxPool` while the budget does not bind). */
  limit: z.number().int().positive().max(PIPELINE_LIMITS.maxPool).default(PIPELINE_DEFAULTS.pool),
  /** The largest pool widening may reach (`limit` itself keeps the pool as asked). */
  maxPool: z.number().int().positive().max(PIPELINE_LIMITS.maxPool).default(PIPELINE_LIMITS.maxPool),
  filter: FilterSchema.optional(),
  /** Only chunks these principals may read (or that have no ACL) are searched; `'all'`: a full view. Absent: anonymous. */
  principals: PrincipalsSchema.optional(),
  fusion: FusionSchema.optional(),
  /** MMR in the store: 0 = pure relevance (default), 1 = maximum diversity (needs the store's embeddings). */
  diversity: DiversitySchema.optional(),
  ...packerShape(PIPELINE_DEFAULTS.bundleBudget),
  /** The order of the blocks: `litm` (default), `document`, `chronological` or `rank`. */
  order: OrderSchema.default('litm'),
};

export const BundleRequestSchema = z.strictObject({
  store: StoreSchema,
  query: QuerySchema,
  ...BundleSettingsShape,
  signal: AbortSignalSchema.optional(),
  hooks: HooksSchema.optional(),
});
export type BundleRequest = z.input<typeof BundleRequestSchema>;
type ParsedBundleRequest = z.output<typeof BundleRequestSchema>;

/** A pack and the candidates it was built from (in the order packing saw them), for mapping items back. */
export interface Assembled {
  pack: Pack;
  candidates: Candidate[];
}

type PackerSettings = Omit<z.output<z.ZodObject<ReturnType<typeof packerShape>>>, 'compress' | 'rerank'>;

/** The packer's options from a parsed request's packing settings (the one place they are mapped). */
export function packerOptions(settings: PackerSettings) {
  return {
    maxTokens: settings.maxTokens,
    encoding: settings.encoding,
    format: settings.format,
    header: settings.header,
    dedupe: settings.dedupe,
    coverage: settings.coverage,
    minTruncatedTokens: settings.minTruncatedTokens,
    ...(settings.tokenizer === undefined ? {} : { tokenizer: settings.tokenizer }),
    ...(settings.maxPerSource === undefined ? {} : { maxPerSource: settings.maxPerSource }),
    ...(settings.minScore === undefined ? {} : { minScore: settings.minScore }),
  };
}

/**
 * Packs a refined pool (synchronous: no I/O): the packer's options, the pool's degradations and the sentence
 * vectors `preparePacking` made. Without `inputs` (a synchronous caller such as a formatter), sentence
 * selection runs on BM25 alone.
 */
export function packPrepared(
  kind: 'bundle' | 'briefing',
  query: string,
  candidates: Candidate[],
  settings: PackerSettings & {
    compress?: ParsedPipelineCompress | undefined;
    pins?: readonly string[] | undefined;
    order?: BundleOrder | undefined;
    pool?: Pool | undefined;
  },
  inputs?: PackInputs,
): Pack {
  const compress: CompressOptions | undefined = inputs === undefined ? bm25Only(settings.compress) : inputs.compress;
  const options = {
    ...packerOptions(settings),
    query,
    candidates,
    degraded: inputs?.degraded ?? [],
    ...(compress === undefined ? {} : { compress }),
    ...(settings.pool === undefined ? {} : { pool: settings.pool }),
  };
  return inSpanSync(SPAN_PACK, { 'litm_pack.kind': kind, 'litm_pack.candidates': candidates.length }, (span) => {
    const pack =
      kind === 'briefing'
        ? packBriefing({ ...options, pins: [...(settings.pins ?? [])] })
        : packBundle({ ...options, ...(settings.order === undefined ? {} : { order: settings.order }) });
    span.setAttributes(packAttributes(pack));
    return pack;
  });
}

/** The packer's `compress` of a pipeline `compress` without its sentence vectors: BM25 alone. */
function bm25Only(compress: ParsedPipelineCompress | undefined): CompressOptions | undefined {
  if (compress === undefined) return undefined;
  const { embeddings: _embeddings, timeoutMs: _timeout, ...bm25 } = compress;
  return bm25;
}

/** `packPrepared` through `hooks.pack` (a framework's child run). */
function packPool(
  kind: 'bundle' | 'briefing',
  query: string,
  candidates: Candidate[],
  settings: Parameters<typeof packPrepared>[3],
  inputs: PackInputs,
  hooks: PipelineHooks | undefined,
): Promise<Pack> {
  const run = () => packPrepared(kind, query, candidates, settings, inputs);
  return hooks?.pack === undefined ? Promise.resolve(run()) : hooks.pack({ query, candidates }, run);
}

function retrieveRequestOf(req: ParsedBundleRequest, limit: number): RetrieveRequest {
  return {
    text: req.query,
    mode: req.mode,
    limit,
    filter: req.filter,
    principals: req.principals,
    fusion: req.fusion,
    diversity: req.diversity,
    rerank: req.rerank,
    signal: req.signal,
  };
}

/**
 * The next pool to search when a pack stopped because its pool ran out: the store returned a full pool, and
 * the budget did not bind (nothing was cut or dropped for budget) nor the minimum score (the store returns
 * the best first: a wider pool holds only lower scores). Double, up to `maxPool`; null when done.
 */
export function widerPool(pool: Pool, maxPool: number, pack: Pack): number | null {
  if (pool.candidates < pool.limit || pool.limit >= maxPool) return null;
  if (pack.truncated || pack.dropped.some((d) => d.reason === 'below-min-score')) return null;
  return Math.min(pool.limit * 2, maxPool);
}

/**
 * A Lost-in-the-Middle bundle for `query` from `store`: deduplicated, fitted exactly to `maxTokens` (default
 * 2,000), best first and second best last, with a citation per item. When the pool runs out before the budget
 * (the store filled the pool, nothing was cut or dropped for budget), the pool is doubled and the bundle packed
 * again, up to `maxPool`, so a large budget is filled; `pack.pool` records the pool used.
 *
 * @example
 * const { pack } = await assembleBundle({ store, query: 'how do refunds work?', maxTokens: 1500 });
 */
export async function assembleBundle(request: BundleRequest): Promise<Assembled> {
  const req = parseOrThrow(BundleRequestSchema, request, 'bundle request', { aliases: LIMIT_ALIASES });
  // Checked before any I/O, so a bad filter never costs a search.
  if (req.filter !== undefined) validateFilter(req.filter);
  const search = (r: RetrieveRequest) => retrieveCandidates(req.store, r);
  for (let limit = req.limit; ;) {
    const retrieveRequest = retrieveRequestOf(req, limit);
    const retrieved = await (req.hooks?.retrieve === undefined ? search(retrieveRequest) : req.hooks.retrieve(retrieveRequest, search));
    const inputs = await preparePacking(req.query, retrieved, req.compress, req.signal);
    const pool: Pool = { candidates: retrieved.candidates.length, limit };
    const pack = await packPool('bundle', req.query, retrieved.candidates, { ...req, pool }, inputs, req.hooks);
    const wider = widerPool(pool, req.maxPool, pack);
    if (wider === null) return { pack, candidates: retrieved.candidates };
    limit = wider;
  }
}

export const PackCandidatesRequestSchema = z
  .strictObject({
    query: QuerySchema,
    candidates: z.array(CandidateSchema),
    kind: z.enum(['bundle', 'briefing']).default('bundle'),
    /** Briefing: source or chunk ids that open the grounding zone. */
    pins: z.array(z.string().min(1)).optional(),
    ...packerShape(PIPELINE_DEFAULTS.packBudget),
    /** Bundle: the order of the blocks (a briefing's order is its zones). */
    order: OrderSchema.optional(),
    signal: AbortSignalSchema.optional(),
    hooks: HooksSchema.optional(),
  })
  .superRefine((request, context) => {
    if (request.kind === 'bundle' && request.pins !== undefined && request.pins.length > 0) {
      context.addIssue({ code: 'custom', path: ['pins'], message: 'pins apply to kind "briefing" only' });
    }
    if (request.kind === 'briefing' && request.order !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['order'],
        message: 'order applies to kind "bundle" only (a briefing is ordered by its zones)',
      });
    }
  });
export type PackCandidatesRequest = z.input<typeof PackCandidatesRequestSchema>;

/**
 * Packs candidates that are already retrieved: the reranker over their head, sentence vectors for selection,
 * then a bundle (or a briefing with pins). Without `rerank` and `compress.embeddings` it does no I/O, so the
 * same input always gives the same bytes.
 */
export async function packCandidates(request: PackCandidatesRequest): Promise<Pack> {
  const req = parseOrThrow(PackCandidatesRequestSchema, request, 'pack request');
  const refined = await refineCandidates(req.query, req.candidates, { rerank: req.rerank, signal: req.signal });
  const inputs = await preparePacking(req.query, refined, req.compress, req.signal);
  return packPool(req.kind, req.query, refined.candidates, req, inputs, req.hooks);
}
