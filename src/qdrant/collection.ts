import type { Schemas } from '@qdrant/js-client-rest';
import { z } from 'zod';
import type { VectorNames } from './requests.js';
import type { QdrantPayloadSchemaType } from './types.js';

type VectorParams = Schemas['VectorParams'];

/** The parts of a `CollectionInfo` the check reads (the validated answer, or the client's typed one). */
export interface QdrantCollectionInfo {
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
  payloadIndexes: Readonly<Record<string, QdrantPayloadSchemaType>>;
  /** The model the store's embeddings name (`embeddingModelName`), when they name one. */
  embeddingModel?: string | undefined;
}

/** The key of litm-pack's entry in the collection's metadata. */
export const COLLECTION_METADATA_KEY = 'litm_pack';

/** What a collection records about the dense vectors written into it. */
export interface RecordedEmbedding {
  /** The embedding model that wrote its dense vectors, when that model named itself. */
  model?: string;
  dimension?: number;
}

const RecordedEmbeddingSchema = z.looseObject({
  embedding_model: z.string().min(1).optional(),
  dense_dimension: z.number().int().positive().optional(),
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
  return out;
}

/** The collection metadata that records `embedding` (merged into the existing metadata by Qdrant). */
export function embeddingMetadata(embedding: RecordedEmbedding): Record<string, Record<string, unknown>> {
  const entry: Record<string, unknown> = {};
  if (embedding.model !== undefined) entry.embedding_model = embedding.model;
  if (embedding.dimension !== undefined) entry.dense_dimension = embedding.dimension;
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
  missingIndexes: [string, QdrantPayloadSchemaType][];
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
  const dense = isVectorParams(vectors)
    ? ['(unnamed)']
    : Object.keys((vectors ?? {}) as Record<string, unknown>).map((n) => `"${n}"`);
  const sparse = Object.keys(info.config.params.sparse_vectors ?? {}).map((n) => `"${n}"`);
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
    mismatches.push(
      `${denseLabel} is missing (collection has ${describeVectors(info)}); set denseVectorName to the collection's name`,
    );
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
  const missingIndexes: [string, QdrantPayloadSchemaType][] = [];
  const schema = info.payload_schema ?? {};
  for (const [field, type] of Object.entries(expected.payloadIndexes)) {
    const existing = schema[field];
    if (existing === undefined) missingIndexes.push([field, type]);
    else if (existing.data_type !== type) {
      mismatches.push(`payload index "${field}" has type ${existing.data_type}, ${type} is required`);
    }
  }
  return { mismatches, missingIndexes, denseSize: params?.size };
}
