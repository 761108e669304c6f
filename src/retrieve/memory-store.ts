import { canonicalize, canonicalStringify } from '../base/canonical.js';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import type { Candidate } from '../core/schemas.js';
import { encodeBm25Document, encodeBm25Query } from '../tokenize/bm25.js';
import { embeddingModelName } from './embeddings.js';
import { DEFAULT_CHUNK_TOKENS, chunkDocument, chunkToCandidate, parseIngestDocuments } from './chunk.js';
import { aclFilter, combineFilters, matchesFilter, validateFilter, type EngineFilter } from './filter.js';
import { bm25Idf, compareScored, fuseDbsf, fuseRrf, type ScoredId } from './fusion.js';
import { maximalMarginalRelevance } from './mmr.js';
import { MemoryIndex, denseCosine, toDenseQuery, toDenseVector, type DenseQuery, type DenseVector, type SlotFilter } from './memory-index.js';
import { orderChunks, parseDeleteSources, parseGetChunksRequest, toRankedChunks } from './store-requests.js';
import type {
  AddDocumentsOptions,
  AddDocumentsResult,
  ChunkRecord,
  DeleteSourcesResult,
  EmbeddingsLike,
  Fusion,
  GetChunksRequest,
  IngestDocument,
  Rankings,
  SearchMode,
  SearchRequest,
  SparseVector,
  Store,
} from './types.js';
import { throwIfAborted } from '../base/abort.js';
import { checkEmbedderVectors } from '../base/vectors.js';
import { MEMORY_STORE_SCHEMA, readStoreFile, writeStoreFile, type StoreFile } from './memory-file.js';
import { AddDocumentsOptionsSchema, EmbeddingsSchema, FusionSchema, LIMIT_ALIASES, SearchRequestSchema } from './schemas.js';

export { EmbeddingsSchema, FusionSchema, LIMIT_ALIASES, SearchRequestSchema } from './schemas.js';

export { MEMORY_STORE_SCHEMA } from './memory-file.js';


export const MemoryHybridStoreOptionsSchema = z.strictObject({
  /** Dense embeddings; without them hybrid search is lexical and `dense` mode is unavailable. */
  embeddings: EmbeddingsSchema.optional(),
  /** Chunk size bound in tokens (default 256). */
  chunkTokens: z.number().int().min(8).max(8192).optional(),
  /** Default fusion for hybrid search (default `{ method: 'rrf' }`, Qdrant's k = 2). */
  fusion: FusionSchema.optional(),
  /** Clock for `indexedAt` (tests pin it). */
  now: z.custom<() => Date>((value) => typeof value === 'function', { message: 'now must be a function' }).optional(),
  /** Size of each hybrid prefetch (default max(limit × 4, 50), never below `limit`). */
  prefetchLimit: z.number().int().positive().max(100_000).optional(),
  /** Texts per `embedDocuments` call (default 64). */
  embedBatchSize: z.number().int().positive().max(10_000).optional(),
  /**
   * Population the BM25 IDF statistics are computed over. `all` (default) is Qdrant's default: every
   * chunk in the store, whatever the filter or principals. `visible` counts only the chunks the request's
   * principals may read (Qdrant 1.19: `params.idf = { corpus: aclFilter(principals) }`), so scores reveal
   * nothing about restricted chunks' vocabulary. The caller's `filter` never narrows the IDF corpus.
   */
  idfCorpus: z.enum(['all', 'visible']).optional(),
});
export type MemoryHybridStoreOptions = z.input<typeof MemoryHybridStoreOptionsSchema>;


/**
 * How many candidates MMR chooses from (Qdrant's `candidates_limit`): the hybrid prefetch size, so more than
 * `limit` (both stores use it).
 */
export function diversityCandidates(limit: number, configured?: number): number {
  return Math.max(limit + 1, hybridPrefetchLimit(limit, configured));
}


/** The prefetch size each arm of a hybrid query gets (both stores send the same). */
export function hybridPrefetchLimit(limit: number, configured?: number): number {
  return Math.max(limit, configured ?? Math.max(limit * 4, 50));
}

interface StoredChunk {
  record: ChunkRecord;
  sparse: SparseVector;
  dense: DenseVector | null;
}

/** A search's arms before they become candidates or rankings (`null`: the arm did not run). */
interface RankedArms {
  mode: SearchMode;
  limit: number;
  dense: ScoredId[] | null;
  lexical: ScoredId[] | null;
  /** The top `limit` of the fused ranking (the arm itself outside hybrid). */
  fused: ScoredId[];
  queryVector: DenseQuery | undefined;
}

interface SourceEntry {
  version?: string;
  /** Chunk ids in document order. */
  ids: string[];
}

export interface SourceInfo {
  sourceId: string;
  version?: string;
  chunks: number;
}

/**
 * The embedded default store: hybrid dense + BM25 search in process, with Qdrant's scoring and fusion
 * (see fusion.ts), filters and ACL applied inside the search before ranking, and atomic save/load.
 *
 * @example
 * const store = new MemoryHybridStore({ embeddings });
 * await store.addDocuments([{ id: 'handbook.md', text, version: 'v3' }]);
 * const candidates = await store.search({ text: 'parental leave', principals: ['hr'] });
 */
export class MemoryHybridStore implements Store {
  readonly #embeddings: EmbeddingsLike | undefined;
  readonly #chunkTokens: number;
  readonly #fusion: Fusion;
  readonly #now: () => Date;
  readonly #prefetchLimit: number | undefined;
  readonly #embedBatchSize: number;
  readonly #idfCorpus: 'all' | 'visible';

  #chunks = new Map<string, StoredChunk>();
  #sources = new Map<string, SourceEntry>();
  /** Slots, postings and document frequencies over `#chunks`, kept in step with it. */
  #index = new MemoryIndex<StoredChunk>();
  #dimension: number | null = null;
  /**
   * The model that made the stored vectors, as a loaded store file records it (null: the file did not say).
   * Undefined while no vectors came from a file: vectors made here are this store's embeddings'.
   */
  #vectorModel: string | null | undefined;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: MemoryHybridStoreOptions = {}) {
    const parsed = parseOrThrow(MemoryHybridStoreOptionsSchema, options, 'MemoryHybridStore options');
    this.#embeddings = parsed.embeddings;
    this.#chunkTokens = parsed.chunkTokens ?? DEFAULT_CHUNK_TOKENS;
    this.#fusion = parsed.fusion ?? { method: 'rrf' };
    this.#now = parsed.now ?? (() => new Date());
    this.#prefetchLimit = parsed.prefetchLimit;
    this.#embedBatchSize = parsed.embedBatchSize ?? 64;
    this.#idfCorpus = parsed.idfCorpus ?? 'all';
  }

  /** The model and dimension of the stored vectors; null while the store holds none. */
  get embedding(): { model: string | null; dimension: number } | null {
    if (this.#dimension === null) return null;
    const model = this.#vectorModel !== undefined ? this.#vectorModel : this.#embeddings && embeddingModelName(this.#embeddings);
    return { model: model ?? null, dimension: this.#dimension };
  }

  /**
   * Refuses embeddings that name another model than the one that made the stored vectors: their vectors would
   * be compared with vectors of another space and rank nonsense without any error.
   */
  #checkEmbeddingModel(): void {
    const stored = this.#vectorModel;
    const current = this.#embeddings && embeddingModelName(this.#embeddings);
    if (typeof stored !== 'string' || current === undefined || current === stored) return;
    throw new LitmPackError(
      'config_mismatch',
      `The store's vectors were made by the embedding model "${stored}" (dimension ${this.#dimension}); these embeddings use "${current}". Query with "${stored}", or ingest into a new store with "${current}"`,
      { details: { storedModel: stored, model: current, dimension: this.#dimension } },
    );
  }

  /** Number of chunks stored. */
  get size(): number {
    return this.#chunks.size;
  }

  /** Sources ingested, sorted by id. */
  sources(): SourceInfo[] {
    return [...this.#sources]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([sourceId, entry]) => {
        const info: SourceInfo = { sourceId, chunks: entry.ids.length };
        if (entry.version !== undefined) info.version = entry.version;
        return info;
      });
  }

  /**
   * Chunks, embeds (in batches) and BM25-encodes `docs`, then replaces each source's chunks with the new
   * set in one step: chunks whose content is unchanged keep their `indexedAt` (and embedding), chunks no
   * longer present are removed. Nothing changes if any step fails (validation, embedding, abort).
   */
  addDocuments(docs: IngestDocument[], options: AddDocumentsOptions = {}): Promise<AddDocumentsResult> {
    const run = this.#writes.then(() => {
      this.#checkEmbeddingModel();
      return this.#add(docs, options);
    });
    this.#writes = run.catch(() => undefined);
    return run;
  }

  async #add(input: unknown, rawOptions: AddDocumentsOptions): Promise<AddDocumentsResult> {
    const docs = parseIngestDocuments(input);
    const options = parseOrThrow(AddDocumentsOptionsSchema, rawOptions, 'addDocuments options');
    throwIfAborted(options.signal);
    const indexedAt = this.#now().toISOString();

    // Plan against the current state; nothing is written until every vector is in hand.
    const staged = new Map<string, StoredChunk>();
    const stagedSources = new Map<string, SourceEntry>();
    const removedIds: string[] = [];
    let added = 0;
    let unchanged = 0;
    const vectorsByHash = new Map<string, DenseVector>();
    for (const entry of this.#chunks.values()) {
      if (entry.dense) vectorsByHash.set(entry.record.textSha256, entry.dense);
    }
    const toEmbed = new Map<string, string>(); // textSha256 -> text
    const needsByDoc: Set<string>[] = [];

    for (const doc of docs) {
      const records = chunkDocument(doc, { maxTokens: this.#chunkTokens, indexedAt });
      const needs = new Set<string>();
      for (const record of records) {
        const existing = this.#chunks.get(record.id);
        if (existing) record.indexedAt = existing.record.indexedAt;
        const needsVector = this.#embeddings !== undefined && !(existing?.dense ?? vectorsByHash.get(record.textSha256));
        if (existing && !needsVector && sameRecord(existing.record, record)) {
          unchanged += 1;
          continue;
        }
        added += 1;
        staged.set(record.id, {
          record,
          // Both vectors depend only on the text, which a chunk id pins.
          sparse: existing?.sparse ?? encodeBm25Document(record.text),
          dense: existing?.dense ?? vectorsByHash.get(record.textSha256) ?? null,
        });
        if (needsVector) {
          toEmbed.set(record.textSha256, record.text);
          needs.add(record.textSha256);
        }
      }
      const newIds = records.map((r) => r.id);
      const keep = new Set(newIds);
      for (const id of this.#sources.get(doc.id)?.ids ?? []) if (!keep.has(id)) removedIds.push(id);
      const entry: SourceEntry = { ids: newIds };
      if (doc.version !== undefined) entry.version = doc.version;
      stagedSources.set(doc.id, entry);
      needsByDoc.push(needs);
    }

    // Embed, reporting documents in order as all their vectors arrive.
    let reported = 0;
    const report = () => {
      while (reported < docs.length && [...needsByDoc[reported]!].every((hash) => vectorsByHash.has(hash))) {
        reported += 1;
        options.onProgress?.(reported, docs.length);
      }
    };
    let dimension = this.#dimension;
    const pending = [...toEmbed];
    report();
    for (let start = 0; start < pending.length; start += this.#embedBatchSize) {
      throwIfAborted(options.signal);
      const batch = pending.slice(start, start + this.#embedBatchSize);
      const vectors = await this.#embeddings!.embedDocuments(batch.map(([, text]) => text));
      throwIfAborted(options.signal);
      dimension = checkEmbedderVectors(vectors, batch.length, 'embedDocuments', dimension);
      batch.forEach(([hash], index) => vectorsByHash.set(hash, toDenseVector(vectors[index]!)));
      report();
    }
    for (const entry of staged.values()) {
      if (entry.dense === null && this.#embeddings) entry.dense = vectorsByHash.get(entry.record.textSha256) ?? null;
    }

    // Commit synchronously: readers see the old state or the new one, never a mix.
    for (const id of removedIds) this.#deleteChunk(id);
    for (const [id, entry] of staged) {
      this.#chunks.set(id, entry);
      this.#index.set(entry);
    }
    for (const [sourceId, entry] of stagedSources) this.#sources.set(sourceId, entry);
    this.#dimension = dimension;
    return { added, unchanged, removed: removedIds.length };
  }

  #deleteChunk(id: string): void {
    if (!this.#chunks.delete(id)) return;
    this.#index.delete(id);
  }

  /**
   * Searches like one Qdrant `points/query`: the filter and the principals' ACL restrict the candidates
   * before anything is ranked; hybrid runs a dense and a lexical prefetch of `prefetchLimit` each and fuses
   * them. Results are sorted by score desc, then id; `similarity` is the cosine with the stored (Float32)
   * vector whenever dense ran.
   */
  async search(request: SearchRequest): Promise<Candidate[]> {
    const { fused, queryVector } = await this.#rank(request);
    return fused.map(({ id, score }) => {
      const entry = this.#chunks.get(id)!;
      return chunkToCandidate(entry.record, score, queryVector ? this.#index.cosineOf(id, queryVector) : undefined);
    });
  }

  /**
   * The same search as `search`, reported arm by arm: each arm's raw top `limit` (dense: cosine; lexical:
   * BM25 score; `null` when the arm did not run) beside the fused ranking `search` returns.
   */
  async rankings(request: SearchRequest): Promise<Rankings> {
    const ranked = await this.#rank(request);
    const sourceIdOf = (id: string) => this.#chunks.get(id)!.record.sourceId;
    return {
      mode: ranked.mode,
      dense: ranked.dense === null ? null : toRankedChunks(ranked.dense, ranked.limit, sourceIdOf),
      lexical: ranked.lexical === null ? null : toRankedChunks(ranked.lexical, ranked.limit, sourceIdOf),
      fused: toRankedChunks(ranked.fused, ranked.limit, sourceIdOf),
    };
  }

  async #rank(request: SearchRequest): Promise<RankedArms> {
    const req = parseOrThrow(SearchRequestSchema, request, 'search request', { aliases: LIMIT_ALIASES });
    const userFilter = req.filter === undefined ? undefined : validateFilter(req.filter);
    const fusion = req.fusion ?? this.#fusion;
    let mode = req.mode;
    if (!this.#embeddings) {
      if (mode === 'dense') {
        throw new LitmPackError(
          'unsupported_mode',
          'Dense search needs embeddings: construct MemoryHybridStore with { embeddings }, or use mode "lexical"',
          { details: { requires: 'embeddings', parameter: 'mode' } },
        );
      }
      mode = 'lexical';
    }
    throwIfAborted(req.signal);
    const diversity = req.diversity ?? 0;
    if (diversity > 0 && !this.#embeddings) {
      throw new LitmPackError('unsupported', 'diversity (MMR) needs dense vectors: construct MemoryHybridStore with { embeddings }', {
        details: { requires: 'embeddings', parameter: 'diversity' },
      });
    }

    let queryVector: DenseQuery | undefined;
    if (mode !== 'lexical' || diversity > 0) {
      this.#checkEmbeddingModel();
      const vector = await this.#embeddings!.embedQuery(req.text);
      throwIfAborted(req.signal);
      checkEmbedderVectors([vector], 1, 'embedQuery', this.#dimension);
      queryVector = toDenseQuery(vector);
    }

    // From here on everything is synchronous: one consistent snapshot of the store.
    const acl = req.principals === 'all' ? undefined : aclFilter(req.principals);
    const engineFilter = combineFilters(userFilter as EngineFilter | undefined, acl);
    // Evaluated inside each arm, before a chunk can be ranked; skipped entirely without filter and principals.
    const visible =
      engineFilter === undefined ? undefined : this.#index.slotFilter((entry) => matchesFilter(engineFilter, entry.record));
    const plainArmLimit = mode === 'hybrid' ? hybridPrefetchLimit(req.limit, this.#prefetchLimit) : req.limit;
    const pool = diversity > 0 ? diversityCandidates(req.limit, this.#prefetchLimit) : req.limit;
    const armLimit = Math.max(plainArmLimit, mode === 'hybrid' ? 0 : pool);

    const denseArm = queryVector && mode !== 'lexical' ? this.#index.denseTopK(queryVector, armLimit, visible) : null;

    let lexicalArm: ScoredId[] | null = null;
    if (mode !== 'dense') {
      const query = encodeBm25Query(req.text);
      const idf = this.#idfFunction(query, acl);
      lexicalArm = this.#index.lexicalTopK(query, idf, armLimit, visible);
    }

    let ranked: ScoredId[];
    if (mode === 'hybrid') {
      // Arm order is prefetch order: dense first, lexical second (it fixes which weight applies where).
      const arms = [denseArm ?? [], lexicalArm ?? []];
      ranked =
        fusion.method === 'rrf'
          ? fuseRrf(arms, {
              ...(fusion.k === undefined ? {} : { k: fusion.k }),
              ...(fusion.weights ? { weights: [fusion.weights.dense, fusion.weights.lexical] } : {}),
            })
          : fuseDbsf(arms);
    } else {
      ranked = (mode === 'dense' ? denseArm : lexicalArm) ?? [];
    }
    const fused = diversity > 0 ? this.#diverse(ranked.slice(0, pool), queryVector!, diversity, req.limit) : ranked.slice(0, req.limit);
    const arm = (list: ScoredId[] | null) => (list === null ? null : list.slice(0, plainArmLimit));
    return { mode, limit: req.limit, dense: arm(denseArm), lexical: arm(lexicalArm), fused, queryVector };
  }

  /**
   * Qdrant's MMR over a pool (see `maximalMarginalRelevance`): relevance and pairwise similarity are cosines
   * of the stored vectors; candidates without a vector are left out, as Qdrant leaves them out. The picked
   * ones keep the mode's score and come back in score order.
   */
  #diverse(pool: ScoredId[], query: DenseQuery, diversity: number, limit: number): ScoredId[] {
    const withVectors = pool
      .map((scored) => ({ scored, vector: this.#chunks.get(scored.id)?.dense ?? null }))
      .filter((c): c is { scored: ScoredId; vector: DenseVector } => c.vector !== null)
      .map((c) => ({ ...c, relevance: denseCosine(query, c.vector) }))
      // Qdrant picks from its nearest-rescored candidates: cosine order.
      .sort((a, b) => b.relevance - a.relevance || (a.scored.id < b.scored.id ? -1 : a.scored.id > b.scored.id ? 1 : 0));
    const asQuery = new Map<number, DenseQuery>();
    const queryOf = (i: number) => {
      let q = asQuery.get(i);
      if (q === undefined) {
        q = toDenseQuery((withVectors[i] as { vector: DenseVector }).vector.values);
        asQuery.set(i, q);
      }
      return q;
    };
    const picked = maximalMarginalRelevance(
      withVectors.map((c) => c.relevance),
      (a, b) => denseCosine(queryOf(b), (withVectors[a] as { vector: DenseVector }).vector),
      diversity,
      limit,
    );
    return picked.map((i) => (withVectors[i] as { scored: ScoredId }).scored).sort(compareScored);
  }

  /**
   * Chunks by source, chunk id and/or filter (all given conditions AND the principals' ACL, as in
   * `search`), in source order: sources as listed in `sourceIds` (else by id), then by span. Returns
   * copies of the stored records.
   */
  async getChunks(request: GetChunksRequest): Promise<ChunkRecord[]> {
    const req = parseGetChunksRequest(request);
    const userFilter = req.filter === undefined ? undefined : validateFilter(req.filter);
    throwIfAborted(req.signal);
    const engineFilter = combineFilters(
      userFilter as EngineFilter | undefined,
      req.principals === 'all' ? undefined : aclFilter(req.principals),
    );
    // Start from the narrowest index the request allows; a filter alone reads every chunk (in memory).
    let pool: Iterable<StoredChunk>;
    if (req.ids !== undefined) {
      pool = [...new Set(req.ids)].flatMap((id) => this.#chunks.get(id) ?? []);
    } else if (req.sourceIds !== undefined) {
      pool = [...new Set(req.sourceIds)].flatMap((sourceId) =>
        (this.#sources.get(sourceId)?.ids ?? []).map((id) => this.#chunks.get(id)!),
      );
    } else {
      pool = this.#chunks.values();
    }
    const sources = req.sourceIds === undefined ? undefined : new Set(req.sourceIds);
    const records: ChunkRecord[] = [];
    for (const { record } of pool) {
      if (sources !== undefined && !sources.has(record.sourceId)) continue;
      if (engineFilter !== undefined && !matchesFilter(engineFilter, record)) continue;
      records.push(record);
    }
    return orderChunks(records, req.sourceIds, req.limit).map((record) => structuredClone(record));
  }

  /**
   * Removes every chunk of these sources (queued behind ingests in progress, like `addDocuments`).
   * Returns how many of the sources existed and how many chunks went with them.
   */
  deleteSources(sourceIds: string[], options: { signal?: AbortSignal } = {}): Promise<DeleteSourcesResult> {
    const run = this.#writes.then(() => {
      const parsed = parseDeleteSources(sourceIds, options);
      throwIfAborted(parsed.signal);
      let sources = 0;
      let chunks = 0;
      for (const sourceId of parsed.sourceIds) {
        const entry = this.#sources.get(sourceId);
        if (entry === undefined) continue;
        sources += 1;
        chunks += entry.ids.length;
        for (const id of entry.ids) this.#deleteChunk(id);
        this.#sources.delete(sourceId);
      }
      return { sources, chunks };
    });
    this.#writes = run.catch(() => undefined);
    return run;
  }

  /** IDF per query term over the configured corpus (see `idfCorpus`). */
  #idfFunction(query: SparseVector, acl: EngineFilter | undefined): (index: number) => number {
    let documentCount = this.#chunks.size;
    let frequency = (index: number) => this.#index.documentFrequency(index);
    if (this.#idfCorpus === 'visible' && acl !== undefined) {
      const readable: SlotFilter = this.#index.slotFilter((entry) => matchesFilter(acl, entry.record));
      documentCount = this.#index.countMatching(readable);
      const counts = new Map<number, number>(
        query.indices.map((index) => [index, this.#index.documentFrequencyMatching(index, readable)]),
      );
      frequency = (index) => counts.get(index) ?? 0;
    }
    const cache = new Map<number, number>();
    return (index) => {
      let idf = cache.get(index);
      if (idf === undefined) {
        idf = bm25Idf(documentCount, frequency(index));
        cache.set(index, idf);
      }
      return idf;
    };
  }

  // -------------------------------------------------------------------------------------------
  // Persistence

  /**
   * Writes the store to `path` (a file; missing folders are created) as JSON, atomically: a failure at any
   * point leaves the previous file as it was.
   */
  async save(path: string): Promise<void> {
    await writeStoreFile(path, this.#snapshot());
  }

  /**
   * Reads a store written by `save`. Throws `not_found` when the file is missing or unreadable (or the path is
   * a folder: the message names the file to pass) and `corrupt` when it is not a valid store file of this
   * schema version. `options` configure the loaded store as for the constructor (the saved `chunkTokens` is
   * used unless given).
   */
  static async load(path: string, options: MemoryHybridStoreOptions = {}): Promise<MemoryHybridStore> {
    const file = await readStoreFile(path);
    const store = new MemoryHybridStore({ chunkTokens: file.chunkTokens, ...options });
    store.#restore(file, path);
    return store;
  }

  #snapshot(): StoreFile {
    const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    return {
      schema: MEMORY_STORE_SCHEMA,
      chunkTokens: this.#chunkTokens,
      dimension: this.#dimension,
      embeddingModel: this.embedding?.model ?? null,
      sources: [...this.#sources]
        .sort(([a], [b]) => byId(a, b))
        .map(([sourceId, entry]) => ({ sourceId, ...(entry.version === undefined ? {} : { version: entry.version }), ids: [...entry.ids] })),
      chunks: [...this.#chunks.values()]
        .sort((a, b) => byId(a.record.id, b.record.id))
                // Canonical key order, so a loaded store saves the same bytes.
        .map((entry) => ({
          record: canonicalize(entry.record) as ChunkRecord,
          sparse: entry.sparse,
          dense: entry.dense ? Array.from(entry.dense.values) : null,
        })),
    };
  }

  #restore(file: StoreFile, path: string): void {
    const corrupt = (message: string): never => {
      throw new LitmPackError('corrupt', `Store file ${path} is corrupt: ${message}`, { details: { path } });
    };
    const chunks = new Map<string, StoredChunk>();
    for (const entry of file.chunks) {
      const { record, sparse, dense } = entry;
      if (chunks.has(record.id)) corrupt(`chunk ${record.id} appears twice`);
      if (sparse.indices.length !== sparse.values.length) corrupt(`chunk ${record.id} has a malformed sparse vector`);
      for (let i = 1; i < sparse.indices.length; i += 1) {
        if (sparse.indices[i]! <= sparse.indices[i - 1]!) corrupt(`chunk ${record.id} has unsorted sparse indices`);
      }
      if (dense && dense.length !== file.dimension) corrupt(`chunk ${record.id} has a vector of the wrong dimension`);
      chunks.set(record.id, { record: record as ChunkRecord, sparse, dense: dense ? toDenseVector(dense) : null });
    }
    const sources = new Map<string, SourceEntry>();
    for (const source of file.sources) {
      if (sources.has(source.sourceId)) corrupt(`source ${source.sourceId} appears twice`);
      for (const id of source.ids) {
        if (chunks.get(id)?.record.sourceId !== source.sourceId) corrupt(`source ${source.sourceId} lists unknown chunk ${id}`);
      }
      const entry: SourceEntry = { ids: [...source.ids] };
      if (source.version !== undefined) entry.version = source.version;
      sources.set(source.sourceId, entry);
    }
    const listed = [...sources.values()].reduce((total, s) => total + s.ids.length, 0);
    if (listed !== chunks.size) corrupt('chunks and sources disagree');
    const index = new MemoryIndex<StoredChunk>();
    for (const entry of chunks.values()) index.set(entry);
    this.#chunks = chunks;
    this.#sources = sources;
    this.#index = index;
    this.#dimension = file.dimension;
    this.#vectorModel = file.dimension === null ? undefined : (file.embeddingModel ?? null);
  }
}

function sameRecord(a: ChunkRecord, b: ChunkRecord): boolean {
  return canonicalStringify(a) === canonicalStringify(b);
}

