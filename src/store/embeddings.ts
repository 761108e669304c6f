import { LitmPackError } from '../base/errors.js';

/** The subset of LangChain's `EmbeddingsInterface` litm-pack needs (any LangChain embeddings object fits). */
export interface EmbeddingsLike {
  embedQuery(text: string): Promise<number[]>;
  embedDocuments(texts: string[]): Promise<number[][]>;
}

/**
 * The model an embeddings object says it runs, when it says so: `model` (LangChain's OpenAI and most
 * providers, litm-pack's own providers) or `modelName` (older LangChain classes). Stores remember it beside
 * the vectors' dimension, so a query embedded by another model is refused instead of silently compared.
 */
export function embeddingModelName(embeddings: EmbeddingsLike): string | undefined {
  const named = embeddings as EmbeddingsLike & { model?: unknown; modelName?: unknown };
  for (const value of [named.model, named.modelName]) {
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/** The part of LlamaIndex's `BaseEmbedding` a store needs (any LlamaIndex embedding class fits). */
export interface LlamaIndexEmbeddingLike {
  getTextEmbeddingsBatch(texts: string[]): Promise<number[][]>;
  getQueryEmbedding(query: { type: 'text'; text: string }): Promise<number[] | null>;
}

/** What the stores accept as `embeddings`: LangChain's shape or LlamaIndex's. */
export type EmbeddingsInput = EmbeddingsLike | LlamaIndexEmbeddingLike;

// LlamaIndex's embeddings are TransformComponents, which are callable: objects or functions both qualify.
const hasFunctions = (value: unknown, names: readonly string[]): boolean =>
  (typeof value === 'object' || typeof value === 'function') &&
  value !== null &&
  names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

export const isLangChainEmbeddings = (value: unknown): value is EmbeddingsLike => hasFunctions(value, ['embedQuery', 'embedDocuments']);
export const isLlamaIndexEmbedding = (value: unknown): value is LlamaIndexEmbeddingLike =>
  hasFunctions(value, ['getTextEmbeddingsBatch', 'getQueryEmbedding']);

/**
 * LangChain embeddings as they are; a LlamaIndex `BaseEmbedding` seen through LangChain's two calls
 * (`getTextEmbeddingsBatch` for documents, batched by the embedding's own `embedBatchSize`, and
 * `getQueryEmbedding` for queries), keeping its model name.
 */
export function toEmbeddingsLike(embeddings: EmbeddingsInput): EmbeddingsLike {
  if (isLangChainEmbeddings(embeddings)) return embeddings;
  const model = embeddingModelName(embeddings as unknown as EmbeddingsLike);
  return {
    ...(model === undefined ? {} : { model }),
    embedDocuments: (texts: string[]) => embeddings.getTextEmbeddingsBatch(texts),
    async embedQuery(text: string) {
      const vector = await embeddings.getQueryEmbedding({ type: 'text', text });
      if (vector === null) {
        throw new LitmPackError(
          'bad_response',
          'The LlamaIndex embedding returned no vector for a text query (getQueryEmbedding gave null)',
        );
      }
      return vector;
    },
  };
}
