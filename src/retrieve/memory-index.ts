import { compareScored, type ScoredId } from './fusion.js';

/**
 * Vector maths behind `MemoryHybridStore`: dense vectors are Float32 with their norm computed once, dot
 * products run in WebAssembly SIMD where the runtime has it, and the arms keep a bounded heap of the best
 * `limit` items instead of sorting everything. Scores are computed exactly as `cosineSimilarity` does
 * (fusion.ts), ties ordered as `compareScored`.
 */

/**
 * A stored embedding: Float32 components (half the memory of number arrays; Qdrant stores f32 too) and their
 * Euclidean norm, computed once in double precision.
 */
export interface DenseVector {
  readonly values: Float32Array;
  readonly norm: number;
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

export function cosineFromDot(dotProduct: number, queryNorm: number, vectorNorm: number): number {
  if (queryNorm === 0 || vectorNorm === 0) return 0;
  return Math.min(1, Math.max(-1, dotProduct / (queryNorm * vectorNorm)));
}

/** Σ q[i]·v[i] in four partial sums: elements 4k, 4k+1, 4k+2, 4k+3, added as (s0 + s1) + (s2 + s3). */
export function dot(q: Float64Array, v: Float32Array): number {
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

/**
 * The vectors of one segment, one slot each, in WebAssembly memory for the SIMD `dot`. A segment never changes,
 * so the memory is sized once for its rows.
 */
export class VectorArena {
  readonly dimension: number;
  readonly #memory: WasmMemory;
  readonly #dot: (query: number, vector: number, length: number) => number;
  readonly #base: number;

  private constructor(dimension: number, rows: number, api: WasmApi, module: object) {
    this.dimension = dimension;
    this.#base = Math.ceil((dimension * 8) / 16) * 16;
    this.#memory = new api.Memory({ initial: Math.max(1, Math.ceil((this.#base + rows * dimension * 4) / PAGE)) });
    const instance = new api.Instance(module, { env: { memory: this.#memory } });
    this.#dot = instance.exports.dot as (query: number, vector: number, length: number) => number;
  }

  /** An arena for `rows` vectors of `dimension`, or null where the SIMD dot cannot run (the caller scores in JavaScript). */
  static create(dimension: number, rows: number): VectorArena | null {
    const module = dimension > 0 && dimension % 4 === 0 ? compiledDot() : null;
    if (!module || !wasm) return null;
    try {
      return new VectorArena(dimension, rows, wasm, module);
    } catch {
      // Out of memory for one more WebAssembly memory: the plain loop still answers.
      return null;
    }
  }

  write(slot: number, values: Float32Array): void {
    new Float32Array(this.#memory.buffer, this.#base + slot * this.dimension * 4, this.dimension).set(values);
  }

  setQuery(values: Float64Array): void {
    new Float64Array(this.#memory.buffer, 0, this.dimension).set(values);
  }

  /** Dot product of the query last set with the vector in `slot`. */
  dot(slot: number): number {
    return this.#dot(0, this.#base + slot * this.dimension * 4, this.dimension);
  }
}

/**
 * Bounded min-heap of (score, slot) holding the best `limit` seen so far; the root is the worst kept item
 * under `compareScored` (lower score, or equal score and larger id).
 */
export class TopK {
  readonly #limit: number;
  readonly #idOf: (slot: number) => string;
  readonly #scores: Float64Array;
  readonly #slots: Int32Array;
  #size = 0;

  constructor(limit: number, capacity: number, idOf: (slot: number) => string) {
    this.#limit = limit;
    this.#idOf = idOf;
    const size = Math.max(0, Math.min(limit, capacity));
    this.#scores = new Float64Array(size);
    this.#slots = new Int32Array(size);
  }

  get size(): number {
    return this.#size;
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

  /** The kept items, best first (score desc, then id asc), with their slots. */
  sorted(): (ScoredId & { slot: number })[] {
    const items: (ScoredId & { slot: number })[] = [];
    for (let i = 0; i < this.#size; i += 1) {
      const slot = this.#slots[i]!;
      items.push({ id: this.#idOf(slot), score: this.#scores[i]!, slot });
    }
    return items.sort(compareScored);
  }

  /** True when (scoreA, slotA) ranks after (scoreB, slotB). */
  #worse(scoreA: number, slotA: number, scoreB: number, slotB: number): boolean {
    if (scoreA !== scoreB) return scoreA < scoreB;
    return this.#idOf(slotA) > this.#idOf(slotB);
  }
}
