/**
 * Ingest: documents chunked and BM25-encoded, embedded where no stored vector can be reused, upserted in
 * batches, then the sources' stale points deleted (so a failure midway never leaves a source with no chunks).
 * Both vectors are made from each chunk's indexed text (its title and heading path, then its text, under the
 * collection's recipe: see store/indexed-text.ts); the payload keeps the chunk's own text.
 */
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { encodeBm25Document, type SparseVector } from '../tokenize/bm25.js';
import { sha256Hex } from '../base/canonical.js';
import { chunkDocument, parseIngestDocuments } from '../store/chunk.js';
import { indexedTextKey, indexedTextOf, type IndexedTextRecipe } from '../store/indexed-text.js';
import { AddDocumentsOptionsSchema, type AddDocumentsOptions, type ChunkRecord, type IngestDocument } from '../store/schemas.js';
import type { AddDocumentsResult } from '../store/types.js';
import type { QdrantConnection } from './connection.js';
import { PRESET_DEFAULTS } from './presets.js';
import { UpdateResultSchema } from './responses.js';
import { payloadOf, sameRecord } from './util.js';
import { runBounded, throwIfAborted } from '../base/abort.js';
import { TENANT_FIELD, scopeFilter, shardKeyOf } from './tenancy.js';
import type { QdrantPointStruct } from './types.js';

interface ExistingPoint {
  record: ChunkRecord;
  dense: number[] | undefined;
}

export async function add(c: QdrantConnection, input: unknown, rawOptions: AddDocumentsOptions): Promise<AddDocumentsResult> {
  if (!PRESET_DEFAULTS[c.preset].writable) {
    throw new LitmPackError(
      'unsupported',
      `addDocuments writes litm-pack payloads; this store reads a "${c.preset}" collection. ` +
        'Ingest with the tool that owns it, or use payloadPreset "litm" on another collection.',
    );
  }
  c.checkTenant('addDocuments');
  const docs = parseIngestDocuments(input);
  const options = parseOrThrow(AddDocumentsOptionsSchema, rawOptions, 'addDocuments options');
  const { signal } = options;
  throwIfAborted(signal);
  const result: AddDocumentsResult = { added: 0, unchanged: 0, removed: 0 };
  if (docs.length === 0) return result;
  if (c.embeddings !== undefined) await c.checkEmbeddingForWrite(signal);
  const recipe = await c.indexedTextRecipe(signal);
  const indexedAt = c.now().toISOString();
  const batches: IngestDocument[][] = [];
  for (let start = 0; start < docs.length; start += c.ingestBatchSize) batches.push(docs.slice(start, start + c.ingestBatchSize));
  let done = 0;
  await runBounded(batches, c.ingestConcurrency, signal, async (batch) => {
    const one = await addBatch(c, batch, indexedAt, recipe, signal);
    result.added += one.added;
    result.unchanged += one.unchanged;
    result.removed += one.removed;
    done += batch.length;
    options.onProgress?.(done, docs.length);
  });
  return result;
}

export async function addBatch(
  c: QdrantConnection,
  docs: IngestDocument[],
  indexedAt: string,
  recipe: IndexedTextRecipe,
  signal: AbortSignal | undefined,
): Promise<AddDocumentsResult> {
  const records = docs.flatMap((doc) => chunkDocument(doc, { maxTokens: c.chunkTokens, indexedAt }));
  const existing = await existingPoints(
    c,
    docs.map((doc) => doc.id),
    signal,
  );
  // Stored vectors are reused by the key of the text they embed (the indexed text).
  const vectorsByKey = new Map<string, number[]>();
  for (const point of existing.values()) {
    if (point.dense !== undefined) vectorsByKey.set(indexedTextKey(point.record, recipe), point.dense);
  }
  const changed: { record: ChunkRecord; indexed: string; key: string }[] = [];
  let unchanged = 0;
  for (const record of records) {
    const before = existing.get(record.id);
    if (before !== undefined) record.indexedAt = before.record.indexedAt;
    const indexed = indexedTextOf(record, recipe);
    const key = indexed === record.text ? record.textSha256 : sha256Hex(indexed);
    const needsVector = c.embeddings !== undefined && !vectorsByKey.has(key);
    if (before !== undefined && !needsVector && sameRecord(before.record, record)) unchanged += 1;
    else changed.push({ record, indexed, key });
  }

  // Embed what has no vector yet, in batches.
  if (c.embeddings !== undefined) {
    const texts = new Map<string, string>();
    for (const { indexed, key } of changed) {
      if (!vectorsByKey.has(key)) texts.set(key, indexed);
    }
    const pending = [...texts];
    for (let start = 0; start < pending.length; start += c.embedBatchSize) {
      throwIfAborted(signal);
      const batch = pending.slice(start, start + c.embedBatchSize);
      const vectors = await c.embeddings.embedDocuments(batch.map(([, text]) => text));
      throwIfAborted(signal);
      c.checkVectors(vectors, batch.length, 'embedDocuments');
      batch.forEach(([key], i) => vectorsByKey.set(key, vectors[i] ?? []));
    }
  }

  // One batch's upserts go one after another: at most `ingestConcurrency` requests are in flight in all.
  const points = changed.map(({ record, indexed, key }) => point(c, record, vectorsByKey.get(key), indexed));
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

  // Only after every upsert of the batch: the points of these sources that are not part of them any more.
  const keep = new Set(records.map((r) => r.id));
  const stale = [...existing.values()].filter((point) => !keep.has(point.record.id));
  if (stale.length > 0) {
    const sources = [...new Set(stale.map((point) => point.record.sourceId))];
    const sourceSet = new Set(sources);
    const filter = scopeFilter(c.scope, {
      must: [{ key: 'sourceId', match: { any: sources } }],
      must_not: [{ has_id: records.filter((r) => sourceSet.has(r.sourceId)).map((r) => c.pointId(r.id)) }],
    })!;
    await c.write(
      'delete',
      () => c.client.delete(c.collection, { wait: true, filter, ...shardKeyOf(c.scope), ...c.writeArgs }),
      UpdateResultSchema,
      signal,
    );
  }
  return { added: changed.length, unchanged, removed: stale.length };
}

/** A chunk's point: its payload is the record (the chunk's own text); its sparse vector encodes `indexed`. */
export function point(c: QdrantConnection, record: ChunkRecord, dense: number[] | undefined, indexed: string): QdrantPointStruct {
  const vector: Record<string, number[] | SparseVector> = {};
  if (dense !== undefined) vector[c.vectors.dense] = dense;
  if (c.vectors.sparse !== null) vector[c.vectors.sparse] = encodeBm25Document(indexed);
  const payload = payloadOf(record);
  if (c.scope.tenancy === 'payload') payload[TENANT_FIELD] = c.scope.tenant;
  return { id: c.pointId(record.id), vector, payload };
}

/** The points of these sources now in the collection, by chunk id, with their dense vectors for reuse. */
export async function existingPoints(
  c: QdrantConnection,
  sourceIds: string[],
  signal: AbortSignal | undefined,
): Promise<Map<string, ExistingPoint>> {
  const out = new Map<string, ExistingPoint>();
  const filter = scopeFilter(c.scope, { must: [{ key: 'sourceId', match: { any: sourceIds } }] });
  await c.scrollRecords(filter, c.embeddings === undefined ? false : [c.vectors.dense], signal, (record, vector) => {
    out.set(record.id, { record, dense: c.storedDense(vector) });
  });
  return out;
}
