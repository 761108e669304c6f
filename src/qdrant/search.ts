/**
 * Search and rankings: one request per call (a query, or one query batch for hybrid and MMR), the filter and
 * the ACL inside every query and prefetch.
 */
import { z } from 'zod';
import { LitmPackError, isLitmPackError, parseOrThrow } from '../base/errors.js';
import type { Candidate } from '../core/schemas.js';
import { encodeBm25Query, type SparseVector } from '../tokenize/bm25.js';
import { validateFilter } from '../store/filter.js';
import type { ScoredId } from '../store/fusion.js';
import { diversityCandidates, hybridPrefetchLimit, toRankedChunks } from '../store/requests.js';
import { LIMIT_ALIASES, SearchRequestSchema, type Fusion, type SearchMode, type SearchRequest } from '../store/schemas.js';
import { type Rankings, withSearchDegraded } from '../store/types.js';
import type { QdrantConnection } from './connection.js';
import { fitVectors } from './detect.js';
import {
  buildDenseQuery,
  buildDiverseQuery,
  buildDiverseRankingsBatch,
  buildHybridQueryBatch,
  buildLexicalQuery,
  buildRankingsBatch,
  buildSearchFilter,
  type DiverseQueryInput,
  type HybridQueryInput,
} from './requests.js';
import { QueryResponseSchema, queryBatchResponseSchema, type ScoredPointResponse } from './responses.js';
import { throwIfAborted } from '../base/abort.js';
import { scopeFilter } from './tenancy.js';
import type { QdrantFilter, VectorNames } from './types.js';

/** What `search` and `rankings` share after validation (`#prepareSearch`). */
interface PreparedSearch {
  req: z.output<typeof SearchRequestSchema>;
  mode: SearchMode;
  fusion: Fusion;
  filter: QdrantFilter | undefined;
  denseVector: number[] | undefined;
  sparseVector: SparseVector | undefined;
  /** MMR's diversity (0: none). */
  diversity: number;
  /** The vectors searched: the configured ones, fitted to the collection's when they were read (`fitVectors`). */
  vectors: VectorNames;
}

/** What search and rankings share: validation, mode, fusion, the filter with the ACL, the query vectors. */
export async function prepareSearch(c: QdrantConnection, request: SearchRequest): Promise<PreparedSearch> {
  // The same validation for search and rankings, `k`/`topK` named as `limit`'s aliases.
  const req = parseOrThrow(SearchRequestSchema, request, 'search request', { aliases: LIMIT_ALIASES });
  c.checkTenant('search');
  const userFilter = req.filter === undefined ? undefined : validateFilter(req.filter);
  const fusion = req.fusion ?? c.fusion;
  const diversity = req.diversity ?? 0;
  if (diversity > 0 && c.embeddings === undefined) {
    throw new LitmPackError('unsupported', 'diversity (MMR) needs dense vectors: construct QdrantHybridStore with { embeddings }', {
      details: { requires: 'embeddings', parameter: 'diversity' },
    });
  }
  // A search that embeds its query reads the collection first, once per store (none when ensureCollection or
  // an ingest has read it): its vector names, the dense size the query vector must have, the recorded model.
  const embeds = c.embeddings !== undefined && (req.mode !== 'lexical' || diversity > 0);
  const vectors = embeds ? fitVectors(c.configured, await c.readCollectionOnce(req.signal), c.collection, true) : c.vectors;
  const mode = resolveMode(c, req.mode, vectors);
  throwIfAborted(req.signal);
  const filter = scopeFilter(c.scope, buildSearchFilter(userFilter, req.principals, c.aclKey));
  let denseVector: number[] | undefined;
  // MMR compares dense vectors in every mode.
  if (mode !== 'lexical' || diversity > 0) {
    c.checkEmbeddingModel();
    const vector = await c.embeddings!.embedQuery(req.text);
    throwIfAborted(req.signal);
    c.checkVectors([vector], 1, 'embedQuery');
    denseVector = vector;
  }
  const sparseVector = mode === 'dense' ? undefined : encodeBm25Query(req.text);
  return { req, mode, fusion, filter, denseVector, sparseVector, diversity, vectors };
}

/**
 * The mode a request runs in on these vectors. Without a sparse vector hybrid runs on the dense vector
 * alone (`rankings` says `mode: "dense"`, `lexical: null`); without embeddings it runs on BM25 alone.
 */
export function resolveMode(c: QdrantConnection, requested: SearchMode, vectors: VectorNames = c.vectors): SearchMode {
  const hasSparse = vectors.sparse !== null;
  const noSparse = (what: string): LitmPackError =>
    new LitmPackError(
      'unsupported_mode',
      `${what} search needs a sparse BM25 vector, and collection "${c.collection}" is configured without one ` +
        `(payloadPreset "${c.preset}"). Set sparseVectorName to the collection's sparse vector, or use mode "dense".`,
      { details: { mode: requested, collection: c.collection, requires: 'sparse' } },
    );
  if (requested === 'dense' || (requested === 'hybrid' && !hasSparse)) {
    if (c.embeddings === undefined) {
      if (requested === 'hybrid') throw noSparse('Hybrid (or, without embeddings, lexical)');
      throw new LitmPackError(
        'unsupported_mode',
        'Dense search needs embeddings: construct QdrantHybridStore with { embeddings }, or use mode "lexical"',
        { details: { mode: requested, requires: 'embeddings', parameter: 'mode' } },
      );
    }
    return 'dense';
  }
  if (!hasSparse) throw noSparse('Lexical');
  // Without embeddings hybrid degrades to lexical (coverage confidence is then unknown), as in memory.
  if (requested === 'hybrid' && c.embeddings === undefined) return 'lexical';
  return requested;
}

/** What one search request brought back: the fused ranking (what `search` returns) and, when asked, each arm's. */
interface Answered {
  fused: ScoredPointResponse[];
  /** The true dense cosine of a fused point, when the request measured it. */
  similarity: (point: ScoredPointResponse) => number | undefined;
  /** Each arm's raw ranking (`arms: true` only; `null` when the mode does not run the arm). */
  dense: ScoredPointResponse[] | null;
  lexical: ScoredPointResponse[] | null;
}

/**
 * The one branch by mode that `search` and `rankings` share: ONE request (a query, or a query batch) for the
 * prepared search, with each arm's raw top `limit` in the same request when `arms` is set. `dense` and
 * `lexical` are one `points/query` each (the arm is the ranking); `hybrid` is one `points/query/batch` (see
 * `buildHybridQueryBatch` for how the true cosine comes back in it); MMR is `buildDiverseQuery`'s.
 */
async function answer(c: QdrantConnection, prepared: PreparedSearch, withPayload: true | string[], arms: boolean): Promise<Answered> {
  const { req, mode, fusion, filter, denseVector, sparseVector, vectors } = prepared;
  const { signal, limit } = req;
  const query = async (body: Parameters<QdrantConnection['queryArgs']>[0]) =>
    (
      await explainVectorName(c, prepared, () =>
        c.read('query', () => c.client.query(c.collection, c.queryArgs(body)), QueryResponseSchema, signal),
      )
    ).points;
  const batch = (body: Parameters<QdrantConnection['batchArgs']>[0]) =>
    explainVectorName(c, prepared, () =>
      c.read(
        'queryBatch',
        () => c.client.queryBatch(c.collection, c.batchArgs(body)),
        queryBatchResponseSchema(body.searches.length),
        signal,
      ),
    );
  const unknown = () => undefined;
  // A query of stopwords only has no terms: nothing can match lexically (as in the memory store).
  if (mode === 'lexical' && sparseVector!.indices.length === 0)
    return { fused: [], similarity: unknown, dense: null, lexical: arms ? [] : null };
  if (prepared.diversity > 0) {
    const input = diverseInput(c, prepared, withPayload);
    if (arms) {
      const built = buildDiverseRankingsBatch(input);
      const responses = await batch(built.batch);
      // The search's answers first (`fused` is exactly what search returns), then the arms the mode runs.
      const fused = built.searchQueries === 1 ? responses[0]!.points : diversePick(responses[0]!.points, responses[1]!.points).points;
      const armAnswers = responses.slice(built.searchQueries);
      return {
        fused,
        similarity: unknown,
        dense: mode === 'lexical' ? null : armAnswers[0]!.points,
        lexical: mode === 'dense' ? null : armAnswers[mode === 'hybrid' ? 1 : 0]!.points,
      };
    }
    const built = buildDiverseQuery(input);
    if ('query' in built) {
      const points = await query(built.query);
      return { fused: points, similarity: (point) => point.score, dense: null, lexical: null };
    }
    const responses = await batch(built.batch);
    const { points, cosineOf } = diversePick(responses[0]!.points, responses[1]!.points);
    return { fused: points, similarity: (point) => cosineOf.get(String(point.id)), dense: null, lexical: null };
  }
  switch (mode) {
    case 'dense': {
      const points = await query(buildDenseQuery(denseVector!, vectors.dense, { limit, filter, withPayload }));
      return { fused: points, similarity: (point) => point.score, dense: arms ? points : null, lexical: null };
    }
    case 'lexical': {
      const points = await query(buildLexicalQuery(sparseVector!, vectors.sparse!, { limit, filter, withPayload }));
      return { fused: points, similarity: unknown, dense: null, lexical: arms ? points : null };
    }
    case 'hybrid': {
      const input = { ...hybridInput(c, limit, denseVector!, sparseVector!, filter, fusion, vectors), withPayload };
      if (arms) {
        const [fused, dense, lexical] = await batch(buildRankingsBatch(input));
        return { fused: fused!.points, similarity: unknown, dense: dense!.points, lexical: lexical!.points };
      }
      const [fused, cosine] = await batch(buildHybridQueryBatch(input));
      const similarity = new Map(cosine!.points.map((point) => [String(point.id), point.score]));
      return { fused: fused!.points, similarity: (point) => similarity.get(String(point.id)), dense: null, lexical: null };
    }
  }
}

/**
 * A query Qdrant refuses for a vector name the collection does not have (a lexical search, which reads nothing
 * first) is explained from the collection's vectors: `config_mismatch` naming them and the presets that fit.
 * When the collection cannot be read either, Qdrant's own answer stands.
 */
async function explainVectorName<T>(c: QdrantConnection, prepared: PreparedSearch, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isLitmPackError(error, 'bad_request') || !/Not existing vector name/i.test(error.message) || c.layout !== undefined) throw error;
    const layout = await c.readCollectionOnce(prepared.req.signal).catch(() => undefined);
    if (layout === undefined) throw error;
    // A collection without any sparse vector: lexical search is `unsupported_mode`, said by resolveMode.
    resolveMode(
      c,
      prepared.req.mode,
      fitVectors(c.configured, layout, c.collection, prepared.mode !== 'lexical' || prepared.diversity > 0),
    );
    throw error;
  }
}

/**
 * One request per search (see `answer`). The filter and the principals' ACL are inside every query and
 * prefetch. Results are sorted by score desc, then id.
 */
export async function search(c: QdrantConnection, request: SearchRequest): Promise<Candidate[]> {
  const prepared = await prepareSearch(c, request);
  const { fused, similarity } = await answer(c, prepared, true, false);
  // A hybrid search on a collection without a sparse vector ran on the dense arm alone: the pack says so.
  const lexicalMissing = prepared.req.mode === 'hybrid' && prepared.mode === 'dense';
  return withSearchDegraded(c.candidates(fused, similarity), lexicalMissing ? [{ stage: 'lexical', code: 'unsupported_mode' }] : []);
}

/**
 * The same request as `search`, arm by arm: each arm's raw top `limit` (dense: cosine, lexical: BM25
 * score; `null` when the arm does not run in this mode) beside the fused ranking, which is exactly what
 * `search` returns. One request: hybrid is one `points/query/batch` of the fused query and both arms.
 */
export async function rankings(c: QdrantConnection, request: SearchRequest): Promise<Rankings> {
  const prepared = await prepareSearch(c, request);
  const { mode } = prepared;
  const { limit } = prepared.req;
  // A litm payload names its chunk and source in two keys: only those come back. Other presets need the
  // whole payload to find them.
  const withPayload: true | string[] = c.preset === 'litm' ? ['id', 'sourceId'] : true;
  const toRanked = (points: ScoredPointResponse[]) => {
    const sourceOf = new Map<string, string>();
    const scored: ScoredId[] = points.map((point) => {
      const { id, sourceId } = c.chunkKeys(point);
      sourceOf.set(id, sourceId);
      return { id, score: point.score };
    });
    return toRankedChunks(scored, limit, (id) => sourceOf.get(id)!);
  };
  const answered = await answer(c, prepared, withPayload, true);
  return {
    mode,
    dense: answered.dense === null ? null : toRanked(answered.dense),
    lexical: answered.lexical === null ? null : toRanked(answered.lexical),
    fused: toRanked(answered.fused),
  };
}

/** A hybrid query as search sends it: each arm prefetches `hybridPrefetchLimit(limit)`, as the memory store does. */
export function hybridInput(
  c: QdrantConnection,
  limit: number,
  denseVector: number[],
  sparseVector: SparseVector,
  filter: QdrantFilter | undefined,
  fusion: Fusion,
  vectors: VectorNames = c.vectors,
): HybridQueryInput {
  const armLimit = hybridPrefetchLimit(limit, c.prefetchLimit);
  return {
    denseVector,
    sparseVector,
    limit,
    denseLimit: armLimit,
    lexicalLimit: armLimit,
    filter,
    fusion,
    vectors: { dense: vectors.dense, sparse: vectors.sparse! },
    withPayload: true,
  };
}

/** A diverse query as search sends it (`buildDiverseQuery`): MMR picks from `diversityCandidates(limit)`. */
export function diverseInput(c: QdrantConnection, prepared: PreparedSearch, withPayload: true | string[]): DiverseQueryInput {
  const { limit } = prepared.req;
  return {
    mode: prepared.mode,
    denseVector: prepared.denseVector!,
    sparseVector: prepared.sparseVector,
    limit,
    candidates: diversityCandidates(limit, c.prefetchLimit),
    armLimit: hybridPrefetchLimit(limit, c.prefetchLimit),
    diversity: prepared.diversity,
    filter: prepared.filter,
    fusion: prepared.fusion,
    vectors: prepared.vectors,
    withPayload,
  };
}

/**
 * The MMR pick of a lexical or hybrid diverse batch (`buildDiverseQuery`) with each point's score in the mode
 * (the pool query's), and the cosine MMR scored it with.
 */
function diversePick(pool: ScoredPointResponse[], picked: ScoredPointResponse[]) {
  const scoreOf = new Map(pool.map((point) => [String(point.id), point.score]));
  const cosineOf = new Map(picked.map((point) => [String(point.id), point.score]));
  return { points: picked.map((point) => ({ ...point, score: scoreOf.get(String(point.id)) ?? point.score })), cosineOf };
}
