/**
 * What every operation of a `QdrantHybridStore` works with: the client and the collection, the store's
 * settings (vector names, preset, tenancy, consistency, batch sizes), what was learnt of the collection (dense
 * size, recorded embedding model), and the calls every operation makes (reads retried, writes not, answers
 * checked). Internal: the store's operations (manage.ts, ingest.ts, search.ts, reads.ts) take it.
 */
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { checkEmbedderVectors } from '../base/vectors.js';
import type { Candidate } from '../core/schemas.js';
import { DEFAULT_CHUNK_TOKENS } from '../store/chunk.js';
import { embeddingModelName, type EmbeddingsLike } from '../store/embeddings.js';
import {
  CURRENT_INDEXED_TEXT,
  INDEXED_TEXT_RECIPES,
  LEGACY_INDEXED_TEXT,
  reindexAdvice,
  type IndexedTextRecipe,
} from '../store/indexed-text.js';
import { compareScored } from '../store/fusion.js';
import type { ChunkRecord, Fusion } from '../store/schemas.js';
import { callQdrant, type CallPolicy } from './call.js';
import {
  checkCollection,
  collectionVectors,
  embeddingMetadata,
  modelMismatch,
  recordedEmbedding,
  type ClusterSettings,
  type CollectionVectors,
  type RecordedEmbedding,
} from './collection.js';
import type { ConfiguredVectors } from './detect.js';
import { QdrantHybridStoreOptionsSchema, type QdrantHybridStoreOptions } from './options.js';
import { PRESET_DEFAULTS, payloadToChunkRecord, pointToCandidate, type PayloadPreset } from './presets.js';
import type { VectorNames, QdrantClientLike, QdrantFilter, QdrantQueryArgs, QdrantQueryBatchArgs } from './types.js';
import {
  BooleanResultSchema,
  CollectionInfoSchema,
  CountResultSchema,
  ScrollResultSchema,
  parseQdrantResponse,
  type CollectionInfoResponse,
  type ScoredPointResponse,
} from './responses.js';
import { QdrantRestClient } from './rest-client.js';
import { scrollAll } from './scroll.js';
import { TENANT_FIELD, shardKeyOf, tenantPointNamespace, type TenantScope } from './tenancy.js';
import { redactUrl, storedDenseVector } from './util.js';
import { v5 as uuidv5 } from 'uuid';

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

export class QdrantConnection {
  readonly client: QdrantClientLike;
  url: string | undefined;
  /** The options as given (without url and key), to open sibling stores: another tenant, another collection. */
  readonly options: QdrantHybridStoreOptions;
  readonly scope: TenantScope;
  readonly readArgs: { consistency?: number | 'majority' | 'quorum' | 'all' };
  readonly writeArgs: { ordering?: 'weak' | 'medium' | 'strong' };
  readonly cluster: ClusterSettings;
  readonly collection: string;
  readonly embeddings: EmbeddingsLike | undefined;
  readonly preset: PayloadPreset;
  readonly vectors: VectorNames;
  readonly aclKey: string;
  readonly fusion: Fusion;
  readonly prefetchLimit: number | undefined;
  readonly chunkTokens: number;
  readonly embedBatchSize: number;
  readonly upsertBatchSize: number;
  readonly ingestBatchSize: number;
  readonly ingestConcurrency: number;
  readonly now: () => Date;
  readonly policy: CallPolicy;
  vectorSize: number | undefined;
  /** The model the embeddings name (`embeddingModelName`), when they name one, or the `embeddingModel` option. */
  readonly embeddingModel: string | undefined;
  /** What the collection records about its dense vectors; undefined until read (ensureCollection, dense ingest). */
  recorded: RecordedEmbedding | undefined;
  /** The collection's vectors, read with its record (see `learnCollection`); undefined until read. */
  layout: CollectionVectors | undefined;
  /** The vector names as configured, and whether the caller named them or the preset's defaults apply. */
  readonly configured: ConfiguredVectors;

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
    this.options = rest;
    this.scope = { tenancy: parsed.tenancy, tenant: parsed.tenant };
    this.readArgs = parsed.readConsistency === undefined ? {} : { consistency: parsed.readConsistency };
    this.writeArgs = parsed.writeOrdering === undefined ? {} : { ordering: parsed.writeOrdering };
    this.cluster = {
      // Only shard-key tenancy works on a custom-sharded collection (every point request must name a key).
      shardingMethod: parsed.tenancy === 'shard-key' ? 'custom' : 'auto',
      shardNumber: parsed.shardNumber,
      replicationFactor: parsed.replicationFactor,
      writeConsistencyFactor: parsed.writeConsistencyFactor,
    };
    this.preset = parsed.payloadPreset;
    this.vectors = {
      dense: parsed.denseVectorName ?? defaults.denseVectorName,
      sparse: parsed.sparseVectorName === undefined ? defaults.sparseVectorName : parsed.sparseVectorName,
    };
    this.configured = {
      vectors: this.vectors,
      preset: this.preset,
      denseNamed: parsed.denseVectorName !== undefined,
      sparseNamed: parsed.sparseVectorName !== undefined,
    };
    this.aclKey = defaults.aclKey;
    this.collection = parsed.collection;
    this.embeddings = parsed.embeddings;
    this.embeddingModel = parsed.embeddings === undefined ? parsed.embeddingModel : embeddingModelName(parsed.embeddings);
    this.vectorSize = parsed.vectorSize;
    this.fusion = parsed.fusion ?? { method: 'rrf' };
    this.prefetchLimit = parsed.prefetchLimit;
    this.chunkTokens = parsed.chunkTokens ?? DEFAULT_CHUNK_TOKENS;
    this.embedBatchSize = parsed.embedBatchSize ?? 64;
    this.upsertBatchSize = parsed.upsertBatchSize ?? 256;
    this.ingestBatchSize = parsed.ingestBatchSize ?? 128;
    this.ingestConcurrency = parsed.ingestConcurrency ?? 4;
    this.now = parsed.now ?? (() => new Date());
    this.policy = {
      timeoutMs: parsed.timeoutMs,
      retries: parsed.retries,
      retryBaseDelayMs: parsed.retryBaseDelayMs,
      retryMaxDelayMs: parsed.retryMaxDelayMs,
    };
    if (parsed.client !== undefined) {
      this.client = parsed.client;
      this.url = undefined;
    } else {
      const url = parsed.url!;
      this.url = redactUrl(url);
      // No I/O here. The client's own timeout closes the socket when our deadline gives up on a request.
      // The key lives only inside the client.
      this.client = new QdrantRestClient({
        url,
        ...(parsed.apiKey === undefined ? {} : { apiKey: parsed.apiKey }),
        timeoutMs: parsed.timeoutMs,
      });
    }
  }

  async denseSize(): Promise<number> {
    if (this.vectorSize !== undefined) return this.vectorSize;
    if (this.embeddings === undefined) {
      throw new LitmPackError('invalid_input', 'ensureCollection needs the dense vector size: give vectorSize or embeddings');
    }
    const probe = await this.embeddings.embedQuery('litm-pack dimension probe');
    if (!Array.isArray(probe) || probe.length === 0) {
      throw new LitmPackError('invalid_input', 'embeddings.embedQuery returned an empty vector');
    }
    this.vectorSize = probe.length;
    return probe.length;
  }

  /**
   * What this store would record in a collection it creates: its model (when named), the dense dimension and the
   * current indexed-text recipe.
   */
  ownEmbedding(dimension: number | undefined): RecordedEmbedding {
    const own: RecordedEmbedding = { indexedText: CURRENT_INDEXED_TEXT };
    if (this.embeddingModel !== undefined) own.model = this.embeddingModel;
    if (dimension !== undefined) own.dimension = dimension;
    return own;
  }

  /**
   * Writes the store's model and dimension into the collection's metadata (Qdrant merges it). The recipe recorded
   * stays: it says how the points already there were indexed, which this store does not change.
   */
  async recordEmbedding(signal: AbortSignal | undefined): Promise<void> {
    const own = this.ownEmbedding(this.vectorSize);
    delete own.indexedText;
    await this.write(
      'updateCollection',
      () => this.client.updateCollection(this.collection, { metadata: embeddingMetadata({ ...this.recorded, ...own }) }),
      BooleanResultSchema,
      signal,
    );
    this.recorded = { ...this.recorded, ...own };
  }

  /**
   * Before dense vectors are written: reads what the collection records (once per store), refuses a
   * different model, and records this store's model when the collection has none yet.
   */
  async checkEmbeddingForWrite(signal: AbortSignal | undefined): Promise<void> {
    if (this.recorded === undefined) {
      const info = await this.read('getCollection', () => this.client.getCollection(this.collection), CollectionInfoSchema, signal);
      this.learnCollection(info);
    }
    this.checkEmbeddingModel();
    const recorded = this.recorded!;
    if ((recorded.model === undefined && this.embeddingModel !== undefined) || recorded.dimension === undefined) {
      await this.recordEmbedding(signal);
    }
  }

  /** The collection's record and vectors, read once per store (a sibling store shares them). */
  async readCollectionOnce(signal: AbortSignal | undefined): Promise<CollectionVectors> {
    if (this.layout === undefined) {
      this.learnCollection(
        await this.read('getCollection', () => this.client.getCollection(this.collection), CollectionInfoSchema, signal),
      );
    }
    return this.layout!;
  }

  learnCollection(info: CollectionInfoResponse): void {
    this.recorded = recordedEmbedding(info);
    this.layout = collectionVectors(info);
    const check = checkCollection(info, { vectors: this.vectors, size: undefined, payloadIndexes: {} });
    this.vectorSize = check.denseSize ?? this.vectorSize;
  }

  /**
   * How the collection's points were indexed (see store/indexed-text.ts), read once per store: the recipe its
   * metadata records; without one, the current recipe for an empty collection and `chunk-text` for one whose points
   * were written before recipes were recorded (recorded then, so the next store need not count). With `adopt` (a
   * copy of a store indexed that way), an empty collection takes `adopt` whatever it records. Writes use the
   * answer, so one collection never holds points indexed two ways.
   */
  async indexedTextRecipe(signal: AbortSignal | undefined, adopt?: IndexedTextRecipe): Promise<IndexedTextRecipe> {
    if (this.#indexedText !== undefined && adopt === undefined) return this.#indexedText;
    if (this.recorded === undefined) await this.readCollectionOnce(signal);
    const recorded = this.recorded?.indexedText;
    let recipe: IndexedTextRecipe;
    const empty = async () =>
      (await this.read('count', () => this.client.count(this.collection, { exact: true }), CountResultSchema, signal)).count === 0;
    if (adopt !== undefined && recorded !== adopt && (await empty())) {
      recipe = adopt;
    } else if (recorded !== undefined) {
      if (!(INDEXED_TEXT_RECIPES as readonly string[]).includes(recorded)) {
        throw new LitmPackError(
          'config_mismatch',
          `Qdrant collection "${this.collection}" was indexed with the recipe "${recorded}", which this version of litm-pack does not know: upgrade litm-pack to write into it`,
          { details: { collection: this.collection, indexedText: recorded } },
        );
      }
      this.#indexedText = recorded as IndexedTextRecipe;
      return this.#indexedText;
    } else {
      recipe = (await empty()) ? CURRENT_INDEXED_TEXT : LEGACY_INDEXED_TEXT;
    }
    const entry = { ...this.recorded, indexedText: recipe };
    await this.write(
      'updateCollection',
      () => this.client.updateCollection(this.collection, { metadata: embeddingMetadata(entry) }),
      BooleanResultSchema,
      signal,
    );
    this.recorded = entry;
    this.#indexedText = recipe;
    return recipe;
  }

  /** How to bring this collection to the current recipe, once its recipe is known and older (else null). */
  reindexAdvice(): string | null {
    if (this.#indexedText === undefined) return null;
    return reindexAdvice(
      this.#indexedText,
      `rebuild it with store.reindex({ alias, documents }) (the CLI: ingest --reindex --alias ${this.collection}), which indexes into a new collection and swaps the alias`,
    );
  }

  #indexedText: IndexedTextRecipe | undefined;

  /** A query or document embedder other than the one the collection records is refused (when both are named). */
  checkEmbeddingModel(): void {
    const recorded = this.recorded;
    if (recorded?.model === undefined || this.embeddingModel === undefined || recorded.model === this.embeddingModel) return;
    throw new LitmPackError(
      'config_mismatch',
      `Qdrant collection "${this.collection}" does not match this store: ${modelMismatch(recorded, this.embeddingModel)}`,
      { details: { collection: this.collection, recordedModel: recorded.model, model: this.embeddingModel } },
    );
  }

  /** On an existing collection the size is checked against the embeddings when they are configured. */
  async probeSizeIfCheap(): Promise<number | undefined> {
    return this.embeddings === undefined ? undefined : this.denseSize();
  }

  /** With tenancy, reads and writes need a tenant; an admin store (no tenant) only manages the collection. */
  requireTenant(operation: string): string {
    const tenant = this.scope.tenant;
    if (tenant === undefined) {
      throw new LitmPackError(
        'invalid_input',
        `${operation} on a store with tenancy "${this.scope.tenancy ?? 'none'}" needs a tenant: give tenant, or use store.forTenant(name)`,
      );
    }
    return tenant;
  }

  /** Tenancy checks before a read or write of points. */
  checkTenant(operation: string): void {
    if (this.scope.tenancy !== undefined) this.requireTenant(operation);
  }

  /** This store's point id of a chunk (tenant-scoped with tenancy). */
  pointId(chunkId: string): string {
    return pointIdForChunk(chunkId, this.scope.tenancy === undefined ? undefined : this.scope.tenant);
  }

  /** The payload of `payload` tenancy carries `tenant`; the chunk record does not. */
  withoutTenant(payload: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
    if (payload === null || payload === undefined || this.scope.tenancy !== 'payload') return payload ?? null;
    const { [TENANT_FIELD]: _tenant, ...record } = payload;
    return record;
  }

  /**
   * Every point `filter` selects, as chunk records (pages of 1,000, the tenant's shard key and the read
   * consistency on each; a scroll that stops advancing is a fault, see `scrollAll`).
   */
  scrollRecords(
    filter: QdrantFilter | undefined,
    withVector: false | string[],
    signal: AbortSignal | undefined,
    onRecord: (record: ChunkRecord, vector: unknown) => void,
  ): Promise<void> {
    return scrollAll(
      (offset) =>
        this.read(
          'scroll',
          () =>
            this.client.scroll(this.collection, {
              ...(filter === undefined ? {} : { filter }),
              limit: 1000,
              with_payload: true,
              with_vector: withVector,
              ...(offset === undefined ? {} : { offset }),
              ...shardKeyOf(this.scope),
              ...this.readArgs,
            }),
          ScrollResultSchema,
          signal,
        ),
      { operation: 'scroll', collection: this.collection },
      (points) => {
        for (const point of points) {
          onRecord(payloadToChunkRecord({ id: point.id, score: 0, payload: this.withoutTenant(point.payload) }), point.vector);
        }
      },
    );
  }

  storedDense(vector: unknown): number[] | undefined {
    return storedDenseVector(vector, this.vectors.dense);
  }

  checkVectors(vectors: unknown, expected: number, call: string): asserts vectors is number[][] {
    checkEmbedderVectors(vectors, expected, call, this.vectorSize, `collection "${this.collection}"`);
  }

  requireLitmPayload(method: string): void {
    if (this.preset === 'litm') return;
    throw new LitmPackError(
      'unsupported',
      `${method} reads and writes litm-pack chunk records; this store reads a "${this.preset}" collection another tool wrote.`,
      { details: { preset: this.preset } },
    );
  }

  /** The chunk id and source id of a point (a litm payload's two keys, or through the preset's mapping). */
  chunkKeys(point: ScoredPointResponse): { id: string; sourceId: string } {
    if (this.preset === 'litm') {
      const keys = ChunkKeysSchema.safeParse(point.payload);
      if (!keys.success) {
        throw new LitmPackError('corrupt', `Point ${String(point.id)} does not have a "litm" payload (no chunk id and source id)`, {
          cause: keys.error,
          details: { pointId: point.id, preset: this.preset },
        });
      }
      return keys.data;
    }
    const candidate = pointToCandidate({ id: point.id, score: point.score, payload: point.payload ?? null }, this.preset);
    return { id: candidate.id, sourceId: candidate.sourceId ?? candidate.id };
  }

  /** A query with the tenant's shard key and the read consistency. */
  queryArgs(body: QdrantQueryArgs): QdrantQueryArgs {
    return { ...body, ...shardKeyOf(this.scope), ...this.readArgs };
  }

  /** A batch: each query names the shard key; the consistency is the batch's. */
  batchArgs(body: QdrantQueryBatchArgs): QdrantQueryBatchArgs {
    const shard = shardKeyOf(this.scope);
    return { searches: body.searches.map((search) => ({ ...search, ...shard })), ...this.readArgs };
  }

  candidates(points: ScoredPointResponse[], similarityOf: (point: ScoredPointResponse) => number | undefined): Candidate[] {
    const candidates = points.map((point) =>
      pointToCandidate({ id: point.id, score: point.score, payload: this.withoutTenant(point.payload) }, this.preset, similarityOf(point)),
    );
    // Qdrant leaves ties in engine order; litm-pack's total order is score desc, then id.
    return candidates.sort(compareScored);
  }

  /** An idempotent read: retried on retryable faults; its answer is checked against `schema`. */
  read<S extends z.ZodType>(operation: string, run: () => Promise<unknown>, schema: S, signal: AbortSignal | undefined) {
    return this.call(operation, run, schema, { read: true, signal });
  }

  /** A write: never retried (a lost answer does not say whether it was applied). */
  write<S extends z.ZodType>(operation: string, run: () => Promise<unknown>, schema: S, signal: AbortSignal | undefined) {
    return this.call(operation, run, schema, { read: false, signal });
  }

  async call<S extends z.ZodType>(
    operation: string,
    run: () => Promise<unknown>,
    schema: S,
    options: { read: boolean; signal: AbortSignal | undefined },
  ): Promise<z.output<S>> {
    const context = { operation, collection: this.collection };
    return parseQdrantResponse(schema, await callQdrant(run, context, this.policy, options), context);
  }
}
