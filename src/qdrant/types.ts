import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';

// Qdrant's generated request/response shapes, aliased once so the rest of the module never spells raw paths.
// Everything snake_case stays inside src/qdrant.
export type QdrantFilter = Schemas['Filter'];
export type QdrantCondition = Schemas['Condition'];
export type QdrantQueryRequest = Schemas['QueryRequest'];
export type QdrantPrefetch = Schemas['Prefetch'];
export type QdrantPointStruct = Schemas['PointStruct'];
export type QdrantCreateCollection = Schemas['CreateCollection'];
export type QdrantPayloadSchemaType = Schemas['PayloadSchemaType'];

/** Arguments of `QdrantClient.queryBatch` after the collection name (what one `points/query/batch` call sends). */
export type QdrantQueryBatchArgs = Parameters<QdrantClient['queryBatch']>[1];
/** Arguments of `QdrantClient.query` after the collection name (what one `points/query` call sends). */
export type QdrantQueryArgs = Parameters<QdrantClient['query']>[1];

/**
 * The client methods the store calls. Inject any object with these (a `QdrantClient`, a wrapper that counts
 * or logs calls, or a typed fake in tests).
 */
export type QdrantClientLike = Pick<
  QdrantClient,
  | 'query'
  | 'queryBatch'
  | 'scroll'
  | 'count'
  | 'facet'
  | 'upsert'
  | 'delete'
  | 'getCollection'
  | 'getCollections'
  | 'collectionExists'
  | 'createCollection'
  | 'updateCollection'
  | 'deleteCollection'
  | 'createPayloadIndex'
  | 'getAliases'
  | 'updateCollectionAliases'
  | 'listShardKeys'
  | 'createShardKey'
  | 'deleteShardKey'
>;

/** Names of the client methods the store uses (for wrappers and fakes). */
export const QDRANT_CLIENT_METHODS = [
  'query',
  'queryBatch',
  'scroll',
  'count',
  'facet',
  'upsert',
  'delete',
  'getCollection',
  'getCollections',
  'collectionExists',
  'createCollection',
  'updateCollection',
  'deleteCollection',
  'createPayloadIndex',
  'getAliases',
  'updateCollectionAliases',
  'listShardKeys',
  'createShardKey',
  'deleteShardKey',
] as const satisfies readonly (keyof QdrantClientLike)[];

/** Vector names as the collection spells them. `''` is Qdrant's unnamed (default) vector. */
export interface VectorNames {
  dense: string;
  /** `null`: the collection has no sparse vector (lexical and hybrid are unsupported). */
  sparse: string | null;
}
