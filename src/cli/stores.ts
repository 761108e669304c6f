// Opening the store a command names: a local directory (the embedded store) or qdrant://host:port/collection.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LitmPackError } from '../base/errors.js';
import { warn } from './io.js';
import { MemoryHybridStore } from '../retrieve/memory-store.js';
import type { EmbeddingsLike, Store } from '../retrieve/types.js';

export const STORE_FILE = 'store.json';

/**
 * `qdrant://host:port/collection` (or `qdrants://` for TLS) opens a Qdrant collection instead of a local
 * store; `QDRANT_API_KEY` supplies the key. The Qdrant module is loaded only then.
 */
export async function openQdrant(spec: string, options: OpenStoreOptions = {}) {
  const match = /^qdrant(s?):\/\/([^/]+)\/([^/?#]+)\/?$/.exec(spec);
  if (!match) {
    if (spec.startsWith('qdrant')) {
      throw new LitmPackError('invalid_input', `Bad Qdrant store "${spec}": use qdrant://host:6333/collection`);
    }
    return null;
  }
  const { QdrantHybridStore } = await import('../qdrant/index.js');
  const url = `${match[1] === 's' ? 'https' : 'http'}://${match[2]}`;
  const apiKey = process.env.QDRANT_API_KEY;
  // Without --embeddings the CLI writes BM25 vectors only; a collection it creates still gets a dense slot,
  // sized for the common 384-d sentence embedders, so it can be filled later. With them, the size is probed.
  const { embeddings, idfCorpus } = options;
  const dense = embeddings === undefined ? { vectorSize: 384 } : { embeddings };
  return new QdrantHybridStore({
    url,
    collection: decodeURIComponent(match[3] as string),
    ...dense,
    ...(apiKey ? { apiKey } : {}),
    ...(idfCorpus === undefined ? {} : { idfCorpus }),
  });
}

/** How a command opens its store. */
export interface OpenStoreOptions {
  /** Embeddings of the store's model (the CLI's --embeddings); without them hybrid search runs on BM25. */
  embeddings?: EmbeddingsLike | undefined;
  /** BM25 IDF over every chunk (`all`) or over what the caller may read (`visible`; embedded store only). */
  idfCorpus?: 'all' | 'visible' | undefined;
}

export async function loadStore(dir: string, mustExist: boolean, options: OpenStoreOptions = {}): Promise<MemoryHybridStore> {
  const { embeddings, idfCorpus } = options;
  const file = join(dir, STORE_FILE);
  try {
    await stat(file);
  } catch {
    if (mustExist) {
      throw new LitmPackError('not_found', `No store at ${dir}: run "litm-pack ingest PATH... --store ${dir}" first`);
    }
    return new MemoryHybridStore(embeddings === undefined ? {} : { embeddings });
  }
  return MemoryHybridStore.load(file, {
    ...(embeddings === undefined ? {} : { embeddings }),
    ...(idfCorpus === undefined ? {} : { idfCorpus }),
  });
}

/** The store a read-only command (bundle, briefing, ...) works on; a local one must exist. */
export async function openStore(spec: string, options: OpenStoreOptions = {}): Promise<Store> {
  return (await openQdrant(spec, options)) ?? (await loadStore(spec, true, options));
}

/**
 * Says so when a local store holds dense vectors that this command cannot use (no --embeddings): hybrid
 * search then runs on BM25 alone and the confidence is `unknown`.
 */
export function noteUnusedVectors(store: Store): void {
  if (!(store instanceof MemoryHybridStore) || store.embedding === null) return;
  const { model, dimension } = store.embedding;
  warn(
    `the store holds ${dimension}-d vectors${model === null ? '' : ` of ${model}`}, but no --embeddings was given: searching with BM25 only (confidence unknown)`,
  );
}
