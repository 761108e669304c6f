import { z } from 'zod';
import { EmbeddingsSchema, FusionSchema } from '../store/schemas.js';
import { PAYLOAD_PRESETS } from './presets.js';
import { QDRANT_CLIENT_METHODS, type QdrantClientLike } from './types.js';

const clientSchema = z.custom<QdrantClientLike>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    QDRANT_CLIENT_METHODS.every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
  { message: `client must have the QdrantClient methods ${QDRANT_CLIENT_METHODS.join(', ')}` },
);

/** Options of `QdrantHybridStore`; names shared with `MemoryHybridStore` mean the same thing. */
export const QdrantHybridStoreOptionsSchema = z
  .strictObject({
    /** A `QdrantClient` (or anything with the methods the store calls). Give this or `url`. */
    client: clientSchema.optional(),
    /** Server URL, e.g. `http://localhost:6333`; the store builds its own client. Give this or `client`. */
    url: z.url({ protocol: /^https?$/, message: 'url must be an http(s) URL such as http://localhost:6333' }).optional(),
    /** API key for `url`. Never serialised. */
    apiKey: z.string().min(1).optional(),
    collection: z.string().min(1, 'collection must be a non-empty string'),
    /** Dense embeddings; without them hybrid search is lexical and `dense` mode is unavailable. */
    embeddings: EmbeddingsSchema.optional(),
    /**
     * The model that made the dense vectors, when they come without `embeddings` (a copy of stored vectors):
     * recorded in a new collection's metadata, and checked against what an existing one records.
     */
    embeddingModel: z.string().min(1).optional(),
    /**
     * Write points without dense vectors on purpose. Without embeddings, `addDocuments` into a collection whose
     * points have dense vectors is refused (`config_mismatch`): its new points would be invisible to dense and
     * hybrid search. The CLI's `--lexical-only`.
     */
    lexicalOnly: z.boolean().optional(),
    /** Dense vector size for `ensureCollection` (otherwise the embeddings are probed once). */
    vectorSize: z.number().int().positive().max(65_536).optional(),
    /** Payload shape of the collection: `litm` (written by this store) or another tool's. */
    payloadPreset: z.enum(PAYLOAD_PRESETS).default('litm'),
    /** Dense vector name (default from the preset: "dense" for litm, "" = unnamed for the others). */
    denseVectorName: z.string().optional(),
    /** Sparse BM25 vector name (default from the preset: "bm25" for litm); null = the collection has none. */
    sparseVectorName: z.string().min(1).nullable().optional(),
    /** Default fusion for hybrid search (default `{ method: 'rrf' }`, Qdrant's k = 2). */
    fusion: FusionSchema.optional(),
    /** Size of each hybrid prefetch (default max(limit × 4, 50), never below `limit`). */
    prefetchLimit: z.number().int().positive().max(100_000).optional(),
    /** Chunk size bound in tokens (default 256). */
    chunkTokens: z.number().int().min(8).max(8192).optional(),
    /** Texts per `embedDocuments` call (default 64). */
    embedBatchSize: z.number().int().positive().max(10_000).optional(),
    /** Points per upsert request (default 256). */
    upsertBatchSize: z.number().int().positive().max(10_000).optional(),
    /** Documents per ingest batch: one scroll for their existing points, their upserts, one delete (default 128). */
    ingestBatchSize: z.number().int().positive().max(10_000).optional(),
    /** Ingest batches in flight at once, so requests in flight (default 4). */
    ingestConcurrency: z.number().int().positive().max(64).optional(),
    /** Clock for `indexedAt` (tests pin it). */
    now: z.custom<() => Date>((value) => typeof value === 'function', { message: 'now must be a function' }).optional(),
    /** Deadline of each request in milliseconds (default 30 000). */
    timeoutMs: z.number().int().positive().max(3_600_000).default(30_000),
    /** Further attempts for reads after a connection failure, 429 or 5xx (default 2). Writes are never retried. */
    retries: z.number().int().min(0).max(10).default(2),
    /** First backoff step in milliseconds (default 200); doubled per retry, with full jitter. */
    retryBaseDelayMs: z.number().int().min(0).max(60_000).default(200),
    /** Longest wait between attempts (default 5 000); a longer Retry-After is not waited for. */
    retryMaxDelayMs: z.number().int().min(0).max(600_000).default(5_000),
    /**
     * Tenants in one collection: `shard-key` puts each tenant on its own user-defined shard key
     * (`sharding_method: custom`; a Qdrant cluster), `payload` tags its points with a `tenant` field indexed
     * with `is_tenant: true`. Principals still filter inside every query. See the README on the trade-offs.
     */
    tenancy: z.enum(['shard-key', 'payload']).optional(),
    /** The tenant this store reads and writes (with `tenancy`); `forTenant(name)` gives another one. */
    tenant: z.string().min(1, 'tenant must be a non-empty string').max(512).optional(),
    /** Read consistency sent with every read (`consistency`): a number of replicas, `majority`, `quorum` or `all`. */
    readConsistency: z.union([z.number().int().positive(), z.enum(['majority', 'quorum', 'all'])]).optional(),
    /** Write ordering sent with every write (`ordering`): `weak` (Qdrant's default), `medium` or `strong`. */
    writeOrdering: z.enum(['weak', 'medium', 'strong']).optional(),
    /** Shards of a new collection (per shard key with `tenancy: 'shard-key'`); an existing one must agree. */
    shardNumber: z.number().int().positive().max(1024).optional(),
    /** Replicas of each shard of a new collection; an existing one must agree. */
    replicationFactor: z.number().int().positive().max(64).optional(),
    /** Replicas that must apply a write before it succeeds; an existing collection must agree. */
    writeConsistencyFactor: z.number().int().positive().max(64).optional(),
    /**
     * `all` only: Qdrant computes BM25 IDF over the whole collection. The memory store's `visible` needs a
     * per-request IDF corpus that the Qdrant REST API does not offer.
     */
    idfCorpus: z.enum(['all', 'visible']).optional(),
  })
  .superRefine((options, ctx) => {
    if ((options.client === undefined) === (options.url === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['client'],
        message: 'give either client (a QdrantClient) or url (e.g. http://localhost:6333), not both or neither',
      });
    }
    if (options.tenant !== undefined && options.tenancy === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['tenant'],
        message: "tenant needs tenancy: 'shard-key' (one shard key per tenant) or 'payload' (a tenant payload index)",
      });
    }
    if (options.tenancy !== undefined && options.payloadPreset !== 'litm') {
      ctx.addIssue({
        code: 'custom',
        path: ['tenancy'],
        message: 'tenancy applies to collections litm-pack writes (payloadPreset "litm")',
      });
    }
    if (
      options.writeConsistencyFactor !== undefined &&
      options.replicationFactor !== undefined &&
      options.writeConsistencyFactor > options.replicationFactor
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['writeConsistencyFactor'],
        message: 'writeConsistencyFactor cannot exceed replicationFactor (a write could never be confirmed)',
      });
    }
    if (options.embeddingModel !== undefined && options.embeddings !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['embeddingModel'],
        message: 'embeddingModel names the model of vectors given without embeddings; with embeddings, their own name is used',
      });
    }
    if (options.apiKey !== undefined && options.client !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiKey'],
        message: 'apiKey goes with url; configure an injected client with its own key',
      });
    }
  });

export type QdrantHybridStoreOptions = z.input<typeof QdrantHybridStoreOptionsSchema>;
