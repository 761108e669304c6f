/**
 * A store without embeddings writes points without a dense vector, which dense and hybrid search never find.
 * Into a collection whose points have dense vectors that makes a corpus only partly searchable, with nothing to
 * show for it: refused before anything is written, unless the store says it is meant (`lexicalOnly`). The
 * embedded store's ingest refuses the same.
 */
import { LitmPackError, isLitmPackError } from '../base/errors.js';
import type { QdrantConnection } from './connection.js';
import { PRESET_DEFAULTS } from './presets.js';
import { CountResultSchema } from './responses.js';
import { scopeFilter, shardKeyOf } from './tenancy.js';

/** Resolves true once writes are known to be fine for this store (nothing more to check), false when not checked yet. */
export async function checkLexicalWrite(c: QdrantConnection, documents: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (c.embeddings !== undefined || c.options.lexicalOnly === true) return true;
  if (documents === 0) return false;
  // What addDocuments refuses first keeps its own words: another tool's payloads, a write without a tenant.
  if (!PRESET_DEFAULTS[c.preset].writable) return false;
  c.checkTenant('addDocuments');
  // Any point with a dense vector decides it (an approximate count is enough to tell none from some).
  const filter = scopeFilter(c.scope, { must: [{ has_vector: c.vectors.dense }] });
  const args = { exact: false, ...(filter === undefined ? {} : { filter }), ...shardKeyOf(c.scope), ...c.readArgs } as Parameters<
    QdrantConnection['client']['count']
  >[1];
  let withVectors: number;
  try {
    withVectors = (await c.read('count', () => c.client.count(c.collection, args), CountResultSchema, signal)).count;
  } catch (error) {
    if (isLitmPackError(error, 'not_found')) return true; // a collection not created yet holds no vectors
    throw error;
  }
  if (withVectors === 0) return true;
  throw new LitmPackError(
    'config_mismatch',
    `Qdrant collection "${c.collection}" holds dense vectors, and this store has no embeddings: its new points would have none, so dense and hybrid search would never find them. ` +
      "Ingest with the collection's embeddings (--embeddings URL --embed-model NAME; embeddings in code), or write keyword-only points on purpose with --lexical-only (lexicalOnly: true)",
    { details: { collection: c.collection } },
  );
}
