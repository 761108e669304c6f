/**
 * One function per request kind: a parsed request and the caller's principals in, a Pack (or rankings, or
 * citation checks) out, or a typed error. The HTTP API, the MCP tools and the library call these, so one
 * request gives the same bytes on every surface. Retrieval goes through src/pipeline like the CLI's.
 */
import { LitmPackError } from '../base/errors.js';
import type { Candidate, HeaderStyle, Pack, PackFormat } from '../core/schemas.js';
import { assembleBundle, packCandidates } from '../pipeline/bundle.js';
import { compressStage, type ParsedRerankStage } from '../refine/stages.js';
import { validateFilter, type Filter } from '../store/filter.js';
import { assembleBriefing } from '../pipeline/briefing.js';
import type { EmbeddingsLike } from '../store/embeddings.js';
import type { Rankings, Store } from '../store/types.js';
import { verifyCitations } from '../verify/verify.js';
import type { ServiceLimits } from './limits.js';
import type { EncodingName } from '../tokenize/types.js';
import type { RagContext, RagHit, VerifyAnswer } from './responses.js';
import type {
  BriefingRequest,
  BundleRequest,
  CorpusBriefingRequest,
  PackRequest,
  RagRequest,
  RankingsRequest,
  VerifyRequest,
} from './requests.js';
import type { CitationLedger } from './ledger.js';
import { CONTEXT_DEFAULTS } from './requests.js';

/** Who asks, and against which store. */
export interface ServiceContext {
  store: Store;
  /**
   * The caller's principals. Only chunks without an ACL, or whose ACL shares one of these, are searched;
   * `[]` (an anonymous caller) sees only documents without an ACL; `'all'` reads everything (a trusted local
   * caller such as the CLI's owner). Applied inside the store query.
   */
  principals: readonly string[] | 'all';
  /**
   * Embeddings of the store's model, for what the store does not embed itself: the sentence vectors that
   * sentence selection blends in (without them it runs on BM25 alone) and briefing cluster centroids.
   */
  embeddings?: EmbeddingsLike | undefined;
  /**
   * The server's reranker over the top of the retrieved pool (a parsed `RerankStageSchema`): used unless a
   * request says `rerank: false`. A failing or slow reranker is bypassed and reported in `pack.degraded`.
   */
  rerank?: ParsedRerankStage | undefined;
  /** The largest candidate pool a search may widen to when the budget is not filled: the server's `maxPool`. */
  maxPool?: number | undefined;
  signal?: AbortSignal | undefined;
  /**
   * The server's citation ledger: every pack served from the store is recorded in it, with `caller`. Absent
   * (the library's default), nothing is recorded.
   */
  ledger?: CitationLedger | undefined;
  /** Who the caller is in the ledger (an API key's id; `anonymous` by default). */
  caller?: string | undefined;
}

/** Records a pack served from the store in the ledger, when the server keeps one. */
function recordServed(pack: Pack, context: ServiceContext): void {
  context.ledger?.record(pack, { id: context.caller ?? 'anonymous', principals: context.principals });
}

/** The store request's `principals`: the caller's, or `'all'`. */
function principalsOf(context: Pick<ServiceContext, 'principals'>): { principals: string[] | 'all' } {
  return { principals: context.principals === 'all' ? 'all' : [...context.principals] };
}

function unsupported(parameter: string, message: string): never {
  throw new LitmPackError('unsupported', `${parameter}: ${message}`, {
    details: { parameter, requestIssues: [{ path: [parameter], message: `${parameter}: ${message}` }] },
  });
}

/**
 * The reranker a request runs with: the server's, unless the request turns it off. Asking for one on a
 * server without a reranker is refused, never ignored.
 */
function rerankFor(request: { rerank?: boolean | undefined }, context: Pick<ServiceContext, 'rerank'>): ParsedRerankStage | undefined {
  if (request.rerank === false) return undefined;
  if (context.rerank === undefined && request.rerank === true) {
    unsupported('rerank', 'no reranker is configured on this server (it is started with --rerank-url URL); leave rerank out');
  }
  return context.rerank;
}

interface PackingParameters {
  budget: number;
  format: PackFormat;
  header: HeaderStyle;
  encoding: EncodingName;
  max_per_source?: number | undefined;
  min_score?: number | undefined;
}

function packerOptions(request: PackingParameters) {
  return {
    maxTokens: request.budget,
    format: request.format,
    header: request.header,
    encoding: request.encoding,
    ...(request.max_per_source === undefined ? {} : { maxPerSource: request.max_per_source }),
    ...(request.min_score === undefined ? {} : { minScore: request.min_score }),
  };
}

/**
 * A Lost-in-the-Middle bundle for `request.query` from what the caller may see: the pipeline's `assembleBundle`
 * (the store's search, with MMR when `diversity` > 0; the server's reranker; sentence selection; `packBundle`),
 * the same function the library and the retrievers call. Optional stages that fail are reported in
 * `pack.degraded`.
 */
export async function serveBundle(request: BundleRequest, context: ServiceContext): Promise<Pack> {
  return (await bundleWithCandidates(request, context)).pack;
}

/** A bundle and the candidates it was packed from (their metadata, for answers that tell more than the pack). */
async function bundleWithCandidates(request: BundleRequest, context: ServiceContext): Promise<{ pack: Pack; candidates: Candidate[] }> {
  const rerank = rerankFor(request, context);
  const compress = compressStage(request.compress, context.embeddings, 'compress');
  const { pack, candidates } = await assembleBundle({
    store: context.store,
    query: request.query,
    mode: request.mode,
    limit: request.limit,
    ...(context.maxPool === undefined ? {} : { maxPool: Math.max(request.limit, context.maxPool) }),
    ...(request.filter === undefined ? {} : { filter: request.filter }),
    ...principalsOf(context),
    ...(request.diversity === undefined ? {} : { diversity: request.diversity }),
    ...(rerank === undefined ? {} : { rerank }),
    ...(compress === undefined ? {} : { compress }),
    ...packerOptions(request),
    order: request.order,
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
  recordServed(pack, context);
  return { pack, candidates };
}

/**
 * A briefing (grounding, evidence, caveats) from any mix of a prompt, pins and clusters, through the pipeline's
 * `assembleBriefing` (as the library and the briefing retrievers). Pins and clusters are read under the caller's
 * principals: a pin or cluster the caller may not see is reported exactly like one that does not exist.
 */
export async function serveBriefing(
  request: BriefingRequest,
  context: ServiceContext,
  limits: Pick<ServiceLimits, 'maxPins' | 'maxClusters'> & Partial<Pick<ServiceLimits, 'maxClusterSources'>>,
): Promise<Pack> {
  // The reranker works on the prompt's results: a briefing without a prompt runs without it unless the
  // request asks for it (then assembleBriefing says why it cannot).
  const rerank = request.prompt === undefined && request.rerank === undefined ? undefined : rerankFor(request, context);
  const compress = compressStage(request.compress, context.embeddings, 'compress');
  const { pack } = await assembleBriefing({
    store: context.store,
    ...(request.prompt === undefined ? {} : { prompt: request.prompt }),
    pins: request.pins ?? [],
    clusters: request.clusters ?? [],
    scopeMode: request.scope_mode,
    mode: request.mode,
    limit: request.limit,
    ...(context.maxPool === undefined ? {} : { maxPool: Math.max(request.limit, context.maxPool) }),
    ...(request.filter === undefined ? {} : { filter: request.filter }),
    ...principalsOf(context),
    ...(request.tier_weights === undefined ? {} : { tierWeights: request.tier_weights }),
    ...(context.embeddings === undefined ? {} : { embeddings: context.embeddings }),
    ...(request.diversity === undefined ? {} : { diversity: request.diversity }),
    ...(rerank === undefined ? {} : { rerank }),
    ...(compress === undefined ? {} : { compress }),
    maxPins: Math.max(1, limits.maxPins),
    maxClusters: Math.max(1, limits.maxClusters),
    ...(limits.maxClusterSources === undefined ? {} : { maxClusterSources: limits.maxClusterSources }),
    ...packerOptions(request),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
  recordServed(pack, context);
  return pack;
}

/** `corpus_briefing_pack` (RFC-093): a briefing whose prompt is the query, its budget `max_tokens`. */
export function serveCorpusBriefing(
  request: CorpusBriefingRequest,
  context: ServiceContext,
  limits: Parameters<typeof serveBriefing>[2],
): Promise<Pack> {
  const { query, max_tokens, ...rest } = request;
  return serveBriefing({ ...rest, prompt: query, budget: max_tokens }, context, limits);
}

/**
 * `get_rag_context` (maildb's contract): a bundle of `max_tokens` from a pool of `limit`, answered as its
 * context, a hit per block (with the Message-ID of an e-mail's), the exact token count and whether the budget
 * bound. The pack is returned beside it (its coverage, for the text a model reads; `degraded`).
 */
export async function serveRagContext(request: RagRequest, context: ServiceContext): Promise<{ rag: RagContext; pack: Pack }> {
  const { max_tokens, ...rest } = request;
  const { pack, candidates } = await bundleWithCandidates({ ...rest, budget: max_tokens, ...CONTEXT_DEFAULTS }, context);
  return { rag: ragContextOf(pack, candidates), pack };
}

/**
 * Packs candidates the caller sends (evaluation harnesses): the pipeline's `packCandidates`, with no store.
 * Sentence selection runs on BM25 alone, and the server's reranker only when the request asks for it
 * (`rerank: true`), so by default the same input always gives the same bytes.
 */
export async function servePack(request: PackRequest, context: Pick<ServiceContext, 'rerank' | 'signal'> = {}): Promise<Pack> {
  const rerank = request.rerank === true ? rerankFor(request, context) : undefined;
  return packCandidates({
    ...packerOptions(request),
    query: request.query,
    candidates: request.candidates,
    kind: request.kind,
    ...(request.pins === undefined ? {} : { pins: request.pins }),
    ...(request.order === undefined ? {} : { order: request.order }),
    ...(request.dedupe === undefined ? {} : { dedupe: dedupeOption(request.dedupe) }),
    ...(request.coverage === undefined ? {} : { coverage: coverageOption(request.coverage) }),
    ...(request.compress === 'none' ? {} : { compress: { mode: request.compress } }),
    ...(rerank === undefined ? {} : { rerank }),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
}

function dedupeOption(dedupe: NonNullable<PackRequest['dedupe']>) {
  if (dedupe === false) return false as const;
  return {
    ...(dedupe.near_duplicate_threshold === undefined ? {} : { nearDuplicateThreshold: dedupe.near_duplicate_threshold }),
    ...(dedupe.containment_threshold === undefined ? {} : { containmentThreshold: dedupe.containment_threshold }),
    ...(dedupe.shingle_size === undefined ? {} : { shingleSize: dedupe.shingle_size }),
  };
}

function coverageOption(coverage: NonNullable<PackRequest['coverage']>) {
  return {
    ...(coverage.strong === undefined ? {} : { strong: coverage.strong }),
    ...(coverage.strong_min_items === undefined ? {} : { strongMinItems: coverage.strong_min_items }),
    ...(coverage.partial === undefined ? {} : { partial: coverage.partial }),
  };
}

/** Each arm's raw ranking beside the fused one, for tuning fusion; same ACL as search. */
export async function serveRankings(request: RankingsRequest, context: ServiceContext): Promise<Rankings> {
  const { store } = context;
  if (typeof store.rankings !== 'function') unsupported('debug', 'this store does not report rankings');
  const filter: Filter | undefined = request.filter === undefined ? undefined : validateFilter(request.filter);
  return store.rankings({
    text: request.query,
    mode: request.mode,
    limit: request.k,
    ...principalsOf(context),
    ...(request.diversity === undefined || request.diversity === 0 ? {} : { diversity: request.diversity }),
    ...(filter === undefined ? {} : { filter }),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
}

/**
 * Checks citations (or a pack's) against the current corpus as the caller may see it: a source the caller may
 * not read is `missing`, exactly like a deleted one.
 */
export async function serveVerify(request: VerifyRequest, context: ServiceContext): Promise<VerifyAnswer> {
  const checks = await verifyCitations({
    store: context.store,
    ...(request.pack === undefined ? {} : { pack: request.pack }),
    ...(request.citations === undefined ? {} : { citations: request.citations }),
    ...principalsOf(context),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
  return { checks };
}

/**
 * The Message-ID of an e-mail chunk: `metadata.messageId`, or where stores ingested before it was put there
 * keep it (`metadata.email.messageId`, the e-mail headers the loader records).
 */
function messageIdOf(metadata: Candidate['metadata']): string | undefined {
  const direct = metadata?.messageId;
  if (typeof direct === 'string' && direct !== '') return direct;
  const email = metadata?.email;
  const nested =
    typeof email === 'object' && email !== null && !Array.isArray(email) ? (email as Record<string, unknown>).messageId : undefined;
  return typeof nested === 'string' && nested !== '' ? nested : undefined;
}

/**
 * `get_rag_context`'s answer from a bundle: its context, a hit per item, the exact token count. With the
 * candidates it was packed from, a hit of an e-mail chunk names the message (`message_id`, from the chunk's
 * `metadata.messageId`).
 */
export function ragContextOf(pack: Pack, candidates: readonly Candidate[] = []): RagContext {
  const messageIds = new Map<string, string>();
  for (const candidate of candidates) {
    const messageId = messageIdOf(candidate.metadata);
    if (messageId !== undefined) messageIds.set(candidate.id, messageId);
  }
  const hits = pack.items.map((item, index): RagHit => {
    const citation = pack.citations[index];
    const hit: RagHit = {
      ref: item.ref,
      source_id: item.sourceId,
      chunk_id: item.id,
      score: item.score,
      text_sha256: citation?.textSha256 ?? '',
    };
    if (citation?.title !== undefined) hit.title = citation.title;
    if (citation?.url !== undefined) hit.url = citation.url;
    if (citation?.version !== undefined) hit.version = citation.version;
    if (citation?.section !== undefined) hit.section = citation.section;
    if (citation?.span !== undefined) hit.span = citation.span;
    if (citation?.locator !== undefined) hit.locator = citation.locator;
    if (citation?.parentId !== undefined) hit.parent_id = citation.parentId;
    const messageId = messageIds.get(item.id);
    if (messageId !== undefined) hit.message_id = messageId;
    return hit;
  });
  return { context: pack.context, hits, token_estimate: pack.budget.usedTokens, truncated: pack.truncated };
}
