import type { Candidate } from '../core/schemas.js';
import type { AddDocumentsOptions, ChunkRecord, GetChunksRequest, IngestDocument, SearchMode, SearchRequest } from './schemas.js';

export type {
  Principals,
  AddDocumentsOptions,
  ChunkRecord,
  Region,
  Fusion,
  GetChunksRequest,
  IngestDocument,
  SearchMode,
  SearchRequest,
} from './schemas.js';

export type { SparseVector } from '../tokenize/bm25.js';

/** The subset of LangChain's `EmbeddingsInterface` litm-pack needs (any LangChain embeddings object fits). */
export interface EmbeddingsLike {
  embedQuery(text: string): Promise<number[]>;
  embedDocuments(texts: string[]): Promise<number[][]>;
}

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

