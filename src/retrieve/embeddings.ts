import type { EmbeddingsLike } from './types.js';

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
