/**
 * The asynchronous refine stages the pipeline runs between retrieval and packing, each contained: a reranker
 * over the top of the pool, and the sentence vectors sentence selection blends in. A failure or timeout
 * falls back (the fused order; BM25-only sentence scores) and is reported, never thrown.
 */
import { z } from 'zod';
import { BoundedCache, cacheFor } from '../base/bounded-cache.js';
import { parseOrThrow } from '../base/errors.js';
import { SPAN_RERANK, inSpan } from '../base/trace.js';
import { isVector } from '../base/vectors.js';
import { compareCandidates } from '../core/finish.js';
import { CompressOptionsSchema, type Candidate, type CompressOptions, type Degraded } from '../core/schemas.js';
import { EmbeddingsSchema } from '../store/schemas.js';
import type { EmbeddingsLike } from '../store/embeddings.js';
import { STAGE_RERANK, STAGE_SENTENCE_EMBEDDINGS, contain } from './contain.js';
import { RerankerSchema } from './rerank.js';
import { keyedSentences, type SentenceVectors } from '../core/sentences.js';

/** The rerank stage's defaults and bounds (the schema below and every door's help read them). */
export const RERANK_STAGE = Object.freeze({ topN: 50, maxTopN: 1000, timeoutMs: 10_000, maxTimeoutMs: 600_000 });

/** `rerank` on the retrievers, the compressor/postprocessor and the pipeline. */
export const RerankStageSchema = z.strictObject({
  reranker: RerankerSchema,
  /** How many of the pool's best candidates the reranker scores; only they are packed (docs/packing.md). */
  topN: z.number().int().positive().max(RERANK_STAGE.maxTopN).default(RERANK_STAGE.topN),
  /** A reranker slower than this is abandoned: the pack keeps the fused order and reports `rerank` degraded. */
  timeoutMs: z.number().int().positive().max(RERANK_STAGE.maxTimeoutMs).default(RERANK_STAGE.timeoutMs),
});
export type RerankStage = z.input<typeof RerankStageSchema>;
export type ParsedRerankStage = z.output<typeof RerankStageSchema>;

/**
 * `compress` where the pipeline runs (retrievers, compressor, postprocessor, CLI): the packer's options,
 * with `embeddings` (sentence vectors are computed here, one batched call per pack) instead of `vectors`.
 */
export const PipelineCompressSchema = CompressOptionsSchema.omit({ vectors: true }).extend({
  embeddings: EmbeddingsSchema.optional(),
  /** Sentence embeddings slower than this are abandoned: selection runs on BM25 alone and reports it. */
  timeoutMs: z.number().int().positive().max(600_000).default(5_000),
});
export type PipelineCompress = z.input<typeof PipelineCompressSchema>;
export type ParsedPipelineCompress = z.output<typeof PipelineCompressSchema>;

/**
 * Reranks the pool's `topN` best candidates: the reranker's score becomes the candidate's score and the
 * retrieval score moves to `metadata.retrievalScore`. Candidates past `topN`, and any the reranker leaves
 * out, are not returned: their retrieval scores cannot be ranked against reranker scores. On failure the
 * pool comes back as it was, in its fused order, with the degradation.
 */
export async function rerankCandidates(
  query: string,
  candidates: readonly Candidate[],
  stage: ParsedRerankStage,
  signal?: AbortSignal,
): Promise<{ candidates: Candidate[]; degraded: Degraded[] }> {
  const { pools, degraded } = await rerankPools(query, [candidates], stage, signal);
  return { candidates: pools[0] as Candidate[], degraded };
}

/**
 * `rerankCandidates` for several pools searched for the same query (a briefing's prompt results and each
 * cluster's), in ONE reranker call: every pool's `topN` best are scored together, each distinct text once
 * (the score depends on the query and the text alone), so all pools carry scores on the reranker's one
 * scale. Each pool comes back as its reranked head, in the reranker's order; on failure every pool comes
 * back as it was, with one degradation.
 */
export async function rerankPools(
  query: string,
  pools: readonly (readonly Candidate[])[],
  stage: ParsedRerankStage,
  signal?: AbortSignal,
): Promise<{ pools: Candidate[][]; degraded: Degraded[] }> {
  return inSpan(SPAN_RERANK, { 'litm_pack.top_n': stage.topN }, async (span) => {
    const result = await rerankHeads(query, pools, stage, signal);
    span.setAttribute(
      'litm_pack.degraded',
      result.degraded.map((d) => `${d.stage}:${d.code}`),
    );
    return result;
  });
}

async function rerankHeads(
  query: string,
  pools: readonly (readonly Candidate[])[],
  stage: ParsedRerankStage,
  signal: AbortSignal | undefined,
): Promise<{ pools: Candidate[][]; degraded: Degraded[] }> {
  const unchanged = () => pools.map((pool) => [...pool]);
  const heads = pools.map((pool) => [...pool].sort(compareCandidates).slice(0, stage.topN));
  const texts: string[] = [];
  const textIndex = new Map<string, number>();
  for (const head of heads) {
    for (const candidate of head) {
      if (textIndex.has(candidate.text)) continue;
      textIndex.set(candidate.text, texts.length);
      texts.push(candidate.text);
    }
  }
  if (texts.length === 0) return { pools: unchanged(), degraded: [] };
  const outcome = await contain(STAGE_RERANK, stage.timeoutMs, signal, (inner) => stage.reranker.rerank(query, texts, { signal: inner }));
  if (!outcome.ok) return { pools: unchanged(), degraded: [outcome.degraded] };
  const scores = new Map<number, number>();
  const answerOrder = new Map<number, number>();
  for (const { index, score } of outcome.value) {
    if (texts[index] === undefined || scores.has(index) || !Number.isFinite(score)) {
      return { pools: unchanged(), degraded: [{ stage: STAGE_RERANK, code: 'bad_response' }] };
    }
    scores.set(index, score);
    answerOrder.set(index, answerOrder.size);
  }
  const reranked = heads.map((head) =>
    head
      .map((candidate, position) => ({ candidate, position, text: textIndex.get(candidate.text) as number }))
      .filter(({ text }) => scores.has(text))
      .sort((a, b) => (answerOrder.get(a.text) as number) - (answerOrder.get(b.text) as number) || a.position - b.position)
      .map(({ candidate, text }) => ({
        ...candidate,
        score: scores.get(text) as number,
        metadata: { ...candidate.metadata, retrievalScore: candidate.score },
      })),
  );
  return { pools: reranked, degraded: [] };
}

// Sentence vectors per embeddings object, by sentence hash: the same chunks come back query after query.
const VECTOR_CACHE_LIMIT = 100_000;
const vectorCaches = new WeakMap<EmbeddingsLike, BoundedCache<string, readonly number[]>>();

/**
 * The vectors sentence selection blends in: the query's, and those of every sentence of `candidates`, in
 * one `embedDocuments` call for the sentences not cached yet (by sentence hash). On failure or timeout:
 * no vectors (selection runs on BM25 alone) and the degradation.
 */
export async function embedSentences(
  query: string,
  candidates: readonly Candidate[],
  embeddings: EmbeddingsLike,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ vectors: SentenceVectors | undefined; degraded: Degraded[] }> {
  const cache = cacheFor(vectorCaches, embeddings, () => new BoundedCache<string, readonly number[]>(VECTOR_CACHE_LIMIT));
  const sentences = new Map<string, readonly number[]>();
  const missing = new Map<string, string>();
  for (const candidate of candidates) {
    for (const { key, text } of keyedSentences(candidate.text)) {
      if (sentences.has(key) || missing.has(key)) continue;
      const vector = cache.get(key);
      if (vector === undefined) missing.set(key, text);
      else sentences.set(key, vector);
    }
  }
  const outcome = await contain(STAGE_SENTENCE_EMBEDDINGS, timeoutMs, signal, async () => {
    const [queryVector, vectors] = await Promise.all([
      embeddings.embedQuery(query),
      missing.size === 0 ? Promise.resolve([] as number[][]) : embeddings.embedDocuments([...missing.values()]),
    ]);
    return { queryVector, vectors };
  });
  if (!outcome.ok) return { vectors: undefined, degraded: [outcome.degraded] };
  const { queryVector, vectors } = outcome.value;
  const dimension = isVector(queryVector) ? queryVector.length : undefined;
  if (
    dimension === undefined ||
    !Array.isArray(vectors) ||
    vectors.length !== missing.size ||
    !vectors.every((v) => isVector(v, dimension))
  ) {
    return { vectors: undefined, degraded: [{ stage: STAGE_SENTENCE_EMBEDDINGS, code: 'bad_response' }] };
  }
  [...missing.keys()].forEach((key, i) => sentences.set(key, cache.set(key, vectors[i] as number[])));
  return { vectors: { query: queryVector, sentences }, degraded: [] };
}

/**
 * The pipeline's sentence selection for a mode as the CLI and the HTTP API name it: none (or absent) is no
 * selection; `sentences` is BM25, blended with the sentence vectors of `embeddings` when given.
 */
export function compressStage(
  mode: 'none' | 'sentences' | undefined,
  embeddings: EmbeddingsLike | undefined,
  what: string,
): ParsedPipelineCompress | undefined {
  if (mode === undefined || mode === 'none') return undefined;
  return parseOrThrow(PipelineCompressSchema, { mode, ...(embeddings === undefined ? {} : { embeddings }) }, what);
}

/**
 * The packer's `compress` for a pipeline `compress`: with `embeddings`, the sentence vectors (contained);
 * without, BM25 alone.
 */
export async function prepareCompress(
  query: string,
  candidates: readonly Candidate[],
  compress: ParsedPipelineCompress | undefined,
  signal?: AbortSignal,
): Promise<{ compress: CompressOptions | undefined; degraded: Degraded[] }> {
  if (compress === undefined) return { compress: undefined, degraded: [] };
  const { embeddings, timeoutMs, ...options } = compress;
  if (embeddings === undefined) return { compress: options, degraded: [] };
  const { vectors, degraded } = await embedSentences(query, candidates, embeddings, timeoutMs, signal);
  return { compress: vectors === undefined ? options : { ...options, vectors }, degraded };
}
