/**
 * Points written and deleted as chunk records with their vectors as they are (no chunking, no embedding): what a
 * copy of a store needs.
 */
import { LitmPackError } from '../base/errors.js';
import { canonicalStringify } from '../base/canonical.js';
import type { ChunkRecord } from '../store/schemas.js';
import type { SparseVector } from '../tokenize/bm25.js';
import type { QdrantConnection } from './connection.js';
import { PRESET_DEFAULTS } from './presets.js';
import { CountResultSchema, UpdateResultSchema } from './responses.js';
import { TENANT_FIELD, scopeFilter, shardKeyOf } from './tenancy.js';
import type { QdrantPointStruct } from './types.js';
import { payloadOf } from './util.js';
import { throwIfAborted } from '../base/abort.js';

/** A chunk as a store keeps it: its record and vectors (a sparse BM25 vector; a dense one, or null). */
export interface StoredChunk {
  record: ChunkRecord;
  sparse: SparseVector;
  dense: ArrayLike<number> | null;
}

export interface PutChunksResult {
  /** Points written (new, or different from the record). */
  written: number;
  /** Points that already were these records. */
  unchanged: number;
}

function requireWritable(c: QdrantConnection, method: string): void {
  if (!PRESET_DEFAULTS[c.preset].writable) {
    throw new LitmPackError('unsupported', `${method} writes litm-pack payloads; this store reads a "${c.preset}" collection`);
  }
  c.checkTenant(method);
}

/**
 * Writes chunks with their vectors as given: one scroll finds which of the points already hold exactly these
 * records, one upsert writes the others (waited for). Dense vectors must have the collection's dimension.
 */
export async function putChunks(
  c: QdrantConnection,
  chunks: readonly StoredChunk[],
  signal: AbortSignal | undefined,
): Promise<PutChunksResult> {
  requireWritable(c, 'putChunks');
  throwIfAborted(signal);
  if (chunks.length === 0) return { written: 0, unchanged: 0 };
  if (chunks.some((chunk) => chunk.dense !== null)) await c.checkEmbeddingForWrite(signal);
  const existing = new Map<string, string>();
  const ids = chunks.map((chunk) => c.pointId(chunk.record.id));
  await c.scrollRecords(scopeFilter(c.scope, { must: [{ has_id: ids }] }), false, signal, (record) => {
    existing.set(record.id, canonicalStringify(record));
  });
  const points: QdrantPointStruct[] = [];
  let unchanged = 0;
  for (const { record, sparse, dense } of chunks) {
    if (dense !== null && c.vectorSize !== undefined && dense.length !== c.vectorSize) {
      throw new LitmPackError(
        'config_mismatch',
        `Chunk ${record.id} has a ${dense.length}-d vector; the collection "${c.collection}" holds ${c.vectorSize}-d vectors`,
        { details: { collection: c.collection, chunkId: record.id } },
      );
    }
    if (existing.get(record.id) === canonicalStringify(payloadOf(record))) {
      unchanged += 1;
      continue;
    }
    const vector: Record<string, number[] | SparseVector> = {};
    if (dense !== null) vector[c.vectors.dense] = Array.from(dense);
    if (c.vectors.sparse !== null) vector[c.vectors.sparse] = { indices: [...sparse.indices], values: [...sparse.values] };
    const payload = payloadOf(record);
    if (c.scope.tenancy === 'payload') payload[TENANT_FIELD] = c.scope.tenant;
    points.push({ id: c.pointId(record.id), vector, payload });
  }
  for (let start = 0; start < points.length; start += c.upsertBatchSize) {
    throwIfAborted(signal);
    const batch = points.slice(start, start + c.upsertBatchSize);
    await c.write(
      'upsert',
      () => c.client.upsert(c.collection, { wait: true, points: batch, ...shardKeyOf(c.scope), ...c.writeArgs }),
      UpdateResultSchema,
      signal,
    );
  }
  return { written: points.length, unchanged };
}

/** Deletes the points of these sources whose chunk ids are not in `ids` (one scroll, at most one delete). */
export async function deleteChunksExcept(
  c: QdrantConnection,
  sources: readonly { sourceId: string; ids: readonly string[] }[],
  signal: AbortSignal | undefined,
): Promise<number> {
  requireWritable(c, 'deleteChunksExcept');
  throwIfAborted(signal);
  if (sources.length === 0) return 0;
  const keep = new Set(sources.flatMap((source) => source.ids));
  const stale: string[] = [];
  await c.scrollRecords(
    scopeFilter(c.scope, { must: [{ key: 'sourceId', match: { any: sources.map((s) => s.sourceId) } }] }),
    false,
    signal,
    (record) => {
      if (!keep.has(record.id)) stale.push(c.pointId(record.id));
    },
  );
  if (stale.length === 0) return 0;
  await c.write(
    'delete',
    () =>
      c.client.delete(c.collection, {
        wait: true,
        filter: scopeFilter(c.scope, { must: [{ has_id: stale }] })!,
        ...shardKeyOf(c.scope),
        ...c.writeArgs,
      }),
    UpdateResultSchema,
    signal,
  );
  return stale.length;
}

export async function countPoints(c: QdrantConnection, signal: AbortSignal | undefined): Promise<number> {
  const filter = scopeFilter(c.scope, undefined);
  const args = { exact: true, ...(filter === undefined ? {} : { filter }), ...shardKeyOf(c.scope), ...c.readArgs } as Parameters<
    QdrantConnection['client']['count']
  >[1];
  return (await c.read('count', () => c.client.count(c.collection, args), CountResultSchema, signal)).count;
}
