import { canonicalStringify } from '../core/canonical.js';
import { QdrantClient } from '@qdrant/js-client-rest';
import { v5 as uuidv5 } from 'uuid';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../core/errors.js';
import type { Candidate } from '../core/schemas.js';
import { encodeBm25Document, encodeBm25Query } from '../retrieve/bm25.js';
import { DEFAULT_CHUNK_TOKENS, chunkDocument, parseIngestDocuments } from '../retrieve/chunk.js';
import { validateFilter } from '../retrieve/filter.js';
import { compareScored } from '../retrieve/fusion.js';
import { LIMIT_ALIASES, SearchRequestSchema, hybridPrefetchLimit } from '../retrieve/memory-store.js';
import type {
  AddDocumentsOptions,
  AddDocumentsResult,
  ChunkRecord,
  EmbeddingsLike,
  Fusion,
  IngestDocument,
  SearchMode,
  SearchRequest,
  SparseVector,
  Store,
} from '../retrieve/types.js';
import { callQdrant, type CallPolicy } from './call.js';
import { checkCollection } from './collection.js';
import { QdrantHybridStoreOptionsSchema, type QdrantHybridStoreOptions } from './options.js';
import { PRESET_DEFAULTS, payloadToChunkRecord, pointToCandidate, type PayloadPreset } from './presets.js';
import {
  LITM_PAYLOAD_INDEXES,
  buildCreateCollection,
  buildDenseQuery,
  buildHybridQueryBatch,
  buildLexicalQuery,
  buildSearchFilter,
  type VectorNames,
} from './requests.js';
import type { QdrantClientLike, QdrantFilter, QdrantPointStruct, QdrantScoredPoint } from './types.js';

/** Namespace of the UUIDv5 point ids (fixed forever: changing it would orphan every stored point). */
export const POINT_ID_NAMESPACE = '6f1c8a52-3c1e-5b7e-9d3a-6b2f0e7c4a11';

/** Qdrant accepts only unsigned integers and UUIDs as point ids: the chunk key maps to a UUIDv5. */
export function pointIdForChunk(chunkId: string): string {
  return uuidv5(chunkId, POINT_ID_NAMESPACE);
}

const AddDocumentsOptionsSchema = z.strictObject({
  onProgress: z
    .custom<(done: number, total: number) => void>((value) => typeof value === 'function', {
      message: 'onProgress must be a function',
    })
    .optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, { message: 'signal must be an AbortSignal' }).optional(),
});

export interface EnsureCollectionResult {
  /** True when the collection was created by this call. */
  created: boolean;
  /** Payload indexes created by this call. */
  indexesCreated: string[];
}

interface ExistingPoint {
  record: ChunkRecord;
  dense: number[] | undefined;
}

/**
 * Hybrid dense + BM25 search on Qdrant with the same semantics as `MemoryHybridStore`: a named dense vector
 * (cosine) and a sparse vector with `modifier: "idf"` (the server applies IDF), hybrid fused on the server in
 * one round trip that also returns the true dense cosine, filters and ACL inside the engine query.
 * The constructor does no I/O; call `ensureCollection()` once to create or check the collection.
 *
 * @example
 * const store = new QdrantHybridStore({ url: 'http://localhost:6333', collection: 'docs', embeddings });
 * await store.ensureCollection();
 * await store.addDocuments([{ id: 'handbook.md', text, version: 'v3', acl: ['hr'] }]);
 * const candidates = await store.search({ text: 'parental leave', principals: ['hr'] });
 */
export class QdrantHybridStore implements Store {
  readonly #client: QdrantClientLike;
  readonly #url: string | undefined;
  readonly #collection: string;
  readonly #embeddings: EmbeddingsLike | undefined;
  readonly #preset: PayloadPreset;
  readonly #vectors: VectorNames;
  readonly #aclKey: string;
  readonly #fusion: Fusion;
  readonly #prefetchLimit: number | undefined;
  readonly #chunkTokens: number;
  readonly #embedBatchSize: number;
  readonly #upsertBatchSize: number;
  readonly #now: () => Date;
  readonly #policy: CallPolicy;
  #vectorSize: number | undefined;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: QdrantHybridStoreOptions) {
    const parsed = parseOrThrow(QdrantHybridStoreOptionsSchema, options, 'QdrantHybridStore options');
    if (parsed.idfCorpus === 'visible') {
      throw new LitmPackError(
        'unsupported',
        'idfCorpus "visible" is not available on Qdrant: its REST API computes IDF over the whole collection. ' +
          'Leave idfCorpus unset (or "all").',
      );
    }
    const defaults = PRESET_DEFAULTS[parsed.payloadPreset];
    this.#preset = parsed.payloadPreset;
    this.#vectors = {
      dense: parsed.denseVectorName ?? defaults.denseVectorName,
      sparse: parsed.sparseVectorName === undefined ? defaults.sparseVectorName : parsed.sparseVectorName,
    };
    this.#aclKey = defaults.aclKey;
    this.#collection = parsed.collection;
    this.#embeddings = parsed.embeddings;
    this.#vectorSize = parsed.vectorSize;
    this.#fusion = (parsed.fusion as Fusion | undefined) ?? { method: 'rrf' };
    this.#prefetchLimit = parsed.prefetchLimit;
    this.#chunkTokens = parsed.chunkTokens ?? DEFAULT_CHUNK_TOKENS;
    this.#embedBatchSize = parsed.embedBatchSize ?? 64;
    this.#upsertBatchSize = parsed.upsertBatchSize ?? 64;
    this.#now = parsed.now ?? (() => new Date());
    this.#policy = {
      timeoutMs: parsed.timeoutMs,
      retries: parsed.retries,
      retryBaseDelayMs: parsed.retryBaseDelayMs,
      retryMaxDelayMs: parsed.retryMaxDelayMs,
    };
    if (parsed.client !== undefined) {
      this.#client = parsed.client;
      this.#url = undefined;
    } else {
      const url = parsed.url!;
      this.#url = redactUrl(url);
      // No compatibility check: it would be a network call in the constructor. The client's own timeout
      // cancels the HTTP request when our deadline gives up on it. The key lives only inside the client.
      this.#client = new QdrantClient({
        url,
        ...(parsed.apiKey === undefined ? {} : { apiKey: parsed.apiKey }),
        timeout: parsed.timeoutMs,
        checkCompatibility: false,
      });
    }
  }

  /** The collection this store reads and writes. */
  get collection(): string {
    return this.#collection;
  }

  /** Safe to log: no client, no key. */
  toJSON(): Record<string, unknown> {
    return {
      store: 'QdrantHybridStore',
      collection: this.#collection,
      ...(this.#url === undefined ? {} : { url: this.#url }),
      payloadPreset: this.#preset,
      denseVectorName: this.#vectors.dense,
      sparseVectorName: this.#vectors.sparse,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Collection

  /**
   * Creates the collection (dense cosine vector sized from `vectorSize` or one embedding probe, sparse vector
   * with IDF, payload indexes for `sourceId`, `acl`, `timestamp`), or checks an existing one and throws
   * `config_mismatch` naming every difference. Missing payload indexes are added.
   */
  async ensureCollection(options: { signal?: AbortSignal } = {}): Promise<EnsureCollectionResult> {
    const { signal } = options;
    const writable = PRESET_DEFAULTS[this.#preset].writable;
    const indexes = writable ? LITM_PAYLOAD_INDEXES : {};
    const { exists } = await this.#read('collectionExists', () => this.#client.collectionExists(this.#collection), signal);
    let created = false;
    if (!exists) {
      if (!writable) {
        throw new LitmPackError(
          'bad_request',
          `Qdrant collection "${this.#collection}" does not exist; the "${this.#preset}" preset reads collections ` +
            'another tool wrote and does not create them.',
          { details: { collection: this.#collection } },
        );
      }
      const size = await this.#denseSize();
      try {
        await this.#write(
          'createCollection',
          () => this.#client.createCollection(this.#collection, buildCreateCollection(this.#vectors, size)),
          signal,
        );
        created = true;
      } catch (error) {
        // Another process created it meanwhile (409): fall through to checking it.
        if (!(error instanceof LitmPackError && error.status === 409)) throw error;
      }
    }
    const info = await this.#read('getCollection', () => this.#client.getCollection(this.#collection), signal);
    const size = created ? this.#vectorSize : this.#vectorSize ?? (await this.#probeSizeIfCheap());
    const check = checkCollection(info, { vectors: this.#vectors, size, payloadIndexes: indexes });
    if (check.mismatches.length > 0) {
      throw new LitmPackError(
        'config_mismatch',
        `Qdrant collection "${this.#collection}" does not match this store: ${check.mismatches.join('; ')}`,
        { details: { collection: this.#collection, mismatches: check.mismatches } },
      );
    }
    this.#vectorSize = check.denseSize ?? this.#vectorSize;
    const indexesCreated: string[] = [];
    for (const [field, type] of check.missingIndexes) {
      await this.#write(
        'createPayloadIndex',
        () => this.#client.createPayloadIndex(this.#collection, { field_name: field, field_schema: type, wait: true }),
        signal,
      );
      indexesCreated.push(field);
    }
    return { created, indexesCreated };
  }

  async #denseSize(): Promise<number> {
    if (this.#vectorSize !== undefined) return this.#vectorSize;
    if (this.#embeddings === undefined) {
      throw new LitmPackError(
        'invalid_input',
        'ensureCollection needs the dense vector size: give vectorSize or embeddings',
      );
    }
    const probe = await this.#embeddings.embedQuery('litm-pack dimension probe');
    if (!Array.isArray(probe) || probe.length === 0) {
      throw new LitmPackError('invalid_input', 'embeddings.embedQuery returned an empty vector');
    }
    this.#vectorSize = probe.length;
    return probe.length;
  }

  /** On an existing collection the size is checked against the embeddings when they are configured. */
  async #probeSizeIfCheap(): Promise<number | undefined> {
    return this.#embeddings === undefined ? undefined : this.#denseSize();
  }

  // -------------------------------------------------------------------------------------------
  // Ingest

  /**
   * Chunks, embeds and BM25-encodes `docs` and upserts them in batches (point id = UUIDv5 of the chunk id,
   * payload = the chunk record). Re-ingesting the same content changes nothing (`unchanged`); a new version
   * replaces the source's chunks: changed chunks are upserted first, then the source's points that are no
   * longer part of it are deleted, so a failure midway never leaves a source with no chunks.
   */
  addDocuments(docs: IngestDocument[], options: AddDocumentsOptions = {}): Promise<AddDocumentsResult> {
    const run = this.#writes.then(() => this.#add(docs, options));
    this.#writes = run.catch(() => undefined);
    return run;
  }

  async #add(input: unknown, rawOptions: AddDocumentsOptions): Promise<AddDocumentsResult> {
    if (!PRESET_DEFAULTS[this.#preset].writable) {
      throw new LitmPackError(
        'unsupported',
        `addDocuments writes litm-pack payloads; this store reads a "${this.#preset}" collection. ` +
          'Ingest with the tool that owns it, or use payloadPreset "litm" on another collection.',
      );
    }
    const docs = parseIngestDocuments(input);
    const options = parseOrThrow(AddDocumentsOptionsSchema, rawOptions, 'addDocuments options');
    const { signal } = options;
    throwIfAborted(signal);
    const indexedAt = this.#now().toISOString();
    const result: AddDocumentsResult = { added: 0, unchanged: 0, removed: 0 };
    for (const [index, doc] of docs.entries()) {
      const one = await this.#addOne(doc, indexedAt, signal);
      result.added += one.added;
      result.unchanged += one.unchanged;
      result.removed += one.removed;
      options.onProgress?.(index + 1, docs.length);
    }
    return result;
  }

  async #addOne(doc: IngestDocument, indexedAt: string, signal: AbortSignal | undefined): Promise<AddDocumentsResult> {
    const records = chunkDocument(doc, { maxTokens: this.#chunkTokens, indexedAt });
    const existing = await this.#existingPoints(doc.id, signal);
    const vectorsByHash = new Map<string, number[]>();
    for (const point of existing.values()) {
      if (point.dense !== undefined) vectorsByHash.set(point.record.textSha256, point.dense);
    }
    const changed: ChunkRecord[] = [];
    let unchanged = 0;
    for (const record of records) {
      const before = existing.get(record.id);
      if (before !== undefined) record.indexedAt = before.record.indexedAt;
      const needsVector = this.#embeddings !== undefined && !vectorsByHash.has(record.textSha256);
      if (before !== undefined && !needsVector && sameRecord(before.record, record)) unchanged += 1;
      else changed.push(record);
    }

    // Embed what has no vector yet, in batches.
    if (this.#embeddings !== undefined) {
      const texts = new Map<string, string>();
      for (const record of changed) {
        if (!vectorsByHash.has(record.textSha256)) texts.set(record.textSha256, record.text);
      }
      const pending = [...texts];
      for (let start = 0; start < pending.length; start += this.#embedBatchSize) {
        throwIfAborted(signal);
        const batch = pending.slice(start, start + this.#embedBatchSize);
        const vectors = await this.#embeddings.embedDocuments(batch.map(([, text]) => text));
        throwIfAborted(signal);
        this.#checkVectors(vectors, batch.length, 'embedDocuments');
        batch.forEach(([hash], i) => vectorsByHash.set(hash, vectors[i]!));
      }
    }

    const points = changed.map((record) => this.#point(record, vectorsByHash.get(record.textSha256)));
    for (let start = 0; start < points.length; start += this.#upsertBatchSize) {
      const batch = points.slice(start, start + this.#upsertBatchSize);
      await this.#write('upsert', () => this.#client.upsert(this.#collection, { wait: true, points: batch }), signal);
    }

    const keep = new Set(records.map((r) => r.id));
    const stale = [...existing.keys()].filter((id) => !keep.has(id));
    if (stale.length > 0) {
      const filter: QdrantFilter = {
        must: [{ key: 'sourceId', match: { value: doc.id } }],
        must_not: [{ has_id: records.map((r) => pointIdForChunk(r.id)) }],
      };
      await this.#write('delete', () => this.#client.delete(this.#collection, { wait: true, filter }), signal);
    }
    return { added: changed.length, unchanged, removed: stale.length };
  }

  #point(record: ChunkRecord, dense: number[] | undefined): QdrantPointStruct {
    const vector: Record<string, number[] | SparseVector> = {};
    if (dense !== undefined) vector[this.#vectors.dense] = dense;
    if (this.#vectors.sparse !== null) vector[this.#vectors.sparse] = encodeBm25Document(record.text);
    // JSON drops undefined fields; the payload is exactly the chunk record.
    return { id: pointIdForChunk(record.id), vector, payload: JSON.parse(JSON.stringify(record)) as Record<string, unknown> };
  }

  /** The source's points now in the collection, by chunk id, with their dense vectors for reuse. */
  async #existingPoints(sourceId: string, signal: AbortSignal | undefined): Promise<Map<string, ExistingPoint>> {
    const out = new Map<string, ExistingPoint>();
    const withVector = this.#embeddings === undefined ? false : [this.#vectors.dense];
    let offset: string | number | undefined;
    for (;;) {
      const page = await this.#read(
        'scroll',
        () =>
          this.#client.scroll(this.#collection, {
            filter: { must: [{ key: 'sourceId', match: { value: sourceId } }] },
            limit: 256,
            with_payload: true,
            with_vector: withVector,
            ...(offset === undefined ? {} : { offset }),
          }),
        signal,
      );
      for (const point of page.points) {
        const record = payloadToChunkRecord({ id: point.id, score: 0, payload: point.payload ?? null });
        out.set(record.id, { record, dense: this.#storedDense(point.vector) });
      }
      const next = page.next_page_offset;
      if (next === undefined || next === null || typeof next === 'object') break;
      offset = next;
    }
    return out;
  }

  #storedDense(vector: unknown): number[] | undefined {
    if (Array.isArray(vector)) return this.#vectors.dense === '' ? (vector as number[]) : undefined;
    if (typeof vector !== 'object' || vector === null) return undefined;
    const named = (vector as Record<string, unknown>)[this.#vectors.dense];
    return Array.isArray(named) && named.every((x) => typeof x === 'number') ? (named as number[]) : undefined;
  }

  #checkVectors(vectors: unknown, expected: number, call: string): asserts vectors is number[][] {
    if (!Array.isArray(vectors) || vectors.length !== expected) {
      throw new LitmPackError('invalid_input', `embeddings.${call} returned a wrong number of vectors, expected ${expected}`);
    }
    for (const vector of vectors) {
      if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new LitmPackError('invalid_input', `embeddings.${call} returned a vector that is not a non-empty array of finite numbers`);
      }
      if (this.#vectorSize !== undefined && vector.length !== this.#vectorSize) {
        throw new LitmPackError(
          'config_mismatch',
          `embeddings.${call} returned a vector of dimension ${vector.length}; collection "${this.#collection}" holds dimension ${this.#vectorSize}`,
        );
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Search

  /**
   * One request per search. `dense` and `lexical` are one `points/query` each; `hybrid` is one
   * `points/query/batch` (see `buildHybridQueryBatch` for how the true cosine comes back in it). The filter
   * and the principals' ACL are inside every query and prefetch. Results are sorted by score desc, then id.
   */
  async search(request: SearchRequest): Promise<Candidate[]> {
    const req = parseOrThrow(SearchRequestSchema, request, 'search request', { aliases: LIMIT_ALIASES });
    const userFilter = req.filter === undefined ? undefined : validateFilter(req.filter);
    const fusion = (req.fusion as Fusion | undefined) ?? this.#fusion;
    const mode = this.#resolveMode(req.mode);
    const signal = req.signal;
    throwIfAborted(signal);
    const filter = buildSearchFilter(userFilter, req.principals, this.#aclKey);

    let denseVector: number[] | undefined;
    if (mode !== 'lexical') {
      const vector = await this.#embeddings!.embedQuery(req.text);
      throwIfAborted(signal);
      this.#checkVectors([vector], 1, 'embedQuery');
      denseVector = vector;
    }
    const sparseVector = mode === 'dense' ? undefined : encodeBm25Query(req.text);

    if (mode === 'dense') {
      const body = buildDenseQuery(denseVector!, this.#vectors.dense, { limit: req.limit, filter, withPayload: true });
      const response = await this.#read('query', () => this.#client.query(this.#collection, body), signal);
      return this.#candidates(response.points, (point) => point.score);
    }
    if (mode === 'lexical') {
      // A query of stopwords only has no terms: nothing can match (as in the memory store).
      if (sparseVector!.indices.length === 0) return [];
      const body = buildLexicalQuery(sparseVector!, this.#vectors.sparse!, { limit: req.limit, filter, withPayload: true });
      const response = await this.#read('query', () => this.#client.query(this.#collection, body), signal);
      return this.#candidates(response.points, () => undefined);
    }
    const armLimit = hybridPrefetchLimit(req.limit, this.#prefetchLimit);
    const body = buildHybridQueryBatch({
      denseVector: denseVector!,
      sparseVector: sparseVector!,
      limit: req.limit,
      denseLimit: armLimit,
      lexicalLimit: armLimit,
      filter,
      fusion,
      vectors: { dense: this.#vectors.dense, sparse: this.#vectors.sparse! },
      withPayload: true,
    });
    const responses = await this.#read('queryBatch', () => this.#client.queryBatch(this.#collection, body), signal);
    const [fused, cosine] = responses;
    if (fused === undefined || cosine === undefined) {
      throw new LitmPackError(
        'server_error',
        `Qdrant queryBatch on collection "${this.#collection}" answered ${responses.length} results for 2 queries`,
        { cause: responses },
      );
    }
    const similarity = new Map(cosine.points.map((point) => [String(point.id), point.score]));
    return this.#candidates(fused.points, (point) => similarity.get(String(point.id)));
  }

  #resolveMode(requested: SearchMode): SearchMode {
    const hasSparse = this.#vectors.sparse !== null;
    const noSparse = (what: string): LitmPackError =>
      new LitmPackError(
        'unsupported_mode',
        `${what} search needs a sparse BM25 vector, and collection "${this.#collection}" is configured without one ` +
          `(payloadPreset "${this.#preset}"). Set sparseVectorName to the collection's sparse vector, or use mode "dense".`,
        { details: { mode: requested, collection: this.#collection } },
      );
    if (requested === 'dense' || (requested === 'hybrid' && !hasSparse)) {
      if (this.#embeddings === undefined) {
        if (requested === 'hybrid') throw noSparse('Hybrid (or, without embeddings, lexical)');
        throw new LitmPackError(
          'unsupported_mode',
          'Dense search needs embeddings: construct QdrantHybridStore with { embeddings }, or use mode "lexical"',
          { details: { mode: requested } },
        );
      }
      if (requested === 'hybrid') throw noSparse('Hybrid');
      return 'dense';
    }
    if (!hasSparse) throw noSparse('Lexical');
    // Without embeddings hybrid degrades to lexical (coverage confidence is then unknown), as in memory.
    if (requested === 'hybrid' && this.#embeddings === undefined) return 'lexical';
    return requested;
  }

  #candidates(
    points: QdrantScoredPoint[],
    similarityOf: (point: QdrantScoredPoint) => number | undefined,
  ): Candidate[] {
    const candidates = points.map((point) =>
      pointToCandidate({ id: point.id, score: point.score, payload: point.payload ?? null }, this.#preset, similarityOf(point)),
    );
    // Qdrant leaves ties in engine order; litm-pack's total order is score desc, then id.
    return candidates.sort(compareScored);
  }

  // -------------------------------------------------------------------------------------------
  // Calls

  #read<T>(operation: string, run: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    return callQdrant(run, { operation, collection: this.#collection }, this.#policy, { read: true, signal });
  }

  #write<T>(operation: string, run: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    return callQdrant(run, { operation, collection: this.#collection }, this.#policy, { read: false, signal });
  }
}

function sameRecord(a: ChunkRecord, b: ChunkRecord): boolean {
  return canonicalStringify(a) === canonicalStringify(b);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) {
    throw new LitmPackError('aborted', 'The operation was aborted', { cause: signal.reason });
  }
}

/** Drops credentials and query from a URL so it can be logged. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return '(invalid url)';
  }
}
