import { v5 as uuidv5 } from 'uuid';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import type { Candidate } from '../core/schemas.js';
import { encodeBm25Document, encodeBm25Query } from '../tokenize/bm25.js';
import { DEFAULT_CHUNK_TOKENS, chunkDocument, parseIngestDocuments } from '../retrieve/chunk.js';
import { validateFilter } from '../retrieve/filter.js';
import { compareScored } from '../retrieve/fusion.js';
import { embeddingModelName } from '../retrieve/embeddings.js';
import type { ScoredId } from '../retrieve/fusion.js';
import { diversityCandidates, hybridPrefetchLimit } from '../retrieve/memory-store.js';
import { LIMIT_ALIASES, SearchRequestSchema } from '../retrieve/schemas.js';
import type {
  AddDocumentsOptions,
  AddDocumentsResult,
  ChunkRecord,
  DeleteSourcesResult,
  EmbeddingsLike,
  Fusion,
  GetChunksRequest,
  IngestDocument,
  Rankings,
  SearchMode,
  SearchRequest,
  SparseVector,
  Store,
} from '../retrieve/types.js';
import { callQdrant, type CallPolicy } from './call.js';
import { orderChunks, parseDeleteSources, parseGetChunksRequest, toRankedChunks } from '../retrieve/store-requests.js';
import {
  checkCollection,
  embeddingMetadata,
  modelMismatch,
  recordedEmbedding,
  type ClusterSettings,
  type PayloadIndexSpec,
  type RecordedEmbedding,
} from './collection.js';
import { QdrantHybridStoreOptionsSchema, type QdrantHybridStoreOptions } from './options.js';
import { PRESET_DEFAULTS, payloadToChunkRecord, pointToCandidate, type PayloadPreset } from './presets.js';
import {
  LITM_PAYLOAD_INDEXES,
  buildChunksFilter,
  buildCreateCollection,
  buildDenseQuery,
  buildDiverseQuery,
  buildDiverseRankingsBatch,
  buildHybridQueryBatch,
  buildLexicalQuery,
  buildRankingsBatch,
  buildSearchFilter,
  type DiverseQueryInput,
  type HybridQueryInput,
  type VectorNames,
} from './requests.js';
import {
  AliasesResponseSchema,
  BooleanResultSchema,
  CollectionExistenceSchema,
  CollectionInfoSchema,
  CollectionsResponseSchema,
  CountResultSchema,
  FacetResponseSchema,
  ShardKeysResponseSchema,
  QueryResponseSchema,
  ScrollResultSchema,
  UpdateResultSchema,
  parseQdrantResponse,
  queryBatchResponseSchema,
  type CollectionInfoResponse,
  type ScoredPointResponse,
} from './responses.js';
import { QdrantRestClient } from './rest-client.js';
import { runReindex, type ReindexOperations, type ReindexRequest, type ReindexResult } from './reindex.js';
import { scrollAll } from './scroll.js';
import {
  checkEmbeddingVectors,
  payloadOf,
  redactUrl,
  runBounded,
  sameRecord,
  storedDenseVector,
  throwIfAborted,
} from './util.js';
import { TENANT_FIELD, TENANT_INDEX, scopeFilter, shardKeyOf, tenantPointNamespace, type Tenancy, type TenantScope } from './tenancy.js';
import type { QdrantClientLike, QdrantFilter, QdrantPointStruct, QdrantQueryArgs, QdrantQueryBatchArgs } from './types.js';

/** Namespace of the UUIDv5 point ids (fixed forever: changing it would orphan every stored point). */
export const POINT_ID_NAMESPACE = '6f1c8a52-3c1e-5b7e-9d3a-6b2f0e7c4a11';

/**
 * Qdrant accepts only unsigned integers and UUIDs as point ids: the chunk key maps to a UUIDv5 (within the
 * tenant's own namespace when the store has tenants, so two tenants' `policy.md#0` are two points).
 */
export function pointIdForChunk(chunkId: string, tenant?: string): string {
  return uuidv5(chunkId, tenant === undefined ? POINT_ID_NAMESPACE : tenantPointNamespace(POINT_ID_NAMESPACE, tenant));
}

/** The two keys `rankings` reads from a litm payload. */
const ChunkKeysSchema = z.looseObject({ id: z.string().min(1), sourceId: z.string().min(1) });

const AddDocumentsOptionsSchema = z.strictObject({
  onProgress: z
    .custom<(done: number, total: number) => void>((value) => typeof value === 'function', {
      message: 'onProgress must be a function',
    })
    .optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, { message: 'signal must be an AbortSignal' }).optional(),
});

export interface EnsureCollectionResult {
  /** True when the collection was created by this call. */
  created: boolean;
  /** Payload indexes created by this call. */
  indexesCreated: string[];
  /** With `tenancy: 'shard-key'` and a tenant: true when this call created the tenant's shard key. */
  shardKeyCreated?: boolean;
}

interface ExistingPoint {
  record: ChunkRecord;
  dense: number[] | undefined;
}

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
  readonly #client: QdrantClientLike;
  #url: string | undefined;
  /** The options as given (without url and key), to open sibling stores: another tenant, another collection. */
  readonly #options: QdrantHybridStoreOptions;
  readonly #scope: TenantScope;
  readonly #readArgs: { consistency?: number | 'majority' | 'quorum' | 'all' };
  readonly #writeArgs: { ordering?: 'weak' | 'medium' | 'strong' };
  readonly #cluster: ClusterSettings;
  readonly #collection: string;
  readonly #embeddings: EmbeddingsLike | undefined;
  readonly #preset: PayloadPreset;
  readonly #vectors: VectorNames;
  readonly #aclKey: string;
  readonly #fusion: Fusion;
  readonly #prefetchLimit: number | undefined;
  readonly #chunkTokens: number;
  readonly #embedBatchSize: number;
  readonly #upsertBatchSize: number;
  readonly #ingestBatchSize: number;
  readonly #ingestConcurrency: number;
  readonly #now: () => Date;
  readonly #policy: CallPolicy;
  #vectorSize: number | undefined;
  /** The model the embeddings name (`embeddingModelName`), when they name one. */
  readonly #embeddingModel: string | undefined;
  /** What the collection records about its dense vectors; undefined until read (ensureCollection, dense ingest). */
  #recorded: RecordedEmbedding | undefined;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: QdrantHybridStoreOptions) {
    const parsed = parseOrThrow(QdrantHybridStoreOptionsSchema, options, 'QdrantHybridStore options');
    if (parsed.idfCorpus === 'visible') {
      throw new LitmPackError(
        'unsupported',
        'idfCorpus "visible" is not implemented by the Qdrant store: its BM25 IDF is computed by Qdrant over the whole ' +
          'collection (per shard). Leave idfCorpus unset (or "all"); for IDF per tenant use tenancy "shard-key".',
      );
    }
    const defaults = PRESET_DEFAULTS[parsed.payloadPreset];
    const { url: _url, apiKey: _apiKey, client: _client, ...rest } = options;
    this.#options = rest as QdrantHybridStoreOptions;
    this.#scope = { tenancy: parsed.tenancy, tenant: parsed.tenant };
    this.#readArgs = parsed.readConsistency === undefined ? {} : { consistency: parsed.readConsistency };
    this.#writeArgs = parsed.writeOrdering === undefined ? {} : { ordering: parsed.writeOrdering };
    this.#cluster = {
      // Only shard-key tenancy works on a custom-sharded collection (every point request must name a key).
      shardingMethod: parsed.tenancy === 'shard-key' ? 'custom' : 'auto',
      shardNumber: parsed.shardNumber,
      replicationFactor: parsed.replicationFactor,
      writeConsistencyFactor: parsed.writeConsistencyFactor,
    };
    this.#preset = parsed.payloadPreset;
    this.#vectors = {
      dense: parsed.denseVectorName ?? defaults.denseVectorName,
      sparse: parsed.sparseVectorName === undefined ? defaults.sparseVectorName : parsed.sparseVectorName,
    };
    this.#aclKey = defaults.aclKey;
    this.#collection = parsed.collection;
    this.#embeddings = parsed.embeddings;
    this.#embeddingModel = parsed.embeddings === undefined ? undefined : embeddingModelName(parsed.embeddings);
    this.#vectorSize = parsed.vectorSize;
    this.#fusion = parsed.fusion ?? { method: 'rrf' };
    this.#prefetchLimit = parsed.prefetchLimit;
    this.#chunkTokens = parsed.chunkTokens ?? DEFAULT_CHUNK_TOKENS;
    this.#embedBatchSize = parsed.embedBatchSize ?? 64;
    this.#upsertBatchSize = parsed.upsertBatchSize ?? 256;
    this.#ingestBatchSize = parsed.ingestBatchSize ?? 128;
    this.#ingestConcurrency = parsed.ingestConcurrency ?? 4;
    this.#now = parsed.now ?? (() => new Date());
    this.#policy = {
      timeoutMs: parsed.timeoutMs,
      retries: parsed.retries,
      retryBaseDelayMs: parsed.retryBaseDelayMs,
      retryMaxDelayMs: parsed.retryMaxDelayMs,
    };
    if (parsed.client !== undefined) {
      this.#client = parsed.client;
      this.#url = undefined;
    } else {
      const url = parsed.url!;
      this.#url = redactUrl(url);
      // No I/O here. The client's own timeout closes the socket when our deadline gives up on a request.
      // The key lives only inside the client.
      this.#client = new QdrantRestClient({
        url,
        ...(parsed.apiKey === undefined ? {} : { apiKey: parsed.apiKey }),
        timeoutMs: parsed.timeoutMs,
      });
    }
  }

  /** The collection (or alias) this store reads and writes. */
  get collection(): string {
    return this.#collection;
  }

  /** The tenant this store reads and writes, with `tenancy`. */
  get tenant(): string | undefined {
    return this.#scope.tenant;
  }

  /**
   * The same store for another tenant: same client, collection and settings. Cheap (no I/O): a service
   * keeps one store and asks it for the caller's tenant per request.
   */
  forTenant(tenant: string): QdrantHybridStore {
    if (this.#scope.tenancy === undefined) {
      throw new LitmPackError('invalid_input', "forTenant needs a store with tenancy: 'shard-key' or 'payload'");
    }
    return this.#sibling({ tenant });
  }

  /** A store with these options changed, sharing this one's client (and so its connection settings). */
  #sibling(changes: Partial<QdrantHybridStoreOptions>): QdrantHybridStore {
    const store = new QdrantHybridStore({ ...this.#options, ...changes, client: this.#client });
    store.#url = this.#url;
    if (changes.collection === undefined) {
      // The same collection: what was read of it holds for the sibling too (no second read per tenant store).
      store.#recorded = this.#recorded;
      store.#vectorSize ??= this.#vectorSize;
    }
    return store;
  }

  /** Safe to log: no client, no key. */
  toJSON(): Record<string, unknown> {
    return {
      store: 'QdrantHybridStore',
      collection: this.#collection,
      ...(this.#url === undefined ? {} : { url: this.#url }),
      payloadPreset: this.#preset,
      denseVectorName: this.#vectors.dense,
      sparseVectorName: this.#vectors.sparse,
      ...(this.#scope.tenancy === undefined ? {} : { tenancy: this.#scope.tenancy }),
      ...(this.#scope.tenant === undefined ? {} : { tenant: this.#scope.tenant }),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Collection

  /**
   * Creates the collection (dense cosine vector sized from `vectorSize` or one embedding probe, sparse vector
   * with IDF, keyword/datetime payload indexes for `sourceId`, `acl`, `timestamp`, `clusters`, `kind`, and the
   * embedding model and dimension in the collection's metadata), or checks an existing one and throws
   * `config_mismatch` naming every difference, a different embedding model than the one the collection
   * records included. Missing payload indexes are added.
   */
  async ensureCollection(options: { signal?: AbortSignal } = {}): Promise<EnsureCollectionResult> {
    const { signal } = options;
    const writable = PRESET_DEFAULTS[this.#preset].writable;
    const indexes: Record<string, PayloadIndexSpec> = writable ? { ...LITM_PAYLOAD_INDEXES } : {};
    if (this.#scope.tenancy === 'payload') indexes[TENANT_FIELD] = TENANT_INDEX;
    const { exists } = await this.#read(
      'collectionExists',
      () => this.#client.collectionExists(this.#collection),
      CollectionExistenceSchema,
      signal,
    );
    let created = false;
    if (!exists) {
      if (!writable) {
        throw new LitmPackError(
          'bad_request',
          `Qdrant collection "${this.#collection}" does not exist; the "${this.#preset}" preset reads collections ` +
            'another tool wrote and does not create them.',
          { details: { collection: this.#collection } },
        );
      }
      const size = await this.#denseSize();
      try {
        await this.#write(
          'createCollection',
          () =>
            this.#client.createCollection(
              this.#collection,
              buildCreateCollection(this.#vectors, size, {
                metadata: embeddingMetadata(this.#ownEmbedding(size)),
                cluster: this.#cluster,
              }),
            ),
          BooleanResultSchema,
          signal,
        );
        created = true;
      } catch (error) {
        // Another process created it meanwhile (409): fall through to checking it.
        if (!(error instanceof LitmPackError && error.status === 409)) throw error;
      }
    }
    const info = await this.#read('getCollection', () => this.#client.getCollection(this.#collection), CollectionInfoSchema, signal);
    const size = created ? this.#vectorSize : this.#vectorSize ?? (await this.#probeSizeIfCheap());
    const check = checkCollection(info, {
      vectors: this.#vectors,
      size,
      payloadIndexes: indexes,
      embeddingModel: this.#embeddingModel,
      cluster: this.#cluster,
    });
    if (check.mismatches.length > 0) {
      throw new LitmPackError(
        'config_mismatch',
        `Qdrant collection "${this.#collection}" does not match this store: ${check.mismatches.join('; ')}`,
        { details: { collection: this.#collection, mismatches: check.mismatches } },
      );
    }
    this.#vectorSize = check.denseSize ?? this.#vectorSize;
    this.#recorded = recordedEmbedding(info);
    // A client that drops `metadata` from the create body (the official one does) gets it written here.
    if (created && this.#recorded.dimension === undefined) await this.#recordEmbedding(signal);
    const indexesCreated: string[] = [];
    for (const [field, type] of check.missingIndexes) {
      await this.#write(
        'createPayloadIndex',
        () =>
          this.#client.createPayloadIndex(this.#collection, { field_name: field, field_schema: type, wait: true, ...this.#writeArgs }),
        UpdateResultSchema,
        signal,
      );
      indexesCreated.push(field);
    }
    if (this.#scope.tenancy !== 'shard-key' || this.#scope.tenant === undefined) return { created, indexesCreated };
    return { created, indexesCreated, shardKeyCreated: await this.#ensureShardKey(this.#scope.tenant, signal) };
  }

  /**
   * The tenant's shard key, created when missing (its shards take the collection's shard number and
   * replication factor). A standalone Qdrant refuses user-defined shard keys with 405: said plainly.
   */
  async #ensureShardKey(tenant: string, signal: AbortSignal | undefined): Promise<boolean> {
    const listed = await this.#read('listShardKeys', () => this.#client.listShardKeys(this.#collection), ShardKeysResponseSchema, signal);
    if ((listed.shard_keys ?? []).some((entry) => entry.key === tenant)) return false;
    try {
      await this.#write('createShardKey', () => this.#client.createShardKey(this.#collection, { shard_key: tenant }), BooleanResultSchema, signal);
      return true;
    } catch (error) {
      if (error instanceof LitmPackError && error.status === 405) {
        throw new LitmPackError(
          'unsupported',
          `Qdrant at this url runs standalone and refuses user-defined shard keys (${error.message}). tenancy "shard-key" ` +
            'needs Qdrant in cluster mode (QDRANT__CLUSTER__ENABLED=true; see docker-compose.cluster.yml), or use tenancy "payload".',
          { cause: error, status: 405, details: { collection: this.#collection, tenant } },
        );
      }
      // Another process created it meanwhile: Qdrant says it already exists.
      if (error instanceof LitmPackError && error.status === 400 && /already exists/.test(error.message)) return false;
      throw error;
    }
  }

  /**
   * Removes everything of this store's tenant: its shard key (`shard-key`: its shards are dropped) or its
   * points (`payload`: one filtered delete, waited for). The collection and other tenants stay.
   */
  async dropTenant(options: { signal?: AbortSignal } = {}): Promise<void> {
    const tenant = this.#requireTenant('dropTenant');
    const { signal } = options;
    if (this.#scope.tenancy === 'shard-key') {
      await this.#write('deleteShardKey', () => this.#client.deleteShardKey(this.#collection, { shard_key: tenant }), BooleanResultSchema, signal);
      return;
    }
    const filter = scopeFilter(this.#scope, undefined)!;
    await this.#write('delete', () => this.#client.delete(this.#collection, { wait: true, filter, ...this.#writeArgs }), UpdateResultSchema, signal);
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
    if (this.#scope.tenancy !== undefined) {
      return Promise.reject(
        new LitmPackError(
          'unsupported',
          'reindex rebuilds a whole collection from one set of documents; with tenancy it would drop the other ' +
            "tenants. Reindex a tenant's sources with addDocuments and deleteSources, or the collection without tenancy.",
        ),
      );
    }
    if (!PRESET_DEFAULTS[this.#preset].writable) {
      return Promise.reject(new LitmPackError('unsupported', `reindex writes litm-pack payloads; this store reads a "${this.#preset}" collection`));
    }
    const readArgs = this.#readArgs;
    const operations: ReindexOperations = {
      aliases: async (signal) => (await this.#read('getAliases', () => this.#client.getAliases(), AliasesResponseSchema, signal)).aliases,
      collections: async (signal) =>
        (await this.#read('getCollections', () => this.#client.getCollections(), CollectionsResponseSchema, signal)).collections.map(
          (entry) => entry.name,
        ),
      open: (collection) => this.#sibling({ collection }),
      probeMode: this.#vectors.sparse === null ? 'dense' : 'lexical',
      count: async (collection, signal) => {
        // The official client's count() drops `consistency`; the store's own client sends it.
        const args = { exact: true, ...readArgs } as Parameters<QdrantClientLike['count']>[1];
        return (await this.#read('count', () => this.#client.count(collection, args), CountResultSchema, signal)).count;
      },
      changeAliases: async (actions, signal) => {
        await this.#write('updateCollectionAliases', () => this.#client.updateCollectionAliases({ actions }), BooleanResultSchema, signal);
      },
      dropCollection: async (collection, signal) => {
        await this.#write('deleteCollection', () => this.#client.deleteCollection(collection), BooleanResultSchema, signal);
      },
    };
    return runReindex(operations, request);
  }

  /** With tenancy, reads and writes need a tenant; an admin store (no tenant) only manages the collection. */
  #requireTenant(operation: string): string {
    const tenant = this.#scope.tenant;
    if (tenant === undefined) {
      throw new LitmPackError(
        'invalid_input',
        `${operation} on a store with tenancy "${this.#scope.tenancy ?? 'none'}" needs a tenant: give tenant, or use store.forTenant(name)`,
      );
    }
    return tenant;
  }

  /** Tenancy checks before a read or write of points. */
  #checkTenant(operation: string): void {
    if (this.#scope.tenancy !== undefined) this.#requireTenant(operation);
  }

  /** This store's point id of a chunk (tenant-scoped with tenancy). */
  #pointId(chunkId: string): string {
    return pointIdForChunk(chunkId, this.#scope.tenancy === undefined ? undefined : this.#scope.tenant);
  }

  /** The payload of `payload` tenancy carries `tenant`; the chunk record does not. */
  #withoutTenant(payload: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
    if (payload === null || payload === undefined || this.#scope.tenancy !== 'payload') return payload ?? null;
    const { [TENANT_FIELD]: _tenant, ...record } = payload;
    return record;
  }

  async #denseSize(): Promise<number> {
    if (this.#vectorSize !== undefined) return this.#vectorSize;
    if (this.#embeddings === undefined) {
      throw new LitmPackError(
        'invalid_input',
        'ensureCollection needs the dense vector size: give vectorSize or embeddings',
      );
    }
    const probe = await this.#embeddings.embedQuery('litm-pack dimension probe');
    if (!Array.isArray(probe) || probe.length === 0) {
      throw new LitmPackError('invalid_input', 'embeddings.embedQuery returned an empty vector');
    }
    this.#vectorSize = probe.length;
    return probe.length;
  }

  /** What this store would record: its model (when named) and the dense dimension. */
  #ownEmbedding(dimension: number | undefined): RecordedEmbedding {
    const own: RecordedEmbedding = {};
    if (this.#embeddings !== undefined && this.#embeddingModel !== undefined) own.model = this.#embeddingModel;
    if (dimension !== undefined) own.dimension = dimension;
    return own;
  }

  /** Writes the store's model and dimension into the collection's metadata (Qdrant merges it). */
  async #recordEmbedding(signal: AbortSignal | undefined): Promise<void> {
    const own = this.#ownEmbedding(this.#vectorSize);
    await this.#write(
      'updateCollection',
      () => this.#client.updateCollection(this.#collection, { metadata: embeddingMetadata({ ...this.#recorded, ...own }) }),
      BooleanResultSchema,
      signal,
    );
    this.#recorded = { ...this.#recorded, ...own };
  }

  /**
   * Before dense vectors are written: reads what the collection records (once per store), refuses a
   * different model, and records this store's model when the collection has none yet.
   */
  async #checkEmbeddingForWrite(signal: AbortSignal | undefined): Promise<void> {
    if (this.#recorded === undefined) {
      const info = await this.#read('getCollection', () => this.#client.getCollection(this.#collection), CollectionInfoSchema, signal);
      this.#learnCollection(info);
    }
    this.#checkEmbeddingModel();
    const recorded = this.#recorded!;
    if ((recorded.model === undefined && this.#embeddingModel !== undefined) || recorded.dimension === undefined) {
      await this.#recordEmbedding(signal);
    }
  }

  #learnCollection(info: CollectionInfoResponse): void {
    this.#recorded = recordedEmbedding(info);
    const check = checkCollection(info, { vectors: this.#vectors, size: undefined, payloadIndexes: {} });
    this.#vectorSize = check.denseSize ?? this.#vectorSize;
  }

  /** A query or document embedder other than the one the collection records is refused (when both are named). */
  #checkEmbeddingModel(): void {
    const recorded = this.#recorded;
    if (recorded?.model === undefined || this.#embeddingModel === undefined || recorded.model === this.#embeddingModel) return;
    throw new LitmPackError(
      'config_mismatch',
      `Qdrant collection "${this.#collection}" does not match this store: ${modelMismatch(recorded, this.#embeddingModel)}`,
      { details: { collection: this.#collection, recordedModel: recorded.model, model: this.#embeddingModel } },
    );
  }

  /** On an existing collection the size is checked against the embeddings when they are configured. */
  async #probeSizeIfCheap(): Promise<number | undefined> {
    return this.#embeddings === undefined ? undefined : this.#denseSize();
  }

  // -------------------------------------------------------------------------------------------
  // Ingest

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
    const run = this.#writes.then(() => this.#add(docs, options));
    this.#writes = run.catch(() => undefined);
    return run;
  }

  async #add(input: unknown, rawOptions: AddDocumentsOptions): Promise<AddDocumentsResult> {
    if (!PRESET_DEFAULTS[this.#preset].writable) {
      throw new LitmPackError(
        'unsupported',
        `addDocuments writes litm-pack payloads; this store reads a "${this.#preset}" collection. ` +
          'Ingest with the tool that owns it, or use payloadPreset "litm" on another collection.',
      );
    }
    this.#checkTenant('addDocuments');
    const docs = parseIngestDocuments(input);
    const options = parseOrThrow(AddDocumentsOptionsSchema, rawOptions, 'addDocuments options');
    const { signal } = options;
    throwIfAborted(signal);
    if (this.#embeddings !== undefined && docs.length > 0) await this.#checkEmbeddingForWrite(signal);
    const indexedAt = this.#now().toISOString();
    const result: AddDocumentsResult = { added: 0, unchanged: 0, removed: 0 };
    const batches: IngestDocument[][] = [];
    for (let start = 0; start < docs.length; start += this.#ingestBatchSize) batches.push(docs.slice(start, start + this.#ingestBatchSize));
    let done = 0;
    await runBounded(batches, this.#ingestConcurrency, signal, async (batch) => {
      const one = await this.#addBatch(batch, indexedAt, signal);
      result.added += one.added;
      result.unchanged += one.unchanged;
      result.removed += one.removed;
      done += batch.length;
      options.onProgress?.(done, docs.length);
    });
    return result;
  }

  async #addBatch(docs: IngestDocument[], indexedAt: string, signal: AbortSignal | undefined): Promise<AddDocumentsResult> {
    const records = docs.flatMap((doc) => chunkDocument(doc, { maxTokens: this.#chunkTokens, indexedAt }));
    const existing = await this.#existingPoints(
      docs.map((doc) => doc.id),
      signal,
    );
    const vectorsByHash = new Map<string, number[]>();
    for (const point of existing.values()) {
      if (point.dense !== undefined) vectorsByHash.set(point.record.textSha256, point.dense);
    }
    const changed: ChunkRecord[] = [];
    let unchanged = 0;
    for (const record of records) {
      const before = existing.get(record.id);
      if (before !== undefined) record.indexedAt = before.record.indexedAt;
      const needsVector = this.#embeddings !== undefined && !vectorsByHash.has(record.textSha256);
      if (before !== undefined && !needsVector && sameRecord(before.record, record)) unchanged += 1;
      else changed.push(record);
    }

    // Embed what has no vector yet, in batches.
    if (this.#embeddings !== undefined) {
      const texts = new Map<string, string>();
      for (const record of changed) {
        if (!vectorsByHash.has(record.textSha256)) texts.set(record.textSha256, record.text);
      }
      const pending = [...texts];
      for (let start = 0; start < pending.length; start += this.#embedBatchSize) {
        throwIfAborted(signal);
        const batch = pending.slice(start, start + this.#embedBatchSize);
        const vectors = await this.#embeddings.embedDocuments(batch.map(([, text]) => text));
        throwIfAborted(signal);
        this.#checkVectors(vectors, batch.length, 'embedDocuments');
        batch.forEach(([hash], i) => vectorsByHash.set(hash, vectors[i]!));
      }
    }

    // One batch's upserts go one after another: at most `ingestConcurrency` requests are in flight in all.
    const points = changed.map((record) => this.#point(record, vectorsByHash.get(record.textSha256)));
    for (let start = 0; start < points.length; start += this.#upsertBatchSize) {
      throwIfAborted(signal);
      const batch = points.slice(start, start + this.#upsertBatchSize);
      await this.#write(
        'upsert',
        () => this.#client.upsert(this.#collection, { wait: true, points: batch, ...shardKeyOf(this.#scope), ...this.#writeArgs }),
        UpdateResultSchema,
        signal,
      );
    }

    // Only after every upsert of the batch: the points of these sources that are not part of them any more.
    const keep = new Set(records.map((r) => r.id));
    const stale = [...existing.values()].filter((point) => !keep.has(point.record.id));
    if (stale.length > 0) {
      const sources = [...new Set(stale.map((point) => point.record.sourceId))];
      const sourceSet = new Set(sources);
      const filter = scopeFilter(this.#scope, {
        must: [{ key: 'sourceId', match: { any: sources } }],
        must_not: [{ has_id: records.filter((r) => sourceSet.has(r.sourceId)).map((r) => this.#pointId(r.id)) }],
      })!;
      await this.#write(
        'delete',
        () => this.#client.delete(this.#collection, { wait: true, filter, ...shardKeyOf(this.#scope), ...this.#writeArgs }),
        UpdateResultSchema,
        signal,
      );
    }
    return { added: changed.length, unchanged, removed: stale.length };
  }

  #point(record: ChunkRecord, dense: number[] | undefined): QdrantPointStruct {
    const vector: Record<string, number[] | SparseVector> = {};
    if (dense !== undefined) vector[this.#vectors.dense] = dense;
    if (this.#vectors.sparse !== null) vector[this.#vectors.sparse] = encodeBm25Document(record.text);
    const payload = payloadOf(record);
    if (this.#scope.tenancy === 'payload') payload[TENANT_FIELD] = this.#scope.tenant;
    return { id: this.#pointId(record.id), vector, payload };
  }

  /** The points of these sources now in the collection, by chunk id, with their dense vectors for reuse. */
  async #existingPoints(sourceIds: string[], signal: AbortSignal | undefined): Promise<Map<string, ExistingPoint>> {
    const out = new Map<string, ExistingPoint>();
    const filter = scopeFilter(this.#scope, { must: [{ key: 'sourceId', match: { any: sourceIds } }] });
    await this.#scrollRecords(filter, this.#embeddings === undefined ? false : [this.#vectors.dense], signal, (record, vector) => {
      out.set(record.id, { record, dense: this.#storedDense(vector) });
    });
    return out;
  }

  /**
   * Every point `filter` selects, as chunk records (pages of 1,000, the tenant's shard key and the read
   * consistency on each; a scroll that stops advancing is a fault, see `scrollAll`).
   */
  #scrollRecords(
    filter: QdrantFilter | undefined,
    withVector: false | string[],
    signal: AbortSignal | undefined,
    onRecord: (record: ChunkRecord, vector: unknown) => void,
  ): Promise<void> {
    return scrollAll(
      (offset) =>
        this.#read(
          'scroll',
          () =>
            this.#client.scroll(this.#collection, {
              ...(filter === undefined ? {} : { filter }),
              limit: 1000,
              with_payload: true,
              with_vector: withVector,
              ...(offset === undefined ? {} : { offset }),
              ...shardKeyOf(this.#scope),
              ...this.#readArgs,
            }),
          ScrollResultSchema,
          signal,
        ),
      { operation: 'scroll', collection: this.#collection },
      (points) => {
        for (const point of points) {
          onRecord(payloadToChunkRecord({ id: point.id, score: 0, payload: this.#withoutTenant(point.payload) }), point.vector);
        }
      },
    );
  }

  #storedDense(vector: unknown): number[] | undefined {
    return storedDenseVector(vector, this.#vectors.dense);
  }

  #checkVectors(vectors: unknown, expected: number, call: string): asserts vectors is number[][] {
    checkEmbeddingVectors(vectors, expected, call, this.#vectorSize, this.#collection);
  }

  // -------------------------------------------------------------------------------------------
  // Search

  /**
   * One request per search. `dense` and `lexical` are one `points/query` each; `hybrid` is one
   * `points/query/batch` (see `buildHybridQueryBatch` for how the true cosine comes back in it). The filter
   * and the principals' ACL are inside every query and prefetch. Results are sorted by score desc, then id.
   */
  async search(request: SearchRequest): Promise<Candidate[]> {
    const prepared = await this.#prepareSearch(request);
    const { req, mode, fusion, filter, denseVector, sparseVector } = prepared;
    const { signal } = req;
    if (prepared.diversity > 0) {
      // A query of stopwords only has no terms: nothing can match lexically (as in the memory store).
      if (mode === 'lexical' && sparseVector!.indices.length === 0) return [];
      const input = this.#diverseInput(prepared, true);
      const built = buildDiverseQuery(input);
      if ('query' in built) {
        const response = await this.#read('query', () => this.#client.query(this.#collection, this.#queryArgs(built.query)), QueryResponseSchema, signal);
        return this.#candidates(response.points, (point) => point.score);
      }
      const responses = await this.#read(
        'queryBatch',
        () => this.#client.queryBatch(this.#collection, this.#batchArgs(built.batch)),
        queryBatchResponseSchema(built.batch.searches.length),
        signal,
      );
      const { points, cosineOf } = diversePick(responses[0]!.points, responses[1]!.points);
      return this.#candidates(points, (point) => cosineOf.get(String(point.id)));
    }
    if (mode === 'dense') {
      const body = buildDenseQuery(denseVector!, this.#vectors.dense, { limit: req.limit, filter, withPayload: true });
      const response = await this.#read('query', () => this.#client.query(this.#collection, this.#queryArgs(body)), QueryResponseSchema, signal);
      return this.#candidates(response.points, (point) => point.score);
    }
    if (mode === 'lexical') {
      // A query of stopwords only has no terms: nothing can match (as in the memory store).
      if (sparseVector!.indices.length === 0) return [];
      const body = buildLexicalQuery(sparseVector!, this.#vectors.sparse!, { limit: req.limit, filter, withPayload: true });
      const response = await this.#read('query', () => this.#client.query(this.#collection, this.#queryArgs(body)), QueryResponseSchema, signal);
      return this.#candidates(response.points, () => undefined);
    }
    const body = buildHybridQueryBatch(this.#hybridInput(req.limit, denseVector!, sparseVector!, filter, fusion));
    const [fused, cosine] = await this.#read(
      'queryBatch',
      () => this.#client.queryBatch(this.#collection, this.#batchArgs(body)),
      queryBatchResponseSchema(body.searches.length),
      signal,
    );
    const similarity = new Map(cosine!.points.map((point) => [String(point.id), point.score]));
    return this.#candidates(fused!.points, (point) => similarity.get(String(point.id)));
  }

  /** A hybrid query as search sends it: each arm prefetches `hybridPrefetchLimit(limit)`, as the memory store does. */
  #hybridInput(
    limit: number,
    denseVector: number[],
    sparseVector: SparseVector,
    filter: QdrantFilter | undefined,
    fusion: Fusion,
  ): HybridQueryInput {
    const armLimit = hybridPrefetchLimit(limit, this.#prefetchLimit);
    return {
      denseVector,
      sparseVector,
      limit,
      denseLimit: armLimit,
      lexicalLimit: armLimit,
      filter,
      fusion,
      vectors: { dense: this.#vectors.dense, sparse: this.#vectors.sparse! },
      withPayload: true,
    };
  }

  /** A diverse query as search sends it (`buildDiverseQuery`): MMR picks from `diversityCandidates(limit)`. */
  #diverseInput(prepared: PreparedSearch, withPayload: true | string[]): DiverseQueryInput {
    const { limit } = prepared.req;
    return {
      mode: prepared.mode,
      denseVector: prepared.denseVector!,
      sparseVector: prepared.sparseVector,
      limit,
      candidates: diversityCandidates(limit, this.#prefetchLimit),
      armLimit: hybridPrefetchLimit(limit, this.#prefetchLimit),
      diversity: prepared.diversity,
      filter: prepared.filter,
      fusion: prepared.fusion,
      vectors: this.#vectors,
      withPayload,
    };
  }

  /** What search and rankings share: validation, mode, fusion, the filter with the ACL, the query vectors. */
  async #prepareSearch(request: SearchRequest): Promise<PreparedSearch> {
    // The same validation for search and rankings, `k`/`topK` named as `limit`'s aliases.
    const req = parseOrThrow(SearchRequestSchema, request, 'search request', { aliases: LIMIT_ALIASES });
    this.#checkTenant('search');
    const userFilter = req.filter === undefined ? undefined : validateFilter(req.filter);
    const fusion = req.fusion ?? this.#fusion;
    const mode = this.#resolveMode(req.mode);
    throwIfAborted(req.signal);
    const filter = scopeFilter(this.#scope, buildSearchFilter(userFilter, req.principals, this.#aclKey));
    const diversity = req.diversity ?? 0;
    if (diversity > 0 && this.#embeddings === undefined) {
      throw new LitmPackError('unsupported', 'diversity (MMR) needs dense vectors: construct QdrantHybridStore with { embeddings }');
    }
    let denseVector: number[] | undefined;
    // MMR compares dense vectors in every mode.
    if (mode !== 'lexical' || diversity > 0) {
      // An embedder that names its model is checked against the collection's record before its first query:
      // one read per store, unless ensureCollection or an ingest has read the record already.
      if (this.#embeddingModel !== undefined && this.#recorded === undefined) {
        this.#learnCollection(
          await this.#read('getCollection', () => this.#client.getCollection(this.#collection), CollectionInfoSchema, req.signal),
        );
      }
      this.#checkEmbeddingModel();
      const vector = await this.#embeddings!.embedQuery(req.text);
      throwIfAborted(req.signal);
      this.#checkVectors([vector], 1, 'embedQuery');
      denseVector = vector;
    }
    const sparseVector = mode === 'dense' ? undefined : encodeBm25Query(req.text);
    return { req, mode, fusion, filter, denseVector, sparseVector, diversity };
  }

  /**
   * The same request as `search`, arm by arm: each arm's raw top `limit` (dense: cosine, lexical: BM25
   * score; `null` when the arm does not run in this mode) beside the fused ranking, which is exactly what
   * `search` returns. One request: hybrid is one `points/query/batch` of the fused query and both arms.
   */
  async rankings(request: SearchRequest): Promise<Rankings> {
    const prepared = await this.#prepareSearch(request);
    const { req, mode, fusion, filter, denseVector, sparseVector } = prepared;
    const { signal, limit } = req;
    // A litm payload names its chunk and source in two keys: only those come back. Other presets need the
    // whole payload to find them.
    const withPayload: true | string[] = this.#preset === 'litm' ? ['id', 'sourceId'] : true;
    const toRanked = (points: ScoredPointResponse[]) => {
      const sourceOf = new Map<string, string>();
      const scored: ScoredId[] = points.map((point) => {
        const { id, sourceId } = this.#chunkKeys(point);
        sourceOf.set(id, sourceId);
        return { id, score: point.score };
      });
      return toRankedChunks(scored, limit, (id) => sourceOf.get(id)!);
    };
    if (prepared.diversity > 0) {
      if (mode === 'lexical' && sparseVector!.indices.length === 0) return { mode, dense: null, lexical: [], fused: [] };
      const { batch, searchQueries } = buildDiverseRankingsBatch(this.#diverseInput(prepared, withPayload));
      const responses = await this.#read(
        'queryBatch',
        () => this.#client.queryBatch(this.#collection, this.#batchArgs(batch)),
        queryBatchResponseSchema(batch.searches.length),
        signal,
      );
      // The search's answers first (`fused` is exactly what search returns), then the arms the mode runs.
      const fused = searchQueries === 1 ? responses[0]!.points : diversePick(responses[0]!.points, responses[1]!.points).points;
      const arms = responses.slice(searchQueries);
      return {
        mode,
        dense: mode === 'lexical' ? null : toRanked(arms[0]!.points),
        lexical: mode === 'dense' ? null : toRanked(arms[mode === 'hybrid' ? 1 : 0]!.points),
        fused: toRanked(fused),
      };
    }
    if (mode === 'dense') {
      const body = buildDenseQuery(denseVector!, this.#vectors.dense, { limit, filter, withPayload });
      const { points } = await this.#read('query', () => this.#client.query(this.#collection, this.#queryArgs(body)), QueryResponseSchema, signal);
      const dense = toRanked(points);
      return { mode, dense, lexical: null, fused: dense.map((entry) => ({ ...entry })) };
    }
    if (mode === 'lexical') {
      if (sparseVector!.indices.length === 0) return { mode, dense: null, lexical: [], fused: [] };
      const body = buildLexicalQuery(sparseVector!, this.#vectors.sparse!, { limit, filter, withPayload });
      const { points } = await this.#read('query', () => this.#client.query(this.#collection, this.#queryArgs(body)), QueryResponseSchema, signal);
      const lexical = toRanked(points);
      return { mode, dense: null, lexical, fused: lexical.map((entry) => ({ ...entry })) };
    }
    const body = buildRankingsBatch({ ...this.#hybridInput(limit, denseVector!, sparseVector!, filter, fusion), withPayload });
    const [fused, dense, lexical] = await this.#read(
      'queryBatch',
      () => this.#client.queryBatch(this.#collection, this.#batchArgs(body)),
      queryBatchResponseSchema(body.searches.length),
      signal,
    );
    return { mode, dense: toRanked(dense!.points), lexical: toRanked(lexical!.points), fused: toRanked(fused!.points) };
  }

  // -------------------------------------------------------------------------------------------
  // Reading and deleting by source

  /**
   * Chunks by source, chunk id and/or filter, ANDed with the principals' ACL exactly as in `search`, in
   * source order (sources as listed in `sourceIds`, else by id; then by span). One payload-filtered scroll
   * reads only the matching points (pages of 1,000: a source of up to 1,000 chunks is one request).
   */
  async getChunks(request: GetChunksRequest): Promise<ChunkRecord[]> {
    this.#requireLitmPayload('getChunks');
    const req = parseGetChunksRequest(request);
    this.#checkTenant('getChunks');
    const userFilter = req.filter === undefined ? undefined : validateFilter(req.filter);
    throwIfAborted(req.signal);
    const filter = buildChunksFilter({
      sourceIds: req.sourceIds === undefined ? undefined : [...new Set(req.sourceIds)],
      pointIds: req.ids === undefined ? undefined : [...new Set(req.ids)].map((id) => this.#pointId(id)),
      filter: scopeFilter(this.#scope, buildSearchFilter(userFilter, req.principals, this.#aclKey)),
    });
    const records: ChunkRecord[] = [];
    await this.#scrollRecords(filter, false, req.signal, (record) => records.push(record));
    return orderChunks(records, req.sourceIds, req.limit);
  }

  /**
   * Removes every chunk of these sources: one facet request counts them per source, one filtered delete
   * (waited for) removes them. Queued behind ingests in progress, like `addDocuments`.
   */
  deleteSources(sourceIds: string[], options: { signal?: AbortSignal } = {}): Promise<DeleteSourcesResult> {
    const run = this.#writes.then(() => this.#deleteSources(sourceIds, options));
    this.#writes = run.catch(() => undefined);
    return run;
  }

  async #deleteSources(input: unknown, rawOptions: unknown): Promise<DeleteSourcesResult> {
    this.#requireLitmPayload('deleteSources');
    const { sourceIds, signal } = parseDeleteSources(input, rawOptions);
    this.#checkTenant('deleteSources');
    throwIfAborted(signal);
    if (sourceIds.length === 0) return { sources: 0, chunks: 0 };
    const filter = scopeFilter(this.#scope, { must: [{ key: 'sourceId', match: { any: sourceIds } }] })!;
    const { hits } = await this.#read(
      'facet',
      () =>
        this.#client.facet(this.#collection, {
          key: 'sourceId',
          filter,
          limit: sourceIds.length,
          exact: true,
          ...shardKeyOf(this.#scope),
          ...this.#readArgs,
        }),
      FacetResponseSchema,
      signal,
    );
    const chunks = hits.reduce((sum, hit) => sum + hit.count, 0);
    if (chunks === 0) return { sources: 0, chunks: 0 };
    await this.#write(
      'delete',
      () => this.#client.delete(this.#collection, { wait: true, filter, ...shardKeyOf(this.#scope), ...this.#writeArgs }),
      UpdateResultSchema,
      signal,
    );
    return { sources: hits.filter((hit) => hit.count > 0).length, chunks };
  }

  #requireLitmPayload(method: string): void {
    if (this.#preset === 'litm') return;
    throw new LitmPackError(
      'unsupported',
      `${method} reads and writes litm-pack chunk records; this store reads a "${this.#preset}" collection another tool wrote.`,
      { details: { preset: this.#preset } },
    );
  }

  #resolveMode(requested: SearchMode): SearchMode {
    const hasSparse = this.#vectors.sparse !== null;
    const noSparse = (what: string): LitmPackError =>
      new LitmPackError(
        'unsupported_mode',
        `${what} search needs a sparse BM25 vector, and collection "${this.#collection}" is configured without one ` +
          `(payloadPreset "${this.#preset}"). Set sparseVectorName to the collection's sparse vector, or use mode "dense".`,
        { details: { mode: requested, collection: this.#collection } },
      );
    if (requested === 'dense' || (requested === 'hybrid' && !hasSparse)) {
      if (this.#embeddings === undefined) {
        if (requested === 'hybrid') throw noSparse('Hybrid (or, without embeddings, lexical)');
        throw new LitmPackError(
          'unsupported_mode',
          'Dense search needs embeddings: construct QdrantHybridStore with { embeddings }, or use mode "lexical"',
          { details: { mode: requested } },
        );
      }
      if (requested === 'hybrid') throw noSparse('Hybrid');
      return 'dense';
    }
    if (!hasSparse) throw noSparse('Lexical');
    // Without embeddings hybrid degrades to lexical (coverage confidence is then unknown), as in memory.
    if (requested === 'hybrid' && this.#embeddings === undefined) return 'lexical';
    return requested;
  }

  /** The chunk id and source id of a point (a litm payload's two keys, or through the preset's mapping). */
  #chunkKeys(point: ScoredPointResponse): { id: string; sourceId: string } {
    if (this.#preset === 'litm') {
      const keys = ChunkKeysSchema.safeParse(point.payload);
      if (!keys.success) {
        throw new LitmPackError('corrupt', `Point ${String(point.id)} does not have a "litm" payload (no chunk id and source id)`, {
          cause: keys.error,
          details: { pointId: point.id, preset: this.#preset },
        });
      }
      return keys.data;
    }
    const candidate = pointToCandidate({ id: point.id, score: point.score, payload: point.payload ?? null }, this.#preset);
    return { id: candidate.id, sourceId: candidate.sourceId ?? candidate.id };
  }

  /** A query with the tenant's shard key and the read consistency. */
  #queryArgs(body: QdrantQueryArgs): QdrantQueryArgs {
    return { ...body, ...shardKeyOf(this.#scope), ...this.#readArgs };
  }

  /** A batch: each query names the shard key; the consistency is the batch's. */
  #batchArgs(body: QdrantQueryBatchArgs): QdrantQueryBatchArgs {
    const shard = shardKeyOf(this.#scope);
    return { searches: body.searches.map((search) => ({ ...search, ...shard })), ...this.#readArgs };
  }

  #candidates(
    points: ScoredPointResponse[],
    similarityOf: (point: ScoredPointResponse) => number | undefined,
  ): Candidate[] {
    const candidates = points.map((point) =>
      pointToCandidate({ id: point.id, score: point.score, payload: this.#withoutTenant(point.payload) }, this.#preset, similarityOf(point)),
    );
    // Qdrant leaves ties in engine order; litm-pack's total order is score desc, then id.
    return candidates.sort(compareScored);
  }

  // -------------------------------------------------------------------------------------------
  // Calls

  /** An idempotent read: retried on retryable faults; its answer is checked against `schema`. */
  #read<S extends z.ZodType>(operation: string, run: () => Promise<unknown>, schema: S, signal: AbortSignal | undefined) {
    return this.#call(operation, run, schema, { read: true, signal });
  }

  /** A write: never retried (a lost answer does not say whether it was applied). */
  #write<S extends z.ZodType>(operation: string, run: () => Promise<unknown>, schema: S, signal: AbortSignal | undefined) {
    return this.#call(operation, run, schema, { read: false, signal });
  }

  async #call<S extends z.ZodType>(
    operation: string,
    run: () => Promise<unknown>,
    schema: S,
    options: { read: boolean; signal: AbortSignal | undefined },
  ): Promise<z.output<S>> {
    const context = { operation, collection: this.#collection };
    return parseQdrantResponse(schema, await callQdrant(run, context, this.#policy, options), context);
  }
}

/** What `search` and `rankings` share after validation (`#prepareSearch`). */
interface PreparedSearch {
  req: z.output<typeof SearchRequestSchema>;
  mode: SearchMode;
  fusion: Fusion;
  filter: QdrantFilter | undefined;
  denseVector: number[] | undefined;
  sparseVector: SparseVector | undefined;
  /** MMR's diversity (0: none). */
  diversity: number;
}

/**
 * The MMR pick of a lexical or hybrid diverse batch (`buildDiverseQuery`) with each point's score in the mode
 * (the pool query's), and the cosine MMR scored it with.
 */
function diversePick(pool: ScoredPointResponse[], picked: ScoredPointResponse[]) {
  const scoreOf = new Map(pool.map((point) => [String(point.id), point.score]));
  const cosineOf = new Map(picked.map((point) => [String(point.id), point.score]));
  return { points: picked.map((point) => ({ ...point, score: scoreOf.get(String(point.id)) ?? point.score })), cosineOf };
}
