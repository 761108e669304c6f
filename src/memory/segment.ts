/**
 * A segment of the embedded store: a batch of chunks that never changes once built. Writes add a new segment
 * and mark rows of older ones dead in a new snapshot (snapshot.ts); small segments are merged into
 * bigger ones. Immutability is what lets a reader keep the snapshot it started on while writes go on.
 *
 * Chunks are stored in columns, not as an object each, all in one memory per segment (vectors.ts): texts as
 * UTF-8, hashes as bytes, spans and token counts as integers, vectors f32 and int8, ids and sources as sorted
 * indexes, postings in packed arrays. What a document gives all its chunks (version, title, section path,
 * metadata...) is interned once per segment. Records are rebuilt from the columns when a read returns them.
 *
 * Ids, sources and postings are grouped by ACL class (acl-classes.ts): a reader looks only into the classes its
 * principals may read, so a restricted id, source or term is a miss for it, exactly as a missing one is.
 */
import { BoundedCache } from '../base/bounded-cache.js';
import { canonicalStringify } from '../base/canonical.js';
import { timestampMillis } from '../core/schemas.js';
import type { AclClasses } from './acl-classes.js';
import { Layout, SegmentMemory, VectorBlock, type DenseVector, type VectorPlan } from './vectors.js';
import type { ChunkRecord } from '../store/schemas.js';
import type { SparseVector } from '../tokenize/bm25.js';

/**
 * Texts decoded lately, by segment and row, across all segments (at most this many characters: the texts a
 * server keeps returning stay, others are decoded again). A text read again is the same string as before: no
 * UTF-8 decode per read, and the packer's caches keyed by text find it by the hash the string already holds,
 * instead of hashing and comparing a fresh copy of every candidate's text (see BoundedCache).
 */
const DECODED_TEXT_CHARS = 32 * 2 ** 20;
const decodedTexts = new BoundedCache<number, string>(DECODED_TEXT_CHARS, (_key, text) => text.length);
/** Distinguishes segments in `decodedTexts`' keys (serial × 2^32 + row; segments hold fewer than 2^32 rows). */
let nextSegmentSerial = 0;

/** A chunk to store: its record, BM25 vector, dense vector (f32 values) and ACL class. */
export interface NewRow {
  readonly record: ChunkRecord;
  readonly sparse: SparseVector;
  readonly dense: ArrayLike<number> | null;
  readonly aclClass: number;
}

/** What a document gives every chunk of it (and a section, the chunks of that section): interned. */
interface Payload {
  readonly version?: string;
  readonly title?: string;
  readonly url?: string;
  readonly section: readonly string[];
  readonly timestamp?: string;
  readonly kind?: string;
  readonly clusters?: readonly string[];
  readonly metadata?: Record<string, unknown>;
  /** Per chunk (a page, lines, a time range): interned with the rest, so chunks without one share as before. */
  readonly locator?: NonNullable<ChunkRecord['locator']>;
  readonly parentId?: string;
}

/** One ACL class's part of a segment, as views into the segment's memory. */
interface ClassIndex {
  /** The class's rows, ordered by chunk id (code units). */
  readonly byId: Int32Array;
  /** Source lists ordered by source id: list i is source `sources[sourceOf[i]]`, rows sourceRows[sourceOffsets[i] ..]. */
  readonly sourceOf: Int32Array;
  readonly sourceOffsets: Int32Array;
  readonly sourceRows: Int32Array;
  /** Posting lists ordered by term: list i is term terms[i], postings [offsets[i], offsets[i + 1]) of rows/weights. */
  readonly terms: Float64Array;
  readonly offsets: Int32Array;
  readonly rows: Int32Array;
  readonly weights: Float32Array;
}

export interface PostingList {
  readonly rows: Int32Array;
  readonly weights: Float32Array;
  readonly start: number;
  readonly end: number;
}

/** Interns values by a string key: an index per distinct key, in first-seen order. */
class Interner<T> {
  readonly values: T[] = [];
  readonly keys: string[] = [];
  readonly #index = new Map<string, number>();

  add(key: string, value: () => T): number {
    let index = this.#index.get(key);
    if (index === undefined) {
      index = this.values.length;
      this.values.push(value());
      this.keys.push(key);
      this.#index.set(key, index);
    }
    return index;
  }
}

const HEX = /^[0-9a-f]{64}$/;
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function payloadOf(record: ChunkRecord): Payload {
  const payload: { -readonly [K in keyof Payload]: Payload[K] } = { section: [...record.section] };
  if (record.version !== undefined) payload.version = record.version;
  if (record.title !== undefined) payload.title = record.title;
  if (record.url !== undefined) payload.url = record.url;
  if (record.timestamp !== undefined) payload.timestamp = record.timestamp;
  if (record.kind !== undefined) payload.kind = record.kind;
  if (record.clusters !== undefined) payload.clusters = [...record.clusters];
  if (record.metadata !== undefined) payload.metadata = structuredClone(record.metadata);
  if (record.locator !== undefined) payload.locator = structuredClone(record.locator);
  if (record.parentId !== undefined) payload.parentId = record.parentId;
  return payload;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

/**
 * Where a row comes from while a segment is built: a new record, or a row of another segment being merged.
 * The builder asks each for what it needs, in two passes (sizes, then contents).
 */
interface RowSource {
  readonly count: number;
  id(i: number): string;
  sourceId(i: number): string;
  aclClass(i: number): number;
  textLength(i: number): number;
  writeText(i: number, into: Uint8Array, at: number): void;
  writeSha(i: number, into: Uint8Array, at: number): void;
  spanStart(i: number): number;
  spanEnd(i: number): number;
  indexedAt(i: number): string;
  payload(i: number): [string, Payload];
  tokenShape(i: number): readonly string[];
  tokenValue(i: number, k: number): number;
  writeVector(i: number, into: VectorBlock, row: number): void;
}

/** The per-class postings a builder fills: lengths first, then the entries (rows ascending in every list). */
interface PostingSource {
  lengths(aclClass: number): Map<number, number>;
  fill(aclClass: number, put: (term: number, row: number, weight: number) => void): void;
}

export class Segment {
  readonly size: number;
  readonly dimension: number;
  readonly classes: AclClasses;
  /** The memory everything below lives in, and its size in bytes. */
  readonly bytes: number;
  readonly aclClassOf: Int32Array;
  /** The vectors (null when no row has one). */
  readonly vectors: VectorBlock | null;
  /** Rows per ACL class. */
  readonly classCounts: ReadonlyMap<number, number>;
  readonly #ids: readonly string[];
  readonly #sources: readonly string[];
  readonly #indexedAts: readonly string[];
  readonly #payloads: readonly Payload[];
  readonly #payloadKeys: readonly string[];
  readonly #shapes: readonly (readonly string[])[];
  readonly #text: Buffer;
  readonly #textStart: Float64Array;
  readonly #sha: Uint8Array;
  readonly #spans: Uint32Array;
  readonly #sourceOf: Int32Array;
  readonly #indexedAtOf: Int32Array;
  readonly #payloadOf: Int32Array;
  readonly #shapeOf: Int32Array;
  readonly #tokenStart: Uint32Array;
  readonly #tokenValues: Uint32Array;
  readonly #index: ReadonlyMap<number, ClassIndex>;
  readonly #serial = nextSegmentSerial++;

  /** Builds a segment from `source`'s rows (in order) and `postings`. */
  private constructor(classes: AclClasses, source: RowSource, postings: PostingSource, dimension: number) {
    const n = source.count;
    this.size = n;
    this.classes = classes;
    this.dimension = dimension;
    // Pass 1: strings and interned values (JavaScript heap), and the sizes of everything else.
    const ids: string[] = new Array(n);
    const sources = new Interner<string>();
    const indexedAts = new Interner<string>();
    const payloads = new Interner<Payload>();
    const shapes = new Interner<readonly string[]>();
    const sourceOf = new Int32Array(n);
    const indexedAtOf = new Int32Array(n);
    const payloadOf = new Int32Array(n);
    const shapeOf = new Int32Array(n);
    const aclClassOf = new Int32Array(n);
    const rowsOfClass = new Map<number, number[]>();
    let textBytes = 0;
    let tokenCount = 0;
    for (let i = 0; i < n; i += 1) {
      ids[i] = source.id(i);
      const sourceId = source.sourceId(i);
      sourceOf[i] = sources.add(sourceId, () => sourceId);
      const indexedAt = source.indexedAt(i);
      indexedAtOf[i] = indexedAts.add(indexedAt, () => indexedAt);
      const [key, payload] = source.payload(i);
      payloadOf[i] = payloads.add(key, () => payload);
      const shape = source.tokenShape(i);
      shapeOf[i] = shapes.add(shape.join('\u0000'), () => shape);
      tokenCount += shape.length;
      textBytes += source.textLength(i);
      const aclClass = source.aclClass(i);
      aclClassOf[i] = aclClass;
      const list = rowsOfClass.get(aclClass);
      if (list === undefined) rowsOfClass.set(aclClass, [i]);
      else list.push(i);
    }
    const lengths = new Map<number, Map<number, number>>();
    const sourceLists = new Map<number, Map<number, number[]>>();
    for (const [aclClass, rows] of rowsOfClass) {
      lengths.set(aclClass, postings.lengths(aclClass));
      const bySource = new Map<number, number[]>();
      for (const row of rows) {
        const list = bySource.get(sourceOf[row]!);
        if (list === undefined) bySource.set(sourceOf[row]!, [row]);
        else list.push(row);
      }
      sourceLists.set(aclClass, bySource);
    }

    // Pass 2: the layout, one memory, and the columns filled into it.
    const layout = new Layout();
    const vectorPlan: VectorPlan | null = dimension > 0 ? VectorBlock.plan(layout, dimension, n) : null;
    const at = {
      textStart: layout.take((n + 1) * 8, 8),
      text: layout.take(textBytes),
      sha: layout.take(n * 32),
      spans: layout.take(n * 8, 4),
      sourceOf: layout.take(n * 4, 4),
      indexedAtOf: layout.take(n * 4, 4),
      payloadOf: layout.take(n * 4, 4),
      shapeOf: layout.take(n * 4, 4),
      aclClassOf: layout.take(n * 4, 4),
      tokenStart: layout.take((n + 1) * 4, 4),
      tokenValues: layout.take(tokenCount * 4, 4),
    };
    const classPlans = new Map<number, { rows: number; lists: number; postings: number; terms: number; byId: number; sourceOf: number; sourceOffsets: number; sourceRows: number; termsAt: number; offsets: number; postingRows: number; weights: number }>();
    for (const [aclClass, rows] of rowsOfClass) {
      const lists = sourceLists.get(aclClass)!.size;
      const termLengths = lengths.get(aclClass)!;
      let total = 0;
      for (const length of termLengths.values()) total += length;
      classPlans.set(aclClass, {
        rows: rows.length,
        lists,
        postings: total,
        terms: termLengths.size,
        byId: layout.take(rows.length * 4, 4),
        sourceOf: layout.take(lists * 4, 4),
        sourceOffsets: layout.take((lists + 1) * 4, 4),
        sourceRows: layout.take(rows.length * 4, 4),
        termsAt: layout.take(termLengths.size * 8, 8),
        offsets: layout.take((termLengths.size + 1) * 4, 4),
        postingRows: layout.take(total * 4, 4),
        weights: layout.take(total * 4, 4),
      });
    }
    const memory = SegmentMemory.allocate(layout.size);
    const buffer = memory.buffer;
    this.bytes = layout.size;
    this.vectors = vectorPlan === null ? null : new VectorBlock(memory, vectorPlan);
    this.#textStart = new Float64Array(buffer, at.textStart, n + 1);
    this.#text = Buffer.from(buffer, at.text, textBytes);
    this.#sha = new Uint8Array(buffer, at.sha, n * 32);
    this.#spans = new Uint32Array(buffer, at.spans, n * 2);
    this.#sourceOf = new Int32Array(buffer, at.sourceOf, n);
    this.#indexedAtOf = new Int32Array(buffer, at.indexedAtOf, n);
    this.#payloadOf = new Int32Array(buffer, at.payloadOf, n);
    this.#shapeOf = new Int32Array(buffer, at.shapeOf, n);
    this.aclClassOf = new Int32Array(buffer, at.aclClassOf, n);
    this.#tokenStart = new Uint32Array(buffer, at.tokenStart, n + 1);
    this.#tokenValues = new Uint32Array(buffer, at.tokenValues, tokenCount);
    this.#sourceOf.set(sourceOf);
    this.#indexedAtOf.set(indexedAtOf);
    this.#payloadOf.set(payloadOf);
    this.#shapeOf.set(shapeOf);
    this.aclClassOf.set(aclClassOf);
    let text = 0;
    let tokens = 0;
    for (let i = 0; i < n; i += 1) {
      this.#textStart[i] = text;
      source.writeText(i, this.#text, text);
      text += source.textLength(i);
      source.writeSha(i, this.#sha, i * 32);
      this.#spans[i * 2] = source.spanStart(i);
      this.#spans[i * 2 + 1] = source.spanEnd(i);
      this.#tokenStart[i] = tokens;
      const shape = shapes.values[shapeOf[i]!]!;
      for (let k = 0; k < shape.length; k += 1) this.#tokenValues[tokens + k] = source.tokenValue(i, k);
      tokens += shape.length;
      if (this.vectors !== null) source.writeVector(i, this.vectors, i);
    }
    this.#textStart[n] = text;
    this.#tokenStart[n] = tokens;
    this.#ids = ids;
    this.#sources = sources.values;
    this.#indexedAts = indexedAts.values;
    this.#payloads = payloads.values;
    this.#payloadKeys = payloads.keys;
    this.#shapes = shapes.values;

    // Per class: rows by id, source lists by source id, posting lists by term (each list's rows ascending).
    const index = new Map<number, ClassIndex>();
    const classCounts = new Map<number, number>();
    for (const [aclClass, rows] of rowsOfClass) {
      const plan = classPlans.get(aclClass)!;
      classCounts.set(aclClass, rows.length);
      const entry: ClassIndex = {
        byId: new Int32Array(buffer, plan.byId, plan.rows),
        sourceOf: new Int32Array(buffer, plan.sourceOf, plan.lists),
        sourceOffsets: new Int32Array(buffer, plan.sourceOffsets, plan.lists + 1),
        sourceRows: new Int32Array(buffer, plan.sourceRows, plan.rows),
        terms: new Float64Array(buffer, plan.termsAt, plan.terms),
        offsets: new Int32Array(buffer, plan.offsets, plan.terms + 1),
        rows: new Int32Array(buffer, plan.postingRows, plan.postings),
        weights: new Float32Array(buffer, plan.weights, plan.postings),
      };
      entry.byId.set([...rows].sort((a, b) => byCodeUnits(ids[a]!, ids[b]!)));
      const bySource = [...sourceLists.get(aclClass)!].sort(([a], [b]) => byCodeUnits(sources.values[a]!, sources.values[b]!));
      let offset = 0;
      bySource.forEach(([sourceIndex, list], i) => {
        entry.sourceOf[i] = sourceIndex;
        entry.sourceOffsets[i] = offset;
        entry.sourceRows.set(list, offset);
        offset += list.length;
      });
      entry.sourceOffsets[bySource.length] = offset;
      const termLengths = [...lengths.get(aclClass)!].sort(([a], [b]) => a - b);
      const next = new Map<number, number>();
      let total = 0;
      termLengths.forEach(([term, length], i) => {
        entry.terms[i] = term;
        entry.offsets[i] = total;
        next.set(term, total);
        total += length;
      });
      entry.offsets[termLengths.length] = total;
      postings.fill(aclClass, (term, row, weight) => {
        const p = next.get(term)!;
        entry.rows[p] = row;
        entry.weights[p] = weight;
        next.set(term, p + 1);
      });
      index.set(aclClass, entry);
    }
    this.#index = index;
    this.classCounts = classCounts;
  }

  /** A segment of new rows (an ingest batch, or a stretch of a file being loaded), in order. */
  static fromRows(classes: AclClasses, rows: readonly NewRow[]): Segment {
    const dimension = rows.find((row) => row.dense !== null)?.dense?.length ?? 0;
    const texts = rows.map((row) => Buffer.from(row.record.text, 'utf8'));
    const shapes = rows.map((row) => Object.freeze(Object.keys(row.record.tokens).sort()));
    const payloads = new Map<ChunkRecord, [string, Payload]>();
    const source: RowSource = {
      count: rows.length,
      id: (i) => rows[i]!.record.id,
      sourceId: (i) => rows[i]!.record.sourceId,
      aclClass: (i) => rows[i]!.aclClass,
      textLength: (i) => texts[i]!.length,
      writeText: (i, into, at) => into.set(texts[i]!, at),
      writeSha: (i, into, at) => {
        const { id, textSha256 } = rows[i]!.record;
        // Hashes from other tools' files are validated as hex before they get here; anything else is a bug.
        if (!HEX.test(textSha256)) throw new TypeError(`textSha256 of ${id} is not 64 hex digits`);
        into.set(Buffer.from(textSha256, 'hex'), at);
      },
      spanStart: (i) => rows[i]!.record.span.start,
      spanEnd: (i) => rows[i]!.record.span.end,
      indexedAt: (i) => rows[i]!.record.indexedAt,
      payload: (i) => {
        const { record } = rows[i]!;
        let entry = payloads.get(record);
        if (entry === undefined) {
          const payload = payloadOf(record);
          entry = [canonicalStringify(payload), deepFreeze(payload)];
          payloads.set(record, entry);
        }
        return entry;
      },
      // Token counts in key order, so a record reads the same whether it was ingested or loaded.
      tokenShape: (i) => shapes[i]!,
      tokenValue: (i, k) => rows[i]!.record.tokens[shapes[i]![k]!]!,
      writeVector: (i, into, row) => {
        const dense = rows[i]!.dense;
        if (dense !== null) into.set(row, dense);
      },
    };
    // Rows grouped by class once, so each class's postings are built from its own rows.
    const byClass = new Map<number, number[]>();
    rows.forEach((row, i) => {
      const list = byClass.get(row.aclClass);
      if (list === undefined) byClass.set(row.aclClass, [i]);
      else list.push(i);
    });
    const postings: PostingSource = {
      lengths: (aclClass) => {
        const lengths = new Map<number, number>();
        for (const i of byClass.get(aclClass) ?? []) {
          for (const term of rows[i]!.sparse.indices) lengths.set(term, (lengths.get(term) ?? 0) + 1);
        }
        return lengths;
      },
      fill: (aclClass, put) => {
        for (const i of byClass.get(aclClass) ?? []) {
          const { indices, values } = rows[i]!.sparse;
          for (let t = 0; t < indices.length; t += 1) put(indices[t]!, i, values[t]!);
        }
      },
    };
    return new Segment(classes, source, postings, dimension);
  }

  /** One segment of the live rows of `parts`, in order (rows keep their relative order). */
  static merge(classes: AclClasses, parts: readonly { segment: Segment; dead: Uint8Array | null }[]): Segment {
    const from: { segment: Segment; row: number }[] = [];
    const remaps: Int32Array[] = [];
    let dimension = 0;
    for (const { segment, dead } of parts) {
      const remap = new Int32Array(segment.size).fill(-1);
      for (let row = 0; row < segment.size; row += 1) {
        if (dead !== null && dead[row] === 1) continue;
        remap[row] = from.length;
        from.push({ segment, row });
      }
      remaps.push(remap);
      if (segment.vectors !== null) dimension = segment.dimension;
    }
    const at = (i: number) => from[i]!;
    const source: RowSource = {
      count: from.length,
      id: (i) => at(i).segment.id(at(i).row),
      sourceId: (i) => at(i).segment.sourceId(at(i).row),
      aclClass: (i) => at(i).segment.aclClassOf[at(i).row]!,
      textLength: (i) => at(i).segment.#textStart[at(i).row + 1]! - at(i).segment.#textStart[at(i).row]!,
      writeText: (i, into, offset) => into.set(at(i).segment.textBytes(at(i).row), offset),
      writeSha: (i, into, offset) => into.set(at(i).segment.shaBytes(at(i).row), offset),
      spanStart: (i) => at(i).segment.spanStart(at(i).row),
      spanEnd: (i) => at(i).segment.spanEnd(at(i).row),
      indexedAt: (i) => at(i).segment.indexedAt(at(i).row),
      payload: (i) => at(i).segment.payloadEntry(at(i).row),
      tokenShape: (i) => at(i).segment.tokenShape(at(i).row),
      tokenValue: (i, k) => at(i).segment.#tokenValues[at(i).segment.#tokenStart[at(i).row]! + k]!,
      writeVector: (i, into, row) => {
        const { segment, row: fromRow } = at(i);
        if (segment.vectors !== null) into.copy(row, segment.vectors, fromRow);
      },
    };
    const postings: PostingSource = {
      lengths: (aclClass) => {
        const lengths = new Map<number, number>();
        parts.forEach(({ segment }, p) => {
          const entry = segment.#index.get(aclClass);
          if (entry === undefined) return;
          const remap = remaps[p]!;
          for (let list = 0; list < entry.terms.length; list += 1) {
            let live = 0;
            for (let i = entry.offsets[list]!; i < entry.offsets[list + 1]!; i += 1) if (remap[entry.rows[i]!]! >= 0) live += 1;
            if (live > 0) lengths.set(entry.terms[list]!, (lengths.get(entry.terms[list]!) ?? 0) + live);
          }
        });
        return lengths;
      },
      fill: (aclClass, put) => {
        parts.forEach(({ segment }, p) => {
          const entry = segment.#index.get(aclClass);
          if (entry === undefined) return;
          const remap = remaps[p]!;
          for (let list = 0; list < entry.terms.length; list += 1) {
            const term = entry.terms[list]!;
            for (let i = entry.offsets[list]!; i < entry.offsets[list + 1]!; i += 1) {
              const row = remap[entry.rows[i]!]!;
              if (row >= 0) put(term, row, entry.weights[i]!);
            }
          }
        });
      },
    };
    return new Segment(classes, source, postings, dimension);
  }

  // -------------------------------------------------------------------------------------------
  // Rows

  id(row: number): string {
    return this.#ids[row]!;
  }

  sourceId(row: number): string {
    return this.#sources[this.#sourceOf[row]!]!;
  }

  spanStart(row: number): number {
    return this.#spans[row * 2]!;
  }

  spanEnd(row: number): number {
    return this.#spans[row * 2 + 1]!;
  }

  text(row: number): string {
    const key = this.#serial * 2 ** 32 + row;
    return decodedTexts.get(key) ?? decodedTexts.set(key, this.#text.toString('utf8', this.#textStart[row]!, this.#textStart[row + 1]!));
  }

  textBytes(row: number): Uint8Array {
    return this.#text.subarray(this.#textStart[row]!, this.#textStart[row + 1]!);
  }

  shaBytes(row: number): Uint8Array {
    return this.#sha.subarray(row * 32, row * 32 + 32);
  }

  textSha256(row: number): string {
    return Buffer.from(this.#sha.buffer, this.#sha.byteOffset + row * 32, 32).toString('hex');
  }

  indexedAt(row: number): string {
    return this.#indexedAts[this.#indexedAtOf[row]!]!;
  }

  /** The newest `indexedAt` (ms since the epoch) of the rows not marked dead in `dead`; NaN with none. */
  newestIndexedAt(dead: Uint8Array | null): number {
    const millis = this.#indexedAts.map((at) => timestampMillis(at));
    let newest = Number.NaN;
    if (dead === null) {
      for (const at of millis) if (!(at <= newest)) newest = Number.isNaN(at) ? newest : at;
      return newest;
    }
    for (let row = 0; row < this.size; row += 1) {
      if (dead[row] === 1) continue;
      const at = millis[this.#indexedAtOf[row]!]!;
      if (!Number.isNaN(at) && !(at <= newest)) newest = at;
    }
    return newest;
  }

  version(row: number): string | undefined {
    return this.#payloads[this.#payloadOf[row]!]!.version;
  }

  payloadEntry(row: number): [string, Payload] {
    const index = this.#payloadOf[row]!;
    return [this.#payloadKeys[index]!, this.#payloads[index]!];
  }

  tokenShape(row: number): readonly string[] {
    return this.#shapes[this.#shapeOf[row]!]!;
  }

  tokens(row: number): Record<string, number> {
    const shape = this.tokenShape(row);
    const start = this.#tokenStart[row]!;
    const tokens: Record<string, number> = {};
    for (let i = 0; i < shape.length; i += 1) tokens[shape[i]!] = this.#tokenValues[start + i]!;
    return tokens;
  }

  dense(row: number): DenseVector | null {
    return this.vectors?.vector(row) ?? null;
  }

  /**
   * The chunk's record, rebuilt (a new object, nothing shared with the store), in the key order ingest gives
   * records. Without `text`, the text and its hash are left out: enough to evaluate a filter that names neither.
   */
  record(row: number, withText = true): ChunkRecord {
    const payload = this.#payloads[this.#payloadOf[row]!]!;
    const record = {
      id: this.#ids[row]!,
      sourceId: this.sourceId(row),
      section: [...payload.section],
      span: { start: this.spanStart(row), end: this.spanEnd(row) },
      ...(withText ? { text: this.text(row), textSha256: this.textSha256(row) } : {}),
      indexedAt: this.indexedAt(row),
      tokens: this.tokens(row),
    } as ChunkRecord;
    if (payload.version !== undefined) record.version = payload.version;
    if (payload.title !== undefined) record.title = payload.title;
    if (payload.url !== undefined) record.url = payload.url;
    if (payload.timestamp !== undefined) record.timestamp = payload.timestamp;
    if (payload.kind !== undefined) record.kind = payload.kind;
    if (payload.clusters !== undefined) record.clusters = [...payload.clusters];
    const acl = this.classes.acl(this.aclClassOf[row]!);
    if (acl !== undefined) record.acl = [...acl];
    if (payload.metadata !== undefined) record.metadata = structuredClone(payload.metadata);
    if (payload.locator !== undefined) record.locator = structuredClone(payload.locator);
    if (payload.parentId !== undefined) record.parentId = payload.parentId;
    return record;
  }

  /**
   * The chunk's record as `chunkToCandidate` reads it, without copies: its section, clusters, metadata and locator
   * are the segment's own (interned) values. Only for code that copies what it keeps and changes nothing.
   */
  recordView(row: number): ChunkRecord {
    const payload = this.#payloads[this.#payloadOf[row]!]!;
    // Field by field: only what chunkToCandidate reads, without spreading the payload object.
    return {
      version: payload.version,
      title: payload.title,
      url: payload.url,
      timestamp: payload.timestamp,
      kind: payload.kind,
      metadata: payload.metadata,
      locator: payload.locator,
      parentId: payload.parentId,
      section: payload.section,
      id: this.#ids[row]!,
      sourceId: this.sourceId(row),
      span: { start: this.spanStart(row), end: this.spanEnd(row) },
      text: this.text(row),
      textSha256: '',
      indexedAt: this.indexedAt(row),
      tokens: this.tokens(row),
    } as ChunkRecord;
  }

  /**
   * Each row's BM25 vector, read back from the postings (indices ascending, weights as stored: f32), for
   * saving: row r's entries are [offsets[r], offsets[r + 1]) of indices and values.
   */
  sparseRows(): { offsets: Int32Array; indices: Float64Array; values: Float32Array } {
    const counts = new Int32Array(this.size + 1);
    for (const entry of this.#index.values()) for (let i = 0; i < entry.rows.length; i += 1) counts[entry.rows[i]! + 1]! += 1;
    for (let row = 0; row < this.size; row += 1) counts[row + 1]! += counts[row]!;
    const indices = new Float64Array(counts[this.size]!);
    const values = new Float32Array(indices.length);
    const next = counts.slice(0, this.size);
    // Lists are in ascending term order, and a row belongs to one class: each row receives its terms in order.
    for (const entry of this.#index.values()) {
      for (let list = 0; list < entry.terms.length; list += 1) {
        const term = entry.terms[list]!;
        for (let i = entry.offsets[list]!; i < entry.offsets[list + 1]!; i += 1) {
          const row = entry.rows[i]!;
          const at = next[row]!;
          indices[at] = term;
          values[at] = entry.weights[i]!;
          next[row] = at + 1;
        }
      }
    }
    return { offsets: counts, indices, values };
  }

  // -------------------------------------------------------------------------------------------
  // Lookups by class

  /** The ACL classes with rows here. */
  aclClasses(): IterableIterator<number> {
    return this.#index.keys();
  }

  get classCount(): number {
    return this.#index.size;
  }

  /** The row of a chunk id among the rows of `aclClass` (a binary search of its id order). */
  rowOf(aclClass: number, id: string): number | undefined {
    const entry = this.#index.get(aclClass);
    if (entry === undefined) return undefined;
    const { byId } = entry;
    let lo = 0;
    let hi = byId.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const found = this.#ids[byId[mid]!]!;
      if (found === id) return byId[mid];
      if (found < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** Calls `visit` with each row of a source among the rows of `aclClass`, ascending. */
  forEachRowOfSource(aclClass: number, sourceId: string, visit: (row: number) => void): void {
    const entry = this.#index.get(aclClass);
    if (entry === undefined) return;
    let lo = 0;
    let hi = entry.sourceOf.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const found = this.#sources[entry.sourceOf[mid]!]!;
      if (found === sourceId) {
        for (let i = entry.sourceOffsets[mid]!; i < entry.sourceOffsets[mid + 1]!; i += 1) visit(entry.sourceRows[i]!);
        return;
      }
      if (found < sourceId) lo = mid + 1;
      else hi = mid - 1;
    }
  }

  /** Every source with rows of `aclClass` here. */
  *sourceIds(aclClass: number): IterableIterator<string> {
    const entry = this.#index.get(aclClass);
    if (entry === undefined) return;
    for (let i = 0; i < entry.sourceOf.length; i += 1) yield this.#sources[entry.sourceOf[i]!]!;
  }

  /**
   * The postings of `term` in `aclClass` (a binary search of its terms): rows ascending, with their BM25 weights
   * (f32). Undefined when no row of that class holds the term.
   */
  postings(aclClass: number, term: number): PostingList | undefined {
    const entry = this.#index.get(aclClass);
    if (entry === undefined) return undefined;
    const { terms } = entry;
    let lo = 0;
    let hi = terms.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const found = terms[mid]!;
      if (found === term) return { rows: entry.rows, weights: entry.weights, start: entry.offsets[mid]!, end: entry.offsets[mid + 1]! };
      if (found < term) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}
