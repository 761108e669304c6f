export { BundleRetriever } from './bundle-retriever.js';
export { BriefingPackRetriever } from './briefing-pack-retriever.js';
export { LitmPostprocessor } from './litm-postprocessor.js';
export type { LitmPostprocessorOptions } from './litm-postprocessor.js';
export type { NodesWithCitations } from './pack-retriever.js';
export { nodesToCandidates } from './nodes.js';
export { PostprocessorReranker } from './postprocessor-reranker.js';
export type {
  BriefingRetrieverOptions,
  BundleRetrieverOptions,
  LitmMetadata,
  PackSummary,
} from '../adapters/packing.js';
