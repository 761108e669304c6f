import { canonicalStringify, sha256Hex } from '../base/canonical.js';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import type { Candidate } from '../core/schemas.js';
import { encodeBm25Document, encodeBm25Query, type SparseVector } from '../tokenize/bm25.js';
import { embeddingModelName, type EmbeddingsLike } from '../store/embeddings.js';
import { DEFAULT_CHUNK_TOKENS, chunkDocument, chunkToCandidate, parseIngestDocuments } from '../store/chunk.js';
import { matchesFilter, validateFilter, type EngineFilter } from '../store/filter.js';
import { bm25Idf, compareScored, fuseDbsf, fuseRrf, type ScoredId } from '../store/fusion.js';
import { maximalMarginalRelevance } from '../store/mmr.js';
import {
  CURRENT_INDEXED_TEXT,
  IndexedTextRecipeSchema,
  indexedTextKey,
  indexedTextOf,
  reindexAdvice,
  type IndexedTextRecipe,
} from '../store/indexed-text.js';
import { AclClasses } from './acl-classes.js';
import { denseCosine, toDenseQuery, type DenseQuery, type DenseVector } from './vectors.js';
import { Segment, type NewRow } from './segment.js';
import { Snapshot, type SnapshotChanges } from './snapshot.js';
import {
  diversityCandidates,
  hybridPrefetchLimit,
  orderChunks,
  parseDeleteSources,
  parseGetChunksRequest,
  toRankedChunks,
} from '../store/requests.js';
import {
  type AddDocumentsOptions,
  type ChunkRecord,
  type Fusion,
  type GetChunksRequest,
  type IngestDocument,
  type SearchMode,
  type SearchRequest,
  AddDocumentsOptionsSchema,
  EmbeddingsSchema,
  FusionSchema,
  LIMIT_ALIASES,
  SearchRequestSchema,
} from '../store/schemas.js';
import type { AddDocumentsResult, DeleteSourcesResult, Rankings, Store } from '../store/types.js';
import { throwIfAborted } from '../base/abort.js';
import { checkEmbedderVectors } from '../base/vectors.js';
import { readStoreFile, writeStoreFile, type StoreContents } from './file.js';
import { withStoreLock, type StoreLockOptions } from './lock.js';
import { stat } from 'node:fs/promises';

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
   * Population the BM25 IDF statistics are computed over. `visible` (default) counts only the chunks the
   * request's principals may read (Qdrant 1.19: `params.idf = { corpus: aclFilter(principals) }`), so scores
   * reveal nothing about restricted chunks' vocabulary; without principals, or in a store without ACLs, that is
   * every chunk. `all` is Qdrant's default: every chunk in the store, whatever the filter or principals (what
   * `QdrantHybridStore` computes). The caller's `filter` never narrows the IDF corpus.
   */
  idfCorpus: z.enum(['all', 'visible']).optional(),
  /**
   * How chunks are indexed (see indexed-text.ts): a new store uses this recipe (default: the current one,
   * `title-headings@1`); a loaded store uses the one its file records, and refuses another given here with
   * `config_mismatch` (re-index it with `reindex()`).
   */
  indexedText: IndexedTextRecipeSchema.optional(),
});
export type MemoryHybridStoreOptions = z.input<typeof MemoryHybridStoreOptionsSchema>;

/** `MemoryHybridStore.update`'s options: the loaded store's, the lock's, and `create`. */
export type MemoryStoreUpdateOptions = MemoryHybridStoreOptions &
  StoreLockOptions & {
    /** A missing file starts an empty store (ingest into a new store) instead of failing with `not_found`. */
    create?: boolean;
  };

/** A search's arms before they become candidates or rankings (`null`: the arm did not run). */
interface RankedArms {
  mode: SearchMode;
  limit: number;
  dense: ScoredId[] | null;
  lexical: ScoredId[] | null;
  /** The top `limit` of the fused ranking (the arm itself outside hybrid). */
  fused: ScoredId[];
  queryVector: DenseQuery | undefined;
  /** Slot of every id above, in the snapshot the search read. */
  slots: ReadonlyMap<string, number>;
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
  /** Numbers the ACL lists of the chunks (a loaded store: as its file numbers them). */
  #classes = new AclClasses();
  /** The recipe of the indexed text (a loaded store: its file's; `reindex` moves it to the current one). */
  #indexedText: IndexedTextRecipe;

  /** The current version of the contents; a write swaps in the next one when it completes. */
  #snapshot: Snapshot = Snapshot.empty(this.#classes);
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
    this.#idfCorpus = parsed.idfCorpus ?? 'visible';
    this.#indexedText = parsed.indexedText ?? CURRENT_INDEXED_TEXT;
  }

  /** The recipe the store indexes chunks with (`title-headings@1` unless it was loaded from an older store file). */
  get indexedText(): IndexedTextRecipe {
    return this.#indexedText;
  }

  /** How to bring a store indexed with an older recipe up to date (null when it is current). */
  get reindexAdvice(): string | null {
    return reindexAdvice(this.#indexedText, 'call reindex() on it (the CLI: ingest the sources into a new store), then save it');
  }

  /** The model and dimension of the stored vectors; null while the store holds none. */
  get embedding(): { model: string | null; dimension: number } | null {
    return this.#embeddingOf(this.#snapshot);
  }

  #embeddingOf(snapshot: Snapshot): { model: string | null; dimension: number } | null {
    if (snapshot.dimension === null) return null;
    const model = this.#vectorModel !== undefined ? this.#vectorModel : this.#embeddings && embeddingModelName(this.#embeddings);
    return { model: model ?? null, dimension: snapshot.dimension };
  }

  /**
   * Refuses embeddings that name another model than the one that made the stored vectors: their vectors would
   * be compared with vectors of another space and rank nonsense without any error.
   */
  #checkEmbeddingModel(snapshot: Snapshot): void {
    const stored = this.#vectorModel;
    const current = this.#embeddings && embeddingModelName(this.#embeddings);
    if (typeof stored !== 'string' || current === undefined || current === stored) return;
    throw new LitmPackError(
      'config_mismatch',
      `The store's vectors were made by the embedding model "${stored}" (dimension ${snapshot.dimension}); these embeddings use "${current}". Query with "${stored}", or ingest into a new store with "${current}"`,
      { details: { storedModel: stored, model: current, dimension: snapshot.dimension } },
    );
  }

  /** Number of chunks stored. */
  get size(): number {
    return this.#snapshot.size;
  }

  /** Sources ingested, sorted by id. */
  sources(): SourceInfo[] {
    return this.#snapshot.sources();
  }

  /**
   * When the newest chunk was indexed (ms since the epoch): the last ingest that added or changed a chunk. NaN for
   * an empty store. Chunks an ingest found unchanged keep their time, so a re-ingest of the same files moves nothing.
   */
  newestIndexedAt(): number {
    return this.#snapshot.newestIndexedAt();
  }

  /**
   * Chunks, embeds (in batches) and BM25-encodes `docs`, then replaces each source's chunks with the new
   * set in one step: chunks whose content is unchanged keep their `indexedAt` (and embedding), chunks no
   * longer present are removed. Nothing changes if any step fails (validation, embedding, abort). Searches
   * and reads that started before the write completes read the store as it was when they started.
   */
  addDocuments(docs: IngestDocument[], options: AddDocumentsOptions = {}): Promise<AddDocumentsResult> {
    return this.#queued(() => {
      this.#checkEmbeddingModel(this.#snapshot);
      return this.#add(docs, options);
    });
  }

  /** Writes run one after another, in the order they were asked for. */
  #queued<T>(run: () => Promise<T> | T): Promise<T> {
    const next = this.#writes.then(run);
    this.#writes = next.catch(() => undefined);
    return next;
  }

  async #add(input: unknown, rawOptions: AddDocumentsOptions): Promise<AddDocumentsResult> {
    const docs = parseIngestDocuments(input);
    const options = parseOrThrow(AddDocumentsOptionsSchema, rawOptions, 'addDocuments options');
    throwIfAborted(options.signal);
    const indexedAt = this.#now().toISOString();
    // Plan against the current version; nothing is written until every vector is in hand. Writes are queued,
    // so this is still the current version when the plan is committed.
    const base = this.#snapshot;

    const recipe = this.#indexedText;
    const staged: { record: ChunkRecord; key: string; sparse: SparseVector; dense: Float32Array | null }[] = [];
    const removed: number[] = [];
    const emptySources = new Map<string, { version?: string } | null>();
    let added = 0;
    let unchanged = 0;
    let removedCount = 0;
    // Vectors to reuse: those of the existing chunks of the batch's sources (as the Qdrant store reuses them), by
    // the key of the text they embed (the indexed text: a chunk whose title or headings changed is embedded again).
    const existingBySource = new Map<string, Map<string, number>>();
    const vectorsByKey = new Map<string, Float32Array>();
    for (const doc of docs) {
      const existing = new Map<string, number>();
      for (const slot of base.sourceSlots(doc.id)) {
        existing.set(base.id(slot), slot);
        const dense = base.dense(slot);
        if (dense) vectorsByKey.set(indexedTextKey(base.record(slot), recipe), dense.values);
      }
      existingBySource.set(doc.id, existing);
    }
    const vectorsMatter = this.#embeddings !== undefined || vectorsByKey.size > 0;
    const toEmbed = new Map<string, string>(); // indexed text key -> indexed text
    const needsByDoc: Set<string>[] = [];

    for (const doc of docs) {
      const records = chunkDocument(doc, { maxTokens: this.#chunkTokens, indexedAt });
      const existing = existingBySource.get(doc.id) ?? new Map<string, number>();
      const needs = new Set<string>();
      for (const record of records) {
        const slot = existing.get(record.id);
        const before = slot === undefined ? undefined : base.record(slot);
        if (before) record.indexedAt = before.indexedAt;
        const indexed = indexedTextOf(record, recipe);
        // The key only serves vectors: with none to make or reuse, the hash is not worth its cost.
        const key = indexed === record.text || !vectorsMatter ? record.textSha256 : sha256Hex(indexed);
        const needsVector = this.#embeddings !== undefined && !vectorsByKey.has(key);
        if (before && !needsVector && sameRecord(before, record)) {
          unchanged += 1;
          continue;
        }
        added += 1;
        if (slot !== undefined) removed.push(slot);
        // Both vectors depend only on the indexed text.
        staged.push({ record, key, sparse: encodeBm25Document(indexed), dense: vectorsByKey.get(key) ?? null });
        if (needsVector) {
          toEmbed.set(key, indexed);
          needs.add(key);
        }
      }
      const keep = new Set(records.map((r) => r.id));
      for (const [id, slot] of existing) {
        if (keep.has(id)) continue;
        removed.push(slot);
        removedCount += 1;
      }
      if (records.length === 0) emptySources.set(doc.id, doc.version === undefined ? {} : { version: doc.version });
      else if (base.isEmptySource(doc.id)) emptySources.set(doc.id, null);
      needsByDoc.push(needs);
    }

    // Embed, reporting documents in order as all their vectors arrive.
    let reported = 0;
    const report = () => {
      while (reported < docs.length && [...(needsByDoc[reported] ?? [])].every((key) => vectorsByKey.has(key))) {
        reported += 1;
        options.onProgress?.(reported, docs.length);
      }
    };
    let dimension = base.dimension;
    const pending = [...toEmbed];
    report();
    for (let start = 0; start < pending.length; start += this.#embedBatchSize) {
      throwIfAborted(options.signal);
      const batch = pending.slice(start, start + this.#embedBatchSize);
      const vectors = await this.#embeddings!.embedDocuments(batch.map(([, text]) => text));
      throwIfAborted(options.signal);
      dimension = checkEmbedderVectors(vectors, batch.length, 'embedDocuments', dimension);
      batch.forEach(([key], index) => vectorsByKey.set(key, Float32Array.from(vectors[index] ?? [])));
      report();
    }
    const rows: NewRow[] = staged.map((entry) => ({
      record: entry.record,
      sparse: entry.sparse,
      dense: entry.dense ?? (this.#embeddings ? (vectorsByKey.get(entry.key) ?? null) : null),
      aclClass: this.#classes.classOf(entry.record.acl),
    }));

    // Commit in one step: readers see the old version or the new one, never a mix.
    this.#commit(base, { added: rows, removed, emptySources, dimension });
    return { added, unchanged, removed: removedCount };
  }

  #commit(base: Snapshot, changes: SnapshotChanges): void {
    if (this.#snapshot !== base) {
      // Cannot happen while writes are queued; a mistake here would silently lose a write.
      throw new LitmPackError('io_error', 'MemoryHybridStore: a write was planned on a version that is no longer current');
    }
    if (
      changes.added.length === 0 &&
      changes.removed.length === 0 &&
      (changes.emptySources?.size ?? 0) === 0 &&
      changes.dimension === base.dimension
    ) {
      return;
    }
    this.#snapshot = base.apply(changes);
  }

  /**
   * Searches like one Qdrant `points/query`: the filter and the principals' ACL restrict the candidates
   * before anything is ranked; hybrid runs a dense and a lexical prefetch of `prefetchLimit` each and fuses
   * them. Results are sorted by score desc, then id; `similarity` is the cosine with the stored (Float32)
   * vector whenever dense ran. The search reads the store as it was when it started.
   */
  async search(request: SearchRequest): Promise<Candidate[]> {
    const snapshot = this.#snapshot;
    const { fused, queryVector, slots } = await this.#rank(snapshot, request);
    return fused.map(({ id, score }) => {
      const slot = slots.get(id)!;
      return chunkToCandidate(snapshot.recordView(slot), score, queryVector ? snapshot.cosineOf(slot, queryVector) : undefined);
    });
  }

  /**
   * The same search as `search`, reported arm by arm: each arm's raw top `limit` (dense: cosine; lexical:
   * BM25 score; `null` when the arm did not run) beside the fused ranking `search` returns.
   */
  async rankings(request: SearchRequest): Promise<Rankings> {
    const snapshot = this.#snapshot;
    const ranked = await this.#rank(snapshot, request);
    const sourceIdOf = (id: string) => snapshot.sourceId(ranked.slots.get(id)!);
    return {
      mode: ranked.mode,
      dense: ranked.dense === null ? null : toRankedChunks(ranked.dense, ranked.limit, sourceIdOf),
      lexical: ranked.lexical === null ? null : toRankedChunks(ranked.lexical, ranked.limit, sourceIdOf),
      fused: toRankedChunks(ranked.fused, ranked.limit, sourceIdOf),
    };
  }

  async #rank(snapshot: Snapshot, request: SearchRequest): Promise<RankedArms> {
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
      this.#checkEmbeddingModel(snapshot);
      const vector = await this.#embeddings!.embedQuery(req.text);
      throwIfAborted(req.signal);
      checkEmbedderVectors([vector], 1, 'embedQuery', snapshot.dimension);
      queryVector = toDenseQuery(vector);
    }

    // The principals become one visibility bit per ACL class; the ACL is applied inside each arm, before a
    // chunk can be ranked, and the lexical arm never reads the postings of classes the caller may not read.
    const visible = this.#classes.visibility(req.principals);
    const filter = snapshot.slotFilter(userFilter, visible);
    const plainArmLimit = mode === 'hybrid' ? hybridPrefetchLimit(req.limit, this.#prefetchLimit) : req.limit;
    const pool = diversity > 0 ? diversityCandidates(req.limit, this.#prefetchLimit) : req.limit;
    const armLimit = Math.max(plainArmLimit, mode === 'hybrid' ? 0 : pool);
    const slots = new Map<string, number>();

    const denseArm = queryVector && mode !== 'lexical' ? snapshot.denseTopK(queryVector, armLimit, filter) : null;

    let lexicalArm: ScoredId[] | null = null;
    if (mode !== 'dense') {
      const query = encodeBm25Query(req.text);
      const idf = this.#idfFunction(snapshot, visible);
      lexicalArm = snapshot.lexicalTopK(query, idf, armLimit, filter, visible);
    }
    for (const arm of [denseArm, lexicalArm] as ((ScoredId & { slot?: number })[] | null)[]) {
      for (const item of arm ?? []) slots.set(item.id, item.slot!);
    }
    const plain = (list: ScoredId[] | null) => (list === null ? null : list.map(({ id, score }) => ({ id, score })));

    let ranked: ScoredId[];
    if (mode === 'hybrid') {
      // Arm order is prefetch order: dense first, lexical second (it fixes which weight applies where).
      const arms = [plain(denseArm) ?? [], plain(lexicalArm) ?? []];
      ranked =
        fusion.method === 'rrf'
          ? fuseRrf(arms, {
              ...(fusion.k === undefined ? {} : { k: fusion.k }),
              ...(fusion.weights ? { weights: [fusion.weights.dense, fusion.weights.lexical] } : {}),
            })
          : fuseDbsf(arms);
    } else {
      ranked = plain(mode === 'dense' ? denseArm : lexicalArm) ?? [];
    }
    const fused =
      diversity > 0
        ? this.#diverse(snapshot, ranked.slice(0, pool), slots, queryVector!, diversity, req.limit)
        : ranked.slice(0, req.limit);
    const arm = (list: ScoredId[] | null) => (list === null ? null : plain(list)!.slice(0, plainArmLimit));
    return { mode, limit: req.limit, dense: arm(denseArm), lexical: arm(lexicalArm), fused, queryVector, slots };
  }

  /**
   * Qdrant's MMR over a pool (see `maximalMarginalRelevance`): relevance and pairwise similarity are cosines
   * of the stored vectors; candidates without a vector are left out, as Qdrant leaves them out. The picked
   * ones keep the mode's score and come back in score order.
   */
  #diverse(
    snapshot: Snapshot,
    pool: ScoredId[],
    slots: ReadonlyMap<string, number>,
    query: DenseQuery,
    diversity: number,
    limit: number,
  ): ScoredId[] {
    const withVectors = pool
      .map((scored) => ({ scored, vector: snapshot.dense(slots.get(scored.id)!) }))
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
   * copies of the stored records. A source or chunk the principals may not read costs what a missing one
   * costs: its ACL class is checked before any record is read.
   */
  // eslint-disable-next-line @typescript-eslint/require-await -- async so a bad request rejects, as the Store contract's callers expect, instead of throwing
  async getChunks(request: GetChunksRequest): Promise<ChunkRecord[]> {
    const snapshot = this.#snapshot;
    const req = parseGetChunksRequest(request);
    const userFilter = req.filter === undefined ? undefined : (validateFilter(req.filter) as EngineFilter);
    throwIfAborted(req.signal);
    const visible = this.#classes.visibility(req.principals);
    // Start from the narrowest index the request allows; a filter alone reads every chunk (in memory).
    let pool: number[];
    if (req.ids !== undefined) {
      pool = [];
      for (const id of new Set(req.ids)) {
        const slot = snapshot.findLive(id, visible);
        if (slot >= 0) pool.push(slot);
      }
    } else if (req.sourceIds !== undefined) {
      pool = [...new Set(req.sourceIds)].flatMap((sourceId) => snapshot.sourceSlots(sourceId, visible));
    } else {
      pool = snapshot.liveSlots(visible);
    }
    const sources = req.sourceIds === undefined ? undefined : new Set(req.sourceIds);
    // Filtered and ordered on records without their text; only the chunks returned get theirs.
    const filterNeedsText = req.filter !== undefined && /"key"\s*:\s*"(?:text|textSha256)\b/.test(JSON.stringify(req.filter));
    const slotOf = new Map<ChunkRecord, number>();
    for (const slot of pool) {
      const record = snapshot.record(slot, false);
      if (sources !== undefined && !sources.has(record.sourceId)) continue;
      if (userFilter !== undefined && !matchesFilter(userFilter, filterNeedsText ? snapshot.record(slot) : record)) continue;
      slotOf.set(record, slot);
    }
    return orderChunks([...slotOf.keys()], req.sourceIds, req.limit).map((record) => snapshot.record(slotOf.get(record)!));
  }

  /**
   * Removes every chunk of these sources (queued behind ingests in progress, like `addDocuments`).
   * Returns how many of the sources existed and how many chunks went with them.
   */
  deleteSources(sourceIds: string[], options: { signal?: AbortSignal } = {}): Promise<DeleteSourcesResult> {
    return this.#queued(() => {
      const parsed = parseDeleteSources(sourceIds, options);
      throwIfAborted(parsed.signal);
      const base = this.#snapshot;
      let sources = 0;
      const removed: number[] = [];
      const emptySources = new Map<string, null>();
      for (const sourceId of parsed.sourceIds) {
        const slots = base.sourceSlots(sourceId);
        const empty = base.isEmptySource(sourceId);
        if (slots.length === 0 && !empty) continue;
        sources += 1;
        removed.push(...slots);
        if (empty) emptySources.set(sourceId, null);
      }
      this.#commit(base, { added: [], removed, emptySources, dimension: base.dimension });
      return { sources, chunks: removed.length };
    });
  }

  /**
   * Indexes every chunk again with the current recipe (`title-headings@1`): a new BM25 vector for each, and a new
   * embedding for each chunk that had one (which needs the embeddings of the model that made them). Chunk records,
   * texts, ids and `indexedAt` stay as they are. Queued behind writes in progress; nothing changes if it fails.
   *
   * @example
   * await MemoryHybridStore.update('.litm-store/store.json', (store) => store.reindex(), { embeddings });
   */
  reindex(options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {}): Promise<{ chunks: number }> {
    return this.#queued(async () => {
      const { signal, onProgress } = options;
      throwIfAborted(signal);
      const base = this.#snapshot;
      const recipe = CURRENT_INDEXED_TEXT;
      const slots = base.liveSlots();
      const withVector = slots.filter((slot) => base.dense(slot) !== null).length;
      if (withVector > 0) {
        if (this.#embeddings === undefined) {
          const model = this.#embeddingOf(base)?.model;
          throw new LitmPackError(
            'invalid_input',
            `reindex embeds the ${withVector} chunks that have vectors again: construct the store with the embeddings that made them${model ? ` ("${model}")` : ''}`,
            { details: { requires: 'embeddings' } },
          );
        }
        this.#checkEmbeddingModel(base);
      }
      const rows: NewRow[] = [];
      const toEmbed = new Map<string, string>();
      const keys: (string | null)[] = [];
      for (const slot of slots) {
        const record = base.record(slot);
        const indexed = indexedTextOf(record, recipe);
        const key = indexed === record.text ? record.textSha256 : sha256Hex(indexed);
        const hasVector = base.dense(slot) !== null;
        if (hasVector) toEmbed.set(key, indexed);
        keys.push(hasVector ? key : null);
        rows.push({ record, sparse: encodeBm25Document(indexed), dense: null, aclClass: this.#classes.classOf(record.acl) });
      }
      const vectors = new Map<string, Float32Array>();
      const pending = [...toEmbed];
      let dimension = base.dimension;
      for (let start = 0; start < pending.length; start += this.#embedBatchSize) {
        throwIfAborted(signal);
        const batch = pending.slice(start, start + this.#embedBatchSize);
        const embedded = await (this.#embeddings as EmbeddingsLike).embedDocuments(batch.map(([, text]) => text));
        throwIfAborted(signal);
        dimension = checkEmbedderVectors(embedded, batch.length, 'embedDocuments', dimension);
        batch.forEach(([key], index) => vectors.set(key, Float32Array.from(embedded[index] ?? [])));
        onProgress?.(Math.min(pending.length, start + batch.length), pending.length);
      }
      const reindexed = rows.map((row, i) => {
        const key = keys[i];
        return key === null || key === undefined ? row : { ...row, dense: vectors.get(key) ?? null };
      });
      this.#commit(base, { added: reindexed, removed: slots, dimension });
      this.#indexedText = recipe;
      return { chunks: slots.length };
    });
  }

  /** IDF per query term over the configured corpus (see `idfCorpus`). */
  #idfFunction(snapshot: Snapshot, visible: Uint8Array | null): (index: number) => number {
    const corpus = this.#idfCorpus === 'visible' ? visible : null;
    const documentCount = snapshot.liveCount(corpus);
    const cache = new Map<number, number>();
    return (index) => {
      let idf = cache.get(index);
      if (idf === undefined) {
        idf = bm25Idf(documentCount, snapshot.documentFrequency(index, corpus));
        cache.set(index, idf);
      }
      return idf;
    };
  }

  // -------------------------------------------------------------------------------------------
  // Persistence

  /**
   * Writes the store to `path` (a file; missing folders are created) as `litm-pack/memory-store@3`, atomically: a
   * failure at any point leaves the previous file as it was. It writes the version current when it is called. When
   * the file at `path` already holds most of the store (it was loaded from there, or saved there before), only what
   * changed is appended to a copy of it (see file.ts).
   */
  async save(path: string): Promise<void> {
    await writeStoreFile(path, this.#contents(this.#snapshot));
  }

  /**
   * Reads a store written by `save` (or by earlier versions: `@2`, `@1`). Throws `not_found` when the file is missing
   * or unreadable (or the path is a folder: the message names the file to pass) and `corrupt` when it is not a whole
   * store file of a known version. `options` configure the loaded store as for the constructor (the saved
   * `chunkTokens` is used unless given). With `reuse`, a store loaded from the same file before, segments it already
   * holds are taken from it instead of read again (what a served store does when the file changes).
   */
  static async load(path: string, options: MemoryHybridStoreOptions = {}, reuse?: MemoryHybridStore): Promise<MemoryHybridStore> {
    const held = new Map<string, Segment>();
    for (const { segment } of reuse === undefined ? [] : reuse.#snapshot.parts())
      if (segment.contentId !== undefined) held.set(segment.contentId, segment);
    const reusable = reuse === undefined ? undefined : { classes: reuse.#classes, segments: held };
    const loaded = await readStoreFile(path, reusable === undefined ? {} : { reuse: reusable });
    const { header } = loaded;
    if (options.indexedText !== undefined && options.indexedText !== header.indexedText) {
      throw new LitmPackError(
        'config_mismatch',
        `The store file ${path} was indexed with the recipe "${header.indexedText}", not "${options.indexedText}": load it without indexedText, then reindex() it to move it to the current recipe`,
        { details: { path, indexedText: header.indexedText, requested: options.indexedText } },
      );
    }
    const store = new MemoryHybridStore({ chunkTokens: header.chunkTokens, ...options, indexedText: header.indexedText });
    store.#classes = loaded.classes;
    store.#snapshot = Snapshot.ofParts(loaded.classes, loaded.parts, loaded.emptySources, header.dimension);
    store.#vectorModel = header.dimension === null ? undefined : header.embeddingModel;
    store.#loadedSegments = { segments: loaded.parts.length, read: loaded.segmentsRead };
    return store;
  }

  /** For a store made by `load`: how many segments its file holds, and how many were read (the rest were reused). */
  get loadedSegments(): { segments: number; read: number } | undefined {
    return this.#loadedSegments;
  }

  #loadedSegments: { segments: number; read: number } | undefined;

  /**
   * Changes the store file at `path` safely while other processes may write it too: takes the file's lock
   * (`withStoreLock`: a second writer waits up to `waitMs`, then gets `StoreLockedError` naming the holder),
   * loads the file, runs `change(store)`, saves if anything changed (atomically: readers see the old file or the
   * new one), and releases the lock. With `create: true` a missing file starts an empty store, saved even when
   * `change` adds nothing. Returns what `change` returns; if it throws, nothing is saved.
   *
   * @example
   * await MemoryHybridStore.update('.litm-store/store.json', (store) => store.addDocuments(docs), { create: true, waitMs: 30_000 });
   * await MemoryHybridStore.update('.litm-store/store.json', (store) => store.deleteSources(['old.md']));
   */
  static async update<T>(
    path: string,
    change: (store: MemoryHybridStore) => Promise<T> | T,
    options: MemoryStoreUpdateOptions = {},
  ): Promise<T> {
    const { waitMs, signal, create, ...storeOptions } = options;
    return withStoreLock(
      path,
      async () => {
        const exists =
          create !== true ||
          (await stat(path).then(
            () => true,
            (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
          ));
        const store = exists ? await MemoryHybridStore.load(path, storeOptions) : new MemoryHybridStore(storeOptions);
        const loaded = store.#snapshot;
        const recipe = store.#indexedText;
        const result = await change(store);
        // Writes `change` started without waiting for them belong to this update too.
        await store.#writes;
        if (!exists || store.#snapshot !== loaded || store.#indexedText !== recipe) await store.save(path);
        return result;
      },
      { ...(waitMs === undefined ? {} : { waitMs }), ...(signal === undefined ? {} : { signal }) },
    );
  }

  #contents(snapshot: Snapshot): StoreContents {
    return {
      header: {
        chunkTokens: this.#chunkTokens,
        dimension: snapshot.dimension,
        embeddingModel: this.#embeddingOf(snapshot)?.model ?? null,
        indexedText: this.#indexedText,
        sources: snapshot.sources().length,
        chunks: snapshot.size,
      },
      classes: this.#classes,
      parts: snapshot.parts(),
      emptySources: snapshot.emptySources(),
    };
  }
}

function sameRecord(a: ChunkRecord, b: ChunkRecord): boolean {
  return canonicalStringify(a) === canonicalStringify(b);
}
