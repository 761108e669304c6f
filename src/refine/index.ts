// Refinement stages between retrieval and packing: sentence selection, rerankers, diversity (MMR), and the
// containment that keeps an optional stage's failure from failing a pack.
export { splitSentences } from './split.js';
export type { SentenceRange } from './split.js';
export { ELISION, Selection, selectSentences, sentenceKey } from './sentences.js';
export type { SentenceSelectionSettings, SentenceVectors } from './sentences.js';
export { HttpReranker, HttpRerankerOptionsSchema, RerankerSchema } from './rerank.js';
export type { HttpRerankerOptions, Reranker, RerankOptions, RerankResult } from './rerank.js';
export { STAGE_RERANK, STAGE_SENTENCE_EMBEDDINGS, contain, faultCode, withTimeout } from './contain.js';
export {
  PipelineCompressSchema,
  RerankStageSchema,
  embedSentences,
  prepareCompress,
  rerankCandidates,
  rerankPools,
} from './stages.js';
export type { ParsedPipelineCompress, ParsedRerankStage, PipelineCompress, RerankStage } from './stages.js';
export { maximalMarginalRelevance } from './mmr.js';
