/**
 * Managing the collection: create or check it (vectors, payload indexes, the recorded embedding model),
 * tenants' shard keys, dropping a tenant.
 */
import { LitmPackError } from '../base/errors.js';
import {
  checkCollection,
  collectionVectors,
  describeCollectionVectors,
  embeddingMetadata,
  recordedEmbedding,
  type CollectionVectors,
  type PayloadIndexSpec,
} from './collection.js';
import { presetsFitting } from './detect.js';
import type { QdrantConnection } from './connection.js';
import { PRESET_DEFAULTS } from './presets.js';
import { LITM_PAYLOAD_INDEXES, buildCreateCollection } from './requests.js';
import {
  BooleanResultSchema,
  CollectionExistenceSchema,
  CollectionInfoSchema,
  ShardKeysResponseSchema,
  UpdateResultSchema,
} from './responses.js';
import { TENANT_FIELD, TENANT_INDEX, scopeFilter } from './tenancy.js';

export interface EnsureCollectionResult {
  /** True when the collection was created by this call. */
  created: boolean;
  /** Payload indexes created by this call. */
  indexesCreated: string[];
  /** With `tenancy: 'shard-key'` and a tenant: true when this call created the tenant's shard key. */
  shardKeyCreated?: boolean;
}

/**
 * Creates the collection (dense cosine vector sized from `vectorSize` or one embedding probe, sparse vector
 * with IDF, keyword/datetime payload indexes for `sourceId`, `acl`, `timestamp`, `clusters`, `kind`, and the
 * embedding model and dimension in the collection's metadata), or checks an existing one and throws
 * `config_mismatch` naming every difference, a different embedding model than the one the collection
 * records included. Missing payload indexes are added.
 */
export async function ensureCollection(c: QdrantConnection, options: { signal?: AbortSignal } = {}): Promise<EnsureCollectionResult> {
  const { signal } = options;
  const writable = PRESET_DEFAULTS[c.preset].writable;
  const indexes: Record<string, PayloadIndexSpec> = writable ? { ...LITM_PAYLOAD_INDEXES } : {};
  if (c.scope.tenancy === 'payload') indexes[TENANT_FIELD] = TENANT_INDEX;
  const { exists } = await c.read('collectionExists', () => c.client.collectionExists(c.collection), CollectionExistenceSchema, signal);
  let created = false;
  if (!exists) {
    if (!writable) {
      throw new LitmPackError(
        'not_found',
        `Qdrant collection "${c.collection}" does not exist; the "${c.preset}" preset reads collections ` +
          'another tool wrote and does not create them: check the collection name.',
        { details: { collection: c.collection, missing: 'collection' } },
      );
    }
    const size = await c.denseSize();
    try {
      await c.write(
        'createCollection',
        () =>
          c.client.createCollection(
            c.collection,
            buildCreateCollection(c.vectors, size, {
              metadata: embeddingMetadata(c.ownEmbedding(size)),
              cluster: c.cluster,
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
  const info = await c.read('getCollection', () => c.client.getCollection(c.collection), CollectionInfoSchema, signal);
  const size = created ? c.vectorSize : (c.vectorSize ?? (await c.probeSizeIfCheap()));
  const check = checkCollection(info, {
    vectors: c.vectors,
    size,
    payloadIndexes: indexes,
    embeddingModel: c.embeddingModel,
    cluster: c.cluster,
  });
  if (check.mismatches.length > 0) {
    throw new LitmPackError(
      'config_mismatch',
      `Qdrant collection "${c.collection}" does not match this store: ${check.mismatches.join('; ')}`,
      { details: { collection: c.collection, mismatches: check.mismatches, ...missingVector(c, collectionVectors(info)) } },
    );
  }
  c.vectorSize = check.denseSize ?? c.vectorSize;
  c.recorded = recordedEmbedding(info);
  c.layout = collectionVectors(info);
  // A client that drops `metadata` from the create body (the official one does) gets it written here.
  if (created && c.recorded.dimension === undefined) await c.recordEmbedding(signal);
  const indexesCreated: string[] = [];
  for (const [field, type] of check.missingIndexes) {
    await c.write(
      'createPayloadIndex',
      () => c.client.createPayloadIndex(c.collection, { field_name: field, field_schema: type, wait: true, ...c.writeArgs }),
      UpdateResultSchema,
      signal,
    );
    indexesCreated.push(field);
  }
  if (c.scope.tenancy !== 'shard-key' || c.scope.tenant === undefined) return { created, indexesCreated };
  return { created, indexesCreated, shardKeyCreated: await ensureShardKey(c, c.scope.tenant, signal) };
}

/**
 * When the collection lacks a vector the store names, what a door needs to say so in its own words: the
 * vector missing, the ones it has, and the presets they fit (see `cliRemedy`, cli/remedies.ts).
 */
function missingVector(c: QdrantConnection, vectors: CollectionVectors): Record<string, unknown> {
  const { dense, sparse } = c.vectors;
  const missing = !vectors.dense.some((v) => v.name === dense)
    ? dense === ''
      ? 'unnamed dense vector'
      : `dense vector "${dense}"`
    : sparse !== null && !vectors.sparse.includes(sparse)
      ? `sparse vector "${sparse}"`
      : undefined;
  if (missing === undefined) return {};
  return { requires: 'preset', missing, vectors: describeCollectionVectors(vectors), presets: presetsFitting(vectors) };
}

/**
 * The tenant's shard key, created when missing (its shards take the collection's shard number and
 * replication factor). A standalone Qdrant refuses user-defined shard keys with 405: said plainly.
 */
async function ensureShardKey(c: QdrantConnection, tenant: string, signal: AbortSignal | undefined): Promise<boolean> {
  const listed = await c.read('listShardKeys', () => c.client.listShardKeys(c.collection), ShardKeysResponseSchema, signal);
  if ((listed.shard_keys ?? []).some((entry) => entry.key === tenant)) return false;
  try {
    await c.write('createShardKey', () => c.client.createShardKey(c.collection, { shard_key: tenant }), BooleanResultSchema, signal);
    return true;
  } catch (error) {
    if (error instanceof LitmPackError && error.status === 405) {
      throw new LitmPackError(
        'unsupported',
        `Qdrant at this url runs standalone and refuses user-defined shard keys (${error.message}). tenancy "shard-key" ` +
          'needs Qdrant in cluster mode (QDRANT__CLUSTER__ENABLED=true; see docker-compose.cluster.yml), or use tenancy "payload".',
        { cause: error, status: 405, details: { collection: c.collection, tenant } },
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
export async function dropTenant(c: QdrantConnection, options: { signal?: AbortSignal } = {}): Promise<void> {
  const tenant = c.requireTenant('dropTenant');
  const { signal } = options;
  if (c.scope.tenancy === 'shard-key') {
    await c.write('deleteShardKey', () => c.client.deleteShardKey(c.collection, { shard_key: tenant }), BooleanResultSchema, signal);
    return;
  }
  const filter = scopeFilter(c.scope, undefined)!;
  await c.write('delete', () => c.client.delete(c.collection, { wait: true, filter, ...c.writeArgs }), UpdateResultSchema, signal);
}
