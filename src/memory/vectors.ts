import { compareScored, type ScoredId } from '../store/fusion.js';

/**
 * Vector maths behind `MemoryHybridStore`: dense vectors are Float32 with their norm computed once, stored per
 * segment in one WebAssembly memory beside an int8 copy; dot products run in WebAssembly SIMD where the runtime
 * has it; the arms keep a bounded heap of the best `limit` items instead of sorting everything. Scores are
 * computed exactly as `cosineSimilarity` does (fusion.ts), ties ordered as `compareScored`.
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
export function dot(q: ArrayLike<number>, v: ArrayLike<number>): number {
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

// -------------------------------------------------------------------------------------------------
// Int8 copies: a fast first pass whose error is bounded, so the exact ranking can be recovered from it

/**
 * A vector scaled into int8 (symmetric, per vector: `scale · q[i]` approximates `v[i]`, with q in [-127, 127]),
 * with the norm of what the approximation leaves out (`error = ‖v − scale·q‖`, computed in double precision).
 * For any query u, `|u·v − scale·(u·q)| ≤ ‖u‖·error` (Cauchy–Schwarz), which is what makes the first pass safe.
 */
export function quantize(values: ArrayLike<number>, into: Int8Array): { scale: number; error: number; approxNorm: number } {
  let max = 0;
  for (let i = 0; i < values.length; i += 1) max = Math.max(max, Math.abs(values[i]!));
  const scale = max / 127;
  let error = 0;
  let approx = 0;
  for (let i = 0; i < values.length; i += 1) {
    const q = scale === 0 ? 0 : Math.max(-127, Math.min(127, Math.round(values[i]! / scale)));
    into[i] = q;
    const rest = values[i]! - scale * q;
    error += rest * rest;
    approx += scale * q * (scale * q);
  }
  for (let i = values.length; i < into.length; i += 1) into[i] = 0;
  return { scale, error: Math.sqrt(error), approxNorm: Math.sqrt(approx) };
}

/**
 * The WebAssembly module of the vector kernels. `dot`: Σ q[i]·v[i] of an f64 query and an f32 vector whose
 * length is a multiple of 4, with the same products and the same four partial sums as `dot` above (lanes of two
 * f64x2 accumulators), so the result is bit-identical. `scan8`: for `rows` int8 vectors of `stride` bytes (a
 * multiple of 32, zero-padded) the exact i32 dot product with an int8 query, one i32 per row at `out`; products
 * are at most 127² so two of them add up in an i16 lane without overflow. `VECTOR_WASM` is this text assembled
 * (a test re-assembles it with wabt and compares the bytes).
 */
export const VECTOR_WAT = `(module
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
             (f64.add (f64x2.extract_lane 0 (local.get $b)) (f64x2.extract_lane 1 (local.get $b)))))
  (func (export "scan8") (param $q i32) (param $v i32) (param $rows i32) (param $stride i32) (param $out i32)
    (local $end i32) (local $i i32) (local $a v128) (local $b v128) (local $x v128) (local $y v128)
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $rows) (i32.const 2))))
    (block $done
      (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
      (loop $row
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (loop $col
          (local.set $x (v128.load (i32.add (local.get $q) (local.get $i))))
          (local.set $y (v128.load (i32.add (local.get $v) (local.get $i))))
          (local.set $a (i32x4.add (local.get $a)
            (i32x4.extadd_pairwise_i16x8_s (i16x8.add (i16x8.extmul_low_i8x16_s (local.get $x) (local.get $y))
                                                      (i16x8.extmul_high_i8x16_s (local.get $x) (local.get $y))))))
          (local.set $x (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))
          (local.set $y (v128.load offset=16 (i32.add (local.get $v) (local.get $i))))
          (local.set $b (i32x4.add (local.get $b)
            (i32x4.extadd_pairwise_i16x8_s (i16x8.add (i16x8.extmul_low_i8x16_s (local.get $x) (local.get $y))
                                                      (i16x8.extmul_high_i8x16_s (local.get $x) (local.get $y))))))
          (br_if $col (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 32))) (local.get $stride))))
        (local.set $a (i32x4.add (local.get $a) (local.get $b)))
        (i32.store (local.get $out) (i32.add (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
                                             (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
        (local.set $v (i32.add (local.get $v) (local.get $stride)))
        (br_if $row (i32.lt_u (local.tee $out (i32.add (local.get $out) (i32.const 4))) (local.get $end)))))))`;

export const VECTOR_WASM =
  'AGFzbQEAAAABEAJgA39/fwF8YAV/f39/fwACDwEDZW52Bm1lbW9yeQIAAQMDAgABBw8CA2RvdAAABXNjYW44AAEK6wICdwIBfwJ7IAEgAkECdGohAwJAIAEgA08NAANAIAQgAP0AAwAgAf1dAgD9X/3yAf3wASEEIAUgAP0AAxAgAf1dAgj9X/3yAf3wASEFIABBIGohACABQRBqIgEgA0kNAAsLIAT9IQAgBP0hAaAgBf0hACAF/SEBoKAL8AECAn8EeyAEIAJBAnRqIQUCQCAEIAVPDQADQP0MAAAAAAAAAAAAAAAAAAAAACEH/QwAAAAAAAAAAAAAAAAAAAAAIQhBACEGA0AgACAGav0ABAAhCSABIAZq/QAEACEKIAcgCSAK/ZwBIAkgCv2dAf2OAf1+/a4BIQcgACAGav0ABBAhCSABIAZq/QAEECEKIAggCSAK/ZwBIAkgCv2dAf2OAf1+/a4BIQggBkEgaiIGIANJDQALIAcgCP2uASEHIAQgB/0bACAH/RsBaiAH/RsCIAf9GwNqajYCACABIANqIQEgBEEEaiIEIAVJDQALCws=';

const PAGE = 65_536;

// The slice of the WebAssembly JS API used here (the Node typings in use do not declare it).
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
let vectorModule: object | null | undefined;

function compiledKernels(): object | null {
  if (vectorModule === undefined) {
    const bytes = Buffer.from(VECTOR_WASM, 'base64');
    // Runtimes without WebAssembly SIMD use plain loops.
    vectorModule = wasm !== undefined && wasm.validate(bytes) ? new wasm.Module(bytes) : null;
  }
  return vectorModule;
}

const align = (bytes: number, to: number) => Math.ceil(bytes / to) * to;

/** Byte offsets handed out in order, each aligned: how a segment lays out its columns in one memory. */
export class Layout {
  size = 0;
  take(bytes: number, alignment = 16): number {
    const offset = align(this.size, alignment);
    this.size = offset + bytes;
    return offset;
  }
}

type Kernels = {
  dot: (query: number, vector: number, length: number) => number;
  scan8: (query: number, vectors: number, rows: number, stride: number, out: number) => void;
};

/**
 * The one memory a segment keeps everything in (vectors, texts, hashes, indexes, postings): a WebAssembly memory
 * where the runtime has SIMD, so the kernels run on it, else an ArrayBuffer. One allocation per segment, freed at
 * once when the segment goes: many small buffers would be allocated and freed around each other as segments merge,
 * and the allocator could not give the pages back.
 */
/**
 * Fills the parts of a memory read lazily from a store file (file.ts): `ensure` reads and checks the bytes of
 * `[start, end)` that are not in yet, synchronously, before anything reads them; `complete` turns true once every
 * byte is in, after which nothing needs asking.
 */
export interface MemoryPager {
  readonly complete: boolean;
  ensure(start: number, end: number): void;
  /** The error for bytes read in that do not hold together (`corrupt`, naming the file and segment). */
  corrupt(message: string): Error;
}

export class SegmentMemory {
  readonly buffer: ArrayBuffer;
  readonly kernels: Kernels | null;
  /** Set when the memory's stored bytes are still being read from a store file; null when all are in. */
  pager: MemoryPager | null = null;
  /** The pager it had, kept for the errors of checks made after every byte is in. */
  source: MemoryPager | null = null;

  /** Makes sure `[start, end)` of the memory is read in (a lazily read store file); cheap when it is. */
  ensure(start: number, end: number): void {
    const pager = this.pager;
    if (pager === null) return;
    if (pager.complete) {
      this.pager = null;
      return;
    }
    pager.ensure(start, end);
  }

  private constructor(buffer: ArrayBuffer, kernels: Kernels | null) {
    this.buffer = buffer;
    this.kernels = kernels;
  }

  /** Whether memories get the kernels (WebAssembly SIMD runs here). */
  static get hasKernels(): boolean {
    return compiledKernels() !== null;
  }

  static allocate(bytes: number): SegmentMemory {
    const module = compiledKernels();
    // A WebAssembly memory holds at most 4 GiB (65,536 pages).
    if (module !== null && wasm !== undefined && bytes <= 65_536 * PAGE) {
      try {
        const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
        const { exports } = new wasm.Instance(module, { env: { memory } });
        return new SegmentMemory(memory.buffer, { dot: exports.dot as Kernels['dot'], scan8: exports.scan8 as Kernels['scan8'] });
      } catch {
        // No room for one more WebAssembly memory: an ArrayBuffer still answers, with the JavaScript loops.
      }
    }
    return new SegmentMemory(new ArrayBuffer(Math.max(1, bytes)), null);
  }
}

/**
 * Where a segment's vectors live in its memory (planned before the memory is allocated): what the store file keeps
 * (the f32 rows, the int8 rows, the norms, scales and errors), then the scratch space of a query (the f64 query,
 * the int8 query, one i32 per row for `scan8`), which is not kept.
 */
export interface VectorPlan {
  readonly dimension: number;
  readonly rows: number;
  readonly stride: number;
  readonly f32: number;
  readonly i8: number;
  readonly norms: number;
  readonly scales: number;
  readonly errors: number;
  /** Whether the int8 copy is kept (the kernels ran where the vectors were stored). */
  readonly int8: boolean;
  readonly query: number;
  readonly query8: number;
  readonly out: number;
}

export type StoredVectorPlan = Omit<VectorPlan, 'query' | 'query8' | 'out'>;

/** The int8 query of a dense search, and what the bound on its own rounding needs. */
export interface Int8Query {
  readonly values: Int8Array;
  readonly scale: number;
  /** ‖scale·q‖ and ‖u − scale·q‖ of the query u. */
  readonly approxNorm: number;
  readonly error: number;
}

export function quantizeQuery(query: DenseQuery, stride: number): Int8Query {
  const values = new Int8Array(stride);
  const { scale, error, approxNorm } = quantize(query.values, values);
  return { values, scale, error, approxNorm };
}

/**
 * The vectors of one segment, which never changes: Float32 values, their norms (NaN for a row without a
 * vector), and (where the kernels run) an int8 copy with each row's scale and error, laid out in the segment's
 * memory: the f64 query, the int8 query, one i32 per row for `scan8`, the f32 rows, the int8 rows.
 */
export class VectorBlock {
  readonly dimension: number;
  readonly rows: number;
  /** Bytes per int8 row (the dimension rounded up to 32). */
  readonly stride: number;
  readonly norms: Float64Array;
  readonly scales: Float64Array;
  readonly errors: Float64Array;
  readonly #buffer: ArrayBuffer;
  readonly #memory: SegmentMemory;
  readonly #plan: VectorPlan;
  readonly #f32: Float32Array;
  readonly #i8: Int8Array;
  readonly #dot: Kernels['dot'] | null;
  readonly #scan8: Kernels['scan8'] | null;

  /** Whether new vectors get an int8 copy here (WebAssembly SIMD runs). */
  static get quantizes(): boolean {
    return SegmentMemory.hasKernels;
  }

  /** Reserves the place of the vectors' stored parts in `layout` (`int8`: with the int8 copy). */
  static plan(layout: Layout, dimension: number, rows: number, int8: boolean): StoredVectorPlan {
    const stride = align(Math.max(dimension, 1), 32);
    return {
      dimension,
      rows,
      stride,
      int8,
      f32: layout.take(rows * dimension * 4),
      i8: int8 ? layout.take(rows * stride) : 0,
      norms: layout.take(rows * 8, 8),
      scales: int8 ? layout.take(rows * 8, 8) : 0,
      errors: int8 ? layout.take(rows * 8, 8) : 0,
    };
  }

  /** Reserves a query's scratch space after everything kept, in `layout`. */
  static planScratch(layout: Layout, stored: StoredVectorPlan): VectorPlan {
    return {
      ...stored,
      query: layout.take(stored.dimension * 8),
      query8: stored.int8 ? layout.take(stored.stride) : 0,
      out: stored.int8 ? layout.take(stored.rows * 4) : 0,
    };
  }

  /**
   * `fresh`: the memory is new, its norms are set to NaN (no vector yet) and rows set later get their int8 copy;
   * otherwise the rows were read from a store file as they are, and `quantized` says whether its int8 rows hold
   * the int8 copy (a store saved where the kernels did not run reserved their place but left them empty).
   */
  constructor(memory: SegmentMemory, plan: VectorPlan, contents: { fresh: true } | { fresh: false; quantized: boolean }) {
    const int8 = plan.int8 && memory.kernels !== null && (contents.fresh || contents.quantized);
    const fresh = contents.fresh;
    this.dimension = plan.dimension;
    this.rows = plan.rows;
    this.stride = plan.stride;
    this.#buffer = memory.buffer;
    this.#memory = memory;
    this.#plan = plan;
    this.norms = new Float64Array(memory.buffer, plan.norms, plan.rows);
    if (fresh) this.norms.fill(Number.NaN);
    this.scales = int8 ? new Float64Array(memory.buffer, plan.scales, plan.rows) : new Float64Array(0);
    this.errors = int8 ? new Float64Array(memory.buffer, plan.errors, plan.rows) : new Float64Array(0);
    this.#f32 = new Float32Array(memory.buffer, plan.f32, plan.rows * plan.dimension);
    this.#i8 = int8 ? new Int8Array(memory.buffer, plan.i8, plan.rows * plan.stride) : new Int8Array(0);
    this.#dot = memory.kernels !== null && plan.dimension % 4 === 0 ? memory.kernels.dot : null;
    this.#scan8 = int8 ? (memory.kernels?.scan8 ?? null) : null;
  }

  /** Whether the int8 first pass can run. */
  get scans(): boolean {
    return this.#scan8 !== null;
  }

  /** Stores `values` as the vector of `row` (f32), with its norm and int8 copy. */
  set(row: number, values: ArrayLike<number>): void {
    const f32 = this.#f32.subarray(row * this.dimension, (row + 1) * this.dimension);
    f32.set(values);
    this.norms[row] = Math.sqrt(sumOfSquares(f32));
    if (this.#scan8 !== null) {
      const { scale, error } = quantize(f32, this.#i8.subarray(row * this.stride, (row + 1) * this.stride));
      this.scales[row] = scale;
      this.errors[row] = error;
    }
  }

  /** Copies row `fromRow` of `from` (same dimension) as it is. */
  copy(row: number, from: VectorBlock, fromRow: number): void {
    this.norms[row] = from.norms[fromRow]!;
    if (Number.isNaN(from.norms[fromRow]!)) return;
    const d = this.dimension;
    from.#ensureRow(fromRow);
    this.#f32.set(from.#f32.subarray(fromRow * d, (fromRow + 1) * d), row * d);
    if (this.#scan8 !== null && from.#scan8 !== null) {
      this.#i8.set(from.#i8.subarray(fromRow * from.stride, (fromRow + 1) * from.stride), row * this.stride);
      this.scales[row] = from.scales[fromRow]!;
      this.errors[row] = from.errors[fromRow]!;
    } else if (this.#scan8 !== null) {
      this.set(row, from.#f32.subarray(fromRow * d, (fromRow + 1) * d));
    }
  }

  has(row: number): boolean {
    return !Number.isNaN(this.norms[row]!);
  }

  /** The f32 values of a row (a view: read, never change). */
  values(row: number): Float32Array {
    this.#ensureRow(row);
    return this.#f32.subarray(row * this.dimension, (row + 1) * this.dimension);
  }

  /** The f32 values of a row are read in (a lazily read store file reads them on first use). */
  #ensureRow(row: number): void {
    if (this.#memory.pager === null) return;
    const start = this.#plan.f32 + row * this.dimension * 4;
    this.#memory.ensure(start, start + this.dimension * 4);
  }

  vector(row: number): DenseVector | null {
    return this.has(row) ? { values: this.values(row), norm: this.norms[row]! } : null;
  }

  /** Sets the query for `exactDot` and `scan` (its int8 copy when the first pass runs). */
  setQuery(query: DenseQuery, int8: Int8Query | null): void {
    new Float64Array(this.#buffer, this.#plan.query, this.dimension).set(query.values);
    if (int8 !== null && this.#scan8 !== null) new Int8Array(this.#buffer, this.#plan.query8, this.stride).set(int8.values);
  }

  /** The dot product of the query last set and a row's f32 vector: exactly `dot(query, values(row))`. */
  exactDot(row: number): number {
    this.#ensureRow(row);
    if (this.#dot !== null) return this.#dot(this.#plan.query, this.#plan.f32 + row * this.dimension * 4, this.dimension);
    return dot(new Float64Array(this.#buffer, this.#plan.query, this.dimension), this.values(row));
  }

  /** The exact i32 dot products of the int8 query last set with every int8 row (a view, valid until the next scan). */
  scan(): Int32Array {
    // Only called where `scans` holds (see Snapshot.denseTopK).
    if (this.#scan8 === null) throw new Error('VectorBlock.scan: this block has no int8 copy');
    this.#scan8(this.#plan.query8, this.#plan.i8, this.rows, this.stride, this.#plan.out);
    return new Int32Array(this.#buffer, this.#plan.out, this.rows);
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

/** A min-heap of the `limit` largest numbers seen (the lower bounds of the int8 pass). */
export class LargestK {
  readonly #limit: number;
  readonly #values: Float64Array;
  #size = 0;

  constructor(limit: number) {
    this.#limit = limit;
    this.#values = new Float64Array(Math.max(1, limit));
  }

  get full(): boolean {
    return this.#size >= this.#limit;
  }

  /** The smallest kept value (the k-th largest once full). */
  get min(): number {
    return this.#size === 0 ? Number.NEGATIVE_INFINITY : this.#values[0]!;
  }

  push(value: number): void {
    const values = this.#values;
    if (this.#size < this.#limit) {
      let i = this.#size;
      this.#size += 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (values[parent]! <= value) break;
        values[i] = values[parent]!;
        i = parent;
      }
      values[i] = value;
      return;
    }
    if (value <= values[0]!) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.#size) break;
      const right = left + 1;
      const child = right < this.#size && values[right]! < values[left]! ? right : left;
      if (values[child]! >= value) break;
      values[i] = values[child]!;
      i = child;
    }
    values[i] = value;
  }
}
