// litm-pack/llm: packs as the LLM APIs' own citation inputs, the model's citations mapped back, answers
// checked, evaluation harnesses fed. Pure: no provider SDK, no framework, no I/O.
export {
  toAnthropicSearchResults,
  toAnthropicDocuments,
  assertAnthropicRequest,
  litmSourceUri,
  AnthropicBlocksOptionsSchema,
  AnthropicDocumentsOptionsSchema,
  CitablePackSchema,
} from './anthropic.js';
export type {
  AnthropicBlocksOptions,
  AnthropicDocumentsOptions,
  AnthropicSearchResultBlock,
  AnthropicContentDocumentBlock,
  AnthropicTextDocumentBlock,
  AnthropicTextBlockParam,
  CitablePack,
} from './anthropic.js';
export { resolveAnthropicCitations, ResolveOptionsSchema } from './resolve.js';
export type { ResolvedCitation, ResolvedTextBlock, ResolveOptions } from './resolve.js';
export { checkAnswerCitations, citationInstructions, resolveAnswer } from './answer.js';
export type { AnswerCheck, AnswerQuote, AnswerRef, CitedAnswer } from './answer.js';
export { toEvalSample, toRagasSample, toDeepEvalTestCase, toPromptfooTestCase, EvalSampleOptionsSchema } from './eval.js';
export type { EvalSample, EvalSampleOptions, RagasSample, DeepEvalTestCase, PromptfooTestCase } from './eval.js';
export { toAiSdkSources } from './ai-sdk.js';
export type { AiSdkSourceDocumentPart } from './ai-sdk.js';
export { GRANULARITIES } from './units.js';
export type { Granularity, TextRange } from './units.js';
