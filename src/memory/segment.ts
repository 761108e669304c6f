/**
 * A segment of the embedded store: a batch of chunks that never changes once built. Writes add a new segment
 * and mark rows of older ones dead in a new snapshot (snapshot.ts); small segments are merged into
 * bigger ones. Immutability is what lets a reader keep the snapshot it started on while writes go on, and a
 * store file keep a segment's bytes from one save to the next (file.ts).
 *
 * Chunks are stored in columns, not as an object each, all in one memory per segment (vectors.ts): texts as
 * UTF-8, hashes as bytes, spans and token counts as integers, vectors f32 and int8, ids and sources as sorted
 * indexes, postings in packed arrays. What a document gives all its chunks (version, title, section path,
 * metadata...) is interned once per segment. Records are rebuilt from the columns when a read returns them.
 * A segment's counts (its `SegmentShape`) fix where each column lives, so its memory is saved and read back as it
 * is, with its strings and interned values beside it (`SegmentHeap`).
 *
 * Ids, sources and postings are grouped by ACL class (acl-classes.ts): a reader looks only into the classes its
 * principals may read, so a restricted id, source or term is a miss for it, exactly as a missing one is.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { BoundedCache } from '../base/bounded-cache.js';
import { canonicalStringify } from '../base/canonical.js';
import { timestampMillis } from '../core/schemas.js';
import type { AclClasses } from './acl-classes.js';
import {
  Layout,
  SegmentMemory,
  VectorBlock,
  type DenseVector,
  type MemoryPager,
  type StoredVectorPlan,
  type VectorPlan,
} from './vectors.js';
import { ChunkRecordSchema, type ChunkRecord } from '../store/schemas.js';
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
const PayloadSchema = ChunkRecordSchema.pick({
  version: true,
  title: true,
  url: true,
  section: true,
  timestamp: true,
  kind: true,
  clusters: true,
  metadata: true,
  locator: true,
  parentId: true,
});
type Payload = Readonly<z.infer<typeof PayloadSchema>>;

/** A segment's counts: they fix where each column lives in its memory (the store file records them). */
export interface SegmentShape {
  readonly rows: number;
  /** Dimension of the vectors; 0 when no row has one. */
  readonly dimension: number;
  /** Whether the layout has room for the vectors' int8 copy. */
  readonly int8: boolean;
  readonly textBytes: number;
  /** Token counts stored, over all rows. */
  readonly tokenValues: number;
  /** The ACL classes with rows here, ascending. */
  readonly classes: readonly ClassShape[];
}

export interface ClassShape {
  readonly aclClass: number;
  readonly rows: number;
  /** Sources with rows of the class. */
  readonly sources: number;
  readonly terms: number;
  readonly postings: number;
}

/** What a segment keeps on the JavaScript heap: its strings and interned values, in the order rows refer to them. */
export interface SegmentHeap {
  readonly ids: readonly string[];
  readonly sources: readonly string[];
  readonly indexedAts: readonly string[];
  readonly payloads: readonly Payload[];
  /** Encoding names of each token-count shape, sorted. */
  readonly shapes: readonly (readonly string[])[];
}

const HeapSchema = z.strictObject({
  ids: z.array(z.string().min(1)),
  sources: z.array(z.string().min(1)),
  indexedAts: z.array(z.string().min(1)),
  payloads: z.array(PayloadSchema),
  shapes: z.array(z.array(z.string().min(1))),
});

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

/** The per-row columns, as views into the segment's memory. */
interface Columns {
  readonly textStart: Float64Array;
  readonly text: Buffer;
  readonly sha: Uint8Array;
  readonly spans: Uint32Array;
  readonly sourceOf: Int32Array;
  readonly indexedAtOf: Int32Array;
  readonly payloadOf: Int32Array;
  readonly shapeOf: Int32Array;
  readonly aclClassOf: Int32Array;
  readonly tokenStart: Uint32Array;
  readonly tokenValues: Uint32Array;
}

type ColumnPlan = { readonly [K in keyof Columns]: number };

interface ClassPlan {
  readonly shape: ClassShape;
  readonly at: { readonly [K in keyof ClassIndex]: number };
}

/**
 * Where everything of a segment of this shape lives in its memory. The order is the store file's (`@3`): changing
 * it changes the format. What a file keeps is `[0, stored)`; a query's scratch space follows.
 */
interface SegmentPlan {
  readonly shape: SegmentShape;
  readonly columns: ColumnPlan;
  readonly vectors: VectorPlan | null;
  readonly classes: readonly ClassPlan[];
  readonly stored: number;
  readonly size: number;
}

function planSegment(shape: SegmentShape): SegmentPlan {
  const layout = new Layout();
  const n = shape.rows;
  const columns: ColumnPlan = {
    textStart: layout.take((n + 1) * 8, 8),
    text: layout.take(shape.textBytes),
    sha: layout.take(n * 32),
    spans: layout.take(n * 8, 4),
    sourceOf: layout.take(n * 4, 4),
    indexedAtOf: layout.take(n * 4, 4),
    payloadOf: layout.take(n * 4, 4),
    shapeOf: layout.take(n * 4, 4),
    aclClassOf: layout.take(n * 4, 4),
    tokenStart: layout.take((n + 1) * 4, 4),
    tokenValues: layout.take(shape.tokenValues * 4, 4),
  };
  const stored: StoredVectorPlan | null = shape.dimension > 0 ? VectorBlock.plan(layout, shape.dimension, n, shape.int8) : null;
  const classes = shape.classes.map((c) => ({
    shape: c,
    at: {
      byId: layout.take(c.rows * 4, 4),
      sourceOf: layout.take(c.sources * 4, 4),
      sourceOffsets: layout.take((c.sources + 1) * 4, 4),
      sourceRows: layout.take(c.rows * 4, 4),
      terms: layout.take(c.terms * 8, 8),
      offsets: layout.take((c.terms + 1) * 4, 4),
      rows: layout.take(c.postings * 4, 4),
      weights: layout.take(c.postings * 4, 4),
    },
  }));
  const storedBytes = layout.size;
  const vectors = stored === null ? null : VectorBlock.planScratch(layout, stored);
  return { shape, columns, vectors, classes, stored: storedBytes, size: layout.size };
}

function viewColumns(buffer: ArrayBuffer, plan: SegmentPlan): Columns {
  const { columns: at, shape } = plan;
  const n = shape.rows;
  return {
    textStart: new Float64Array(buffer, at.textStart, n + 1),
    text: Buffer.from(buffer, at.text, shape.textBytes),
    sha: new Uint8Array(buffer, at.sha, n * 32),
    spans: new Uint32Array(buffer, at.spans, n * 2),
    sourceOf: new Int32Array(buffer, at.sourceOf, n),
    indexedAtOf: new Int32Array(buffer, at.indexedAtOf, n),
    payloadOf: new Int32Array(buffer, at.payloadOf, n),
    shapeOf: new Int32Array(buffer, at.shapeOf, n),
    aclClassOf: new Int32Array(buffer, at.aclClassOf, n),
    tokenStart: new Uint32Array(buffer, at.tokenStart, n + 1),
    tokenValues: new Uint32Array(buffer, at.tokenValues, shape.tokenValues),
  };
}

function viewClass(buffer: ArrayBuffer, { shape: c, at }: ClassPlan): ClassIndex {
  return {
    byId: new Int32Array(buffer, at.byId, c.rows),
    sourceOf: new Int32Array(buffer, at.sourceOf, c.sources),
    sourceOffsets: new Int32Array(buffer, at.sourceOffsets, c.sources + 1),
    sourceRows: new Int32Array(buffer, at.sourceRows, c.rows),
    terms: new Float64Array(buffer, at.terms, c.terms),
    offsets: new Int32Array(buffer, at.offsets, c.terms + 1),
    rows: new Int32Array(buffer, at.rows, c.postings),
    weights: new Float32Array(buffer, at.weights, c.postings),
  };
}

const STRING_LISTS = ['ids', 'sources', 'indexedAts'] as const;

/** The first way `json`'s `ids`, `sources` or `indexedAts` is not a list of non-empty strings, as a schema issue; else null. */
function stringListIssue(json: unknown): z.core.$ZodIssue | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null; // the schema says what it is
  for (const key of STRING_LISTS) {
    const list = (json as Record<string, unknown>)[key];
    if (!Array.isArray(list))
      return { code: 'invalid_type', expected: 'array', path: [key], message: `${key}: expected an array`, input: list };
    for (let i = 0; i < list.length; i += 1) {
      const value: unknown = list[i];
      if (typeof value !== 'string' || value.length === 0) {
        return {
          code: 'invalid_type',
          expected: 'string',
          path: [key, i],
          message: `${key}[${i}]: expected a non-empty string`,
          input: value,
        };
      }
    }
  }
  return null;
}

/** Interns values by a string key: an index per distinct key, in first-seen order. */
class Interner<T> {
  readonly values: T[] = [];
  readonly #index = new Map<string, number>();

  add(key: string, value: () => T): number {
    let index = this.#index.get(key);
    if (index === undefined) {
      index = this.values.length;
      this.values.push(value());
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

/** Appends `value` to the list under `key`. */
function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** Thrown when a stored segment does not hold together (file.ts reports it as a corrupt store file). */
export class SegmentCorruptError extends Error {
  override readonly name = 'SegmentCorruptError';
  /** The schema's issues, when its strings are what failed. */
  readonly issues: z.core.$ZodIssue[];

  constructor(message: string, issues: z.core.$ZodIssue[] = []) {
    super(message);
    this.issues = issues;
  }
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
  /** The row's payload and its key (its canonical JSON). */
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

/** Pass 1 of a build: the strings and interned values, each row's indexes into them, and the sizes of the rest. */
interface Interned {
  readonly heap: SegmentHeap;
  readonly payloadKeys: readonly string[];
  readonly sourceOf: Int32Array;
  readonly indexedAtOf: Int32Array;
  readonly payloadOf: Int32Array;
  readonly shapeOf: Int32Array;
  readonly aclClassOf: Int32Array;
  /** Rows per ACL class, ascending, classes in first-seen order. */
  readonly rowsOfClass: Map<number, number[]>;
  readonly textBytes: number;
  readonly tokenValues: number;
}

function internRows(source: RowSource): Interned {
  const n = source.count;
  const ids: string[] = new Array<string>(n);
  const sources = new Interner<string>();
  const indexedAts = new Interner<string>();
  const payloads = new Interner<[string, Payload]>();
  const shapes = new Interner<readonly string[]>();
  const interned = {
    sourceOf: new Int32Array(n),
    indexedAtOf: new Int32Array(n),
    payloadOf: new Int32Array(n),
    shapeOf: new Int32Array(n),
    aclClassOf: new Int32Array(n),
    rowsOfClass: new Map<number, number[]>(),
  };
  let textBytes = 0;
  let tokenValues = 0;
  for (let i = 0; i < n; i += 1) {
    ids[i] = source.id(i);
    const sourceId = source.sourceId(i);
    interned.sourceOf[i] = sources.add(sourceId, () => sourceId);
    const indexedAt = source.indexedAt(i);
    interned.indexedAtOf[i] = indexedAts.add(indexedAt, () => indexedAt);
    const entry = source.payload(i);
    interned.payloadOf[i] = payloads.add(entry[0], () => entry);
    const shape = source.tokenShape(i);
    interned.shapeOf[i] = shapes.add(shape.join('\u0000'), () => shape);
    tokenValues += shape.length;
    textBytes += source.textLength(i);
    const aclClass = source.aclClass(i);
    interned.aclClassOf[i] = aclClass;
    pushTo(interned.rowsOfClass, aclClass, i);
  }
  const heap: SegmentHeap = {
    ids,
    sources: sources.values,
    indexedAts: indexedAts.values,
    payloads: payloads.values.map(([, payload]) => payload),
    shapes: shapes.values,
  };
  return { ...interned, heap, payloadKeys: payloads.values.map(([key]) => key), textBytes, tokenValues };
}

/** Per class: its postings' lengths by term, and its rows grouped by source (source index → rows ascending). */
interface ClassLists {
  readonly aclClass: number;
  readonly rows: readonly number[];
  readonly termLengths: Map<number, number>;
  readonly bySource: Map<number, number[]>;
}

function classLists(interned: Interned, postings: PostingSource): ClassLists[] {
  return [...interned.rowsOfClass]
    .sort(([a], [b]) => a - b)
    .map(([aclClass, rows]) => {
      const bySource = new Map<number, number[]>();
      for (const row of rows) pushTo(bySource, interned.sourceOf[row] ?? -1, row);
      return { aclClass, rows, termLengths: postings.lengths(aclClass), bySource };
    });
}

function shapeOf(interned: Interned, lists: readonly ClassLists[], dimension: number): SegmentShape {
  const total = (lengths: Map<number, number>) => {
    let sum = 0;
    for (const length of lengths.values()) sum += length;
    return sum;
  };
  return {
    rows: interned.heap.ids.length,
    dimension,
    int8: dimension > 0 && VectorBlock.quantizes,
    textBytes: interned.textBytes,
    tokenValues: interned.tokenValues,
    classes: lists.map((c) => ({
      aclClass: c.aclClass,
      rows: c.rows.length,
      sources: c.bySource.size,
      terms: c.termLengths.size,
      postings: total(c.termLengths),
    })),
  };
}

/** Pass 2 of a build: the per-row columns and the vectors, from the source in order. */
function fillRows(columns: Columns, vectors: VectorBlock | null, source: RowSource, interned: Interned): void {
  const n = source.count;
  columns.sourceOf.set(interned.sourceOf);
  columns.indexedAtOf.set(interned.indexedAtOf);
  columns.payloadOf.set(interned.payloadOf);
  columns.shapeOf.set(interned.shapeOf);
  columns.aclClassOf.set(interned.aclClassOf);
  const shapes = interned.heap.shapes;
  let text = 0;
  let tokens = 0;
  for (let i = 0; i < n; i += 1) {
    columns.textStart[i] = text;
    source.writeText(i, columns.text, text);
    text += source.textLength(i);
    source.writeSha(i, columns.sha, i * 32);
    columns.spans[i * 2] = source.spanStart(i);
    columns.spans[i * 2 + 1] = source.spanEnd(i);
    columns.tokenStart[i] = tokens;
    const shape = shapes[interned.shapeOf[i] ?? 0] ?? [];
    for (let k = 0; k < shape.length; k += 1) columns.tokenValues[tokens + k] = source.tokenValue(i, k);
    tokens += shape.length;
    if (vectors !== null) source.writeVector(i, vectors, i);
  }
  columns.textStart[n] = text;
  columns.tokenStart[n] = tokens;
}

/** Pass 3 of a build: per class, rows by id, source lists by source id, posting lists by term (rows ascending). */
function fillClass(entry: ClassIndex, lists: ClassLists, heap: SegmentHeap, postings: PostingSource): void {
  const { ids, sources } = heap;
  const id = (row: number) => ids[row] ?? '';
  entry.byId.set([...lists.rows].sort((a, b) => byCodeUnits(id(a), id(b))));
  const bySource = [...lists.bySource].sort(([a], [b]) => byCodeUnits(sources[a] ?? '', sources[b] ?? ''));
  let offset = 0;
  bySource.forEach(([sourceIndex, rows], i) => {
    entry.sourceOf[i] = sourceIndex;
    entry.sourceOffsets[i] = offset;
    entry.sourceRows.set(rows, offset);
    offset += rows.length;
  });
  entry.sourceOffsets[bySource.length] = offset;
  const termLengths = [...lists.termLengths].sort(([a], [b]) => a - b);
  // Each term's list, and where its next posting goes (one map read per posting).
  const listOf = new Map<number, number>();
  const next = new Int32Array(termLengths.length);
  let total = 0;
  termLengths.forEach(([term, length], i) => {
    entry.terms[i] = term;
    entry.offsets[i] = total;
    listOf.set(term, i);
    next[i] = total;
    total += length;
  });
  entry.offsets[termLengths.length] = total;
  postings.fill(lists.aclClass, (term, row, weight) => {
    const list = listOf.get(term) ?? 0;
    const p = next[list]!;
    entry.rows[p] = row;
    entry.weights[p] = weight;
    next[list] = p + 1;
  });
}

/** Everything a segment is made of, however it was made (built, or read from a store file). */
interface SegmentParts {
  /** Its content id, when known (read from a file); made on first save otherwise. */
  readonly contentId: string | undefined;
  readonly memory: SegmentMemory;
  readonly plan: SegmentPlan;
  readonly columns: Columns;
  readonly vectors: VectorBlock | null;
  readonly heap: SegmentHeap;
  readonly payloadKeys: readonly string[] | null;
  readonly index: ReadonlyMap<number, ClassIndex>;
}

/** True when every value of `values` is in [0, limit). */
function allBelow(values: Int32Array, limit: number): boolean {
  // One unsigned comparison per value (a negative one turns huge): this runs over every posting of a file loaded.
  for (let i = 0; i < values.length; i += 1) if (values[i]! >>> 0 >= limit) return false;
  return true;
}

/** True when `values` never decreases, starts at 0 and ends at `end`. */
function isOffsets(values: ArrayLike<number>, end: number): boolean {
  if (values.length === 0 || values[0] !== 0 || values[values.length - 1] !== end) return false;
  for (let i = 1; i < values.length; i += 1) if ((values[i] ?? 0) < (values[i - 1] ?? 0)) return false;
  return true;
}

/**
 * The checks a segment read from a file must pass before anything reads it: every index into the strings, the
 * text, the token counts, the rows and the postings is in range, so no read of a damaged file goes astray.
 */
function checkStored(
  plan: SegmentPlan,
  columns: Columns,
  index: ReadonlyMap<number, ClassIndex>,
  heap: SegmentHeap,
  aclClasses: number,
  withPostings: boolean,
): void {
  const { shape } = plan;
  const n = shape.rows;
  const fail = (what: string): never => {
    throw new SegmentCorruptError(what);
  };
  if (heap.ids.length !== n) fail(`${heap.ids.length} ids for ${n} rows`);
  if (!isOffsets(columns.textStart, shape.textBytes)) fail('text offsets out of order');
  if (!isOffsets(columns.tokenStart, shape.tokenValues)) fail('token offsets out of order');
  if (!allBelow(columns.sourceOf, heap.sources.length)) fail('a source index out of range');
  if (!allBelow(columns.indexedAtOf, heap.indexedAts.length)) fail('an indexedAt index out of range');
  if (!allBelow(columns.payloadOf, heap.payloads.length)) fail('a payload index out of range');
  if (!allBelow(columns.shapeOf, heap.shapes.length)) fail('a token shape index out of range');
  if (!allBelow(columns.aclClassOf, aclClasses)) fail('an ACL class out of range');
  for (let row = 0; row < n; row += 1) {
    const shapeLength = heap.shapes[columns.shapeOf[row] ?? 0]?.length ?? -1;
    if ((columns.tokenStart[row + 1] ?? 0) - (columns.tokenStart[row] ?? 0) !== shapeLength)
      fail(`row ${row} has token counts of another shape`);
    if ((columns.spans[row * 2] ?? 0) > (columns.spans[row * 2 + 1] ?? 0)) fail(`row ${row} has a span that ends before it starts`);
  }
  const counts = new Map<number, number>();
  for (let row = 0; row < n; row += 1) counts.set(columns.aclClassOf[row] ?? -1, (counts.get(columns.aclClassOf[row] ?? -1) ?? 0) + 1);
  for (const { shape: c } of plan.classes) {
    const entry = index.get(c.aclClass);
    if (entry === undefined || counts.get(c.aclClass) !== c.rows) fail(`ACL class ${c.aclClass} has another number of rows`);
    else {
      // Posting rows read later (a lazily read file) are checked list by list as they are read (`postings`).
      if (!allBelow(entry.byId, n) || !allBelow(entry.sourceRows, n) || (withPostings && !allBelow(entry.rows, n)))
        fail(`ACL class ${c.aclClass} names a row out of range`);
      if (!allBelow(entry.sourceOf, heap.sources.length)) fail(`ACL class ${c.aclClass} names a source out of range`);
      if (!isOffsets(entry.sourceOffsets, c.rows) || !isOffsets(entry.offsets, c.postings))
        fail(`ACL class ${c.aclClass} has offsets out of order`);
      for (let i = 1; i < entry.terms.length; i += 1)
        if (!((entry.terms[i] ?? 0) > (entry.terms[i - 1] ?? 0))) fail(`ACL class ${c.aclClass} has terms out of order`);
    }
  }
  if (counts.size !== plan.classes.length) fail('rows of an ACL class without an index');
}

/** A segment's stored form: its content id, its shape, its memory's bytes as they are and its heap as JSON. */
export interface StoredSegment {
  readonly contentId: string;
  readonly shape: SegmentShape;
  /** Whether the int8 rows hold the int8 copy (false: their place is reserved but empty). */
  readonly quantized: boolean;
  /** `[0, stored)` of the segment's memory: a view, read it before the segment is dropped. */
  readonly contents: Uint8Array;
  /** Its strings and interned values, JSON in UTF-8. */
  readonly heap: Buffer;
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
  readonly #heap: SegmentHeap;
  /** Each payload's canonical JSON, made when a merge first asks (a segment read from a file has none). */
  #payloadKeys: readonly string[] | null;
  readonly #columns: Columns;
  readonly #plan: SegmentPlan;
  readonly #memory: SegmentMemory;
  readonly #index: ReadonlyMap<number, ClassIndex>;
  readonly #serial = nextSegmentSerial++;
  /**
   * Identifies the segment across saves and loads of store files: the sha256 of everything stored of it (shape,
   * memory, strings), so the same segment has the same id wherever it was made, and two segments one id only when
   * they are the same. Made on the first save (hashing costs what reading the memory costs), read from a file.
   */
  #contentId: string | undefined;
  /**
   * Per class, per posting list: 1 once its rows were read in and checked to be in range (a segment read lazily
   * from a store file); null when every list was checked at load or the segment was built here.
   */
  #uncheckedLists: Map<number, Uint8Array> | null = null;

  /** Builds a segment from `source`'s rows (in order) and `postings`, pass by pass. */
  static #build(classes: AclClasses, source: RowSource, postings: PostingSource, dimension: number): Segment {
    const interned = internRows(source);
    const lists = classLists(interned, postings);
    const plan = planSegment(shapeOf(interned, lists, dimension));
    const memory = SegmentMemory.allocate(plan.size);
    const columns = viewColumns(memory.buffer, plan);
    const vectors = plan.vectors === null ? null : new VectorBlock(memory, plan.vectors, { fresh: true });
    fillRows(columns, vectors, source, interned);
    const index = new Map<number, ClassIndex>();
    plan.classes.forEach((classPlan, i) => {
      const entry = viewClass(memory.buffer, classPlan);
      const classList = lists[i];
      if (classList !== undefined) fillClass(entry, classList, interned.heap, postings);
      index.set(classPlan.shape.aclClass, entry);
    });
    return new Segment(classes, {
      contentId: undefined,
      memory,
      plan,
      columns,
      vectors,
      heap: interned.heap,
      payloadKeys: interned.payloadKeys,
      index,
    });
  }

  private constructor(classes: AclClasses, parts: SegmentParts) {
    this.classes = classes;
    this.#contentId = parts.contentId;
    this.size = parts.plan.shape.rows;
    this.dimension = parts.plan.shape.dimension;
    this.bytes = parts.plan.size;
    this.#plan = parts.plan;
    this.#memory = parts.memory;
    this.#columns = parts.columns;
    this.aclClassOf = parts.columns.aclClassOf;
    this.vectors = parts.vectors;
    this.#heap = parts.heap;
    this.#payloadKeys = parts.payloadKeys;
    this.#index = parts.index;
    this.classCounts = new Map(parts.plan.classes.map(({ shape }) => [shape.aclClass, shape.rows]));
  }

  /** A segment of new rows (an ingest batch, or a stretch of a file being loaded), in order. */
  static fromRows(classes: AclClasses, rows: readonly NewRow[]): Segment {
    const row = (i: number): NewRow => rows[i]!;
    const dimension = rows.find((r) => r.dense !== null)?.dense?.length ?? 0;
    const texts = rows.map((r) => Buffer.from(r.record.text, 'utf8'));
    const shapes = rows.map((r) => Object.freeze(Object.keys(r.record.tokens).sort()));
    const payloads = new Map<ChunkRecord, [string, Payload]>();
    const source: RowSource = {
      count: rows.length,
      id: (i) => row(i).record.id,
      sourceId: (i) => row(i).record.sourceId,
      aclClass: (i) => row(i).aclClass,
      textLength: (i) => texts[i]?.length ?? 0,
      writeText: (i, into, at) => into.set(texts[i] ?? [], at),
      writeSha: (i, into, at) => {
        const { id, textSha256 } = row(i).record;
        // Hashes from other tools' files are validated as hex before they get here; anything else is a bug.
        if (!HEX.test(textSha256)) throw new TypeError(`textSha256 of ${id} is not 64 hex digits`);
        into.set(Buffer.from(textSha256, 'hex'), at);
      },
      spanStart: (i) => row(i).record.span.start,
      spanEnd: (i) => row(i).record.span.end,
      indexedAt: (i) => row(i).record.indexedAt,
      payload: (i) => {
        const { record } = row(i);
        let entry = payloads.get(record);
        if (entry === undefined) {
          const payload = payloadOf(record);
          entry = [canonicalStringify(payload), deepFreeze(payload)];
          payloads.set(record, entry);
        }
        return entry;
      },
      // Token counts in key order, so a record reads the same whether it was ingested or loaded.
      tokenShape: (i) => shapes[i] ?? [],
      tokenValue: (i, k) => row(i).record.tokens[shapes[i]?.[k] ?? ''] ?? 0,
      writeVector: (i, into, at) => {
        const dense = row(i).dense;
        if (dense !== null) into.set(at, dense);
      },
    };
    // Rows grouped by class once, so each class's postings are built from its own rows.
    const byClass = new Map<number, number[]>();
    rows.forEach((r, i) => pushTo(byClass, r.aclClass, i));
    const postings: PostingSource = {
      lengths: (aclClass) => {
        const lengths = new Map<number, number>();
        for (const i of byClass.get(aclClass) ?? []) {
          for (const term of row(i).sparse.indices) lengths.set(term, (lengths.get(term) ?? 0) + 1);
        }
        return lengths;
      },
      fill: (aclClass, put) => {
        for (const i of byClass.get(aclClass) ?? []) {
          const { indices, values } = row(i).sparse;
          for (let t = 0; t < indices.length; t += 1) put(indices[t] ?? 0, i, values[t] ?? 0);
        }
      },
    };
    return Segment.#build(classes, source, postings, dimension);
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
      aclClass: (i) => at(i).segment.aclClassOf[at(i).row] ?? 0,
      textLength: (i) => at(i).segment.textBytes(at(i).row).length,
      writeText: (i, into, offset) => into.set(at(i).segment.textBytes(at(i).row), offset),
      writeSha: (i, into, offset) => into.set(at(i).segment.shaBytes(at(i).row), offset),
      spanStart: (i) => at(i).segment.spanStart(at(i).row),
      spanEnd: (i) => at(i).segment.spanEnd(at(i).row),
      indexedAt: (i) => at(i).segment.indexedAt(at(i).row),
      payload: (i) => at(i).segment.payloadEntry(at(i).row),
      tokenShape: (i) => at(i).segment.tokenShape(at(i).row),
      tokenValue: (i, k) => at(i).segment.tokenValue(at(i).row, k),
      writeVector: (i, into, row) => {
        const { segment, row: fromRow } = at(i);
        if (segment.vectors !== null) into.copy(row, segment.vectors, fromRow);
      },
    };
    const postings: PostingSource = {
      lengths: (aclClass) => {
        const lengths = new Map<number, number>();
        parts.forEach(({ segment }, p) => {
          const remap = remaps[p];
          segment.#forEachPosting(aclClass, (term, row) => {
            if ((remap?.[row] ?? -1) >= 0) lengths.set(term, (lengths.get(term) ?? 0) + 1);
          });
        });
        return lengths;
      },
      fill: (aclClass, put) => {
        parts.forEach(({ segment }, p) => {
          const remap = remaps[p];
          segment.#forEachPosting(aclClass, (term, row, weight) => {
            const to = remap?.[row] ?? -1;
            if (to >= 0) put(term, to, weight);
          });
        });
      },
    };
    return Segment.#build(classes, source, postings, dimension);
  }

  /**
   * A segment of this shape read from a store file: `read` fills the bytes of its memory (`[0, stored)`), then
   * `open` checks that they hold together with `heap` (JSON, as `StoredSegment.heap` wrote it) and returns the
   * segment. Throws `SegmentCorruptError` when they do not.
   */
  static prepare(shape: SegmentShape): {
    contents: Uint8Array;
    /**
     * The parts of `contents` a query reads only row by row (texts, f32 vectors), ascending: a store file may
     * leave them to be read on first use (`pager` of `open`), so a first answer need not wait for them.
     */
    lazyRanges: readonly (readonly [number, number])[];
    open(classes: AclClasses, contentId: string, heapJson: string, quantized: boolean, pager?: MemoryPager): Segment;
  } {
    const plan = planSegment(shape);
    const memory = SegmentMemory.allocate(plan.size);
    const lazyRanges: [number, number][] = [[plan.columns.text, plan.columns.text + shape.textBytes]];
    if (plan.vectors !== null) lazyRanges.push([plan.vectors.f32, plan.vectors.f32 + plan.vectors.rows * plan.vectors.dimension * 4]);
    // Each class's posting rows and weights (a query reads only its terms' lists), laid out one after the other.
    for (const { shape: c, at } of plan.classes) if (c.postings > 0) lazyRanges.push([at.rows, at.weights + c.postings * 4]);
    lazyRanges.sort((a, b) => a[0] - b[0]);
    return {
      contents: new Uint8Array(memory.buffer, 0, plan.stored),
      lazyRanges,
      open: (classes, contentId, heapJson, quantized, pager) => {
        if (pager !== undefined) {
          memory.pager = pager;
          memory.source = pager;
        }
        const lazyPostings = pager !== undefined;
        let json: unknown;
        try {
          json = JSON.parse(heapJson);
        } catch (error) {
          throw new SegmentCorruptError(`its strings are not valid JSON: ${(error as Error).message}`);
        }
        // The three lists of a string per row (or per source) are checked by hand: through the schema they would be
        // copied element by element, a third of the time a load takes after its bytes are read.
        const listIssue = stringListIssue(json);
        if (listIssue !== null)
          throw new SegmentCorruptError(`its strings are not what a segment holds: ${listIssue.message}`, [listIssue]);
        const parsed = HeapSchema.safeParse({ ...(json as object), ids: [], sources: [], indexedAts: [] });
        if (!parsed.success) {
          throw new SegmentCorruptError(
            `its strings are not what a segment holds: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
            parsed.error.issues,
          );
        }
        // The values as written (the schema only checks them): key order and all, so a save writes the same bytes.
        const raw = json as SegmentHeap;
        const heap: SegmentHeap = {
          ...raw,
          payloads: raw.payloads.map((payload) => deepFreeze(payload)),
          shapes: raw.shapes.map((list) => Object.freeze(list)),
        };
        const columns = viewColumns(memory.buffer, plan);
        const index = new Map(plan.classes.map((classPlan) => [classPlan.shape.aclClass, viewClass(memory.buffer, classPlan)]));
        checkStored(plan, columns, index, heap, classes.count, !lazyPostings);
        const vectors = plan.vectors === null ? null : new VectorBlock(memory, plan.vectors, { fresh: false, quantized });
        const segment = new Segment(classes, { contentId, memory, plan, columns, vectors, heap, payloadKeys: null, index });
        if (lazyPostings)
          segment.#uncheckedLists = new Map([...index].map(([aclClass, entry]) => [aclClass, new Uint8Array(entry.terms.length)]));
        return segment;
      },
    };
  }

  /** Its content id when known (read from a store file, or saved once); see `toStored`. */
  get contentId(): string | undefined {
    return this.#contentId;
  }

  /** The counts its layout follows. */
  get shape(): SegmentShape {
    return this.#plan.shape;
  }

  /** The segment as a store file keeps it (see `prepare`); makes its content id on first use. */
  toStored(): StoredSegment {
    const heap = this.#heap;
    const shape = this.#plan.shape;
    const quantized = this.vectors?.scans ?? false;
    this.#memory.ensure(0, this.#plan.stored);
    const contents = new Uint8Array(this.#memory.buffer, 0, this.#plan.stored);
    const json = Buffer.from(
      JSON.stringify({ ids: heap.ids, sources: heap.sources, indexedAts: heap.indexedAts, payloads: heap.payloads, shapes: heap.shapes }),
      'utf8',
    );
    this.#contentId ??= createHash('sha256').update(JSON.stringify({ shape, quantized })).update(contents).update(json).digest('hex');
    return { contentId: this.#contentId, shape, quantized, contents, heap: json };
  }

  /** The encodings of the token counts its rows carry. */
  encodings(): Set<string> {
    return new Set(this.#heap.shapes.flat());
  }

  /** Calls `visit` with each posting of `aclClass` here, by term then row. */
  #forEachPosting(aclClass: number, visit: (term: number, row: number, weight: number) => void): void {
    const entry = this.#index.get(aclClass);
    if (entry === undefined) return;
    const { terms, offsets, rows, weights } = entry;
    if (this.#uncheckedLists !== null) for (let list = 0; list < terms.length; list += 1) this.#checkList(aclClass, entry, list);
    for (let list = 0; list < terms.length; list += 1) {
      const term = terms[list] ?? 0;
      const end = offsets[list + 1] ?? 0;
      for (let i = offsets[list] ?? 0; i < end; i += 1) visit(term, rows[i] ?? 0, weights[i] ?? 0);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Rows (callers pass rows in [0, size): typed-array reads below cannot miss)

  id(row: number): string {
    return this.#heap.ids[row]!;
  }

  sourceId(row: number): string {
    return this.#heap.sources[this.#columns.sourceOf[row]!]!;
  }

  spanStart(row: number): number {
    return this.#columns.spans[row * 2]!;
  }

  spanEnd(row: number): number {
    return this.#columns.spans[row * 2 + 1]!;
  }

  text(row: number): string {
    const key = this.#serial * 2 ** 32 + row;
    const known = decodedTexts.get(key);
    if (known !== undefined) return known;
    const { text, textStart } = this.#columns;
    this.#ensureText(row);
    return decodedTexts.set(key, text.toString('utf8', textStart[row], textStart[row + 1]));
  }

  textBytes(row: number): Uint8Array {
    const { text, textStart } = this.#columns;
    this.#ensureText(row);
    return text.subarray(textStart[row], textStart[row + 1]);
  }

  /** The row's text is read in (a lazily read store file reads texts on first use). */
  #ensureText(row: number): void {
    if (this.#memory.pager === null) return;
    const { textStart } = this.#columns;
    const at = this.#plan.columns.text;
    this.#memory.ensure(at + textStart[row]!, at + textStart[row + 1]!);
  }

  /**
   * Reads in posting list `list` of a lazily read segment and checks its rows are rows of the segment, once: what
   * `checkStored` does for every list of a segment read whole. Throws `corrupt` (from the pager) for a damaged page
   * and `SegmentCorruptError` for a row out of range.
   */
  #checkList(aclClass: number, entry: ClassIndex, list: number): void {
    const checked = this.#uncheckedLists?.get(aclClass);
    if (checked === undefined || checked[list] === 1) return;
    const start = entry.offsets[list]!;
    const end = entry.offsets[list + 1]!;
    if (end > start) {
      this.#memory.ensure(entry.rows.byteOffset + start * 4, entry.rows.byteOffset + end * 4);
      this.#memory.ensure(entry.weights.byteOffset + start * 4, entry.weights.byteOffset + end * 4);
      const { rows } = entry;
      for (let i = start; i < end; i += 1) {
        if (rows[i]! >>> 0 >= this.size) {
          const message = `ACL class ${aclClass} names a row out of range`;
          throw this.#memory.source?.corrupt(message) ?? new SegmentCorruptError(message);
        }
      }
    }
    checked[list] = 1;
  }

  /** Whether bytes of its memory are still to be read from its store file (see `MemoryPager`). */
  get pending(): boolean {
    const { pager } = this.#memory;
    return pager !== null && !pager.complete;
  }

  shaBytes(row: number): Uint8Array {
    return this.#columns.sha.subarray(row * 32, row * 32 + 32);
  }

  textSha256(row: number): string {
    const { sha } = this.#columns;
    return Buffer.from(sha.buffer, sha.byteOffset + row * 32, 32).toString('hex');
  }

  indexedAt(row: number): string {
    return this.#heap.indexedAts[this.#columns.indexedAtOf[row]!]!;
  }

  /** The newest `indexedAt` (ms since the epoch) of the rows not marked dead in `dead`; NaN with none. */
  newestIndexedAt(dead: Uint8Array | null): number {
    const millis = this.#heap.indexedAts.map((at) => timestampMillis(at));
    let newest = Number.NaN;
    if (dead === null) {
      for (const at of millis) if (!(at <= newest)) newest = Number.isNaN(at) ? newest : at;
      return newest;
    }
    for (let row = 0; row < this.size; row += 1) {
      if (dead[row] === 1) continue;
      const at = millis[this.#columns.indexedAtOf[row]!]!;
      if (!Number.isNaN(at) && !(at <= newest)) newest = at;
    }
    return newest;
  }

  #payload(row: number): Payload {
    return this.#heap.payloads[this.#columns.payloadOf[row]!]!;
  }

  version(row: number): string | undefined {
    return this.#payload(row).version;
  }

  payloadEntry(row: number): [string, Payload] {
    const index = this.#columns.payloadOf[row]!;
    this.#payloadKeys ??= this.#heap.payloads.map((payload) => canonicalStringify(payload));
    return [this.#payloadKeys[index]!, this.#heap.payloads[index]!];
  }

  tokenShape(row: number): readonly string[] {
    return this.#heap.shapes[this.#columns.shapeOf[row]!]!;
  }

  tokenValue(row: number, k: number): number {
    return this.#columns.tokenValues[this.#columns.tokenStart[row]! + k]!;
  }

  tokens(row: number): Record<string, number> {
    const shape = this.tokenShape(row);
    const start = this.#columns.tokenStart[row]!;
    const values = this.#columns.tokenValues;
    const tokens: Record<string, number> = {};
    for (let i = 0; i < shape.length; i += 1) tokens[shape[i]!] = values[start + i]!;
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
    const payload = this.#payload(row);
    const record = {
      id: this.id(row),
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
    const payload = this.#payload(row);
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
      id: this.id(row),
      sourceId: this.sourceId(row),
      span: { start: this.spanStart(row), end: this.spanEnd(row) },
      text: this.text(row),
      textSha256: '',
      indexedAt: this.indexedAt(row),
      tokens: this.tokens(row),
    };
  }

  /**
   * Each row's BM25 vector, read back from the postings (indices ascending, weights as stored: f32), for
   * copying: row r's entries are [offsets[r], offsets[r + 1]) of indices and values.
   */
  sparseRows(): { offsets: Int32Array; indices: Float64Array; values: Float32Array } {
    const counts = new Int32Array(this.size + 1);
    for (const aclClass of this.#index.keys())
      this.#forEachPosting(aclClass, (_term, row) => (counts[row + 1] = (counts[row + 1] ?? 0) + 1));
    for (let row = 0; row < this.size; row += 1) counts[row + 1] = (counts[row + 1] ?? 0) + (counts[row] ?? 0);
    const indices = new Float64Array(counts[this.size] ?? 0);
    const values = new Float32Array(indices.length);
    const next = counts.slice(0, this.size);
    // Lists are in ascending term order, and a row belongs to one class: each row receives its terms in order.
    for (const aclClass of this.#index.keys()) {
      this.#forEachPosting(aclClass, (term, row, weight) => {
        const at = next[row] ?? 0;
        indices[at] = term;
        values[at] = weight;
        next[row] = at + 1;
      });
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
      const row = byId[mid]!;
      const found = this.id(row);
      if (found === id) return row;
      if (found < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** The rows of `aclClass`, ordered by chunk id (a view: read, never change). */
  rowsById(aclClass: number): Int32Array {
    return this.#index.get(aclClass)?.byId ?? new Int32Array(0);
  }

  /**
   * The source lists of `aclClass`, ordered by source id: list i is source `source(i)`, rows
   * `rows[offsets[i]] .. rows[offsets[i + 1] - 1]` (views: read, never change).
   */
  sourceLists(aclClass: number): { count: number; source: (i: number) => string; offsets: Int32Array; rows: Int32Array } {
    const entry = this.#index.get(aclClass);
    const { sources } = this.#heap;
    if (entry === undefined) return { count: 0, source: () => '', offsets: new Int32Array(1), rows: new Int32Array(0) };
    return {
      count: entry.sourceOf.length,
      source: (i) => sources[entry.sourceOf[i]!]!,
      offsets: entry.sourceOffsets,
      rows: entry.sourceRows,
    };
  }

  /** Calls `visit` with each row of a source among the rows of `aclClass`, ascending. */
  forEachRowOfSource(aclClass: number, sourceId: string, visit: (row: number) => void): void {
    const entry = this.#index.get(aclClass);
    if (entry === undefined) return;
    const { sources } = this.#heap;
    let lo = 0;
    let hi = entry.sourceOf.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const found = sources[entry.sourceOf[mid]!]!;
      if (found === sourceId) {
        const end = entry.sourceOffsets[mid + 1]!;
        for (let i = entry.sourceOffsets[mid]!; i < end; i += 1) visit(entry.sourceRows[i]!);
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
    for (let i = 0; i < entry.sourceOf.length; i += 1) yield this.#heap.sources[entry.sourceOf[i]!]!;
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
      if (found === term) {
        if (this.#uncheckedLists !== null) this.#checkList(aclClass, entry, mid);
        return { rows: entry.rows, weights: entry.weights, start: entry.offsets[mid]!, end: entry.offsets[mid + 1]! };
      }
      if (found < term) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}
