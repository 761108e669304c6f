// Root entry: packing, the embedded store, the pipeline, errors and the schemas a caller needs. Loaders live
// under litm-pack/sources, the Qdrant store under litm-pack/qdrant, the HTTP API under litm-pack/server, MCP
// under litm-pack/mcp, the framework adapters under litm-pack/langchain and litm-pack/llamaindex, so
// importing the root loads none of them. api/litm-pack.txt lists what is exported here; growing it is a decision.

// Packing
export { packBundle } from './core/bundle.js';
export { packBriefing } from './core/briefing.js';
export { toCanonicalJson } from './core/pack.js';
export { orderForLongContext } from './core/layout.js';
export { computeCoverage } from './core/coverage.js';
export { splitSentences } from './core/split.js';
export {
  BriefingOptionsSchema,
  BundleOptionsSchema,
  CandidateSchema,
  CompressOptionsSchema,
  CoverageThresholdsSchema,
  DEFAULT_HEADER,
  DedupeOptionsSchema,
  DegradedSchema,
  EncodingSchema,
  FormatSchema,
  HeaderSchema,
  LocatorSchema,
  MAX_BUDGET_TOKENS,
  ORDERS,
  OrderSchema,
  PACK_SCHEMA_ID,
  PackSchema,
} from './core/schemas.js';
export type {
  BriefingOptions,
  BriefingSlots,
  BundleOptions,
  BundleOrder,
  Candidate,
  CandidateInput,
  Citation,
  CompressOptions,
  Confidence,
  Coverage,
  CoverageThresholds,
  DedupeOptions,
  Degraded,
  DropReason,
  Dropped,
  HeaderStyle,
  ItemRole,
  Locator,
  Pack,
  PackFormat,
  PackItem,
  Span,
} from './core/schemas.js';
export type { SentenceVectors } from './core/sentences.js';

// Tokens
export { getTokenizer, vocabularySource } from './tokenize/tiktoken.js';
export { DEFAULT_ENCODING, ENCODINGS } from './tokenize/types.js';
export type { EncodingName, Tokenizer } from './tokenize/types.js';
export { encodeBm25Document, encodeBm25Query, tokenizeBm25 } from './tokenize/bm25.js';
export type { SparseVector } from './tokenize/bm25.js';

// Errors and limits
export { ERROR_SURFACES, LitmPackError, isLitmPackError } from './base/errors.js';
export type { ErrorSurface, LitmPackErrorCode, LitmPackErrorOptions } from './base/errors.js';
export { MAX_METADATA_DEPTH, MAX_METADATA_SIZE } from './base/metadata.js';

// The store contract, and the embedded store
export {
  ChunkRecordSchema,
  EmbeddingsSchema,
  FilterSchema,
  FusionSchema,
  IngestDocumentSchema,
  RegionSchema,
  SEARCH_MODES,
  SearchModeSchema,
  SearchRequestSchema,
} from './store/schemas.js';
export type {
  AddDocumentsOptions,
  ChunkRecord,
  Fusion,
  GetChunksRequest,
  IngestDocument,
  Region,
  SearchMode,
  SearchRequest,
} from './store/schemas.js';
export { withSearchDegraded } from './store/types.js';
export type { AddDocumentsResult, DeleteSourcesResult, RankedChunk, Rankings, Store } from './store/types.js';
export { matchesFilter, validateFilter } from './store/filter.js';
export type { Condition, FieldCondition, Filter, MatchValue } from './store/filter.js';
export type { EmbeddingsInput, EmbeddingsLike, LlamaIndexEmbeddingLike } from './store/embeddings.js';
export { chunkDocument } from './store/chunk.js';
export { maximalMarginalRelevance } from './store/mmr.js';
export { MemoryHybridStore } from './memory/memory-hybrid-store.js';
export type { MemoryHybridStoreOptions, MemoryStoreUpdateOptions, SourceInfo } from './memory/memory-hybrid-store.js';
export { ReloadingStore } from './memory/reloading-store.js';
export type { ReloadingStoreOptions } from './memory/reloading-store.js';
export { StoreLockedError, withStoreLock } from './memory/lock.js';
export type { StoreLockHolder, StoreLockOptions } from './memory/lock.js';
export { OpenAICompatibleEmbeddings, OpenAICompatibleEmbeddingsOptionsSchema } from './embeddings/openai-compatible.js';
export type { OpenAICompatibleEmbeddingsOptions } from './embeddings/openai-compatible.js';

// The pipeline: documents in, packs out, citations checked
export { loadDocuments } from './sources/load.js';
export type { LoadDocumentsOptions, LoadWarning, SkippedFile } from './sources/load.js';
export { fromLangChainDocuments, fromLlamaIndexDocuments } from './sources/frameworks.js';
export type { LangChainDocumentLike, LlamaIndexNodeLike } from './sources/frameworks.js';
export { HttpReranker } from './refine/rerank.js';
export type { HttpRerankerOptions, Reranker, RerankOptions, RerankResult } from './refine/rerank.js';
export { PipelineCompressSchema, RerankStageSchema } from './refine/stages.js';
export type { PipelineCompress, RerankStage } from './refine/stages.js';
export { BundleRequestSchema, PackCandidatesRequestSchema, assembleBundle, packCandidates } from './pipeline/bundle.js';
export type { Assembled, BundleRequest, PackCandidatesRequest, PipelineHooks } from './pipeline/bundle.js';
export { BriefingRequestSchema, assembleBriefing } from './pipeline/briefing.js';
export type { Briefing, BriefingRequest } from './pipeline/briefing.js';
export { PIPELINE_DEFAULTS, PIPELINE_LIMITS } from './pipeline/defaults.js';
export { applyIngest, ingestPaths, pruneGone, readPaths } from './pipeline/ingest.js';
export type { ApplyIngestOptions, IngestRead, IngestResult, ReadPathsOptions } from './pipeline/ingest.js';
export {
  CitationCheckSchema,
  CitationStatusSchema,
  VerifiableCitationSchema,
  VerifiablePackSchema,
  VerifyCitationsOptionsSchema,
  verifyCitations,
} from './verify/verify.js';
export type {
  CitationCheck,
  CitationStatus,
  ClosestPassage,
  VerifiableCitation,
  VerifiablePack,
  VerifyCitationsOptions,
} from './verify/verify.js';

// Reports
export { renderPackReport } from './inspect/pack-report.js';
export { renderGoldenSetReport } from './inspect/golden-report.js';
export type { GoldenRun, GoldenSetReportOptions } from './inspect/golden-report.js';
