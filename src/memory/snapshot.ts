/**
 * One version of the embedded store's contents: immutable segments (segment.ts), each with the rows
 * that are dead in this version. A write builds the next snapshot (new rows in a new segment, removed ones
 * marked dead in copies of the affected parts' marks) and the store swaps it in at once; a reader takes the
 * current snapshot when it starts and reads that one to the end, whatever writes complete meanwhile.
 *
 * Rows are numbered by slot across the snapshot: the rows of part 0 first, then part 1's, and so on.
 */
import { matchesFilter, type EngineFilter } from '../store/filter.js';
import type { ScoredId } from '../store/fusion.js';
import type { AclClasses } from './acl-classes.js';
import { LargestK, TopK, cosineFromDot, denseCosine, quantizeQuery, type DenseQuery, type DenseVector } from './vectors.js';
import { Segment, type NewRow } from './segment.js';
import type { ChunkRecord } from '../store/schemas.js';
import type { SparseVector } from '../tokenize/bm25.js';

const f32 = Math.fround;

/** Segments are merged up to this many rows; bigger ones are only rewritten when most of their rows are dead. */
export const SEGMENT_ROWS = 65_536;

/** A predicate over slots, evaluated at most once per slot per query. */
export type SlotFilter = (slot: number) => boolean;

interface Part {
  readonly segment: Segment;
  /** 1 for rows removed in this version (null: none). */
  readonly dead: Uint8Array | null;
  readonly live: number;
  /** Slot of the segment's row 0. */
  readonly base: number;
}

type Unplaced = Omit<Part, 'base'>;

export interface SnapshotChanges {
  /** New rows, in order. */
  readonly added: readonly NewRow[];
  /** Slots (of the snapshot the change is applied to) that are removed or replaced. */
  readonly removed: readonly number[];
  /** Sources without chunks (an empty document) by id with their version; null removes the entry. */
  readonly emptySources?: ReadonlyMap<string, { version?: string } | null>;
  readonly dimension: number | null;
}

export interface SourceSummary {
  sourceId: string;
  version?: string;
  chunks: number;
}

/** The top-level payload keys a filter names (`metadata.lang` → `metadata`), to know what a record needs. */
function filterHeads(filter: EngineFilter, into = new Set<string>()): Set<string> {
  for (const clause of [filter.must, filter.should, filter.must_not]) {
    if (clause === undefined || clause === null) continue;
    for (const condition of Array.isArray(clause) ? clause : [clause]) {
      if ('key' in condition) into.add(/^"([^"]*)"/.exec(condition.key)?.[1] ?? condition.key.split(/[.[]/, 1)[0]!);
      else if ('is_empty' in condition) into.add(condition.is_empty.key.split(/[.[]/, 1)[0]!);
      else filterHeads(condition, into);
    }
  }
  return into;
}

export class Snapshot {
  readonly classes: AclClasses;
  readonly dimension: number | null;
  /** Live chunks. */
  readonly size: number;
  /** Slots, dead ones included. */
  readonly slots: number;
  readonly #parts: readonly Part[];
  readonly #bases: Int32Array;
  readonly #classLive: ReadonlyMap<number, number>;
  readonly #emptySources: ReadonlyMap<string, { version?: string }>;
  /**
   * Scratch arrays of the lexical arm: per-slot scores and marks, and the slots touched (in order), reused by the
   * next query (queries run one at a time: they are synchronous).
   */
  #scratch: { scores: Float64Array; seen: Uint8Array; touched: Int32Array } | null = null;

  private constructor(
    classes: AclClasses,
    parts: readonly Unplaced[],
    classLive: ReadonlyMap<number, number>,
    emptySources: ReadonlyMap<string, { version?: string }>,
    dimension: number | null,
  ) {
    this.classes = classes;
    let base = 0;
    const placed: Part[] = [];
    let live = 0;
    for (const part of parts) {
      placed.push({ ...part, base });
      base += part.segment.size;
      live += part.live;
    }
    this.#parts = placed;
    this.#bases = Int32Array.from(placed, (part) => part.base);
    this.slots = base;
    this.size = live;
    this.#classLive = classLive;
    this.#emptySources = emptySources;
    this.dimension = dimension;
  }

  static empty(classes: AclClasses): Snapshot {
    return new Snapshot(classes, [], new Map(), new Map(), null);
  }

  /** A snapshot of segments read from a store file, with the rows that are dead in it (null: none). */
  static ofParts(
    classes: AclClasses,
    parts: readonly { segment: Segment; dead: Uint8Array | null }[],
    emptySources: ReadonlyMap<string, { version?: string }>,
    dimension: number | null,
  ): Snapshot {
    const classLive = new Map<number, number>();
    const placed: Unplaced[] = [];
    for (const { segment, dead } of parts) {
      let live = segment.size;
      for (const [aclClass, count] of segment.classCounts) classLive.set(aclClass, (classLive.get(aclClass) ?? 0) + count);
      if (dead !== null) {
        for (let row = 0; row < segment.size; row += 1) {
          if (dead[row] !== 1) continue;
          live -= 1;
          const aclClass = segment.aclClassOf[row] ?? 0;
          classLive.set(aclClass, (classLive.get(aclClass) ?? 0) - 1);
        }
      }
      placed.push({ segment, dead, live });
    }
    for (const [aclClass, count] of classLive) if (count === 0) classLive.delete(aclClass);
    return new Snapshot(classes, placed, classLive, new Map(emptySources), dimension);
  }

  // -------------------------------------------------------------------------------------------
  // Writing: the next version

  /**
   * This snapshot with `changes` applied, as a new snapshot (this one stays as it is): removed rows are
   * marked dead in copies of their parts' marks, added rows form a new segment, then small segments are
   * merged and mostly dead ones rewritten.
   */
  apply(changes: SnapshotChanges): Snapshot {
    const dead = new Map<number, Uint8Array>();
    const classLive = new Map(this.#classLive);
    for (const slot of new Set(changes.removed)) {
      const index = this.#partIndex(slot);
      const part = this.#parts[index]!;
      const row = slot - part.base;
      if (part.dead?.[row] === 1) continue;
      let marks = dead.get(index);
      if (marks === undefined) {
        marks = part.dead === null ? new Uint8Array(part.segment.size) : part.dead.slice();
        dead.set(index, marks);
      }
      if (marks[row] === 1) continue;
      marks[row] = 1;
      const aclClass = part.segment.aclClassOf[row]!;
      classLive.set(aclClass, classLive.get(aclClass)! - 1);
    }
    const parts: Unplaced[] = this.#parts.map((part, index) => {
      const marks = dead.get(index);
      if (marks === undefined) return part;
      let live = 0;
      for (let row = 0; row < marks.length; row += 1) if (marks[row] === 0) live += 1;
      return { segment: part.segment, dead: marks, live };
    });
    if (changes.added.length > 0) {
      for (const row of changes.added) classLive.set(row.aclClass, (classLive.get(row.aclClass) ?? 0) + 1);
      for (let start = 0; start < changes.added.length; start += SEGMENT_ROWS) {
        const segment = Segment.fromRows(this.classes, changes.added.slice(start, start + SEGMENT_ROWS));
        parts.push({ segment, dead: null, live: segment.size });
      }
    }
    let emptySources = this.#emptySources;
    if (changes.emptySources !== undefined && changes.emptySources.size > 0) {
      const next = new Map(this.#emptySources);
      for (const [sourceId, entry] of changes.emptySources) {
        if (entry === null) next.delete(sourceId);
        else next.set(sourceId, entry);
      }
      emptySources = next;
    }
    for (const [aclClass, count] of classLive) if (count === 0) classLive.delete(aclClass);
    return new Snapshot(this.classes, compactParts(this.classes, parts), classLive, emptySources, changes.dimension);
  }

  // -------------------------------------------------------------------------------------------
  // Rows

  #partIndex(slot: number): number {
    const bases = this.#bases;
    let lo = 0;
    let hi = bases.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (bases[mid]! <= slot) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  #locate(slot: number): [Segment, number] {
    const part = this.#parts[this.#partIndex(slot)]!;
    return [part.segment, slot - part.base];
  }

  id(slot: number): string {
    const [segment, row] = this.#locate(slot);
    return segment.id(row);
  }

  sourceId(slot: number): string {
    const [segment, row] = this.#locate(slot);
    return segment.sourceId(row);
  }

  /** The chunk's record, rebuilt (the caller owns it). */
  record(slot: number, withText = true): ChunkRecord {
    const [segment, row] = this.#locate(slot);
    return segment.record(row, withText);
  }

  /** The chunk's record without copies (see `Segment.recordView`): for `chunkToCandidate`, which copies. */
  recordView(slot: number): ChunkRecord {
    const [segment, row] = this.#locate(slot);
    return segment.recordView(row);
  }

  textSha256(slot: number): string {
    const [segment, row] = this.#locate(slot);
    return segment.textSha256(row);
  }

  /** The stored vector (a view into the store's memory: read, never change). */
  dense(slot: number): DenseVector | null {
    const [segment, row] = this.#locate(slot);
    return segment.dense(row);
  }

  /**
   * The live slot of a chunk id among the classes `visible` marks (all when null), or -1. Only the visible
   * classes' ids are looked up: a restricted id misses exactly as a missing one does.
   */
  findLive(id: string, visible: Uint8Array | null = null): number {
    for (let index = this.#parts.length - 1; index >= 0; index -= 1) {
      const part = this.#parts[index]!;
      for (const aclClass of this.#classesToRead(part.segment, visible)) {
        const row = part.segment.rowOf(aclClass, id);
        if (row !== undefined && part.dead?.[row] !== 1) return part.base + row;
      }
    }
    return -1;
  }

  /**
   * Live slots of a source among the classes `visible` marks (all when null), by segment then row. Only the
   * visible classes are looked up: a source the caller may not read misses exactly as a missing one does.
   */
  sourceSlots(sourceId: string, visible: Uint8Array | null = null): number[] {
    const slots: number[] = [];
    for (const part of this.#parts) {
      const { dead, base } = part;
      for (const aclClass of this.#classesToRead(part.segment, visible)) {
        part.segment.forEachRowOfSource(aclClass, sourceId, (row) => {
          if (dead === null || dead[row] === 0) slots.push(base + row);
        });
      }
    }
    return slots;
  }

  /** Every live slot whose class `visible` marks (all when null), in slot order. */
  liveSlots(visible: Uint8Array | null = null): number[] {
    const slots: number[] = [];
    for (const part of this.#parts) {
      const classOf = part.segment.aclClassOf;
      for (let row = 0; row < part.segment.size; row += 1) {
        if (part.dead?.[row] === 1) continue;
        if (visible !== null && visible[classOf[row]!] !== 1) continue;
        slots.push(part.base + row);
      }
    }
    return slots;
  }

  isEmptySource(sourceId: string): boolean {
    return this.#emptySources.has(sourceId);
  }

  /** The newest `indexedAt` of the live chunks (ms since the epoch), NaN when there are none. */
  newestIndexedAt(): number {
    let newest = Number.NaN;
    for (const { segment, dead } of this.#parts) {
      const at = segment.newestIndexedAt(dead);
      if (!Number.isNaN(at) && !(at <= newest)) newest = at;
    }
    return newest;
  }

  /** Sources by id (code-unit order) with their version and number of chunks. */
  sources(): SourceSummary[] {
    const found = new Map<string, SourceSummary>();
    for (const part of this.#parts) {
      const { segment, dead } = part;
      for (const aclClass of segment.aclClasses()) {
        for (const sourceId of segment.sourceIds(aclClass)) {
          let live = 0;
          let version: string | undefined;
          segment.forEachRowOfSource(aclClass, sourceId, (row) => {
            if (dead !== null && dead[row] === 1) return;
            live += 1;
            version = segment.version(row);
          });
          if (live === 0) continue;
          const summary = found.get(sourceId);
          if (summary === undefined) found.set(sourceId, { sourceId, ...(version === undefined ? {} : { version }), chunks: live });
          else summary.chunks += live;
        }
      }
    }
    for (const [sourceId, entry] of this.#emptySources) {
      found.set(sourceId, { sourceId, ...(entry.version === undefined ? {} : { version: entry.version }), chunks: 0 });
    }
    return [...found.values()].sort((a, b) => (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0));
  }

  /** Sources without chunks, with their versions. */
  emptySources(): ReadonlyMap<string, { version?: string }> {
    return this.#emptySources;
  }

  /** The parts in slot order (for saving): each segment and its dead rows. */
  parts(): readonly { segment: Segment; dead: Uint8Array | null; base: number }[] {
    return this.#parts;
  }

  // -------------------------------------------------------------------------------------------
  // Search

  /**
   * A per-query predicate over slots: the class is visible (`visible`, null: no ACL) and the record matches
   * `filter` (when given; the record is rebuilt without its text unless the filter names it). Undefined when
   * neither applies. Verdicts are cached per slot.
   */
  slotFilter(filter: EngineFilter | undefined, visible: Uint8Array | null): SlotFilter | undefined {
    if (filter === undefined && visible === null) return undefined;
    const heads = filter === undefined ? null : filterHeads(filter);
    const withText = heads !== null && (heads.has('text') || heads.has('textSha256'));
    const verdicts = new Int8Array(this.slots); // 0 unknown, 1 yes, 2 no
    return (slot) => {
      const known = verdicts[slot]!;
      if (known !== 0) return known === 1;
      const [segment, row] = this.#locate(slot);
      const ok =
        (visible === null || visible[segment.aclClassOf[row]!] === 1) &&
        (filter === undefined || matchesFilter(filter, segment.record(row, withText)));
      verdicts[slot] = ok ? 1 : 2;
      return ok;
    };
  }

  /** Live chunks of the classes `visible` marks (all when null). */
  liveCount(visible: Uint8Array | null): number {
    if (visible === null) return this.size;
    let count = 0;
    for (const [aclClass, live] of this.#classLive) if (visible[aclClass] === 1) count += live;
    return count;
  }

  /** Live chunks holding `term` among the classes `visible` marks (all when null); only those lists are read. */
  documentFrequency(term: number, visible: Uint8Array | null): number {
    let count = 0;
    for (const part of this.#parts) {
      for (const aclClass of this.#classesToRead(part.segment, visible)) {
        const list = part.segment.postings(aclClass, term);
        if (list === undefined) continue;
        const dead = part.dead;
        if (dead === null) {
          count += list.end - list.start;
          continue;
        }
        for (let p = list.start; p < list.end; p += 1) if (dead[list.rows[p]!] === 0) count += 1;
      }
    }
    return count;
  }

  /**
   * The classes whose rows a query reads in a segment: all, or the visible ones, found from whichever list is
   * shorter. Either way the cost depends on the caller's classes and the segment, never on the query.
   */
  #classesToRead(segment: Segment, visible: Uint8Array | null): Iterable<number> {
    if (visible === null) return segment.aclClasses();
    const out: number[] = [];
    if (segment.classCount <= visible.length) {
      for (const aclClass of segment.aclClasses()) if (visible[aclClass] === 1) out.push(aclClass);
    } else {
      for (let aclClass = 0; aclClass < visible.length; aclClass += 1) if (visible[aclClass] === 1) out.push(aclClass);
    }
    return out;
  }

  /**
   * Best `limit` chunks by cosine with `query` (chunks without a vector are skipped), best first: exactly the
   * ranking of an exact scan, ties by id.
   *
   * Where WebAssembly SIMD runs, a first pass scores every row with its int8 copy (a quarter of the memory of the
   * f32 rows to read) and bounds the error of that score: with the query's and the row's int8 approximations and
   * what each leaves out, |exact − approximate| ≤ ‖q̂‖·‖e_v‖ + ‖e_q‖·‖v‖ (Cauchy–Schwarz). The `limit` best
   * lower bounds among rows that pass the filter give a threshold no row of the exact top `limit` can be below,
   * so only rows whose upper bound reaches it are rescored with their f32 vectors, exactly as the scan scores.
   */
  denseTopK(query: DenseQuery, limit: number, filter: SlotFilter | undefined): (ScoredId & { slot: number })[] {
    const blocks = this.#parts.filter((part) => part.segment.vectors !== null);
    if (blocks.length === 0) return [];
    if (
      query.norm === 0 ||
      blocks.some((part) => !part.segment.vectors!.scans || part.segment.vectors!.dimension !== query.values.length)
    ) {
      return this.#exactDenseTopK(query, limit, filter);
    }
    const int8 = quantizeQuery(query, blocks[0]!.segment.vectors!.stride);
    const lower = new LargestK(limit);
    // Candidates per part: slots and upper bounds, in scan order.
    const candidates: { part: Part; rows: number[]; upper: number[] }[] = [];
    // Slack for the rounding of the float arithmetic on both sides of the comparison (orders above it).
    const relative = 1 + 1e-9;
    for (const part of blocks) {
      const block = part.segment.vectors!;
      block.setQuery(query, int8);
      const dots = block.scan();
      const { norms, scales, errors } = block;
      const dead = part.dead;
      const rows: number[] = [];
      const upper: number[] = [];
      const qScale = int8.scale;
      const qNorm = query.norm;
      const qApprox = int8.approxNorm;
      const qError = int8.error;
      for (let row = 0; row < dots.length; row += 1) {
        const norm = norms[row]!;
        if (!(norm >= 0) || (dead !== null && dead[row] === 1)) continue;
        let high: number;
        let low: number;
        if (norm === 0) {
          // A zero vector scores exactly 0.
          high = 0;
          low = 0;
        } else {
          const scale = 1 / (qNorm * norm);
          const approximate = qScale * scales[row]! * dots[row]! * scale;
          const bound = (qApprox * errors[row]! + qError * norm) * scale * relative + 1e-12;
          high = approximate + bound;
          low = approximate - bound;
        }
        if (lower.full && high < lower.min) continue;
        rows.push(row);
        upper.push(high);
        if ((!lower.full || low > lower.min) && (filter === undefined || filter(part.base + row))) lower.push(low);
      }
      candidates.push({ part, rows, upper });
    }
    // Scores clamp to 1: rows whose bound reaches 1 may tie at 1 and are ordered by id, so they all stay in.
    const threshold = lower.full ? Math.min(lower.min, 1 - 1e-6) : Number.NEGATIVE_INFINITY;
    const heap = new TopK(limit, this.size, (slot) => this.id(slot));
    for (const { part, rows, upper } of candidates) {
      const block = part.segment.vectors!;
      block.setQuery(query, null);
      for (let i = 0; i < rows.length; i += 1) {
        if (upper[i]! < threshold) continue;
        const row = rows[i]!;
        const slot = part.base + row;
        if (filter !== undefined && !filter(slot)) continue;
        const score = cosineFromDot(block.exactDot(row), query.norm, block.norms[row]!);
        if (heap.admits(score, slot)) heap.push(score, slot);
      }
    }
    return heap.sorted();
  }

  /** The exact scan: every row's f32 vector scored (where the int8 pass cannot run). */
  #exactDenseTopK(query: DenseQuery, limit: number, filter: SlotFilter | undefined): (ScoredId & { slot: number })[] {
    const heap = new TopK(limit, this.size, (slot) => this.id(slot));
    for (const part of this.#parts) {
      const block = part.segment.vectors;
      if (block === null) continue;
      const dead = part.dead;
      const sameDimension = block.dimension === query.values.length;
      if (sameDimension) block.setQuery(query, null);
      for (let row = 0; row < block.rows; row += 1) {
        const norm = block.norms[row]!;
        if (!(norm >= 0) || (dead !== null && dead[row] === 1)) continue;
        const score = sameDimension ? cosineFromDot(block.exactDot(row), query.norm, norm) : denseCosine(query, block.vector(row)!);
        const slot = part.base + row;
        // The filter runs only for chunks that would enter the top k, which is the same set of results.
        if (heap.admits(score, slot) && (filter === undefined || filter(slot))) heap.push(score, slot);
      }
    }
    return heap.sorted();
  }

  /**
   * Best `limit` chunks that share a term with `query`, scored as `bm25Score` (query terms in ascending index
   * order, f32 at every step), best first. Only the postings of the classes `visible` marks are read.
   */
  lexicalTopK(
    query: SparseVector,
    idf: (index: number) => number,
    limit: number,
    filter: SlotFilter | undefined,
    visible: Uint8Array | null,
  ): (ScoredId & { slot: number })[] {
    if (this.#scratch === null || this.#scratch.scores.length < this.slots) {
      this.#scratch = { scores: new Float64Array(this.slots), seen: new Uint8Array(this.slots), touched: new Int32Array(this.slots) };
    }
    const { scores, seen, touched } = this.#scratch;
    let touchedCount = 0;
    const classes = this.#parts.map((part) => [...this.#classesToRead(part.segment, visible)]);
    for (let t = 0; t < query.indices.length; t += 1) {
      const term = query.indices[t]!;
      let queryWeight: number | undefined;
      for (let index = 0; index < this.#parts.length; index += 1) {
        const part = this.#parts[index]!;
        const dead = part.dead;
        for (const aclClass of classes[index]!) {
          const list = part.segment.postings(aclClass, term);
          if (list === undefined) continue;
          queryWeight ??= f32(f32(query.values[t]!) * idf(term));
          const { rows, weights, end } = list;
          for (let p = list.start; p < end; p += 1) {
            const row = rows[p]!;
            if (dead !== null && dead[row] === 1) continue;
            const slot = part.base + row;
            if (seen[slot] === 0) {
              seen[slot] = 1;
              touched[touchedCount++] = slot;
            }
            scores[slot] = f32(scores[slot]! + f32(weights[p]! * queryWeight));
          }
        }
      }
    }
    const heap = new TopK(limit, touchedCount, (slot) => this.id(slot));
    try {
      for (let i = 0; i < touchedCount; i += 1) {
        const slot = touched[i]!;
        const score = scores[slot]!;
        if (heap.admits(score, slot) && (filter === undefined || filter(slot))) heap.push(score, slot);
      }
    } finally {
      // Leave the scratch arrays zeroed for the next query.
      for (let i = 0; i < touchedCount; i += 1) {
        const slot = touched[i]!;
        scores[slot] = 0;
        seen[slot] = 0;
      }
    }
    return heap.sorted();
  }

  /** Cosine of `query` with the chunk in `slot`, or undefined when it has no vector. */
  cosineOf(slot: number, query: DenseQuery): number | undefined {
    const dense = this.dense(slot);
    return dense ? denseCosine(query, dense) : undefined;
  }
}

/**
 * Drops parts with no live rows, rewrites parts that are mostly dead, and merges the newest parts while the
 * last is at least half the size of the one before (so segment sizes grow geometrically and each row is
 * copied a logarithmic number of times), up to SEGMENT_ROWS.
 */
function compactParts(classes: AclClasses, input: readonly Unplaced[]): Unplaced[] {
  const parts: Unplaced[] = [];
  for (const part of input) {
    if (part.live === 0) continue;
    if (part.dead !== null && part.live * 2 < part.segment.size) {
      const segment = Segment.merge(classes, [part]);
      parts.push({ segment, dead: null, live: segment.size });
    } else {
      parts.push(part);
    }
    for (;;) {
      const b = parts[parts.length - 1]!;
      const a = parts[parts.length - 2];
      if (a === undefined || a.live + b.live > SEGMENT_ROWS || b.live * 2 < a.live) break;
      const segment = Segment.merge(classes, [a, b]);
      parts.splice(parts.length - 2, 2, { segment, dead: null, live: segment.size });
    }
  }
  return parts;
}
