import type { Schemas } from '@qdrant/js-client-rest';
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
