/**
 * What the CLI says instead of a store's own message, when that message names library options: the flags that set
 * them (a search that needs embeddings, a Qdrant collection that does not exist, has no sparse vector, or was
 * written by another tool). The HTTP API and MCP say it in their own words (service/errors.ts `serviceRemedy`).
 */
import type { LitmPackError } from '../base/errors.js';

const FROM_ENVIRONMENT = 'LITM_EMBEDDINGS_URL and LITM_EMBEDDINGS_MODEL';

export function cliRemedy(error: LitmPackError): string | undefined {
  const collection = typeof error.details.collection === 'string' ? error.details.collection : undefined;
  if (error.details.missing === 'collection' && collection !== undefined) {
    return (
      `Qdrant collection "${collection}" does not exist: check the name in --store, or create it with ` +
      `"litm-pack ingest PATH... --store qdrant://HOST:6333/${collection}"`
    );
  }
  if (error.details.requires === 'preset' && collection !== undefined) {
    const presets = Array.isArray(error.details.presets) ? (error.details.presets as string[]) : [];
    const what =
      typeof error.details.missing === 'string'
        ? `has no ${error.details.missing} (it has ${String(error.details.vectors)})`
        : `has ${String(error.details.vectors)}`;
    return (
      `Qdrant collection "${collection}" ${what}: another tool wrote it; give ` +
      (presets.length === 0 ? '--preset NAME' : presets.map((p) => `--preset ${p}`).join(' or '))
    );
  }
  if (error.details.requires === 'sparse' && collection !== undefined) {
    return (
      `Qdrant collection "${collection}" has no sparse (BM25) vector: search it with --mode dense and ` +
      `--embeddings URL --embed-model NAME (or ${FROM_ENVIRONMENT}) of the model that wrote it`
    );
  }
  if (error.details.requires !== 'embeddings') return undefined;
  return error.details.parameter === 'diversity'
    ? `--diversity (MMR) needs dense vectors: give --embeddings URL --embed-model NAME (or ${FROM_ENVIRONMENT})`
    : `--mode dense needs --embeddings URL --embed-model NAME (or ${FROM_ENVIRONMENT}), or use --mode lexical`;
}
