// Root entry: the pure core, the tokenizer, the embedded store. Framework adapters and the Qdrant store
// live under subpaths (litm-pack/langchain, litm-pack/llamaindex, litm-pack/qdrant) so importing the root
// loads none of them.
export { packBundle, packBriefing, toCanonicalJson, compareCandidates } from './core/pack.js';
export { orderForLongContext, orderBlocks } from './core/layout.js';
export { computeCoverage, confidenceFor } from './core/coverage.js';
export { canonicalStringify, sha256Hex } from './base/canonical.js';
export { LitmPackError, isLitmPackError, ERROR_SURFACES } from './base/errors.js';
export type { LitmPackErrorCode, LitmPackErrorOptions, ErrorSurface } from './base/errors.js';
export {
  CandidateSchema,
  PackSchema,
  BundleOptionsSchema,
  BriefingOptionsSchema,
  CoverageThresholdsSchema,
  DedupeOptionsSchema,
  DegradedSchema,
  CompressOptionsSchema,
  FormatSchema,
  EncodingSchema,
  PACK_SCHEMA_ID,
  MAX_BUDGET_TOKENS,
  LocatorSchema,
  HeaderSchema,
  OrderSchema,
  ORDERS,
  DEFAULT_HEADER,
} from './core/schemas.js';
export type {
  Candidate,
  CandidateInput,
  Locator,
  Pack,
  PackItem,
  Citation,
  Coverage,
  Confidence,
  Dropped,
  DropReason,
  Degraded,
  CompressOptions,
  ItemRole,
  PackFormat,
  HeaderStyle,
  BundleOrder,
  BundleOptions,
  BriefingOptions,
  BriefingSlots,
  CoverageThresholds,
  DedupeOptions,
  Span,
} from './core/schemas.js';
export { getTokenizer, vocabularySource } from './tokenize/tiktoken.js';
export { ENCODINGS, DEFAULT_ENCODING } from './tokenize/types.js';
export type { Tokenizer, EncodingName } from './tokenize/types.js';
export { escapeBody } from './render/render.js';
export { MAX_METADATA_DEPTH, MAX_METADATA_SIZE } from './base/metadata.js';
export { renderPackReport, renderGoldenSetReport } from './inspect/index.js';
export type { GoldenRun, GoldenSetReportOptions } from './inspect/index.js';
export type {
  Store,
  SearchRequest,
  SearchMode,
  Fusion,
  Filter,
  FieldCondition,
  Condition,
  MatchValue,
  IngestDocument,
  ChunkRecord,
  Region,
  EmbeddingsLike,
  SparseVector,
  AddDocumentsResult,
  AddDocumentsOptions,
  GetChunksRequest,
  DeleteSourcesResult,
  Rankings,
  RankedChunk,
} from './retrieve/types.js';
export { SEARCH_DEGRADED, searchDegradedOf, withSearchDegraded } from './retrieve/types.js';
export { MemoryHybridStore, MEMORY_STORE_SCHEMA } from './retrieve/memory-store.js';
export type { MemoryHybridStoreOptions, MemoryStoreUpdateOptions, SourceInfo } from './retrieve/memory-store.js';
export { ReloadingStore } from './retrieve/reloading-store.js';
export type { ReloadingStoreOptions } from './retrieve/reloading-store.js';
export { DEFAULT_LOCK_WAIT_MS, StoreLockedError, acquireStoreLock, storeLockPath, withStoreLock } from './retrieve/store-lock.js';
export type { StoreLockHolder, StoreLockOptions } from './retrieve/store-lock.js';
export { removeStaleTemporaries } from './retrieve/memory-file.js';
export { encodeBm25Document, encodeBm25Query, tokenizeBm25 } from './tokenize/bm25.js';
export { embeddingModelName } from './retrieve/embeddings.js';
export type { EmbeddingsInput, LlamaIndexEmbeddingLike } from './retrieve/embeddings.js';
export { OpenAICompatibleEmbeddings, OpenAICompatibleEmbeddingsOptionsSchema } from './embeddings/openai-compatible.js';
export type { OpenAICompatibleEmbeddingsOptions } from './embeddings/openai-compatible.js';
export { chunkDocument, chunkToCandidate } from './retrieve/chunk.js';
export { readFrontMatter } from './sources/front-matter.js';
export type { FrontMatter } from './sources/front-matter.js';
export { validateFilter, matchesFilter } from './retrieve/filter.js';
export {
  SEARCH_MODES,
  SearchModeSchema,
  SearchRequestSchema,
  FusionSchema,
  EmbeddingsSchema,
  FilterSchema,
  IngestDocumentSchema,
  ChunkRecordSchema,
  RegionSchema,
} from './retrieve/schemas.js';
export {
  HttpReranker,
  PipelineCompressSchema,
  RerankStageSchema,
  STAGE_RERANK,
  STAGE_SENTENCE_EMBEDDINGS,
  embedSentences,
  prepareCompress,
  rerankCandidates,
} from './refine/index.js';
export { ELISION, sentenceKey } from './core/sentences.js';
export type { SentenceVectors } from './core/sentences.js';
export { splitSentences } from './core/split.js';
export { maximalMarginalRelevance } from './retrieve/mmr.js';
export type {
  HttpRerankerOptions,
  PipelineCompress,
  RerankStage,
  Reranker,
  RerankOptions,
  RerankResult,
} from './refine/index.js';
export {
  assembleBundle,
  packCandidates,
  BundleRequestSchema,
  PackCandidatesRequestSchema,
} from './pipeline/bundle.js';
export type { Assembled, BundleRequest, PackCandidatesRequest, PipelineHooks } from './pipeline/bundle.js';
export { PIPELINE_DEFAULTS, PIPELINE_LIMITS } from './pipeline/defaults.js';
export { loadDocuments, defaultLoaders, describeSkipped, LoadDocumentsOptionsSchema, DEFAULT_LOAD_LIMITS } from './sources/load.js';
export type { LoadDocumentsOptions, SkippedFile, LoadWarning } from './sources/load.js';
export { markdownLoader, textLoader, decodeText } from './sources/text.js';
export { htmlLoader } from './sources/html.js';
export { pdfLoader } from './sources/pdf.js';
export { codeLoader } from './sources/code.js';
export { emailLoader, splitMbox } from './sources/email.js';
export { transcriptLoader, parseCues } from './sources/transcript.js';
export { recordsLoader, RecordsMappingSchema } from './sources/records.js';
export type { RecordsMapping } from './sources/records.js';
export { watchDocuments, applyFileChanges } from './sources/watch.js';
export type { WatchDocumentsOptions, WatchBatch, DocumentWatcher } from './sources/watch.js';
export { fromLangChainDocuments, fromLlamaIndexDocuments } from './sources/frameworks.js';
export type { LangChainDocumentLike, LlamaIndexNodeLike } from './sources/frameworks.js';
export type { Loader, LoaderInput, LoaderResult, LoaderContext, LoadLimits, SkipNotice } from './sources/loader.js';
export {
  assembleBriefing,
  BriefingRequestSchema,
  DEFAULT_MAX_PINS,
  DEFAULT_MAX_CLUSTERS,
  DEFAULT_MAX_CLUSTER_SOURCES,
} from './pipeline/briefing.js';
export type { Briefing, BriefingRequest } from './pipeline/briefing.js';
export {
  verifyCitations,
  CitationCheckSchema,
  CitationStatusSchema,
  VerifiableCitationSchema,
  VerifiablePackSchema,
  VerifyCitationsOptionsSchema,
} from './verify/verify.js';
export type {
  CitationCheck,
  CitationStatus,
  ClosestPassage,
  VerifiableCitation,
  VerifiablePack,
  VerifyCitationsOptions,
} from './verify/verify.js';
