import { LitmPackError } from '../base/errors.js';
import type { ClusterSettings, PayloadIndexSpec } from './collection.js';
import {
  ACL_KEY,
  combineFilters,
  type EngineCondition,
  type EngineFilter,
  type FieldCondition,
  type Filter,
  type MatchValue,
} from '../store/filter.js';
import type { Fusion } from '../store/schemas.js';
import type { SparseVector } from '../tokenize/bm25.js';
import type {
  VectorNames,
  QdrantCondition,
  QdrantCreateCollection,
  QdrantFilter,
  QdrantPrefetch,
  QdrantQueryArgs,
  QdrantQueryBatchArgs,
  QdrantQueryRequest,
} from './types.js';

/**
 * Pure translation from litm-pack's search and collection vocabulary to Qdrant request bodies.
 * No I/O here: every function is unit-tested on its exact output.
 */

function asList<T>(value: T | T[] | null | undefined): T[] | undefined {
  if (value === undefined || value === null) return undefined;
  return Array.isArray(value) ? value : [value];
}

function isFieldCondition(condition: EngineCondition): condition is FieldCondition {
  return typeof (condition as { key?: unknown }).key === 'string';
}

/** Qdrant's `any`/`except` take all strings or all integers (`validateFilter` already checked it). */
function toAnyVariants(values: MatchValue[], key: string): string[] | number[] {
  if (values.every((v): v is string => typeof v === 'string')) return values;
  if (values.every((v): v is number => typeof v === 'number' && Number.isInteger(v))) return values;
  throw new LitmPackError(
    'unsupported_filter',
    `Filter on "${key}": Qdrant's match any/except takes only strings or only integers, got ${JSON.stringify(values)}`,
    { details: { key } },
  );
}

function toQdrantCondition(condition: EngineCondition): QdrantCondition {
  if ('is_empty' in condition) return { is_empty: { key: condition.is_empty.key } };
  if (!isFieldCondition(condition)) return toQdrantFilter(condition);
  const out: QdrantCondition = { key: condition.key };
  const { match, range } = condition;
  if (match !== undefined && match !== null) {
    if ('value' in match) out.match = { value: match.value };
    else if ('any' in match) out.match = { any: toAnyVariants(match.any, condition.key) };
    else out.match = { except: toAnyVariants(match.except, condition.key) };
  }
  if (range !== undefined && range !== null) {
    const r: { gt?: number; gte?: number; lt?: number; lte?: number } = {};
    for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) {
      const limit = range[bound];
      if (limit !== undefined && limit !== null) r[bound] = limit;
    }
    out.range = r;
  }
  return out;
}

/**
 * Copies a filter (the caller's, checked by `validateFilter`, plus litm-pack's own conditions) into Qdrant's
 * shape. Both are spelled the same; the copy normalises single conditions to arrays and keeps empty `must` and
 * `must_not` clauses (they mean what they say in both stores).
 */
export function toQdrantFilter(filter: EngineFilter): QdrantFilter {
  const out: QdrantFilter = {};
  const must = asList(filter.must);
  const should = asList(filter.should);
  const mustNot = asList(filter.must_not);
  if (must !== undefined) out.must = must.map(toQdrantCondition);
  // An empty `should` never gets here: validateFilter rejects it (Qdrant's readings of it disagree).
  if (should !== undefined) out.should = should.map(toQdrantCondition);
  if (mustNot !== undefined) out.must_not = mustNot.map(toQdrantCondition);
  return out;
}

/**
 * The access-control filter, as `aclFilter` builds it for the memory store, on the preset's ACL key: a point
 * is visible iff that key is empty (missing, null or []) or shares a value with the principals.
 */
export function buildAccessFilter(principals: readonly string[], aclKey: string = ACL_KEY): EngineFilter {
  const open = { is_empty: { key: aclKey } };
  if (principals.length === 0) return { must: [open] };
  return { should: [open, { key: aclKey, match: { any: [...principals] } }] };
}

/** The caller's filter AND the access filter, in Qdrant's shape, or undefined when there is neither. */
export function buildSearchFilter(
  filter: Filter | undefined,
  principals: readonly string[] | 'all',
  aclKey: string = ACL_KEY,
): QdrantFilter | undefined {
  const combined = combineFilters(filter, principals === 'all' ? undefined : buildAccessFilter(principals, aclKey));
  return combined === undefined ? undefined : toQdrantFilter(combined);
}

/**
 * Qdrant's fusion query. Plain `rrf` uses Qdrant's defaults; k or weights need the parametrised form
 * (`{rrf: {k, weights}}`), whose weights follow the prefetch order: dense first, lexical second.
 */
export function toQdrantFusion(fusion: Fusion): QdrantQueryRequest['query'] {
  if (fusion.method === 'dbsf') return { fusion: 'dbsf' };
  if (fusion.k === undefined && fusion.weights === undefined) return { fusion: 'rrf' };
  const rrf: { k?: number; weights?: number[] } = {};
  if (fusion.k !== undefined) rrf.k = fusion.k;
  if (fusion.weights !== undefined) rrf.weights = [fusion.weights.dense, fusion.weights.lexical];
  return { rrf };
}

function withUsing<T extends { using?: string | null }>(body: T, name: string): T {
  // The unnamed default vector is addressed by leaving `using` out.
  if (name !== '') body.using = name;
  return body;
}

function withFilter<T extends { filter?: unknown }>(body: T, filter: QdrantFilter | undefined): T {
  if (filter !== undefined) body.filter = filter;
  return body;
}

export interface HybridQueryInput {
  denseVector: number[];
  sparseVector: SparseVector;
  limit: number;
  /** Candidates each arm hands to fusion. */
  denseLimit: number;
  lexicalLimit: number;
  filter: QdrantFilter | undefined;
  fusion: Fusion;
  vectors: VectorNames & { sparse: string };
  /** Payload keys to return, or true for the whole payload. */
  withPayload: true | string[];
}

/**
 * Hybrid search as ONE `points/query/batch` call with two queries:
 *
 * 1. the fused query: two prefetches (dense, lexical), each with the filter inside, fused by the server;
 * 2. the true cosine: the same two prefetches, re-scored by the dense query vector.
 *
 * A query whose `prefetch` is set scores only the points its prefetches returned, exactly (no HNSW), so query 2
 * gives the dense cosine of every point in the union of both arms — a superset of whatever query 1 can return,
 * whatever the fusion and however ties at its cut fall. Its limit is the union's largest possible size. Asking
 * for the fused points' cosine after the first answer would need a second round trip; restricting a plain dense
 * search to "the same filter and a large limit" would miss points only the lexical arm found.
 * Query 2 asks for no payload: query 1 carries it.
 */
export function buildHybridQueryBatch(input: HybridQueryInput): QdrantQueryBatchArgs {
  const { vectors, filter } = input;
  const densePrefetch = (): QdrantPrefetch =>
    withFilter(withUsing<QdrantPrefetch>({ query: input.denseVector, limit: input.denseLimit }, vectors.dense), filter);
  const lexicalPrefetch = (): QdrantPrefetch =>
    withFilter(
      withUsing<QdrantPrefetch>(
        {
          query: { indices: [...input.sparseVector.indices], values: [...input.sparseVector.values] },
          limit: input.lexicalLimit,
        },
        vectors.sparse,
      ),
      filter,
    );
  const fused: QdrantQueryRequest = withFilter<QdrantQueryRequest>(
    {
      prefetch: [densePrefetch(), lexicalPrefetch()],
      query: toQdrantFusion(input.fusion),
      limit: input.limit,
      with_payload: input.withPayload,
      with_vector: false,
    },
    filter,
  );
  const cosine: QdrantQueryRequest = withFilter(
    withUsing<QdrantQueryRequest>(
      {
        prefetch: [densePrefetch(), lexicalPrefetch()],
        query: input.denseVector,
        limit: input.denseLimit + input.lexicalLimit,
        with_payload: false,
        with_vector: false,
      },
      vectors.dense,
    ),
    filter,
  );
  return { searches: [fused, cosine] };
}

export interface SingleArmQueryInput {
  limit: number;
  filter: QdrantFilter | undefined;
  withPayload: true | string[];
}

/** Dense search: one `points/query` call; the score is the cosine. */
export function buildDenseQuery(denseVector: number[], vectorName: string, input: SingleArmQueryInput): QdrantQueryArgs {
  return withFilter(
    withUsing<QdrantQueryArgs>({ query: denseVector, limit: input.limit, with_payload: input.withPayload, with_vector: false }, vectorName),
    input.filter,
  );
}

/** Lexical search: one `points/query` call on the sparse vector (the server applies IDF). */
export function buildLexicalQuery(sparseVector: SparseVector, vectorName: string, input: SingleArmQueryInput): QdrantQueryArgs {
  return withFilter(
    withUsing<QdrantQueryArgs>(
      {
        query: { indices: [...sparseVector.indices], values: [...sparseVector.values] },
        limit: input.limit,
        with_payload: input.withPayload,
        with_vector: false,
      },
      vectorName,
    ),
    input.filter,
  );
}

/**
 * Payload indexes the litm payload needs for its filters: source replacement and deletion, the ACL, dates,
 * clusters (`{ key: 'clusters', match: { any } }`) and kind (tiers).
 */
export const LITM_PAYLOAD_INDEXES: Readonly<Record<string, PayloadIndexSpec>> = {
  sourceId: 'keyword',
  acl: 'keyword',
  timestamp: 'datetime',
  clusters: 'keyword',
  kind: 'keyword',
};

interface CreateCollectionOptions {
  /** Collection metadata (`{ litm_pack: { embedding_model, dense_dimension } }`). */
  metadata?: Record<string, unknown>;
  /** Sharding and replication (only the settings given are sent; Qdrant's defaults otherwise). */
  cluster?: ClusterSettings;
}

/** The body of `createCollection`: a cosine dense vector and (when named) an IDF sparse vector. */
export function buildCreateCollection(vectors: VectorNames, size: number, options: CreateCollectionOptions = {}): QdrantCreateCollection {
  const params = { size, distance: 'Cosine' as const };
  const body: QdrantCreateCollection = { vectors: vectors.dense === '' ? params : { [vectors.dense]: params } };
  if (vectors.sparse !== null) body.sparse_vectors = { [vectors.sparse]: { modifier: 'idf' } };
  const cluster = options.cluster ?? {};
  if (cluster.shardingMethod === 'custom') body.sharding_method = 'custom';
  if (cluster.shardNumber !== undefined) body.shard_number = cluster.shardNumber;
  if (cluster.replicationFactor !== undefined) body.replication_factor = cluster.replicationFactor;
  if (cluster.writeConsistencyFactor !== undefined) body.write_consistency_factor = cluster.writeConsistencyFactor;
  if (options.metadata !== undefined) body.metadata = options.metadata;
  return body;
}

/**
 * The filter of `getChunks`: the sources, the point ids of the chunk ids, the caller's filter and the ACL,
 * all ANDed inside one scroll (so the engine reads only matching points).
 */
export function buildChunksFilter(input: {
  sourceIds?: readonly string[] | undefined;
  pointIds?: readonly string[] | undefined;
  filter?: QdrantFilter | undefined;
}): QdrantFilter {
  const must: QdrantCondition[] = [];
  if (input.sourceIds !== undefined) must.push({ key: 'sourceId', match: { any: [...input.sourceIds] } });
  if (input.pointIds !== undefined) must.push({ has_id: [...input.pointIds] });
  if (input.filter !== undefined) must.push(input.filter);
  return { must };
}

/**
 * `rankings` in hybrid mode as ONE `points/query/batch` call: the fused query exactly as `search` sends it,
 * then each arm alone (its raw top `armLimit`, dense cosine and BM25 score), with the same filter.
 */
export function buildRankingsBatch(input: HybridQueryInput): QdrantQueryBatchArgs {
  const [fused] = buildHybridQueryBatch(input).searches;
  const arm = (query: QdrantQueryRequest['query'], using: string, limit: number): QdrantQueryRequest =>
    buildArmQuery(query, using, { limit, filter: input.filter, withPayload: input.withPayload });
  return {
    searches: [
      fused!,
      arm(input.denseVector, input.vectors.dense, input.denseLimit),
      arm({ indices: [...input.sparseVector.indices], values: [...input.sparseVector.values] }, input.vectors.sparse, input.lexicalLimit),
    ],
  };
}

/** One arm alone in a batch: its raw top `limit` (dense cosine or BM25 score), with the filter. */
function buildArmQuery(query: QdrantQueryRequest['query'], using: string, input: SingleArmQueryInput): QdrantQueryRequest {
  return withFilter(
    withUsing<QdrantQueryRequest>({ query, limit: input.limit, with_payload: input.withPayload, with_vector: false }, using),
    input.filter,
  );
}

export interface DiverseQueryInput {
  mode: 'dense' | 'lexical' | 'hybrid';
  denseVector: number[];
  sparseVector: SparseVector | undefined;
  limit: number;
  /** Qdrant's `candidates_limit`: the pool MMR picks from (larger than `limit`). */
  candidates: number;
  /** Each arm's prefetch in hybrid mode. */
  armLimit: number;
  diversity: number;
  filter: QdrantFilter | undefined;
  fusion: Fusion;
  vectors: VectorNames;
  /** Payload keys the picked points return, or true for the whole payload. */
  withPayload: true | string[];
}

/**
 * Diverse search with Qdrant's server-side MMR (`{ nearest, mmr: { diversity, candidates_limit } }`, Qdrant
 * 1.15+). Dense: one query (its score is the cosine). Lexical and hybrid: one batch of two queries over the
 * same pool — the mode's own ranking of the `candidates` best (scores only) and the MMR pick over that pool
 * as a prefetch (with payloads; its score is the cosine) — so the picked points keep the mode's score.
 */
export function buildDiverseQuery(input: DiverseQueryInput): { query: QdrantQueryArgs } | { batch: QdrantQueryBatchArgs } {
  const { vectors, filter } = input;
  const mmr = { nearest: input.denseVector, mmr: { diversity: input.diversity, candidates_limit: input.candidates } };
  if (input.mode === 'dense') {
    return {
      query: withFilter(
        withUsing<QdrantQueryArgs>({ query: mmr, limit: input.limit, with_payload: input.withPayload, with_vector: false }, vectors.dense),
        filter,
      ),
    };
  }
  const sparse = (limit: number): QdrantPrefetch =>
    withFilter(
      withUsing<QdrantPrefetch>(
        { query: { indices: [...input.sparseVector!.indices], values: [...input.sparseVector!.values] }, limit },
        vectors.sparse!,
      ),
      filter,
    );
  const pool: QdrantPrefetch =
    input.mode === 'lexical'
      ? sparse(input.candidates)
      : withFilter<QdrantPrefetch>(
          {
            prefetch: [
              withFilter(withUsing<QdrantPrefetch>({ query: input.denseVector, limit: input.armLimit }, vectors.dense), filter),
              sparse(input.armLimit),
            ],
            query: toQdrantFusion(input.fusion),
            limit: input.candidates,
          },
          filter,
        );
  const scores: QdrantQueryRequest = { ...pool, with_payload: false, with_vector: false };
  const picked: QdrantQueryRequest = withFilter(
    withUsing<QdrantQueryRequest>(
      { prefetch: [pool], query: mmr, limit: input.limit, with_payload: input.withPayload, with_vector: false },
      vectors.dense,
    ),
    filter,
  );
  return { batch: { searches: [scores, picked] } };
}

/**
 * `rankings` with diversity as ONE `points/query/batch` call: the diverse search's queries exactly as `search`
 * sends them (`buildDiverseQuery`), then each arm the mode runs alone, as `rankings` without diversity asks for
 * it (hybrid: each arm's top `armLimit`; dense or lexical: the top `limit`). `searchQueries` says how many of
 * the answers belong to the search (1 or 2); the arms' answers follow, dense first.
 */
export function buildDiverseRankingsBatch(input: DiverseQueryInput): { batch: QdrantQueryBatchArgs; searchQueries: number } {
  const built = buildDiverseQuery(input);
  const searches: QdrantQueryRequest[] = 'query' in built ? [built.query] : [...built.batch.searches];
  const searchQueries = searches.length;
  const armInput = { limit: input.mode === 'hybrid' ? input.armLimit : input.limit, filter: input.filter, withPayload: input.withPayload };
  if (input.mode !== 'lexical') searches.push(buildArmQuery(input.denseVector, input.vectors.dense, armInput));
  if (input.mode !== 'dense') {
    const { indices, values } = input.sparseVector!;
    searches.push(buildArmQuery({ indices: [...indices], values: [...values] }, input.vectors.sparse!, armInput));
  }
  return { batch: { searches }, searchQueries };
}
