export { BundleRetriever } from './bundle-retriever.js';
export { BriefingPackRetriever } from './briefing-pack-retriever.js';
export { LitmPostprocessor } from './litm-postprocessor.js';
export type { LitmPostprocessorOptions } from './litm-postprocessor.js';
export type { NodesWithCitations } from './pack-retriever.js';
export { nodesToCandidates, PackedTextNode } from './nodes.js';
export { PostprocessorReranker } from './postprocessor-reranker.js';
export type {
  BriefingRetrieverOptions,
  BundleRetrieverOptions,
  LitmCaveatsMetadata,
  LitmDocumentMetadata,
  LitmItemMetadata,
  LitmMetadata,
  PackSummary,
  PackerOptions,
} from '../adapters/packing.js';
export { resolveResponseCitations, citablePackFromNodes } from './cited-response.js';
export type { ResolveResponseOptions, ResponseLike } from './cited-response.js';
