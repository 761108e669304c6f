/**
 * Reading chunks by source, id or filter (no query), and deleting sources.
 */
import { validateFilter } from '../store/filter.js';
import { orderChunks, parseDeleteSources, parseGetChunksRequest } from '../store/requests.js';
import type { ChunkRecord, GetChunksRequest } from '../store/schemas.js';
import type { DeleteSourcesResult } from '../store/types.js';
import type { QdrantConnection } from './connection.js';
import { buildChunksFilter, buildSearchFilter } from './requests.js';
import { FacetResponseSchema, UpdateResultSchema } from './responses.js';
import { throwIfAborted } from '../base/abort.js';
import { scopeFilter, shardKeyOf } from './tenancy.js';

/**
 * Chunks by source, chunk id and/or filter, ANDed with the principals' ACL exactly as in `search`, in
 * source order (sources as listed in `sourceIds`, else by id; then by span). One payload-filtered scroll
 * reads only the matching points (pages of 1,000: a source of up to 1,000 chunks is one request).
 */
export async function getChunks(c: QdrantConnection, request: GetChunksRequest): Promise<ChunkRecord[]> {
  c.requireLitmPayload('getChunks');
  const req = parseGetChunksRequest(request);
  c.checkTenant('getChunks');
  const userFilter = req.filter === undefined ? undefined : validateFilter(req.filter);
  throwIfAborted(req.signal);
  const filter = buildChunksFilter({
    sourceIds: req.sourceIds === undefined ? undefined : [...new Set(req.sourceIds)],
    pointIds: req.ids === undefined ? undefined : [...new Set(req.ids)].map((id) => c.pointId(id)),
    filter: scopeFilter(c.scope, buildSearchFilter(userFilter, req.principals, c.aclKey)),
  });
  const records: ChunkRecord[] = [];
  await c.scrollRecords(filter, false, req.signal, (record) => records.push(record));
  return orderChunks(records, req.sourceIds, req.limit);
}

export async function deleteSources(c: QdrantConnection, input: unknown, rawOptions: unknown): Promise<DeleteSourcesResult> {
  c.requireLitmPayload('deleteSources');
  const { sourceIds, signal } = parseDeleteSources(input, rawOptions);
  c.checkTenant('deleteSources');
  throwIfAborted(signal);
  if (sourceIds.length === 0) return { sources: 0, chunks: 0 };
  const filter = scopeFilter(c.scope, { must: [{ key: 'sourceId', match: { any: sourceIds } }] })!;
  const { hits } = await c.read(
    'facet',
    () =>
      c.client.facet(c.collection, {
        key: 'sourceId',
        filter,
        limit: sourceIds.length,
        exact: true,
        ...shardKeyOf(c.scope),
        ...c.readArgs,
      }),
    FacetResponseSchema,
    signal,
  );
  const chunks = hits.reduce((sum, hit) => sum + hit.count, 0);
  if (chunks === 0) return { sources: 0, chunks: 0 };
  await c.write(
    'delete',
    () => c.client.delete(c.collection, { wait: true, filter, ...shardKeyOf(c.scope), ...c.writeArgs }),
    UpdateResultSchema,
    signal,
  );
  return { sources: hits.filter((hit) => hit.count > 0).length, chunks };
}
