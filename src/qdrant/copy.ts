/**
 * Moving an embedded store into Qdrant: its chunk records (payloads, token counts, ACLs) and vectors as they
 * are, read from the store file as a stream, without re-reading the source files or re-embedding. Point ids are
 * the chunk ids' (UUIDv5), and a point whose payload already is the record is not written again, so a copy is
 * idempotent and an interrupted one resumes where it stopped (its batches are checked, not rewritten). Points of
 * the copied sources that the store no longer has are deleted; other sources' points are left alone.
 */
import { LitmPackError } from '../base/errors.js';
import { embeddingModelName, toEmbeddingsLike } from '../store/embeddings.js';
import { readStoreFileParts, type StoreFileChunk, type StoreFileHeader } from '../memory/file.js';
import type { QdrantHybridStoreOptions } from './options.js';
import { QdrantHybridStore } from './qdrant-hybrid-store.js';

// -------------------------------------------------------------------------------------------------

export interface CopyProgress {
  /** `copy`: chunks checked or written so far; `prune`: sources checked for chunks the store no longer has. */
  phase: 'copy' | 'prune';
  done: number;
  total: number;
}

export interface CopyToQdrantOptions {
  /** The store file to copy (what `MemoryHybridStore.save` writes; the CLI's `--store DIR` holds `DIR/store.json`). */
  from: string;
  /**
   * Where to: a `QdrantHybridStore`, or its options (then the vector size and the embedding model come from the
   * store file, so no embeddings are needed). The collection is created when missing, or checked.
   */
  to: QdrantHybridStore | QdrantHybridStoreOptions;
  /** Chunks per round trip (default 256). */
  batchSize?: number;
  onProgress?: (progress: CopyProgress) => void;
  signal?: AbortSignal;
}

export interface CopyResult {
  collection: string;
  sources: number;
  chunks: number;
  /** Points written by this copy. */
  written: number;
  /** Points that already held their chunk (copied by an earlier run). */
  unchanged: number;
  /** Points of the copied sources that the store does not have, deleted. */
  removed: number;
}

/**
 * Copies the store file `from` into a Qdrant collection: every chunk with its payload and vectors as stored.
 * Safe to run again (nothing already copied is rewritten) and to resume after an interruption. A pack made from
 * the store before the copy verifies as `current` against the collection after it.
 *
 * @example
 * const result = await copyToQdrant({
 *   from: '.litm-store/store.json',
 *   to: { url: 'http://localhost:6333', collection: 'docs' },
 *   onProgress: ({ phase, done, total }) => console.log(phase, done, total),
 * });
 */
export async function copyToQdrant(options: CopyToQdrantOptions): Promise<CopyResult> {
  const batchSize = options.batchSize ?? 256;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new LitmPackError('invalid_input', `batchSize must be a whole number from 1 to 10000, got ${batchSize}`);
  }
  const { signal } = options;
  const parts = readStoreFileParts(options.from);
  const first = await parts.next();
  if (first.done || first.value.kind !== 'header') throw new LitmPackError('corrupt', `Store file ${options.from} has no header`);
  const header: StoreFileHeader = first.value.header;
  const store = targetStore(options.to, header);
  await store.ensureCollection(signal === undefined ? {} : { signal });
  // The copied sparse and dense vectors were made from the store's indexed text: the collection must hold points
  // made the same way (an empty one takes the store's recipe).
  const { recipe } = await store.indexedText({ ...(signal === undefined ? {} : { signal }), adopt: header.indexedText });
  if (recipe !== header.indexedText) {
    throw new LitmPackError(
      'config_mismatch',
      `The store ${options.from} was indexed with the recipe "${header.indexedText}" and Qdrant collection "${store.collection}" with "${recipe}": ` +
        'their vectors would not agree. Copy into a new collection, or re-index the older of the two first',
      { details: { collection: store.collection, storeIndexedText: header.indexedText, collectionIndexedText: recipe } },
    );
  }
  const emptyAtStart = (await store.countPoints(signal === undefined ? {} : { signal })) === 0;

  const sources: { sourceId: string; ids: string[] }[] = [];
  const result: CopyResult = {
    collection: store.collection,
    sources: header.sources,
    chunks: header.chunks,
    written: 0,
    unchanged: 0,
    removed: 0,
  };
  let batch: StoreFileChunk[] = [];
  let done = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const put = await store.putChunks(batch, signal === undefined ? {} : { signal });
    result.written += put.written;
    result.unchanged += put.unchanged;
    done += batch.length;
    batch = [];
    options.onProgress?.({ phase: 'copy', done, total: header.chunks });
  };
  options.onProgress?.({ phase: 'copy', done: 0, total: header.chunks });
  for await (const part of parts) {
    if (part.kind === 'source') sources.push({ sourceId: part.source.sourceId, ids: part.source.ids });
    else if (part.kind === 'chunk') {
      batch.push(part.chunk);
      if (batch.length >= batchSize) await flush();
    }
  }
  await flush();
  // A collection that was empty cannot hold chunks the store lacks; otherwise check source by source.
  if (!emptyAtStart) {
    options.onProgress?.({ phase: 'prune', done: 0, total: sources.length });
    for (let start = 0; start < sources.length; start += batchSize) {
      const group = sources.slice(start, start + batchSize);
      result.removed += await store.deleteChunksExcept(group, signal === undefined ? {} : { signal });
      options.onProgress?.({ phase: 'prune', done: Math.min(sources.length, start + batchSize), total: sources.length });
    }
  }
  return result;
}

function targetStore(to: CopyToQdrantOptions['to'], header: StoreFileHeader): QdrantHybridStore {
  if (to instanceof QdrantHybridStore) return to;
  const options = to;
  if (options.embeddings !== undefined && header.embeddingModel !== null) {
    const model = embeddingModelName(toEmbeddingsLike(options.embeddings));
    if (model !== undefined && model !== header.embeddingModel) {
      throw new LitmPackError(
        'config_mismatch',
        `The store's vectors were made by "${header.embeddingModel}"; these embeddings are "${model}". Copy without embeddings (the vectors are copied as they are), or with "${header.embeddingModel}"`,
        { details: { storedModel: header.embeddingModel, model } },
      );
    }
  }
  const fromFile: Partial<QdrantHybridStoreOptions> = {};
  if (options.vectorSize === undefined) fromFile.vectorSize = header.dimension ?? options.vectorSize ?? 384;
  if (options.embeddings === undefined && options.embeddingModel === undefined && header.embeddingModel !== null) {
    fromFile.embeddingModel = header.embeddingModel;
  }
  if (options.chunkTokens === undefined) fromFile.chunkTokens = header.chunkTokens;
  return new QdrantHybridStore({ ...options, ...fromFile });
}
