import { v5 as uuidv5 } from 'uuid';
import type { PayloadIndexSpec } from './collection.js';
import type { QdrantFilter } from './types.js';

/**
 * Tenants in one collection, two ways (pure helpers; the store applies them to every request):
 *
 * - `shard-key`: each tenant is a user-defined shard key (`sharding_method: custom`). Its points live in its
 *   own shards, so BM25 IDF, HNSW graphs and deletion are per tenant; every request names the key.
 * - `payload`: each point carries `tenant`, indexed as a keyword index with `is_tenant: true` (Qdrant lays
 *   out a tenant's points together and builds per-tenant graphs); every filter requires it. IDF stays
 *   collection-wide.
 */
export type Tenancy = 'shard-key' | 'payload';

/** The payload field of `payload` tenancy. */
export const TENANT_FIELD = 'tenant';

/** Its payload index: a keyword index Qdrant optimises for tenants. */
export const TENANT_INDEX: PayloadIndexSpec = { type: 'keyword', is_tenant: true };

export interface TenantScope {
  tenancy: Tenancy | undefined;
  tenant: string | undefined;
}

/** Namespace of one tenant's point ids: the same chunk key in two tenants is two points. */
export function tenantPointNamespace(namespace: string, tenant: string): string {
  return uuidv5(`tenant\u0000${tenant}`, namespace);
}

/** The filter with the tenant condition ANDed in (`payload` tenancy); unchanged otherwise. */
export function scopeFilter(scope: TenantScope, filter: QdrantFilter | undefined): QdrantFilter | undefined {
  if (scope.tenancy !== 'payload' || scope.tenant === undefined) return filter;
  const tenant = { key: TENANT_FIELD, match: { value: scope.tenant } };
  return { must: filter === undefined ? [tenant] : [tenant, filter] };
}

/** `{ shard_key }` for a request body (`shard-key` tenancy); empty otherwise. */
export function shardKeyOf(scope: TenantScope): { shard_key?: string } {
  return scope.tenancy === 'shard-key' && scope.tenant !== undefined ? { shard_key: scope.tenant } : {};
}
