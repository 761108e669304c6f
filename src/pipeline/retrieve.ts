/**
 * The retrieval half of every surface (CLI, retrievers, HTTP API, MCP tools): one path from a request to the
 * candidates a pack is built from, so the same request gives the same pack everywhere. Framework-neutral.
 */
import { SPAN_SEARCH, SPAN_SENTENCES, inSpan } from '../base/trace.js';
import type { Candidate, CompressOptions, Degraded } from '../core/schemas.js';
import { prepareCompress, rerankCandidates, type ParsedPipelineCompress, type ParsedRerankStage } from '../refine/stages.js';
import type { Filter } from '../store/filter.js';
import type { Fusion, SearchMode, SearchRequest, Principals } from '../store/schemas.js';
import { type Store, searchDegradedOf } from '../store/types.js';

export interface RetrieveRequest {
  text: string;
  mode: SearchMode;
  /** Candidate pool size. */
  limit: number;
  filter?: Filter | undefined;
  principals?: Principals | undefined;
  fusion?: Fusion | undefined;
  /** MMR over the pool's dense vectors in the store: 0 (or absent) = pure relevance, 1 = maximum diversity. */
  diversity?: number | undefined;
  /** A reranker over the pool's top N (parsed `RerankStageSchema`); contained on failure. */
  rerank?: ParsedRerankStage | undefined;
  signal?: AbortSignal | undefined;
}

/** What retrieval hands to packing: the pool, and the optional stages that failed and were bypassed. */
export interface Retrieved {
  candidates: Candidate[];
  degraded: Degraded[];
}

function toSearchRequest(request: RetrieveRequest): SearchRequest {
  const search: SearchRequest = { text: request.text, mode: request.mode, limit: request.limit };
  if (request.filter !== undefined) search.filter = request.filter;
  if (request.principals !== undefined) search.principals = request.principals;
  if (request.fusion !== undefined) search.fusion = request.fusion;
  if (request.diversity !== undefined && request.diversity > 0) search.diversity = request.diversity;
  if (request.signal !== undefined) search.signal = request.signal;
  return search;
}

/**
 * Searches the store for a pack's candidate pool, then reranks it when a reranker is given. Faults of the
 * store are thrown, never a smaller pool; a failing reranker is bypassed and reported in `degraded`.
 */
export async function retrieveCandidates(store: Store, request: RetrieveRequest): Promise<Retrieved> {
  const candidates = await inSpan(SPAN_SEARCH, { 'litm_pack.mode': request.mode, 'litm_pack.limit': request.limit }, async (span) => {
    const found = await store.search(toSearchRequest(request));
    span.setAttribute('litm_pack.candidates', found.length);
    return found;
  });
  // An arm the store could not run (e.g. no sparse vector in a Qdrant collection) comes first in `degraded`.
  const searched = searchDegradedOf(candidates);
  const refined = await refineCandidates(request.text, candidates, { rerank: request.rerank, signal: request.signal });
  return searched.length === 0 ? refined : { candidates: refined.candidates, degraded: [...searched, ...refined.degraded] };
}

/** The refine stages on a pool that is already retrieved (the compressor and postprocessor start here). */
export async function refineCandidates(
  query: string,
  candidates: Candidate[],
  options: { rerank?: ParsedRerankStage | undefined; signal?: AbortSignal | undefined },
): Promise<Retrieved> {
  if (options.rerank === undefined) return { candidates, degraded: [] };
  return rerankCandidates(query, candidates, options.rerank, options.signal);
}

/** What packing needs besides the pool: the packer's `compress` (with sentence vectors) and the degradations. */
export interface PackInputs {
  compress: CompressOptions | undefined;
  degraded: Degraded[];
}

/**
 * Prepares sentence selection for a pool: with `embeddings`, one batched call for the sentence vectors
 * (contained). `degraded` carries the retrieval's degradations on, so the pack reports them all.
 */
export async function preparePacking(
  query: string,
  retrieved: Retrieved,
  compress: ParsedPipelineCompress | undefined,
  signal?: AbortSignal,
): Promise<PackInputs> {
  // A span only when sentences are selected: the vectors are prepared here, the selection runs in the pack span.
  const prepared =
    compress === undefined
      ? await prepareCompress(query, retrieved.candidates, compress, signal)
      : await inSpan(SPAN_SENTENCES, { 'litm_pack.sentence_vectors': compress.embeddings !== undefined }, async (span) => {
          const result = await prepareCompress(query, retrieved.candidates, compress, signal);
          span.setAttribute(
            'litm_pack.degraded',
            result.degraded.map((d) => `${d.stage}:${d.code}`),
          );
          return result;
        });
  return { compress: prepared.compress, degraded: [...retrieved.degraded, ...prepared.degraded] };
}
