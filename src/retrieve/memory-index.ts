import { compareScored, type ScoredId } from './fusion.js';
import type { SparseVector } from './types.js';

/**
 * The search structures behind `MemoryHybridStore`: every chunk gets a slot; dense vectors are Float32 with
 * their norm computed once, and the BM25 vectors are inverted into postings (term → slots and weights), so a
 * lexical query only reads the postings of its own terms. Both arms keep a bounded heap of the best `limit`
 * items instead of sorting everything. Scores are computed exactly as `cosineSimilarity` and `bm25Score` do
 * (fusion.ts), ties ordered as `compareScored`.
 */

const f32 = Math.fround;

/**
 * A stored embedding: Float32 components (half the memory of number arrays; Qdrant stores f32 too) and their
 * Euclidean norm, computed once in double precision.
 */
export interface DenseVector {
  readonly values: Float32Array;
  readonly norm: number;
}

/** What the index needs of a stored chunk. Chunks are keyed by `record.id`. */
export interface IndexedEntry {
  readonly record: { readonly id: string };
  readonly sparse: SparseVector;
  readonly dense: DenseVector | null;
}

/** A query vector prepared once for scoring against many stored vectors. */
export interface DenseQuery {
  readonly values: Float64Array;
  readonly norm: number;
}

export function toDenseVector(vector: ArrayLike<number>): DenseVector {
  const values = Float32Array.from(vector);
  return { values, norm: Math.sqrt(sumOfSquares(values)) };
}

export function toDenseQuery(vector: ArrayLike<number>): DenseQuery {
  const values = Float64Array.from(vector);
  return { values, norm: Math.sqrt(sumOfSquares(values)) };
}

function sumOfSquares(values: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < values.length; i += 1) sum += values[i]! * values[i]!;
  return sum;
}

/**
 * Cosine of a query and a stored vector, as `cosineSimilarity`: 0 when either is a zero vector, clamped to
 * [-1, 1]. The dot product runs four partial sums, so it can differ from a sequential sum in the last bits.
 */
export function denseCosine(query: DenseQuery, vector: DenseVector): number {
  if (query.norm === 0 || vector.norm === 0) return 0;
  return cosineFromDot(dot(query.values, vector.values), query.norm, vector.norm);
}

function cosineFromDot(dotProduct: number, queryNorm: number, vectorNorm: number): number {
  if (queryNorm === 0 || vectorNorm === 0) return 0;
  return Math.min(1, Math.max(-1, dotProduct / (queryNorm * vectorNorm)));
}

/** Σ q[i]·v[i] in four partial sums: elements 4k, 4k+1, 4k+2, 4k+3, added as (s0 + s1) + (s2 + s3). */
function dot(q: Float64Array, v: Float32Array): number {
  const n = q.length;
  const unrolled = n - (n & 3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i < unrolled; i += 4) {
    s0 += q[i]! * v[i]!;
    s1 += q[i + 1]! * v[i + 1]!;
    s2 += q[i + 2]! * v[i + 2]!;
    s3 += q[i + 3]! * v[i + 3]!;
  }
  for (; i < n; i += 1) s0 += q[i]! * v[i]!;
  return s0 + s1 + (s2 + s3);
}

/**
 * `dot` in WebAssembly SIMD, for dimensions that are a multiple of 4: the same products and the same four
 * partial sums (lanes of two f64x2 accumulators), so the result is bit-identical, in about half the time.
 * The query (f64) sits at offset 0 of the imported memory, vector slots (f32) after it. `DOT_WASM` is this
 * text assembled (a test re-assembles it with wabt and compares the bytes).
 */
export const DOT_WAT = `(module
  (import "env" "memory" (memory 1))
  (func (export "dot") (param $q i32) (param $v i32) (param $n i32) (result f64)
    (local $end i32) (local $a v128) (local $b v128)
    (local.set $end (i32.add (local.get $v) (i32.shl (local.get $n) (i32.const 2))))
    (block (br_if 0 (i32.ge_u (local.get $v) (local.get $end)))
      (loop
        (local.set $a (f64x2.add (local.get $a) (f64x2.mul (v128.load align=8 (local.get $q))
          (f64x2.promote_low_f32x4 (v128.load64_zero align=4 (local.get $v))))))
        (local.set $b (f64x2.add (local.get $b) (f64x2.mul (v128.load offset=16 align=8 (local.get $q))
          (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 align=4 (local.get $v))))))
        (local.set $q (i32.add (local.get $q) (i32.const 32)))
        (br_if 0 (i32.lt_u (local.tee $v (i32.add (local.get $v) (i32.const 16))) (local.get $end)))))
    (f64.add (f64.add (f64x2.extract_lane 0 (local.get $a)) (f64x2.extract_lane 1 (local.get $a)))
             (f64.add (f64x2.extract_lane 0 (local.get $b)) (f64x2.extract_lane 1 (local.get $b))))))`;

export const DOT_WASM =
  'AGFzbQEAAAABCAFgA39/fwF8Ag8BA2VudgZtZW1vcnkCAAEDAgEABwcBA2RvdAAACnkBdwIBfwJ7IAEgAkECdGohAwJAIAEgA08NAANAIAQgAP0AAwAgAf1dAgD9X/3yAf3wASEEIAUgAP0AAxAgAf1dAgj9X/3yAf3wASEFIABBIGohACABQRBqIgEgA0kNAAsLIAT9IQAgBP0hAaAgBf0hACAF/SEBoKAL';

const PAGE = 65_536;

// The slice of the WebAssembly JS API used here (the Node typings in use do not declare it).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
let dotModule: object | null | undefined;

function compiledDot(): object | null {
  if (dotModule === undefined) {
    const bytes = Buffer.from(DOT_WASM, 'base64');
    // Runtimes without WebAssembly SIMD use the plain loop.
    dotModule = wasm !== undefined && wasm.validate(bytes) ? new wasm.Module(bytes) : null;
  }
  return dotModule;
}

/** A copy of the stored vectors, one slot each, in WebAssembly memory for the SIMD `dot`. */
class VectorArena {
  readonly dimension: number;
  readonly #memory: WasmMemory;
  readonly #dot: (query: number, vector: number, length: number) => number;
  readonly #base: number;

  private constructor(dimension: number, api: WasmApi, module: object) {
    this.dimension = dimension;
    this.#base = Math.ceil((dimension * 8) / 16) * 16;
    this.#memory = new api.Memory({ initial: Math.ceil((this.#base + 1024 * dimension * 4) / PAGE) });
    const instance = new api.Instance(module, { env: { memory: this.#memory } });
    this.#dot = instance.exports.dot as (query: number, vector: number, length: number) => number;
  }

  static create(dimension: number): VectorArena | null {
    const module = dimension > 0 && dimension % 4 === 0 ? compiledDot() : null;
    return module && wasm ? new VectorArena(dimension, wasm, module) : null;
  }

  /** Copies `values` into `slot`; false when the memory cannot grow that far (the caller falls back). */
  write(slot: number, values: Float32Array): boolean {
    const offset = this.#base + slot * this.dimension * 4;
    const end = offset + this.dimension * 4;
    const size = this.#memory.buffer.byteLength;
    if (end > size) {
      const pages = Math.max(Math.ceil((end - size) / PAGE), Math.ceil(size / PAGE / 2));
      try {
        this.#memory.grow(pages);
      } catch {
        return false;
      }
    }
    new Float32Array(this.#memory.buffer, offset, this.dimension).set(values);
    return true;
  }

  setQuery(values: Float64Array): void {
    new Float64Array(this.#memory.buffer, 0, this.dimension).set(values);
  }

  /** Dot product of the query last set with the vector in `slot`. */
  dot(slot: number): number {
    return this.#dot(0, this.#base + slot * this.dimension * 4, this.dimension);
  }
}

/** Growable parallel arrays: the slots that hold one term and their document weights (already f32). */
class Postings {
  slots = new Int32Array(4);
  weights = new Float32Array(4);
  length = 0;
  /** Document frequency: live chunks holding the term (postings of removed slots stay until compaction). */
  live = 0;

  push(slot: number, weight: number): void {
    if (this.length === this.slots.length) {
      const capacity = this.length * 2;
      const slots = new Int32Array(capacity);
      slots.set(this.slots);
      const weights = new Float32Array(capacity);
      weights.set(this.weights);
      this.slots = slots;
      this.weights = weights;
    }
    this.slots[this.length] = slot;
    this.weights[this.length] = weight;
    this.length += 1;
  }
}

/** A predicate over slots, evaluated at most once per slot per query. */
export type SlotFilter = (slot: number) => boolean;

export class MemoryIndex<E extends IndexedEntry> {
  /** Slot → entry; `undefined` marks a removed chunk until the next compaction. */
  #entries: (E | undefined)[] = [];
  #slotById = new Map<string, number>();
  /** Per sparse index: its postings and document frequency (one lookup per term when a chunk is added). */
  #postings = new Map<number, Postings>();
  #dead = 0;
  /** Undecided until the first vector arrives; null when vectors are scored in plain JavaScript. */
  #arena: VectorArena | null | undefined;

  get size(): number {
    return this.#slotById.size;
  }

  documentFrequency(index: number): number {
    return this.#postings.get(index)?.live ?? 0;
  }

  /** Adds `entry`, or replaces the chunk with its id (keeping its postings when the sparse vector is the same). */
  set(entry: E): void {
    const id = entry.record.id;
    const slot = this.#slotById.get(id);
    if (slot !== undefined) {
      const previous = this.#entries[slot]!;
      if (previous.sparse === entry.sparse) {
        this.#entries[slot] = entry;
        if (entry.dense && entry.dense !== previous.dense) this.#writeVector(slot, entry.dense);
        return;
      }
      this.delete(id);
    }
    this.#append(entry);
  }

  delete(id: string): void {
    const slot = this.#slotById.get(id);
    if (slot === undefined) return;
    const entry = this.#entries[slot]!;
    this.#slotById.delete(id);
    this.#entries[slot] = undefined;
    for (const index of entry.sparse.indices) {
      const postings = this.#postings.get(index);
      if (postings !== undefined) postings.live -= 1;
    }
    // Postings of removed slots are skipped at query time and dropped here once they are many.
    this.#dead += 1;
    if (this.#dead > 1024 && this.#dead * 2 > this.#entries.length) this.#compact();
  }

  /** Gives `entry` the next slot and adds it to its terms' postings and frequencies. */
  #append(entry: E): void {
    const slot = this.#entries.length;
    this.#entries.push(entry);
    this.#slotById.set(entry.record.id, slot);
    if (entry.dense) this.#writeVector(slot, entry.dense);
    const { indices, values } = entry.sparse;
    for (let i = 0; i < indices.length; i += 1) {
      let postings = this.#postings.get(indices[i]!);
      if (postings === undefined) {
        postings = new Postings();
        this.#postings.set(indices[i]!, postings);
      }
      postings.push(slot, values[i]!);
      postings.live += 1;
    }
  }

  #writeVector(slot: number, dense: DenseVector): void {
    if (this.#arena === undefined) this.#arena = VectorArena.create(dense.values.length);
    if (this.#arena === null) return;
    if (this.#arena.dimension !== dense.values.length || !this.#arena.write(slot, dense.values)) this.#arena = null;
  }

  #compact(): void {
    const live = this.#entries.filter((entry): entry is E => entry !== undefined);
    this.#entries = [];
    this.#slotById = new Map();
    this.#postings = new Map();
    this.#dead = 0;
    for (const entry of live) this.#append(entry);
  }

  /** A per-query cache of `predicate` over slots. */
  slotFilter(predicate: (entry: E) => boolean): SlotFilter {
    const verdicts = new Int8Array(this.#entries.length); // 0 unknown, 1 yes, 2 no
    return (slot) => {
      const known = verdicts[slot]!;
      if (known !== 0) return known === 1;
      const ok = predicate(this.#entries[slot]!);
      verdicts[slot] = ok ? 1 : 2;
      return ok;
    };
  }

  /** Number of live chunks that pass `filter`. */
  countMatching(filter: SlotFilter): number {
    let count = 0;
    for (let slot = 0; slot < this.#entries.length; slot += 1) {
      if (this.#entries[slot] !== undefined && filter(slot)) count += 1;
    }
    return count;
  }

  /** Number of live chunks containing `index` that pass `filter`. */
  documentFrequencyMatching(index: number, filter: SlotFilter): number {
    const postings = this.#postings.get(index);
    if (postings === undefined) return 0;
    let count = 0;
    for (let p = 0; p < postings.length; p += 1) {
      const slot = postings.slots[p]!;
      if (this.#entries[slot] !== undefined && filter(slot)) count += 1;
    }
    return count;
  }

  /** Best `limit` chunks by cosine with `query` (chunks without a vector are skipped), best first. */
  denseTopK(query: DenseQuery, limit: number, filter: SlotFilter | undefined): ScoredId[] {
    const heap = new TopK(limit, this.#entries);
    const entries = this.#entries;
    const arena = this.#arena?.dimension === query.values.length ? this.#arena : undefined;
    arena?.setQuery(query.values);
    for (let slot = 0; slot < entries.length; slot += 1) {
      const dense = entries[slot]?.dense;
      if (dense == null) continue;
      const score = arena ? cosineFromDot(arena.dot(slot), query.norm, dense.norm) : denseCosine(query, dense);
      // The filter runs only for chunks that would enter the top k, which is the same set of results.
      if (heap.admits(score, slot) && (filter === undefined || filter(slot))) heap.push(score, slot);
    }
    return heap.sorted();
  }

  /**
   * Best `limit` chunks that share a term with `query`, scored as `bm25Score` (query terms in ascending index
   * order, f32 at every step), best first.
   */
  lexicalTopK(query: SparseVector, idf: (index: number) => number, limit: number, filter: SlotFilter | undefined): ScoredId[] {
    const entries = this.#entries;
    const scores = new Float64Array(entries.length);
    const seen = new Uint8Array(entries.length);
    const touched: number[] = [];
    for (let t = 0; t < query.indices.length; t += 1) {
      const index = query.indices[t]!;
      const postings = this.#postings.get(index);
      if (postings === undefined) continue;
      const queryWeight = f32(f32(query.values[t]!) * idf(index));
      const { slots, weights, length } = postings;
      for (let p = 0; p < length; p += 1) {
        const slot = slots[p]!;
        if (entries[slot] === undefined) continue;
        if (seen[slot] === 0) {
          seen[slot] = 1;
          touched.push(slot);
        }
        scores[slot] = f32(scores[slot]! + f32(weights[p]! * queryWeight));
      }
    }
    const heap = new TopK(limit, entries);
    for (const slot of touched) {
      const score = scores[slot]!;
      if (heap.admits(score, slot) && (filter === undefined || filter(slot))) heap.push(score, slot);
    }
    return heap.sorted();
  }

  /** Cosine of `query` with the chunk `id`, or undefined when it has no vector. */
  cosineOf(id: string, query: DenseQuery): number | undefined {
    const slot = this.#slotById.get(id);
    const dense = slot === undefined ? undefined : this.#entries[slot]?.dense;
    return dense ? denseCosine(query, dense) : undefined;
  }
}

/**
 * Bounded min-heap of (score, slot) holding the best `limit` seen so far; the root is the worst kept item
 * under `compareScored` (lower score, or equal score and larger id).
 */
class TopK {
  readonly #limit: number;
  readonly #entries: readonly (IndexedEntry | undefined)[];
  readonly #scores: Float64Array;
  readonly #slots: Int32Array;
  #size = 0;

  constructor(limit: number, entries: readonly (IndexedEntry | undefined)[]) {
    this.#limit = limit;
    this.#entries = entries;
    const capacity = Math.min(limit, entries.length);
    this.#scores = new Float64Array(capacity);
    this.#slots = new Int32Array(capacity);
  }

  /** True when (score, slot) would be kept: the heap is not full or it beats the worst kept item. */
  admits(score: number, slot: number): boolean {
    if (this.#size < this.#limit) return true;
    return this.#worse(this.#scores[0]!, this.#slots[0]!, score, slot);
  }

  /** Call only after `admits` returned true. */
  push(score: number, slot: number): void {
    if (this.#size < this.#limit) {
      let i = this.#size;
      this.#size += 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.#worse(score, slot, this.#scores[parent]!, this.#slots[parent]!)) break;
        this.#scores[i] = this.#scores[parent]!;
        this.#slots[i] = this.#slots[parent]!;
        i = parent;
      }
      this.#scores[i] = score;
      this.#slots[i] = slot;
      return;
    }
    // Replace the root and sift down.
    let i = 0;
    const size = this.#size;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      let child = left;
      if (right < size && this.#worse(this.#scores[right]!, this.#slots[right]!, this.#scores[left]!, this.#slots[left]!)) {
        child = right;
      }
      if (!this.#worse(this.#scores[child]!, this.#slots[child]!, score, slot)) break;
      this.#scores[i] = this.#scores[child]!;
      this.#slots[i] = this.#slots[child]!;
      i = child;
    }
    this.#scores[i] = score;
    this.#slots[i] = slot;
  }

  /** The kept items, best first (score desc, then id asc). */
  sorted(): ScoredId[] {
    const items: ScoredId[] = [];
    for (let i = 0; i < this.#size; i += 1) {
      items.push({ id: this.#entries[this.#slots[i]!]!.record.id, score: this.#scores[i]! });
    }
    return items.sort(compareScored);
  }

  /** True when (scoreA, slotA) ranks after (scoreB, slotB). */
  #worse(scoreA: number, slotA: number, scoreB: number, slotB: number): boolean {
    if (scoreA !== scoreB) return scoreA < scoreB;
    return this.#entries[slotA]!.record.id > this.#entries[slotB]!.record.id;
  }
}
