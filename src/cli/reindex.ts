// `litm-pack ingest --reindex [--alias NAME]`: a zero-downtime rebuild of a Qdrant collection through its alias.
import { LitmPackError } from '../base/errors.js';
import type { EmbeddingsLike } from '../store/embeddings.js';
import type { IngestDocument } from '../store/schemas.js';
import { openQdrant } from './stores.js';

/**
 * Reindexes `docs` into a new versioned collection behind the alias the store spec names
 * (`qdrant://host:6333/ALIAS`), then moves the alias; returns the one-line summary.
 */
export async function reindexIngest(
  storeSpec: string,
  alias: string | undefined,
  docs: IngestDocument[],
  embeddings?: EmbeddingsLike,
): Promise<string> {
  const store = await openQdrant(storeSpec, { embeddings });
  if (store === null) {
    throw new LitmPackError('invalid_input', `--reindex needs a Qdrant store: --store qdrant://host:6333/ALIAS (got "${storeSpec}")`);
  }
  if (alias !== undefined && alias !== store.collection) {
    throw new LitmPackError(
      'invalid_input',
      `--alias ${alias} and --store ${storeSpec} name different collections: queries go through the alias, so name it in both`,
    );
  }
  const result = await store.reindex({ alias: store.collection, documents: docs });
  const files = docs.length === 1 ? '1 file' : `${docs.length} files`;
  const before = result.previous === null ? '' : `; it pointed at ${result.previous}${result.previousDropped ? ', now dropped' : ', kept'}`;
  const warning = result.warning === undefined ? '' : ` Warning: ${result.warning}.`;
  return (
    `Reindexed ${files} into ${result.collection}: ${result.chunks} chunks, point count and ${result.sampleQueries} sample ` +
    `queries checked; alias ${result.alias} now points at ${result.collection}${before}.${warning}`
  );
}
