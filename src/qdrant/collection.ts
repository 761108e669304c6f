import type { Schemas } from '@qdrant/js-client-rest';
import { z } from 'zod';
import type { VectorNames, QdrantPayloadSchemaType } from './types.js';

type VectorParams = Schemas['VectorParams'];

/** The parts of a `CollectionInfo` the check reads (the validated answer, or the client's typed one). */
interface QdrantCollectionInfo {
  config: {
    params: {
      vectors?: unknown;
      sparse_vectors?: Record<string, { modifier?: unknown } | null | undefined> | null;
      shard_number?: number | null;
      replication_factor?: number | null;
      write_consistency_factor?: number | null;
      sharding_method?: unknown;
    };
    metadata?: Record<string, unknown> | null;
  };
  payload_schema?: Record<string, { data_type: string; params?: unknown } | undefined>;
}

/** What an existing collection is expected to look like. */
export interface ExpectedCollection {
  vectors: VectorNames;
  /** Dense vector size when known (from `vectorSize` or an embedding probe). */
  size: number | undefined;
  payloadIndexes: Readonly<Record<string, PayloadIndexSpec>>;
  /** The model the store's embeddings name (`embeddingModelName`), when they name one. */
  embeddingModel?: string | undefined;
  /** Cluster settings the store asks for; each is compared only when given. */
  cluster?: ClusterSettings;
}

/** A payload index: a plain type, or a keyword index for tenants (`is_tenant: true`). */
export type PayloadIndexSpec = QdrantPayloadSchemaType | { type: 'keyword'; is_tenant: true };

/** How the collection is spread over a cluster (Qdrant's `CollectionParams`). */
export interface ClusterSettings {
  /** `custom` when tenants live on their own shard keys. */
  shardingMethod?: 'auto' | 'custom' | undefined;
  shardNumber?: number | undefined;
  replicationFactor?: number | undefined;
  writeConsistencyFactor?: number | undefined;
}

/** The key of litm-pack's entry in the collection's metadata. */
export const COLLECTION_METADATA_KEY = 'litm_pack';

/** What a collection records about the dense vectors written into it. */
export interface RecordedEmbedding {
  /** The embedding model that wrote its dense vectors, when that model named itself. */
  model?: string;
  dimension?: number;
  /** The recipe of the text its sparse and dense vectors were made from (see store/indexed-text.ts). */
  indexedText?: string;
}

const RecordedEmbeddingSchema = z.looseObject({
  embedding_model: z.string().min(1).optional(),
  dense_dimension: z.number().int().positive().optional(),
  indexed_text: z.string().min(1).optional(),
});

/**
 * The embedding model and dimension the collection's metadata records (`{ litm_pack: { embedding_model,
 * dense_dimension } }`); `{}` when it records nothing (or something that is not litm-pack's).
 */
export function recordedEmbedding(info: QdrantCollectionInfo): RecordedEmbedding {
  const parsed = RecordedEmbeddingSchema.safeParse(info.config.metadata?.[COLLECTION_METADATA_KEY]);
  if (!parsed.success) return {};
  const out: RecordedEmbedding = {};
  if (parsed.data.embedding_model !== undefined) out.model = parsed.data.embedding_model;
  if (parsed.data.dense_dimension !== undefined) out.dimension = parsed.data.dense_dimension;
  if (parsed.data.indexed_text !== undefined) out.indexedText = parsed.data.indexed_text;
  return out;
}

/** The collection metadata that records `embedding` (merged into the existing metadata by Qdrant). */
export function embeddingMetadata(embedding: RecordedEmbedding): Record<string, Record<string, unknown>> {
  const entry: Record<string, unknown> = {};
  if (embedding.model !== undefined) entry.embedding_model = embedding.model;
  if (embedding.dimension !== undefined) entry.dense_dimension = embedding.dimension;
  if (embedding.indexedText !== undefined) entry.indexed_text = embedding.indexedText;
  return { [COLLECTION_METADATA_KEY]: entry };
}

/** The words of a `config_mismatch` between the recorded model and the store's. */
export function modelMismatch(recorded: RecordedEmbedding, model: string): string {
  const size = recorded.dimension === undefined ? '' : ` (${recorded.dimension} dimensions)`;
  return (
    `its dense vectors come from embedding model "${recorded.model}"${size} and this store embeds with "${model}"; ` +
    `vectors of two models cannot be compared: embed with "${recorded.model}", or reindex into a new collection`
  );
}

export interface CollectionCheck {
  /** Human-readable differences; empty when the collection fits. */
  mismatches: string[];
  /** Payload indexes to create (absent ones; wrong types are mismatches). */
  missingIndexes: [string, PayloadIndexSpec][];
  /** The dense vector size the collection has, when it has the dense vector. */
  denseSize: number | undefined;
}

function isVectorParams(value: unknown): value is VectorParams {
  return typeof value === 'object' && value !== null && typeof (value as { size?: unknown }).size === 'number';
}

function denseParams(info: QdrantCollectionInfo, name: string): VectorParams | undefined {
  const vectors: unknown = info.config.params.vectors;
  if (vectors === undefined || vectors === null) return undefined;
  if (isVectorParams(vectors)) return name === '' ? vectors : undefined;
  const named = (vectors as Record<string, unknown>)[name];
  return isVectorParams(named) ? named : undefined;
}

function describeVectors(info: QdrantCollectionInfo): string {
  const vectors: unknown = info.config.params.vectors;
  const dense = isVectorParams(vectors) ? ['(unnamed)'] : Object.keys((vectors ?? {}) as Record<string, unknown>).map((n) => `"${n}"`);
  const sparse = Object.keys(info.config.params.sparse_vectors ?? {}).map((n) => `"${n}"`);
  return `dense: ${dense.join(', ') || 'none'}; sparse: ${sparse.join(', ') || 'none'}`;
}

/** The vectors a collection has: each dense vector's name (`''` = the unnamed one) and size, the sparse names. */
export interface CollectionVectors {
  dense: { name: string; size: number }[];
  sparse: string[];
}

export function collectionVectors(info: QdrantCollectionInfo): CollectionVectors {
  const vectors: unknown = info.config.params.vectors;
  const dense = isVectorParams(vectors)
    ? [{ name: '', size: vectors.size }]
    : Object.entries((vectors ?? {}) as Record<string, unknown>).flatMap(([name, params]) =>
        isVectorParams(params) ? [{ name, size: params.size }] : [],
      );
  return { dense, sparse: Object.keys(info.config.params.sparse_vectors ?? {}) };
}

/** `dense: (unnamed) 1536-d; sparse: none`, as messages name a collection's vectors. */
export function describeCollectionVectors(vectors: CollectionVectors): string {
  const dense = vectors.dense.map((v) => `${v.name === '' ? '(unnamed)' : `"${v.name}"`} ${v.size}-d`);
  const sparse = vectors.sparse.map((n) => `"${n}"`);
  return `dense: ${dense.join(', ') || 'none'}; sparse: ${sparse.join(', ') || 'none'}`;
}

/**
 * Compares an existing collection with what the store needs and says what differs, in words that say how to
 * fix it (the option to change, or that the collection must be recreated).
 */
export function checkCollection(info: QdrantCollectionInfo, expected: ExpectedCollection): CollectionCheck {
  const mismatches: string[] = [];
  const { dense, sparse } = expected.vectors;
  const denseLabel = dense === '' ? 'the unnamed dense vector' : `dense vector "${dense}"`;
  const params = denseParams(info, dense);
  if (params === undefined) {
    mismatches.push(`${denseLabel} is missing (collection has ${describeVectors(info)}); set denseVectorName to the collection's name`);
  } else {
    if (expected.size !== undefined && params.size !== expected.size) {
      mismatches.push(`${denseLabel} has size ${params.size}, the embeddings give ${expected.size}`);
    }
    if (params.distance !== 'Cosine') {
      mismatches.push(`${denseLabel} uses ${params.distance} distance, cosine is required`);
    }
  }
  if (sparse !== null) {
    const sparseParams = info.config.params.sparse_vectors?.[sparse];
    if (sparseParams === undefined || sparseParams === null) {
      mismatches.push(
        `sparse vector "${sparse}" is missing (collection has ${describeVectors(info)}); set sparseVectorName, or null for a collection without one`,
      );
    } else if (sparseParams.modifier !== 'idf') {
      mismatches.push(
        `sparse vector "${sparse}" has modifier ${JSON.stringify(sparseParams.modifier ?? 'none')}, "idf" is required for BM25`,
      );
    }
  }
  const recorded = recordedEmbedding(info);
  if (recorded.model !== undefined && expected.embeddingModel !== undefined && recorded.model !== expected.embeddingModel) {
    mismatches.push(modelMismatch(recorded, expected.embeddingModel));
  }
  mismatches.push(...clusterMismatches(info, expected.cluster ?? {}));
  const missingIndexes: [string, PayloadIndexSpec][] = [];
  const schema = info.payload_schema ?? {};
  for (const [field, spec] of Object.entries(expected.payloadIndexes)) {
    const type = typeof spec === 'string' ? spec : spec.type;
    const existing = schema[field];
    if (existing === undefined) missingIndexes.push([field, spec]);
    else if (existing.data_type !== type) {
      mismatches.push(`payload index "${field}" has type ${existing.data_type}, ${type} is required`);
    } else if (
      typeof spec !== 'string' &&
      spec.is_tenant &&
      (existing.params as { is_tenant?: unknown } | null | undefined)?.is_tenant !== true
    ) {
      mismatches.push(`payload index "${field}" is not a tenant index (is_tenant: true is required; recreate the index)`);
    }
  }
  return { mismatches, missingIndexes, denseSize: params?.size };
}

/** Differences in sharding and replication, each with what can be done about it. */
function clusterMismatches(info: QdrantCollectionInfo, wanted: ClusterSettings): string[] {
  const out: string[] = [];
  const params = info.config.params;
  const method = params.sharding_method === 'custom' ? 'custom' : 'auto';
  if (wanted.shardingMethod === 'custom' && method !== 'custom') {
    out.push(
      'it uses automatic sharding and tenancy "shard-key" needs sharding_method "custom"; the method is fixed when a ' +
        'collection is created: reindex into a new collection, or use tenancy "payload"',
    );
  } else if (wanted.shardingMethod === 'auto' && method === 'custom') {
    out.push('it uses custom sharding (a shard key per tenant): open it with tenancy "shard-key" and a tenant');
  }
  const compare = (label: string, actual: number | null | undefined, want: number | undefined, fix: string): void => {
    const have = actual ?? 1;
    if (want !== undefined && have !== want) out.push(`${label} is ${have}, this store asks for ${want} (${fix})`);
  };
  compare('shard_number', params.shard_number, wanted.shardNumber, 'fixed at creation: reindex, or drop shardNumber');
  compare(
    'replication_factor',
    params.replication_factor,
    wanted.replicationFactor,
    "change it with Qdrant's PATCH /collections/{name} params, or drop replicationFactor",
  );
  compare(
    'write_consistency_factor',
    params.write_consistency_factor,
    wanted.writeConsistencyFactor,
    "change it with Qdrant's PATCH /collections/{name} params, or drop writeConsistencyFactor",
  );
  return out;
}
