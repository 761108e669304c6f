import { LitmPackError } from '../base/errors.js';
import type { Candidate } from '../core/schemas.js';
import type { AddDocumentsOptions, ChunkRecord, GetChunksRequest, IngestDocument, SearchRequest } from '../store/schemas.js';
import type { AddDocumentsResult, DeleteSourcesResult, Rankings, Store } from '../store/types.js';
import { checkLexicalWrite } from './lexical-writes.js';
import { QdrantConnection } from './connection.js';
import { presetOfCollection, vectorNamesFor } from './detect.js';
import { add } from './ingest.js';
import { dropTenant, ensureCollection, type EnsureCollectionResult } from './manage.js';
import type { QdrantHybridStoreOptions } from './options.js';
import { PRESET_DEFAULTS } from './presets.js';
import { countPoints, deleteChunksExcept, putChunks, type PutChunksResult, type StoredChunk } from './points.js';
import { deleteSources, getChunks } from './reads.js';
import { runReindex, type ReindexOperations, type ReindexRequest, type ReindexResult } from './reindex.js';
import {
  AliasesResponseSchema,
  BooleanResultSchema,
  CollectionsResponseSchema,
  CountResultSchema,
  ScrollResultSchema,
} from './responses.js';
import { rankings, search } from './search.js';
import type { QdrantClientLike } from './types.js';
import type { IndexedTextRecipe } from '../store/indexed-text.js';

/** Where `fromExistingCollection` finds Qdrant: a client, or a url (with its key). */
export type QdrantConnectionOptions = Pick<QdrantHybridStoreOptions, 'client'> | Pick<QdrantHybridStoreOptions, 'url' | 'apiKey'>;

/** The store's other options, for `fromExistingCollection` (the preset and vector names, when given, win). */
export type FromExistingCollectionOptions = Omit<QdrantHybridStoreOptions, 'client' | 'url' | 'apiKey' | 'collection'> & {
  signal?: AbortSignal;
};

/**
 * Hybrid dense + BM25 search on Qdrant with the same semantics as `MemoryHybridStore`: a named dense vector
 * (cosine) and a sparse vector with `modifier: "idf"` (the server applies IDF), hybrid fused on the server in
 * one round trip that also returns the true dense cosine, filters and ACL inside the engine query.
 * The constructor does no I/O; call `ensureCollection()` once to create or check the collection.
 *
 * @example
 * const store = new QdrantHybridStore({ url: 'http://localhost:6333', collection: 'docs', embeddings });
 * await store.ensureCollection();
 * await store.addDocuments([{ id: 'handbook.md', text, version: 'v3', acl: ['hr'] }]);
 * const candidates = await store.search({ text: 'parental leave', principals: ['hr'] });
 */
export class QdrantHybridStore implements Store {
  readonly #c: QdrantConnection;
  #writes: Promise<unknown> = Promise.resolve();
  #lexicalWriteChecked = false;

  constructor(options: QdrantHybridStoreOptions) {
    this.#c = new QdrantConnection(options);
  }

  /**
   * A store for a collection that exists, whoever wrote it: one read of its config (named or unnamed dense
   * vector, sparse vectors) and, without `payloadPreset`, one point's payload pick the preset and the vector
   * names. A collection without a sparse vector searches dense only (hybrid included). Options given win.
   *
   * @example
   * const store = await QdrantHybridStore.fromExistingCollection({ url }, 'langchain_docs', { embeddings });
   * store.toJSON(); // { payloadPreset: 'langchain-js', denseVectorName: '', sparseVectorName: null, ... }
   */
  static async fromExistingCollection(
    connection: QdrantConnectionOptions,
    collection: string,
    options: FromExistingCollectionOptions = {},
  ): Promise<QdrantHybridStore> {
    const { signal, ...rest } = options;
    const probe = new QdrantHybridStore({ ...connection, ...rest, collection });
    const c = probe.#c;
    const layout = await c.readCollectionOnce(signal);
    let preset = rest.payloadPreset;
    if (preset === undefined) {
      const sample = await c.read(
        'scroll',
        () => c.client.scroll(collection, { limit: 1, with_payload: true, with_vector: false, ...c.readArgs }),
        ScrollResultSchema,
        signal,
      );
      preset = presetOfCollection(layout, sample.points.length === 0 ? undefined : (sample.points[0]!.payload ?? null), collection);
    }
    const given = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
    return probe.#sibling({ ...vectorNamesFor(layout, preset, collection), ...given });
  }

  /** The collection (or alias) this store reads and writes. */
  get collection(): string {
    return this.#c.collection;
  }

  /** The tenant this store reads and writes, with `tenancy`. */
  get tenant(): string | undefined {
    return this.#c.scope.tenant;
  }

  /**
   * The same store for another tenant: same client, collection and settings. Cheap (no I/O): a service
   * keeps one store and asks it for the caller's tenant per request.
   */
  forTenant(tenant: string): QdrantHybridStore {
    if (this.#c.scope.tenancy === undefined) {
      throw new LitmPackError('invalid_input', "forTenant needs a store with tenancy: 'shard-key' or 'payload'");
    }
    return this.#sibling({ tenant });
  }

  /** A store with these options changed, sharing this one's client (and so its connection settings). */
  #sibling(changes: Partial<QdrantHybridStoreOptions>): QdrantHybridStore {
    const store = new QdrantHybridStore({ ...this.#c.options, ...changes, client: this.#c.client });
    store.#c.url = this.#c.url;
    if (changes.collection === undefined) {
      // The same collection: what was read of it holds for the sibling too (no second read per tenant store).
      store.#c.recorded = this.#c.recorded;
      store.#c.layout = this.#c.layout;
      store.#c.vectorSize ??= this.#c.vectorSize;
    }
    return store;
  }

  /** Safe to log: no client, no key. */
  toJSON(): Record<string, unknown> {
    const c = this.#c;
    return {
      store: 'QdrantHybridStore',
      collection: c.collection,
      ...(c.url === undefined ? {} : { url: c.url }),
      payloadPreset: c.preset,
      denseVectorName: c.vectors.dense,
      sparseVectorName: c.vectors.sparse,
      ...(c.scope.tenancy === undefined ? {} : { tenancy: c.scope.tenancy }),
      ...(c.scope.tenant === undefined ? {} : { tenant: c.scope.tenant }),
    };
  }

  /**
   * Creates the collection (dense cosine vector sized from `vectorSize` or one embedding probe, sparse vector
   * with IDF, keyword/datetime payload indexes for `sourceId`, `acl`, `timestamp`, `clusters`, `kind`, and the
   * embedding model and dimension in the collection's metadata), or checks an existing one and throws
   * `config_mismatch` naming every difference, a different embedding model than the one the collection
   * records included. Missing payload indexes are added.
   */
  ensureCollection(options: { signal?: AbortSignal } = {}): Promise<EnsureCollectionResult> {
    return ensureCollection(this.#c, options);
  }

  /**
   * Removes everything of this store's tenant: its shard key (`shard-key`: its shards are dropped) or its
   * points (`payload`: one filtered delete, waited for). The collection and other tenants stay.
   */
  dropTenant(options: { signal?: AbortSignal } = {}): Promise<void> {
    return dropTenant(this.#c, options);
  }

  /**
   * Rebuilds the collection behind `alias` without downtime: a new versioned collection (`alias_vN`) with
   * this store's settings, the documents ingested into it, its point count and sample queries verified, then
   * the alias moved in one atomic `update_aliases` call (delete + create), and only then the previous
   * collection dropped. Any failure before the swap drops the new collection and leaves the alias where it
   * was. Open stores on the alias (`collection: alias`): they read the new collection after the swap.
   *
   * @example
   * const store = new QdrantHybridStore({ url, collection: 'docs', embeddings });
   * await store.reindex({ alias: 'docs', documents, sampleQueries: ['refund policy'] });
   */
  reindex(request: ReindexRequest): Promise<ReindexResult> {
    const c = this.#c;
    if (c.scope.tenancy !== undefined) {
      return Promise.reject(
        new LitmPackError(
          'unsupported',
          'reindex rebuilds a whole collection from one set of documents; with tenancy it would drop the other ' +
            "tenants. Reindex a tenant's sources with addDocuments and deleteSources, or the collection without tenancy.",
        ),
      );
    }
    if (!PRESET_DEFAULTS[c.preset].writable) {
      return Promise.reject(
        new LitmPackError('unsupported', `reindex writes litm-pack payloads; this store reads a "${c.preset}" collection`),
      );
    }
    const readArgs = c.readArgs;
    const operations: ReindexOperations = {
      aliases: async (signal) => (await c.read('getAliases', () => c.client.getAliases(), AliasesResponseSchema, signal)).aliases,
      collections: async (signal) =>
        (await c.read('getCollections', () => c.client.getCollections(), CollectionsResponseSchema, signal)).collections.map(
          (entry) => entry.name,
        ),
      open: (collection) => this.#sibling({ collection }),
      probeMode: c.vectors.sparse === null ? 'dense' : 'lexical',
      count: async (collection, signal) => {
        // The official client's count() drops `consistency`; the store's own client sends it.
        const args = { exact: true, ...readArgs } as Parameters<QdrantClientLike['count']>[1];
        return (await c.read('count', () => c.client.count(collection, args), CountResultSchema, signal)).count;
      },
      changeAliases: async (actions, signal) => {
        await c.write('updateCollectionAliases', () => c.client.updateCollectionAliases({ actions }), BooleanResultSchema, signal);
      },
      dropCollection: async (collection, signal) => {
        await c.write('deleteCollection', () => c.client.deleteCollection(collection), BooleanResultSchema, signal);
      },
    };
    return runReindex(operations, request);
  }

  /**
   * Chunks, embeds and BM25-encodes `docs` and upserts them (point id = UUIDv5 of the chunk id, payload = the
   * chunk record). Re-ingesting the same content changes nothing (`unchanged`); a new version replaces the
   * source's chunks: changed chunks are upserted first, then the source's points that are no longer part of it
   * are deleted, so a failure midway never leaves a source with no chunks.
   *
   * Documents go in batches of `ingestBatchSize`: one scroll finds the existing points of all the batch's
   * sources, its points go in upserts of `upsertBatchSize`, its stale points in one filtered delete. Up to
   * `ingestConcurrency` batches are in flight at once (chunking the next batch overlaps the server's work).
   */
  addDocuments(docs: IngestDocument[], options: AddDocumentsOptions = {}): Promise<AddDocumentsResult> {
    return this.#queued(async () => {
      // Once per store: the collection's points cannot gain dense vectors from a store without embeddings.
      if (!this.#lexicalWriteChecked)
        this.#lexicalWriteChecked = await checkLexicalWrite(this.#c, Array.isArray(docs) ? docs.length : 0, options?.signal);
      return add(this.#c, docs, options);
    });
  }

  /**
   * One request per search. `dense` and `lexical` are one `points/query` each; `hybrid` is one
   * `points/query/batch` (see `buildHybridQueryBatch` for how the true cosine comes back in it). The filter
   * and the principals' ACL are inside every query and prefetch. Results are sorted by score desc, then id.
   */
  search(request: SearchRequest): Promise<Candidate[]> {
    return search(this.#c, request);
  }

  /**
   * The same request as `search`, arm by arm: each arm's raw top `limit` (dense: cosine, lexical: BM25
   * score; `null` when the arm does not run in this mode) beside the fused ranking, which is exactly what
   * `search` returns. One request: hybrid is one `points/query/batch` of the fused query and both arms.
   */
  rankings(request: SearchRequest): Promise<Rankings> {
    return rankings(this.#c, request);
  }

  /**
   * Chunks by source, chunk id and/or filter, ANDed with the principals' ACL exactly as in `search`, in
   * source order (sources as listed in `sourceIds`, else by id; then by span). One payload-filtered scroll
   * reads only the matching points (pages of 1,000: a source of up to 1,000 chunks is one request).
   */
  getChunks(request: GetChunksRequest): Promise<ChunkRecord[]> {
    return getChunks(this.#c, request);
  }

  /**
   * Removes every chunk of these sources: one facet request counts them per source, one filtered delete
   * (waited for) removes them. Queued behind ingests in progress, like `addDocuments`.
   */
  deleteSources(sourceIds: string[], options: { signal?: AbortSignal } = {}): Promise<DeleteSourcesResult> {
    return this.#queued(() => deleteSources(this.#c, sourceIds, options));
  }

  /**
   * Writes chunk records with their vectors as they are: no chunking, no embedding (what `copyToQdrant` moves a
   * store with). A point that already holds exactly its record is left alone; the others are upserted (point id =
   * UUIDv5 of the chunk id, payload = the record, dense vector and BM25 vector as given). Queued like writes.
   */
  putChunks(chunks: readonly StoredChunk[], options: { signal?: AbortSignal } = {}): Promise<PutChunksResult> {
    return this.#queued(() => putChunks(this.#c, chunks, options.signal));
  }

  /** Deletes the points of these sources whose chunk ids are not listed (one scroll, one delete). Queued like writes. */
  deleteChunksExcept(
    sources: readonly { sourceId: string; ids: readonly string[] }[],
    options: { signal?: AbortSignal } = {},
  ): Promise<number> {
    return this.#queued(() => deleteChunksExcept(this.#c, sources, options.signal));
  }

  /**
   * How the collection's points are indexed (store/indexed-text.ts): the recipe its metadata records, read once;
   * an empty collection takes `adopt` when given (a copy of a store indexed that way). With the way to re-index when older.
   */
  async indexedText(
    options: { signal?: AbortSignal; adopt?: IndexedTextRecipe } = {},
  ): Promise<{ recipe: IndexedTextRecipe; reindexAdvice: string | null }> {
    const recipe = await this.#c.indexedTextRecipe(options.signal, options.adopt);
    return { recipe, reindexAdvice: this.#c.reindexAdvice() };
  }

  /** Points of this store (its tenant's, with tenancy), counted exactly. */
  countPoints(options: { signal?: AbortSignal } = {}): Promise<number> {
    return countPoints(this.#c, options.signal);
  }

  /** Writes run one after another, in the order they were asked for. */
  #queued<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#writes.then(run);
    this.#writes = next.catch(() => undefined);
    return next;
  }
}
