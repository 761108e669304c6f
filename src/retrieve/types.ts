import type { Candidate } from '../core/schemas.js';

/** A sparse vector as Qdrant stores it: parallel arrays, indices ascending and unique. */
export interface SparseVector {
  indices: number[];
  values: number[];
}

/** The subset of LangChain's `EmbeddingsInterface` litm-pack needs (any LangChain embeddings object fits). */
export interface EmbeddingsLike {
  embedQuery(text: string): Promise<number[]>;
  embedDocuments(texts: string[]): Promise<number[][]>;
}

export type SearchMode = 'hybrid' | 'dense' | 'lexical';

/** How hybrid search fuses its dense and lexical arms (Qdrant's `rrf` with optional k/weights, or `dbsf`). */
export type Fusion =
  | { method: 'rrf'; k?: number; weights?: { dense: number; lexical: number } }
  | { method: 'dbsf' };

// The filter language: the subset of Qdrant's JSON filter both stores implement, spelled as Qdrant spells it.
export type MatchValue = string | number | boolean;
export interface FieldCondition {
  key: string;
  match?: { value: MatchValue } | { any: MatchValue[] } | { except: MatchValue[] };
  range?: { gt?: number; gte?: number; lt?: number; lte?: number };
}
export type Condition = FieldCondition | Filter;
export interface Filter {
  must?: Condition | Condition[];
  should?: Condition | Condition[];
  must_not?: Condition | Condition[];
}

/** A document to ingest: markdown or plain text. */
export interface IngestDocument {
  /** The source id (a file path, URL, ticket number...). */
  id: string;
  text: string;
  version?: string;
  title?: string;
  url?: string;
  /** ISO 8601; copied to every chunk as `timestamp`. */
  timestamp?: string;
  metadata?: Record<string, unknown>;
  /** Principals allowed to read this document. Absent: readable by everyone. */
  acl?: string[];
  /** Named sets of sources this one belongs to (briefings draw representative context per cluster). */
  clusters?: string[];
  /** Tier of every chunk of this document (`insight`, `segment`, or any string). */
  kind?: string;
}

export interface SearchRequest {
  text: string;
  mode?: SearchMode;
  limit?: number;
  filter?: Filter;
  /** When given, only chunks whose ACL shares a value with these (or that have no ACL) are searched. */
  principals?: string[];
  fusion?: Fusion;
  /**
   * Maximal marginal relevance over the dense vectors of the candidate pool: 0 = pure relevance (the
   * default), 1 = maximum diversity. Needs embeddings.
   */
  diversity?: number;
  signal?: AbortSignal;
}

/** Chunks fetched by source, id or filter (no query): pins, clusters and citation checks read these. */
export interface GetChunksRequest {
  /** Chunks of these sources. */
  sourceIds?: string[];
  /** Chunks with these chunk ids. */
  ids?: string[];
  filter?: Filter;
  /** As in search: only chunks these principals may read (or that have no ACL). */
  principals?: string[];
  /** At most this many chunks. */
  limit?: number;
  signal?: AbortSignal;
}

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

export interface AddDocumentsOptions {
  /** Called after each document with the number done and the total. */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** What every store implements; `MemoryHybridStore` and `QdrantHybridStore` share the semantics. */
export interface Store {
  addDocuments(docs: IngestDocument[], options?: AddDocumentsOptions): Promise<AddDocumentsResult>;
  search(request: SearchRequest): Promise<Candidate[]>;
  /** Chunks by source, id or filter, in source order (sources as given, then by span), ACL applied. */
  getChunks?(request: GetChunksRequest): Promise<ChunkRecord[]>;
  /** Removes every chunk of these sources. */
  deleteSources?(sourceIds: string[], options?: { signal?: AbortSignal }): Promise<DeleteSourcesResult>;
  /** Each arm's raw ranking beside the fused one (same request as search). */
  rankings?(request: SearchRequest): Promise<Rankings>;
}

/**
 * One chunk as both stores keep it (the Qdrant payload is this record). Produced by ingest's chunker;
 * turned into a `Candidate` at search time.
 */
export interface ChunkRecord {
  /** Deterministic chunk id (the chunk key); Qdrant point ids are UUIDv5 of it. */
  id: string;
  sourceId: string;
  version?: string;
  title?: string;
  url?: string;
  /** Markdown heading path, outermost first. */
  section: string[];
  /** Exact: `document.text.slice(span.start, span.end) === text`. */
  span: { start: number; end: number };
  text: string;
  textSha256: string;
  /** ISO 8601 time of first ingest of this chunk content. */
  indexedAt: string;
  timestamp?: string;
  kind?: string;
  /** Token counts keyed by encoding name (e.g. `{ o200k_base: 212, cl100k_base: 220 }`). */
  tokens: Record<string, number>;
  /** Principals allowed to read; absent = everyone. */
  acl?: string[];
  /** Clusters of the chunk's source. */
  clusters?: string[];
  metadata?: Record<string, unknown>;
}
