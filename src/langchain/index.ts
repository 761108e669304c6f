export { BundleRetriever } from './bundle-retriever.js';
export type { BundleRetrieverFields } from './bundle-retriever.js';
export { BriefingPackRetriever } from './briefing-pack-retriever.js';
export type { BriefingPackRetrieverFields } from './briefing-pack-retriever.js';
export type { RetrievalWithCitations } from './pack-retriever.js';
export { LitmCompressor, documentsToCandidates } from './litm-compressor.js';
export type { LitmCompressorOptions } from './litm-compressor.js';
export { formatDocumentsAsContext, LitmDocumentPrompt } from './format.js';
export { CompressorReranker } from './compressor-reranker.js';
export type { FormatDocumentsOptions, LitmDocumentPromptInput } from './format.js';
export type { LitmCaveatsMetadata, LitmDocumentMetadata, LitmItemMetadata } from '../adapters/packing.js';
export { PACK_SUMMARY_EVENT, SEARCH_RUN_NAME, PACK_RUN_NAME } from './tracing.js';
export { summarizePack } from '../adapters/packing.js';
export type {
  BriefingRetrieverOptions,
  BundleRetrieverOptions,
  LitmMetadata,
  PackSummary,
  PackerOptions,
} from '../adapters/packing.js';
export { CitedAnswerRunnable } from './cited-answer.js';
export type { CitedAnswerInput, CitedAnswerRunnableFields } from './cited-answer.js';
