/**
 * A pack as an evaluation harness's sample. Harnesses score context precision by list order (a relevant
 * context ranked low costs more than one ranked high), so contexts go in RANK order (best first) with their
 * chunk ids, never in the Lost-in-the-Middle order the model read them in. Items that showed no text (pin
 * pointers) are left out: the model never saw them; a briefing's caveats block is no context either.
 *
 * The shapers write each harness's documented field names: RAGAS 0.4 `SingleTurnSample` (`user_input`,
 * `retrieved_contexts`, `retrieved_context_ids`, `response`, `reference`), DeepEval `LLMTestCase` (`input`,
 * `actual_output`, `expected_output`, `retrieval_context`), promptfoo test cases (`vars.context` as an array
 * of strings, which its context assertions read, with var expansion off so the array stays one test).
 */
import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { CitablePackSchema, type CitablePack } from './anthropic.js';

export const EvalSampleOptionsSchema = z.strictObject({
  /** The question asked; the pack's query when absent. */
  question: z.string().optional(),
  /** The model's answer. */
  answer: z.string().optional(),
  /** The reference (ground truth) answer. */
  reference: z.string().optional(),
});
export type EvalSampleOptions = z.input<typeof EvalSampleOptionsSchema>;

export interface EvalSample {
  question: string;
  answer?: string;
  reference?: string;
  /** Item texts in rank order (best first). */
  contexts: string[];
  /** The chunk id of each context. */
  contextIds: string[];
  /** The `[ref]` each context had in the pack's context (its place in what the model read). */
  contextRefs: number[];
  packHash: string;
}

/** The pack as one evaluation sample, contexts in rank order. */
export function toEvalSample(pack: CitablePack, options: EvalSampleOptions = {}): EvalSample {
  const parsed = parseOrThrow(CitablePackSchema, pack, 'pack');
  const { question, answer, reference } = parseOrThrow(EvalSampleOptionsSchema, options, 'eval sample options');
  const ranked = parsed.items
    .map((item, index) => ({ item, citation: parsed.citations[index] }))
    .filter(({ item }) => !item.pointer && item.text.trim() !== '')
    .sort((a, b) => a.item.rank - b.item.rank);
  const sample: EvalSample = {
    question: question ?? parsed.query,
    contexts: ranked.map(({ item }) => item.text),
    contextIds: ranked.map(({ item, citation }) => citation?.chunkId ?? item.id),
    contextRefs: ranked.map(({ item }) => item.ref),
    packHash: parsed.packHash,
  };
  if (answer !== undefined) sample.answer = answer;
  if (reference !== undefined) sample.reference = reference;
  return sample;
}

/** A RAGAS (0.4) `SingleTurnSample` as a dict: `SingleTurnSample(**toRagasSample(sample))`, or one row of `EvaluationDataset.from_list`. */
export interface RagasSample {
  user_input: string;
  retrieved_contexts: string[];
  retrieved_context_ids: string[];
  response?: string;
  reference?: string;
}

export function toRagasSample(sample: EvalSample): RagasSample {
  const out: RagasSample = {
    user_input: sample.question,
    retrieved_contexts: [...sample.contexts],
    retrieved_context_ids: [...sample.contextIds],
  };
  if (sample.answer !== undefined) out.response = sample.answer;
  if (sample.reference !== undefined) out.reference = sample.reference;
  return out;
}

/** A DeepEval `LLMTestCase`'s arguments: `LLMTestCase(**toDeepEvalTestCase(sample))`. */
export interface DeepEvalTestCase {
  input: string;
  actual_output?: string;
  expected_output?: string;
  retrieval_context: string[];
}

export function toDeepEvalTestCase(sample: EvalSample): DeepEvalTestCase {
  const out: DeepEvalTestCase = { input: sample.question, retrieval_context: [...sample.contexts] };
  if (sample.answer !== undefined) out.actual_output = sample.answer;
  if (sample.reference !== undefined) out.expected_output = sample.reference;
  return out;
}

/** A promptfoo test case: the question as `vars.query`, contexts as `vars.context` (what its context-* assertions read). */
export interface PromptfooTestCase {
  description: string;
  vars: { query: string; context: string[]; context_ids: string[]; answer?: string; reference?: string };
  /** promptfoo turns an array var into one test per element unless told not to. */
  options: { disableVarExpansion: true };
  assert?: Record<string, unknown>[];
}

export function toPromptfooTestCase(
  sample: EvalSample,
  options: { description?: string; assert?: Record<string, unknown>[] } = {},
): PromptfooTestCase {
  const vars: PromptfooTestCase['vars'] = { query: sample.question, context: [...sample.contexts], context_ids: [...sample.contextIds] };
  if (sample.answer !== undefined) vars.answer = sample.answer;
  if (sample.reference !== undefined) vars.reference = sample.reference;
  const out: PromptfooTestCase = { description: options.description ?? sample.question, vars, options: { disableVarExpansion: true } };
  if (options.assert !== undefined) out.assert = options.assert;
  return out;
}
