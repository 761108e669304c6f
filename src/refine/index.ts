// The optional stages between retrieval and packing that call a service: rerankers and sentence vectors,
// with the containment that keeps their failure from failing a pack. (Sentence selection itself is the
// packer's, in core; MMR runs inside the stores' search, in retrieve.)
export { HttpReranker, HttpRerankerOptionsSchema, RerankerSchema } from './rerank.js';
export type { HttpRerankerOptions, Reranker, RerankOptions, RerankResult } from './rerank.js';
export { STAGE_RERANK, STAGE_SENTENCE_EMBEDDINGS, contain, faultCode, withTimeout } from './contain.js';
export { PipelineCompressSchema, RerankStageSchema, embedSentences, prepareCompress, rerankCandidates, rerankPools } from './stages.js';
export type { ParsedPipelineCompress, ParsedRerankStage, PipelineCompress, RerankStage } from './stages.js';
