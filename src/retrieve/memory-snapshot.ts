/**
 * One version of the embedded store's contents: immutable segments (memory-segment.ts), each with the rows
 * that are dead in this version. A write builds the next snapshot (new rows in a new segment, removed ones
 * marked dead in copies of the affected parts' marks) and the store swaps it in at once; a reader takes the
 * current snapshot when it starts and reads that one to the end, whatever writes complete meanwhile.
 *
 * Rows are numbered by slot across the snapshot: the rows of part 0 first, then part 1's, and so on.
 */
import { matchesFilter, type EngineFilter } from './filter.js';
import type { ScoredId } from './fusion.js';
import { AclClasses } from './acl-classes.js';
import { TopK, cosineFromDot, denseCosine, type DenseQuery, type DenseVector } from './memory-index.js';
import { Segment, type StoredRow } from './memory-segment.js';
import type { SparseVector } from './types.js';

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

export interface SnapshotChanges {
  /** New rows, in order. */
  readonly added: readonly StoredRow[];
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

  private constructor(
    classes: AclClasses,
    parts: readonly Omit<Part, 'base'>[],
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

  /** A snapshot of `rows` (e.g. read from a file), in segments of at most SEGMENT_ROWS rows. */
  static of(classes: AclClasses, rows: readonly StoredRow[], emptySources: ReadonlyMap<string, { version?: string }>, dimension: number | null): Snapshot {
    const parts: Omit<Part, 'base'>[] = [];
    for (let start = 0; start < rows.length; start += SEGMENT_ROWS) {
      const segment = new Segment(rows.slice(start, start + SEGMENT_ROWS));
      parts.push({ segment, dead: null, live: segment.size });
    }
    const classLive = new Map<number, number>();
    for (const row of rows) classLive.set(row.aclClass, (classLive.get(row.aclClass) ?? 0) + 1);
    return new Snapshot(classes, parts, classLive, new Map(emptySources), dimension);
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
    const removed = new Set(changes.removed);
    for (const slot of removed) {
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
      const aclClass = part.segment.rows[row]!.aclClass;
      classLive.set(aclClass, classLive.get(aclClass)! - 1);
    }
    let parts: Omit<Part, 'base'>[] = this.#parts.map((part, index) => {
      const marks = dead.get(index);
      if (marks === undefined) return part;
      let live = 0;
      for (let row = 0; row < marks.length; row += 1) if (marks[row] === 0) live += 1;
      return { segment: part.segment, dead: marks, live };
    });
    if (changes.added.length > 0) {
      for (const row of changes.added) classLive.set(row.aclClass, (classLive.get(row.aclClass) ?? 0) + 1);
      for (let start = 0; start < changes.added.length; start += SEGMENT_ROWS) {
        const segment = new Segment(changes.added.slice(start, start + SEGMENT_ROWS));
        parts.push({ segment, dead: null, live: segment.size });
      }
    }
    parts = compactParts(parts);
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
    return new Snapshot(this.classes, parts, classLive, emptySources, changes.dimension);
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

  /** The stored row of a slot (the store's own objects: read, never hand out). */
  row(slot: number): StoredRow {
    const part = this.#parts[this.#partIndex(slot)]!;
    return part.segment.rows[slot - part.base]!;
  }

  id(slot: number): string {
    return this.row(slot).record.id;
  }

  dense(slot: number): DenseVector | null {
    return this.row(slot).dense;
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
      for (const aclClass of this.#classesToRead(part.segment, visible)) {
        const rows = part.segment.rowsOfSource(aclClass, sourceId);
        if (rows === undefined) continue;
        for (let i = 0; i < rows.length; i += 1) {
          const row = rows[i]!;
          if (part.dead?.[row] !== 1) slots.push(part.base + row);
        }
      }
    }
    return slots;
  }

  /** Every live slot whose class `visible` marks (all when null), in slot order. */
  liveSlots(visible: Uint8Array | null = null): number[] {
    const slots: number[] = [];
    for (const part of this.#parts) {
      const rows = part.segment.rows;
      for (let row = 0; row < rows.length; row += 1) {
        if (part.dead?.[row] === 1) continue;
        if (visible !== null && visible[rows[row]!.aclClass] !== 1) continue;
        slots.push(part.base + row);
      }
    }
    return slots;
  }

  /** Whether a source exists: it has live chunks, or was ingested as an empty document. */
  hasSource(sourceId: string): boolean {
    return this.#emptySources.has(sourceId) || this.sourceSlots(sourceId).length > 0;
  }

  isEmptySource(sourceId: string): boolean {
    return this.#emptySources.has(sourceId);
  }

  /** Sources by id (code-unit order) with their version and number of chunks. */
  sources(): SourceSummary[] {
    const found = new Map<string, SourceSummary>();
    for (const part of this.#parts) {
      for (const aclClass of part.segment.classes()) {
        for (const sourceId of part.segment.sourceIds(aclClass)) {
          const rows = part.segment.rowsOfSource(aclClass, sourceId)!;
          let live = 0;
          let version: string | undefined;
          for (let i = 0; i < rows.length; i += 1) {
            if (part.dead?.[rows[i]!] === 1) continue;
            live += 1;
            version = part.segment.rows[rows[i]!]!.record.version;
          }
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

  // -------------------------------------------------------------------------------------------
  // Search

  /**
   * A per-query predicate over slots: the class is visible (`visible`, null: no ACL) and the record matches
   * `filter` (when given). Undefined when neither applies. Verdicts are cached per slot.
   */
  slotFilter(filter: EngineFilter | undefined, visible: Uint8Array | null): SlotFilter | undefined {
    if (filter === undefined && visible === null) return undefined;
    const verdicts = new Int8Array(this.slots); // 0 unknown, 1 yes, 2 no
    return (slot) => {
      const known = verdicts[slot]!;
      if (known !== 0) return known === 1;
      const row = this.row(slot);
      const ok = (visible === null || visible[row.aclClass] === 1) && (filter === undefined || matchesFilter(filter, row.record));
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
   * The classes whose postings a query reads in a segment: all, or the visible ones, found from whichever
   * list is shorter. Either way the cost depends on the caller's classes and the segment, never on the query.
   */
  #classesToRead(segment: Segment, visible: Uint8Array | null): Iterable<number> {
    if (visible === null) return segment.classes();
    const out: number[] = [];
    if (segment.classCount <= visible.length) {
      for (const aclClass of segment.classes()) if (visible[aclClass] === 1) out.push(aclClass);
    } else {
      for (let aclClass = 0; aclClass < visible.length; aclClass += 1) if (visible[aclClass] === 1) out.push(aclClass);
    }
    return out;
  }

  /** Best `limit` chunks by cosine with `query` (chunks without a vector are skipped), best first. */
  denseTopK(query: DenseQuery, limit: number, filter: SlotFilter | undefined): (ScoredId & { slot: number })[] {
    const heap = new TopK(limit, this.size, (slot) => this.id(slot));
    for (const part of this.#parts) {
      const { rows, arena } = part.segment;
      const dead = part.dead;
      const useArena = arena !== null && arena.dimension === query.values.length;
      if (useArena) arena.setQuery(query.values);
      for (let row = 0; row < rows.length; row += 1) {
        if (dead !== null && dead[row] === 1) continue;
        const dense = rows[row]!.dense;
        if (dense === null) continue;
        const score = useArena ? cosineFromDot(arena.dot(row), query.norm, dense.norm) : denseCosine(query, dense);
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
    const scores = new Float64Array(this.slots);
    const seen = new Uint8Array(this.slots);
    const touched: number[] = [];
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
              touched.push(slot);
            }
            scores[slot] = f32(scores[slot]! + f32(weights[p]! * queryWeight));
          }
        }
      }
    }
    const heap = new TopK(limit, touched.length, (slot) => this.id(slot));
    for (const slot of touched) {
      const score = scores[slot]!;
      if (heap.admits(score, slot) && (filter === undefined || filter(slot))) heap.push(score, slot);
    }
    return heap.sorted();
  }

  /** Cosine of `query` with the chunk in `slot`, or undefined when it has no vector. */
  cosineOf(slot: number, query: DenseQuery): number | undefined {
    const dense = this.dense(slot);
    return dense ? denseCosine(query, dense) : undefined;
  }
}

/** Rows of a part that are live, in row order. */
function liveRows(part: Omit<Part, 'base'>): StoredRow[] {
  const rows = part.segment.rows;
  if (part.dead === null) return [...rows];
  return rows.filter((_, row) => part.dead![row] === 0);
}

/**
 * Drops parts with no live rows, rewrites parts that are mostly dead, and merges the newest parts while the
 * last is at least half the size of the one before (so segment sizes grow geometrically and each row is
 * copied a logarithmic number of times), up to SEGMENT_ROWS.
 */
function compactParts(input: readonly Omit<Part, 'base'>[]): Omit<Part, 'base'>[] {
  const parts: Omit<Part, 'base'>[] = [];
  for (const part of input) {
    if (part.live === 0) continue;
    if (part.dead !== null && part.live * 2 < part.segment.size) {
      const segment = new Segment(liveRows(part));
      parts.push({ segment, dead: null, live: segment.size });
    } else {
      parts.push(part);
    }
    for (;;) {
      const b = parts[parts.length - 1]!;
      const a = parts[parts.length - 2];
      if (a === undefined || a.live + b.live > SEGMENT_ROWS || b.live * 2 < a.live) break;
      const segment = new Segment([...liveRows(a), ...liveRows(b)]);
      parts.splice(parts.length - 2, 2, { segment, dead: null, live: segment.size });
    }
  }
  return parts;
}

