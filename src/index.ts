// Root entry: the pure core, the tokenizer, the embedded store. Framework adapters and the Qdrant store
// live under subpaths (litm-pack/langchain, litm-pack/llamaindex, litm-pack/qdrant) so importing the root
// loads none of them.
export { packBundle } from './core/bundle.js';
export { packBriefing } from './core/briefing.js';
export { toCanonicalJson } from './core/pack.js';
export { compareCandidates } from './core/finish.js';
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
export { escapeBody } from './render/escape.js';
export { MAX_METADATA_DEPTH, MAX_METADATA_SIZE } from './base/metadata.js';
export { renderPackReport } from './inspect/pack-report.js';
export { renderGoldenSetReport } from './inspect/golden-report.js';
export type { GoldenRun, GoldenSetReportOptions } from './inspect/golden-report.js';
export type { Store, AddDocumentsResult, DeleteSourcesResult, Rankings, RankedChunk } from './store/types.js';
export type { SearchRequest, SearchMode, Fusion, IngestDocument, ChunkRecord, Region, AddDocumentsOptions, GetChunksRequest } from './store/schemas.js';
export type { Filter, FieldCondition, Condition, MatchValue } from './store/filter.js';
export type { EmbeddingsLike } from './store/embeddings.js';
export type { SparseVector } from './tokenize/bm25.js';
export { SEARCH_DEGRADED, searchDegradedOf, withSearchDegraded } from './store/types.js';
export { MemoryHybridStore } from './memory/memory-hybrid-store.js';
export { MEMORY_STORE_SCHEMA } from './memory/file.js';
export type { MemoryHybridStoreOptions, MemoryStoreUpdateOptions, SourceInfo } from './memory/memory-hybrid-store.js';
export { ReloadingStore } from './memory/reloading-store.js';
export type { ReloadingStoreOptions } from './memory/reloading-store.js';
export { DEFAULT_LOCK_WAIT_MS, StoreLockedError, acquireStoreLock, storeLockPath, withStoreLock } from './memory/lock.js';
export type { StoreLockHolder, StoreLockOptions } from './memory/lock.js';
export { removeStaleTemporaries } from './memory/file.js';
export { encodeBm25Document, encodeBm25Query, tokenizeBm25 } from './tokenize/bm25.js';
export { embeddingModelName } from './store/embeddings.js';
export type { EmbeddingsInput, LlamaIndexEmbeddingLike } from './store/embeddings.js';
export { OpenAICompatibleEmbeddings, OpenAICompatibleEmbeddingsOptionsSchema } from './embeddings/openai-compatible.js';
export type { OpenAICompatibleEmbeddingsOptions } from './embeddings/openai-compatible.js';
export { chunkDocument, chunkToCandidate } from './store/chunk.js';
export { readFrontMatter } from './sources/front-matter.js';
export type { FrontMatter } from './sources/front-matter.js';
export { validateFilter, matchesFilter } from './store/filter.js';
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
} from './store/schemas.js';
export { HttpReranker } from './refine/rerank.js';
export { PipelineCompressSchema, RerankStageSchema, embedSentences, prepareCompress, rerankCandidates } from './refine/stages.js';
export { STAGE_RERANK, STAGE_SENTENCE_EMBEDDINGS } from './refine/contain.js';
export { ELISION, sentenceKey } from './core/sentences.js';
export type { SentenceVectors } from './core/sentences.js';
export { splitSentences } from './core/split.js';
export { maximalMarginalRelevance } from './store/mmr.js';
export type { HttpRerankerOptions, Reranker, RerankOptions, RerankResult } from './refine/rerank.js';
export type { PipelineCompress, RerankStage } from './refine/stages.js';
export {
  assembleBundle,
  packCandidates,
  BundleRequestSchema,
  PackCandidatesRequestSchema,
} from './pipeline/bundle.js';
export type { Assembled, BundleRequest, PackCandidatesRequest, PipelineHooks } from './pipeline/bundle.js';
export { PIPELINE_DEFAULTS, PIPELINE_LIMITS } from './pipeline/defaults.js';
export { loadDocuments, defaultLoaders, describeSkipped, LoadDocumentsOptionsSchema } from './sources/load.js';
export { DEFAULT_LOAD_LIMITS } from './sources/limits.js';
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
