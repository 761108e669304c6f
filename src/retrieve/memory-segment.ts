/**
 * A segment of the embedded store: a batch of chunks that never changes once built. Writes add a new segment
 * and mark rows of older ones dead in a new snapshot (memory-snapshot.ts); small segments are merged into
 * bigger ones. Immutability is what lets a reader keep the snapshot it started on while writes go on.
 *
 * Postings are grouped by ACL class (acl-classes.ts): a reader walks only the lists of the classes its
 * principals may read.
 */
import type { ChunkRecord, SparseVector } from './types.js';
import { VectorArena, type DenseVector } from './memory-index.js';

/** One stored chunk. The record is the store's own: never handed out, never changed. */
export interface StoredRow {
  readonly record: ChunkRecord;
  readonly sparse: SparseVector;
  readonly dense: DenseVector | null;
  readonly aclClass: number;
}

/**
 * What a segment holds of one ACL class: its chunk ids and sources (to find rows by id or source) and its
 * postings as compressed sparse rows (list i is [offsets[i], offsets[i+1])). A reader looks only into the
 * classes it may read, so a restricted id, source or term is a miss for it, exactly as a missing one.
 */
interface ClassIndex {
  readonly ids: ReadonlyMap<string, number>;
  readonly sources: ReadonlyMap<string, Int32Array>;
  readonly lists: ReadonlyMap<number, number>;
  readonly offsets: Int32Array;
  readonly rows: Int32Array;
  readonly weights: Float32Array;
}

export class Segment {
  readonly size: number;
  readonly rows: readonly StoredRow[];
  /** Vectors in WebAssembly memory for the SIMD dot (null: scored in JavaScript). */
  readonly arena: VectorArena | null;
  /** Rows per ACL class. */
  readonly classCounts: ReadonlyMap<number, number>;
  readonly #classes: ReadonlyMap<number, ClassIndex>;

  constructor(rows: readonly StoredRow[]) {
    this.size = rows.length;
    this.rows = rows;
    const building = new Map<number, { ids: Map<string, number>; sources: Map<string, number[]>; lengths: Map<number, number>; count: number }>();
    // Pass 1: ids, sources and list lengths per class.
    let dimension = 0;
    for (let row = 0; row < rows.length; row += 1) {
      const { record, sparse, dense, aclClass } = rows[row]!;
      let entry = building.get(aclClass);
      if (entry === undefined) {
        entry = { ids: new Map(), sources: new Map(), lengths: new Map(), count: 0 };
        building.set(aclClass, entry);
      }
      entry.count += 1;
      entry.ids.set(record.id, row);
      const listed = entry.sources.get(record.sourceId);
      if (listed === undefined) entry.sources.set(record.sourceId, [row]);
      else listed.push(row);
      for (const term of sparse.indices) entry.lengths.set(term, (entry.lengths.get(term) ?? 0) + 1);
      if (dense !== null && dimension === 0) dimension = dense.values.length;
    }
    // Pass 2: fill each class's lists in row order (so every list is sorted by row).
    const classes = new Map<number, ClassIndex>();
    const cursors = new Map<number, { lists: Map<number, number>; next: Int32Array; rows: Int32Array; weights: Float32Array }>();
    const classCounts = new Map<number, number>();
    for (const [aclClass, entry] of building) {
      const lists = new Map<number, number>();
      const offsets = new Int32Array(entry.lengths.size + 1);
      let total = 0;
      let index = 0;
      for (const [term, length] of entry.lengths) {
        lists.set(term, index);
        offsets[index] = total;
        total += length;
        index += 1;
      }
      offsets[index] = total;
      const built: ClassIndex = {
        ids: entry.ids,
        sources: new Map([...entry.sources].map(([sourceId, list]) => [sourceId, Int32Array.from(list)])),
        lists,
        offsets,
        rows: new Int32Array(total),
        weights: new Float32Array(total),
      };
      classes.set(aclClass, built);
      classCounts.set(aclClass, entry.count);
      cursors.set(aclClass, { lists, next: offsets.slice(0, entry.lengths.size), rows: built.rows, weights: built.weights });
    }
    for (let row = 0; row < rows.length; row += 1) {
      const { sparse, aclClass } = rows[row]!;
      const cursor = cursors.get(aclClass)!;
      for (let i = 0; i < sparse.indices.length; i += 1) {
        const list = cursor.lists.get(sparse.indices[i]!)!;
        const at = cursor.next[list]!;
        cursor.rows[at] = row;
        cursor.weights[at] = sparse.values[i]!;
        cursor.next[list] = at + 1;
      }
    }
    this.#classes = classes;
    this.classCounts = classCounts;
    let arena: VectorArena | null = null;
    if (dimension > 0) {
      arena = VectorArena.create(dimension, rows.length);
      if (arena !== null) {
        for (let row = 0; row < rows.length; row += 1) {
          const dense = rows[row]!.dense;
          if (dense !== null) arena.write(row, dense.values);
        }
      }
    }
    this.arena = arena;
  }

  /** The ACL classes with rows here. */
  classes(): IterableIterator<number> {
    return this.#classes.keys();
  }

  get classCount(): number {
    return this.#classes.size;
  }

  /** The row of a chunk id among the rows of `aclClass`. */
  rowOf(aclClass: number, id: string): number | undefined {
    return this.#classes.get(aclClass)?.ids.get(id);
  }

  /** The rows of a source among the rows of `aclClass`, ascending. */
  rowsOfSource(aclClass: number, sourceId: string): Int32Array | undefined {
    return this.#classes.get(aclClass)?.sources.get(sourceId);
  }

  /** Every source with rows of `aclClass` here. */
  sourceIds(aclClass: number): IterableIterator<string> {
    return (this.#classes.get(aclClass)?.sources ?? new Map<string, Int32Array>()).keys();
  }

  /**
   * The postings of `term` in `aclClass`: rows ascending, with their BM25 weights (f32). Undefined when no
   * row of that class holds the term.
   */
  postings(aclClass: number, term: number): { rows: Int32Array; weights: Float32Array; start: number; end: number } | undefined {
    const entry = this.#classes.get(aclClass);
    if (entry === undefined) return undefined;
    const list = entry.lists.get(term);
    if (list === undefined) return undefined;
    return { rows: entry.rows, weights: entry.weights, start: entry.offsets[list]!, end: entry.offsets[list + 1]! };
  }
}
