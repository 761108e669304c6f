export { QdrantHybridStore } from './qdrant-hybrid-store.js';
export { POINT_ID_NAMESPACE, pointIdForChunk } from './connection.js';
export { copyToQdrant } from './copy.js';
export type { CopyProgress, CopyResult, CopyToQdrantOptions } from './copy.js';
export type { PutChunksResult, StoredChunk } from './points.js';
export type { EnsureCollectionResult } from './manage.js';
export type { FromExistingCollectionOptions, QdrantConnectionOptions } from './qdrant-hybrid-store.js';
export { QdrantHybridStoreOptionsSchema } from './options.js';
export type { QdrantHybridStoreOptions } from './options.js';
export {
  PAYLOAD_PRESETS,
  PRESET_DEFAULTS,
  langchainDocumentToCandidate,
  llamaindexPayloadToCandidate,
  payloadToChunkRecord,
  pointToCandidate,
} from './presets.js';
export type { PayloadPreset, PresetDefaults, ScoredPointLike } from './presets.js';
export {
  LITM_PAYLOAD_INDEXES,
  buildAccessFilter,
  buildCreateCollection,
  buildDenseQuery,
  buildHybridQueryBatch,
  buildLexicalQuery,
  buildSearchFilter,
  toQdrantFilter,
  toQdrantFusion,
} from './requests.js';
export type { HybridQueryInput, SingleArmQueryInput } from './requests.js';
export type { VectorNames } from './types.js';
export { checkCollection } from './collection.js';
export type { CollectionCheck, ExpectedCollection } from './collection.js';
export { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../base/retry-after.js';
export { qdrantErrorMessage, toQdrantError } from './errors.js';
export type { QdrantCallContext } from './errors.js';
export { callQdrant, backoffDelay } from './call.js';
export type { CallOptions, CallPolicy } from './call.js';
export { QDRANT_CLIENT_METHODS } from './types.js';
export type { QdrantClientLike } from './types.js';
export { QdrantHttpError, QdrantRestClient } from './rest-client.js';
export type { QdrantResponseInfo, QdrantRestClientOptions } from './rest-client.js';
export type { ReindexRequest, ReindexResult } from './reindex.js';
export { TENANT_FIELD, TENANT_INDEX, scopeFilter, shardKeyOf } from './tenancy.js';
export type { Tenancy, TenantScope } from './tenancy.js';
export type { ClusterSettings, PayloadIndexSpec, RecordedEmbedding } from './collection.js';
export { COLLECTION_METADATA_KEY, embeddingMetadata, recordedEmbedding } from './collection.js';
