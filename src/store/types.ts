import { z } from 'zod';
import type { Candidate, Degraded } from '../core/schemas.js';
import type { AddDocumentsOptions, ChunkRecord, GetChunksRequest, IngestDocument, SearchMode, SearchRequest } from './schemas.js';

/** One entry of an arm's raw ranking. */
export interface RankedChunk {
  /** Chunk id. */
  id: string;
  sourceId: string;
  score: number;
  /** 1-based position in this ranking. */
  position: number;
}

/** Each arm's raw ranking beside the fused one, for tuning fusion (`null`: the arm did not run). */
export interface Rankings {
  mode: SearchMode;
  dense: RankedChunk[] | null;
  lexical: RankedChunk[] | null;
  fused: RankedChunk[];
}

export interface DeleteSourcesResult {
  /** Sources that existed and were removed. */
  sources: number;
  /** Chunks removed with them. */
  chunks: number;
}

export interface AddDocumentsResult {
  /** Chunks written (new or changed). */
  added: number;
  /** Chunks already present with the same content (re-ingesting the same version). */
  unchanged: number;
  /** Chunks removed because their source has a new version. */
  removed: number;
}

/** What every store implements; `MemoryHybridStore` and `QdrantHybridStore` share the semantics. */
/**
 * What a store's `search` may say about an arm it could not run (a hybrid search on a Qdrant collection without
 * a sparse vector ran dense only): a list of `Degraded` under this key of the returned array. The pipeline
 * carries it into `pack.degraded`, beside a bypassed reranker's. Not enumerable, so the candidates serialise as
 * before.
 */
export const SEARCH_DEGRADED: unique symbol = Symbol.for('litm-pack.search.degraded');

/** Marks `candidates` (as a store's search returns them) with the arms that could not run. */
export function withSearchDegraded(candidates: Candidate[], degraded: readonly Degraded[]): Candidate[] {
  if (degraded.length > 0) Object.defineProperty(candidates, SEARCH_DEGRADED, { value: [...degraded], enumerable: false });
  return candidates;
}

/** The degradations a store's search reported on its answer (none for most). */
export function searchDegradedOf(candidates: readonly Candidate[]): Degraded[] {
  const degraded = (candidates as { [SEARCH_DEGRADED]?: Degraded[] })[SEARCH_DEGRADED];
  return degraded === undefined ? [] : [...degraded];
}

/** A page of the sources a caller may read, by id. */
export interface ListSourcesRequest {
  /** Whom the listing is for, as in search: sources with a chunk these principals may read; `'all'`: every source. */
  principals: string[] | 'all';
  /** Sources after this id (code-unit order); absent: from the first. */
  after?: string | undefined;
  /** At most this many sources. */
  limit: number;
  signal?: AbortSignal | undefined;
}

export interface ListSourcesPage {
  /** Sources in code-unit order of their ids, each with the title of its first chunk when it has one. */
  sources: { sourceId: string; title?: string }[];
  /** The id to give as `after` for the next page; absent when this page is the last. */
  next?: string;
}

export interface Store {
  addDocuments(docs: IngestDocument[], options?: AddDocumentsOptions): Promise<AddDocumentsResult>;
  /** The pool for a request; an arm that could not run may be reported on the array (`SEARCH_DEGRADED`). */
  search(request: SearchRequest): Promise<Candidate[]>;
  /** Chunks by source, id or filter, in source order (sources as given, then by span), ACL applied. */
  getChunks?(request: GetChunksRequest): Promise<ChunkRecord[]>;
  /** Removes every chunk of these sources. */
  deleteSources?(sourceIds: string[], options?: { signal?: AbortSignal }): Promise<DeleteSourcesResult>;
  /** Each arm's raw ranking beside the fused one (same request as search). */
  rankings?(request: SearchRequest): Promise<Rankings>;
  /**
   * The sources a caller may read, a page at a time from an index of sources (not a scan of chunks), with a
   * cursor that reaches every source. Optional: MCP's `resources/list` reads a store without it through
   * `sources()` (the embedded store's list) or a bounded scan of `getChunks`.
   */
  listSources?(request: ListSourcesRequest): Promise<ListSourcesPage>;
}

/** A `Store` option: anything with a search(request) method. */
export const StoreSchema = z.custom<Store>(
  (value) => typeof value === 'object' && value !== null && typeof (value as { search?: unknown }).search === 'function',
  { message: 'store must be a Store (an object with a search(request) method), e.g. a MemoryHybridStore or QdrantHybridStore' },
);
