/**
 * The embedded store's file, `litm-pack/memory-store@3`: the store's segments written as they live in memory, so
 * a load reads bytes into place instead of parsing, re-tokenising, re-encoding or re-quantising anything.
 *
 *     magic (8 bytes: 89 'L' 'I' 'T' 'M' 0d 0a 1a)
 *     per segment: its memory's bytes (columns, vectors f32 and int8, postings, id and source indexes), then its
 *                  strings and interned payloads as JSON (segment.ts), each section's length and CRC-32 in the manifest
 *     manifest: JSON (format version, counts, embedding model and dimension, indexed-text recipe, encodings, the ACL
 *               classes, sources without chunks, and per segment its shape, sections and dead rows)
 *     trailer (24 bytes): manifest offset (u64), length (u32), CRC-32 (u32), 'L' 'I' 'T' 'M' 'E' 'N' 'D' 0a
 *
 * Little-endian throughout. Every section is checked against its CRC-32 and its length against the shape it must
 * have, and the columns against each other (segment.ts), before the store is used: a corrupt or cut file is
 * `corrupt`, never half-read.
 *
 * Saves are atomic: a temporary file in the same folder, fsynced, then renamed over the target (missing folders
 * are created). A save that keeps most of the file is incremental: the previous file's bytes are copied by the
 * kernel (a reflink where the file system has them) and only the segments it lacks are appended, with a new
 * manifest; when more than half the file would be bytes no manifest refers to, it is written afresh (compaction).
 * `@2` and `@1` files (legacy-file.ts) are still read, and saved as `@3`.
 */
import { randomUUID } from 'node:crypto';
import { constants as fsConstants, readSync } from 'node:fs';
import { copyFile, mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import * as zlib from 'node:zlib';
import { z } from 'zod';
import { LitmPackError, describeIssues } from '../base/errors.js';
import { IndexedTextRecipeSchema, type IndexedTextRecipe } from '../store/indexed-text.js';
import type { ChunkRecord } from '../store/schemas.js';
import type { SparseVector } from '../tokenize/bm25.js';
import { AclClasses } from './acl-classes.js';
import { readLegacyParts, restoreLegacy } from './legacy-file.js';
import { pidRunning } from './lock.js';
import { Segment, SegmentCorruptError, type SegmentShape, type StoredSegment } from './segment.js';
import type { MemoryPager } from './vectors.js';

/** The schema this version writes. */
export const MEMORY_STORE_SCHEMA = 'litm-pack/memory-store@3' as const;

/** The file a folder given as a store holds (the CLI's `--store DIR`). */
export const STORE_FILE_NAME = 'store.json';

const MAGIC = Buffer.from([0x89, 0x4c, 0x49, 0x54, 0x4d, 0x0d, 0x0a, 0x1a]);
const END_MAGIC = Buffer.from('LITMEND\n', 'latin1');
const TRAILER_BYTES = 24;
/** A save writes the file afresh when more than this share of it would be bytes no manifest refers to. */
const MAX_GARBAGE_SHARE = 0.5;

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// -------------------------------------------------------------------------------------------------
// What a store file holds

/** What a store file says about the store. */
export interface StoreFileHeader {
  chunkTokens: number;
  dimension: number | null;
  /** The embedding model that made the vectors (null: not recorded). */
  embeddingModel: string | null;
  /** The recipe of the indexed text the BM25 vectors and embeddings were made from (see indexed-text.ts). */
  indexedText: IndexedTextRecipe;
  /** Sources (with or without chunks) and live chunks. */
  sources: number;
  chunks: number;
}

export interface StoreFileSource {
  sourceId: string;
  version?: string;
  /** Chunk ids in document order. */
  ids: string[];
}

export interface StoreFileChunk {
  record: ChunkRecord;
  sparse: SparseVector;
  /** Float32 values (`dimension` of them), or null. */
  dense: Float32Array | null;
}

/** A part of a store, as `readStoreFileParts` hands it on: the header, every source, then every chunk. */
export type StoreFilePart =
  { kind: 'header'; header: StoreFileHeader } | { kind: 'source'; source: StoreFileSource } | { kind: 'chunk'; chunk: StoreFileChunk };

/** A segment of the store and its dead rows (1 = removed), as a snapshot holds them. */
export interface StoreFilePartition {
  readonly segment: Segment;
  readonly dead: Uint8Array | null;
}

/** What `writeStoreFile` writes: the store's header, ACL classes, segments with their dead rows, empty sources. */
export interface StoreContents {
  readonly header: StoreFileHeader;
  readonly classes: AclClasses;
  readonly parts: readonly StoreFilePartition[];
  readonly emptySources: ReadonlyMap<string, { version?: string }>;
}

/** A store file read: what `StoreContents` was, with the ACL classes the segments are numbered by. */
export interface LoadedStore {
  readonly header: StoreFileHeader;
  readonly classes: AclClasses;
  readonly parts: readonly StoreFilePartition[];
  readonly emptySources: Map<string, { version?: string }>;
  /** Segments read from the file (the others were reused). */
  readonly segmentsRead: number;
}

/** Segments a reader already holds, by content id, with the ACL classes they are numbered by. */
export interface ReusableSegments {
  readonly classes: AclClasses;
  readonly segments: ReadonlyMap<string, Segment>;
}

/** What a save did. */
export interface SaveReport {
  /** True when the previous file's bytes were kept and only new segments appended. */
  incremental: boolean;
  /** Bytes written by this process (the kernel's copy of the previous file not counted). */
  bytesWritten: number;
  fileBytes: number;
}

// -------------------------------------------------------------------------------------------------
// The manifest

const SectionSchema = z.strictObject({
  offset: z.number().int().nonnegative(),
  length: z.number().int().nonnegative(),
  crc32: z.number().int().nonnegative().max(0xffff_ffff),
});
type Section = z.infer<typeof SectionSchema>;
const count = z.number().int().nonnegative();
const ShapeSchema = z.strictObject({
  rows: count,
  dimension: count,
  int8: z.boolean(),
  textBytes: count,
  tokenValues: count,
  classes: z.array(z.strictObject({ aclClass: count, rows: count, sources: count, terms: count, postings: count })),
});
const SegmentEntrySchema = z.strictObject({
  /** The segment's content id (segment.ts): the sha256 of its shape, memory and strings. */
  id: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 hex digits'),
  shape: ShapeSchema,
  quantized: z.boolean(),
  contents: SectionSchema,
  heap: SectionSchema,
  /** Rows removed since the segment was written: a bitmap (bit r of byte r / 8), base64. */
  dead: z.base64().nullable(),
  live: count,
  /**
   * The CRC-32 of each `size` bytes of `contents` (little-endian u32s, base64), so its texts and vectors can be
   * read and checked page by page after the first answer. Files written before pages were recorded have none.
   */
  pages: z
    .strictObject({
      size: z
        .number()
        .int()
        .min(4096)
        .max(2 ** 30),
      crc32: z.base64(),
    })
    .optional(),
});
type SegmentEntry = z.infer<typeof SegmentEntrySchema>;
const ManifestSchema = z.strictObject({
  schema: z.literal(MEMORY_STORE_SCHEMA),
  chunkTokens: z.number().int().min(8).max(8192),
  dimension: z.number().int().positive().nullable(),
  embeddingModel: z.string().min(1).nullable(),
  indexedText: IndexedTextRecipeSchema,
  /** The token-count encodings the chunks carry. */
  encodings: z.array(z.string().min(1)),
  sources: count,
  chunks: count,
  /** The `acl` lists of ACL classes 1, 2, ... (class 0: no ACL), which the segments' rows are numbered by. */
  acl: z.array(z.array(z.string().min(1))),
  emptySources: z.array(z.strictObject({ sourceId: z.string().min(1), version: z.string().optional() })),
  segments: z.array(SegmentEntrySchema),
});
type Manifest = z.infer<typeof ManifestSchema>;

// -------------------------------------------------------------------------------------------------
// Small pieces

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/**
 * CRC-32 (zlib's): native in Node 20.15 and later. Written out for earlier Node 20 releases, which lack
 * `zlib.crc32`; it gives the same value, only slower.
 */
function crc32(bytes: Uint8Array, start = 0): number {
  const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (native !== undefined) return native(bytes, start);
  let c = ~start;
  for (let i = 0; i < bytes.length; i += 1) c = (CRC_TABLE[(c ^ (bytes[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return ~c >>> 0;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Removes the temporary files a save (`.store.json.<pid>.<id>.tmp`) or a lock (`store.json.lock.<pid>.<id>.tmp`)
 * of `path` left behind when its process died mid-way (kill -9, power loss): the pid in the name is not running.
 * Temporaries of running processes, this one included, are left alone. Returns the names removed.
 */
export async function removeStaleTemporaries(path: string): Promise<string[]> {
  const name = escapeRegExp(basename(path));
  const pattern = new RegExp(`^(?:\\.${name}|${name}\\.lock)\\.(\\d+)\\.[0-9a-f-]{36}\\.tmp$`);
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const entry of names) {
    const match = pattern.exec(entry);
    if (match === null) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || pidRunning(pid)) continue;
    try {
      await unlink(join(dirname(path), entry));
      removed.push(entry);
    } catch {
      // Gone already, or not ours to remove: the next save tries again.
    }
  }
  return removed;
}

function requireLittleEndian(path: string): void {
  if (isLittleEndian) return;
  throw new LitmPackError(
    'unsupported',
    `The store file ${path} is little-endian (${MEMORY_STORE_SCHEMA}) and this platform is big-endian: keep the store in Qdrant instead (litm-pack/qdrant)`,
    { details: { path } },
  );
}

/** Reads exactly `into.length` bytes at `position` (short reads continued); false when the file ends first. */
async function readFully(handle: FileHandle, into: Uint8Array, position: number): Promise<boolean> {
  let done = 0;
  while (done < into.length) {
    const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
    if (bytesRead === 0) return false;
    done += bytesRead;
  }
  return true;
}

async function writeFully(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

function deadBitmap(dead: Uint8Array | null, rows: number): string | null {
  if (dead === null) return null;
  const bits = new Uint8Array(Math.ceil(rows / 8));
  let any = false;
  for (let row = 0; row < rows; row += 1) {
    if (dead[row] !== 1) continue;
    bits[row >> 3] = (bits[row >> 3] ?? 0) | (1 << (row & 7));
    any = true;
  }
  return any ? Buffer.from(bits).toString('base64') : null;
}

function deadMarks(bitmap: string | null, rows: number): Uint8Array | null {
  if (bitmap === null) return null;
  const bits = Buffer.from(bitmap, 'base64');
  if (bits.length !== Math.ceil(rows / 8)) return null;
  const marks = new Uint8Array(rows);
  for (let row = 0; row < rows; row += 1) marks[row] = ((bits[row >> 3] ?? 0) >> (row & 7)) & 1;
  return marks;
}

const liveRows = (dead: Uint8Array | null, rows: number) => {
  if (dead === null) return rows;
  let live = 0;
  for (let row = 0; row < rows; row += 1) if (dead[row] === 0) live += 1;
  return live;
};

const sameShape = (a: SegmentShape, b: SegmentShape) => JSON.stringify(a) === JSON.stringify(b);

/** CRC-32 of a segment's memory section, by segment: a segment never changes, so a later save need not read it again. */
const contentsCrc = new WeakMap<Segment, number>();
/** Its page checksums (the manifest's `pages`), by segment, likewise. */
const contentsPages = new WeakMap<Segment, { size: number; crc32: string }>();

/** Bytes per checked page of a segment's memory section: a vector read on first use reads its page, so pages stay small. */
const PAGE_BYTES = 16 * 1024;
/** Segments whose memory section is smaller are read whole at load: for them the first answer would gain little. */
const LAZY_MIN_BYTES = 2 ** 20;

function pageCrcs(contents: Uint8Array): { size: number; crc32: string } {
  const crcs = new Uint32Array(Math.ceil(contents.length / PAGE_BYTES));
  for (let p = 0; p < crcs.length; p += 1)
    crcs[p] = crc32(contents.subarray(p * PAGE_BYTES, Math.min((p + 1) * PAGE_BYTES, contents.length)));
  return { size: PAGE_BYTES, crc32: Buffer.from(crcs.buffer, crcs.byteOffset, crcs.byteLength).toString('base64') };
}

// -------------------------------------------------------------------------------------------------
// Opening

/** Opens a store file for reading: `not_found` (a folder: naming the file inside to pass), else `io_error`. */
async function openForReading(path: string): Promise<FileHandle> {
  if (await isFolder(path)) {
    throw new LitmPackError(
      'not_found',
      `${path} is a folder; a store is a file: load ${join(path, STORE_FILE_NAME)} (the file ingest writes there)`,
      {
        details: { path },
      },
    );
  }
  await removeStaleTemporaries(path);
  try {
    return await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new LitmPackError('not_found', `No store file at ${path}: pass the path of a file a store was saved to`, {
        cause: error,
        details: { path },
      });
    }
    if (code === 'EACCES' || code === 'EPERM') {
      throw new LitmPackError('not_found', `The store file ${path} cannot be read (${code})`, { cause: error, details: { path } });
    }
    throw new LitmPackError('io_error', `Could not read the store file ${path}: ${messageOf(error)}`, { cause: error, details: { path } });
  }
}

/** Which format the open file is in, by its first bytes: `@3` by its magic, the JSON ones by their `{`. */
async function formatOf(handle: FileHandle, path: string): Promise<'binary' | 'json'> {
  const head = Buffer.alloc(MAGIC.length);
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  if (bytesRead === MAGIC.length && head.equals(MAGIC)) return 'binary';
  const text = head.subarray(0, bytesRead).toString('latin1').trimStart();
  if (bytesRead === 0) throw corruptError(path, 'not valid JSON: the file is empty');
  if (text.startsWith('{') || text === '') return 'json';
  throw corruptError(path, `it is not a store file (it starts with neither the ${MEMORY_STORE_SCHEMA} magic nor JSON)`);
}

function corruptError(path: string, message: string, cause?: unknown): LitmPackError {
  return new LitmPackError('corrupt', `Store file ${path} is corrupt: ${message}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { path },
  });
}

/** The manifest of an open `@3` file, checked: its place, its CRC-32, its schema and its sections' places. */
async function readManifest(
  handle: FileHandle,
  path: string,
): Promise<{ manifest: Manifest; offset: number; size: number; trailer: Buffer }> {
  const size = (await handle.stat()).size;
  if (size < MAGIC.length + TRAILER_BYTES) throw corruptError(path, `it ends after ${size} bytes (a cut file?)`);
  const trailer = Buffer.alloc(TRAILER_BYTES);
  if (!(await readFully(handle, trailer, size - TRAILER_BYTES))) throw corruptError(path, 'it ends early (a cut file?)');
  if (!trailer.subarray(16).equals(END_MAGIC)) throw corruptError(path, 'it has no trailer at its end (a cut file?)');
  const offset = Number(trailer.readBigUInt64LE(0));
  const length = trailer.readUInt32LE(8);
  if (offset < MAGIC.length || offset + length + TRAILER_BYTES !== size)
    throw corruptError(path, 'its trailer does not point at its manifest (a cut file?)');
  const bytes = Buffer.alloc(length);
  if (!(await readFully(handle, bytes, offset))) throw corruptError(path, 'it ends inside its manifest (a cut file?)');
  if (crc32(bytes) !== trailer.readUInt32LE(12)) throw corruptError(path, 'its manifest does not match its checksum');
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw corruptError(path, `its manifest is not valid JSON: ${messageOf(error)}`, error);
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const schema = typeof json === 'object' && json !== null ? (json as { schema?: unknown }).schema : undefined;
    if (schema !== MEMORY_STORE_SCHEMA)
      throw corruptError(
        path,
        `it has schema ${JSON.stringify(schema)}; this version reads ${MEMORY_STORE_SCHEMA} and the JSON formats before it`,
      );
    throw new LitmPackError('corrupt', `Store file ${path} is corrupt: its manifest: ${describeIssues(parsed.error.issues)}`, {
      cause: parsed.error,
      issues: parsed.error.issues,
      details: { path },
    });
  }
  const inside = (section: Section) => section.offset >= MAGIC.length && section.offset + section.length <= offset;
  for (const entry of parsed.data.segments) {
    if (!inside(entry.contents) || !inside(entry.heap)) throw corruptError(path, `segment ${entry.id} lies outside the file`);
  }
  if (new Set(parsed.data.segments.map((entry) => entry.id)).size !== parsed.data.segments.length)
    throw corruptError(path, 'it lists a segment twice');
  return { manifest: parsed.data, offset, size, trailer };
}

// -------------------------------------------------------------------------------------------------
// Reading

/**
 * Reads a store file of any version: `@3` section by section into the segments' memories (segments `reuse`
 * already holds, by id, are taken as they are: a served store reads only what changed), `@2` and `@1` record by
 * record. `not_found` for a missing or unreadable path (a folder: the message names the file inside it to pass),
 * `corrupt` for anything that is not a whole store file of a known version.
 */
export async function readStoreFile(path: string, options: { reuse?: ReusableSegments } = {}): Promise<LoadedStore> {
  const handle = await openForReading(path);
  let keepOpen = false;
  try {
    if ((await formatOf(handle, path)) === 'json') {
      const classes = new AclClasses();
      const restored = await restoreLegacy(readLegacyParts(handle, path), classes, path);
      return {
        header: restored.header,
        classes,
        parts: restored.segments.map((segment) => ({ segment, dead: null })),
        emptySources: restored.emptySources,
        segmentsRead: restored.segments.length,
      };
    }
    requireLittleEndian(path);
    const { loaded, paged } = await readBinary(handle, path, options.reuse, true);
    if (paged.length > 0) {
      // The file stays open until every page left is read (the handle reads the file loaded, whatever replaces it).
      keepOpen = true;
      // Started once the caller's own work (its first query, say) has let the event loop turn.
      setImmediate(() => void readRemainingPages(handle, paged));
    }
    return loaded;
  } catch (error) {
    if (error instanceof LitmPackError) throw error;
    throw new LitmPackError('io_error', `Could not read the store file ${path}: ${messageOf(error)}`, { cause: error, details: { path } });
  } finally {
    if (!keepOpen) await handle.close().catch(() => undefined);
  }
}

/**
 * `lazy`: large segments' texts and f32 vectors are left to be read page by page (`PagedContents`), which the
 * caller then owns; otherwise every byte is read and checked before this returns.
 */
async function readBinary(
  handle: FileHandle,
  path: string,
  reuse: ReusableSegments | undefined,
  lazy: boolean,
): Promise<{ loaded: LoadedStore; paged: PagedContents[] }> {
  const { manifest } = await readManifest(handle, path);
  // Reused segments are numbered by the reader's ACL classes: usable when the file's classes extend them.
  const canReuse = reuse !== undefined && reuse.classes.isPrefixOf(manifest.acl);
  const classes = canReuse ? reuse.classes : new AclClasses();
  if (!classes.extend(manifest.acl)) throw corruptError(path, 'its ACL classes repeat one another');
  const plan: { entry: SegmentEntry; dead: Uint8Array | null; held: Segment | undefined }[] = [];
  for (const entry of manifest.segments) {
    const dead = deadMarks(entry.dead, entry.shape.rows);
    if ((entry.dead !== null && dead === null) || liveRows(dead, entry.shape.rows) !== entry.live) {
      throw corruptError(path, `segment ${entry.id}'s dead rows do not match its live count`);
    }
    const held = canReuse ? reuse.segments.get(entry.id) : undefined;
    plan.push({ entry, dead, held: held !== undefined && sameShape(held.shape, entry.shape) ? held : undefined });
  }
  // The next segment's bytes are read (in the thread pool) while this one is checked and opened.
  const toRead = plan.filter(({ held }) => held === undefined).map(({ entry }) => entry);
  const fetched = new Map<SegmentEntry, Promise<FetchedSegment>>();
  const fetchAt = (i: number) => {
    const entry = toRead[i];
    if (entry !== undefined) fetched.set(entry, fetchSegment(handle, path, entry, lazy));
  };
  fetchAt(0);
  const parts: StoreFilePartition[] = [];
  try {
    for (const { entry, dead, held } of plan) {
      if (held !== undefined) {
        parts.push({ segment: held, dead });
        continue;
      }
      const bytes = await fetched.get(entry)!;
      fetchAt(toRead.indexOf(entry) + 1);
      parts.push({ segment: openSegment(path, entry, classes, bytes), dead });
    }
  } finally {
    // Nothing is left reading the file when it is closed, whatever failed.
    await Promise.allSettled(fetched.values());
  }
  const segmentsRead = toRead.length;
  checkLive(parts, manifest, path);
  const paged: PagedContents[] = [];
  for (const promise of fetched.values()) {
    const { pager } = await promise;
    if (pager !== undefined) paged.push(pager);
  }
  const header: StoreFileHeader = {
    chunkTokens: manifest.chunkTokens,
    dimension: manifest.dimension,
    embeddingModel: manifest.embeddingModel,
    indexedText: manifest.indexedText,
    sources: manifest.sources,
    chunks: manifest.chunks,
  };
  const emptySources = new Map(manifest.emptySources.map(({ sourceId, version }) => [sourceId, version === undefined ? {} : { version }]));
  return { loaded: { header, classes, parts, emptySources, segmentsRead }, paged };
}

/** What a read of a segment's sections gives: its memory filled (or its pages to read later) and its strings, checked. */
interface FetchedSegment {
  readonly prepared: ReturnType<typeof Segment.prepare>;
  readonly heap: Buffer;
  readonly pager: PagedContents | undefined;
}

/** Reads are cut into pieces of this size so the CRC-32 of one runs while the next is read. */
const READ_PIECE = 8 * 2 ** 20;

/**
 * Reads `into.length` bytes at `position`, calling `check(from, to)` on each piece read (the CRC-32 runs there
 * while the next piece is read: the read in the thread pool, the check here); false when the file ends first.
 */
async function readChecked(
  handle: FileHandle,
  into: Uint8Array,
  position: number,
  check: (from: number, to: number) => void,
): Promise<boolean> {
  const piece = (at: number) => readFully(handle, into.subarray(at, Math.min(at + READ_PIECE, into.length)), position + at);
  let pending = piece(0);
  for (let at = 0; at < into.length; at += READ_PIECE) {
    if (!(await pending)) return false;
    if (at + READ_PIECE < into.length) pending = piece(at + READ_PIECE);
    try {
      check(at, Math.min(at + READ_PIECE, into.length));
    } catch (error) {
      // Nothing is left reading into memory (or from a file about to be closed) when this throws.
      await pending.catch(() => undefined);
      throw error;
    }
  }
  return into.length > 0 || (await pending);
}

/** Reads `into.length` bytes at `position` and returns their CRC-32; null when the file ends first. */
async function readWithCrc(handle: FileHandle, into: Uint8Array, position: number): Promise<number | null> {
  let crc = 0;
  const read = await readChecked(handle, into, position, (from, to) => (crc = crc32(into.subarray(from, to), crc)));
  return read ? crc : null;
}

async function fetchSegment(handle: FileHandle, path: string, entry: SegmentEntry, lazy: boolean): Promise<FetchedSegment> {
  const prepared = Segment.prepare(entry.shape);
  const { contents } = prepared;
  if (contents.length !== entry.contents.length)
    throw corruptError(path, `segment ${entry.id} has ${entry.contents.length} bytes where its shape has ${contents.length}`);
  const heap = Buffer.allocUnsafe(entry.heap.length);
  const paged = lazy && entry.pages !== undefined && contents.length >= LAZY_MIN_BYTES;
  const pager = paged ? new PagedContents(handle, path, entry, contents, prepared.lazyRanges) : undefined;
  const [contentsRead, heapCrc32] = await Promise.all([
    pager !== undefined ? pager.readEager() : readWithCrc(handle, contents, entry.contents.offset),
    readWithCrc(handle, heap, entry.heap.offset),
  ]);
  if (contentsRead === null || heapCrc32 === null) throw corruptError(path, `it ends inside segment ${entry.id} (a cut file?)`);
  if (pager === undefined && contentsRead !== entry.contents.crc32)
    throw corruptError(path, `segment ${entry.id} does not match its checksum`);
  if (heapCrc32 !== entry.heap.crc32) throw corruptError(path, `the strings of segment ${entry.id} do not match their checksum`);
  return { prepared, heap, pager };
}

function openSegment(path: string, entry: SegmentEntry, classes: AclClasses, { prepared, heap, pager }: FetchedSegment): Segment {
  try {
    const segment = prepared.open(classes, entry.id, heap.toString('utf8'), entry.quantized, pager);
    contentsCrc.set(segment, entry.contents.crc32);
    if (entry.pages !== undefined) contentsPages.set(segment, entry.pages);
    return segment;
  } catch (error) {
    if (error instanceof SegmentCorruptError) {
      throw new LitmPackError('corrupt', `Store file ${path} is corrupt: segment ${entry.id}: ${error.message}`, {
        cause: error,
        issues: error.issues,
        details: { path },
      });
    }
    throw error;
  }
}

/**
 * A segment's memory section read page by page: at load, every page holding anything but texts and f32 vectors
 * (`readEager`); the others when a read first needs them (`ensure`, synchronous: reads are) or, after the load,
 * in the background (`readRemainingPages`), whichever comes first. Each page is checked against its CRC-32 before
 * anything reads it; a damaged one is `corrupt` for every read that needs it, so nothing of it is ever served.
 */
class PagedContents implements MemoryPager {
  readonly #handle: FileHandle;
  readonly #path: string;
  readonly #entry: SegmentEntry;
  readonly #contents: Uint8Array;
  readonly #size: number;
  readonly #crcs: Uint32Array;
  /** Per page: 0 to read, 1 read and checked, 2 damaged. */
  readonly #state: Uint8Array;
  readonly #lazyRanges: readonly (readonly [number, number])[];
  #remaining: number;

  constructor(
    handle: FileHandle,
    path: string,
    entry: SegmentEntry,
    contents: Uint8Array,
    lazyRanges: readonly (readonly [number, number])[],
  ) {
    const pages = entry.pages!;
    const table = Buffer.from(pages.crc32, 'base64');
    const count = Math.ceil(contents.length / pages.size);
    if (table.length !== count * 4)
      throw corruptError(path, `segment ${entry.id} has ${table.length / 4} page checksums for ${count} pages`);
    this.#handle = handle;
    this.#path = path;
    this.#entry = entry;
    this.#contents = contents;
    this.#size = pages.size;
    this.#crcs = new Uint32Array(count);
    for (let p = 0; p < count; p += 1) this.#crcs[p] = table.readUInt32LE(p * 4);
    this.#state = new Uint8Array(count);
    this.#lazyRanges = lazyRanges;
    this.#remaining = count;
  }

  get complete(): boolean {
    return this.#remaining === 0;
  }

  /** True when no page is left to read (every one read, or found damaged). */
  get settled(): boolean {
    return !this.#state.includes(0);
  }

  #pageEnd(page: number): number {
    return Math.min((page + 1) * this.#size, this.#contents.length);
  }

  /** True when every byte of the page lies in one lazy range (texts, f32 vectors, posting rows and weights). */
  #lazyPage(page: number): boolean {
    const from = page * this.#size;
    const to = this.#pageEnd(page);
    return this.#lazyRanges.some(([start, end]) => start <= from && to <= end);
  }

  corrupt(message: string): LitmPackError {
    return corruptError(this.#path, `segment ${this.#entry.id}: ${message}`);
  }

  #damaged(page: number): LitmPackError {
    return corruptError(
      this.#path,
      `segment ${this.#entry.id} does not match its checksum (page ${page}, bytes ${page * this.#size} to ${this.#pageEnd(page)})`,
    );
  }

  /** Reads and checks every page that is not all texts or vectors; the CRC-32 of the contents is not computed (null: cut short). */
  async readEager(): Promise<number | null> {
    let page = 0;
    const pages = this.#state.length;
    while (page < pages) {
      if (this.#lazyPage(page)) {
        page += 1;
        continue;
      }
      let last = page;
      while (last + 1 < pages && !this.#lazyPage(last + 1)) last += 1;
      const from = page * this.#size;
      const into = this.#contents.subarray(from, this.#pageEnd(last));
      let next = page;
      const read = await readChecked(this.#handle, into, this.#entry.contents.offset + from, (_start, end) => {
        // Each page once all its bytes are in.
        while (next <= last && this.#pageEnd(next) - from <= end) {
          this.#check(next, this.#contents);
          next += 1;
        }
      });
      if (!read) return null;
      page = last + 1;
    }
    return 0;
  }

  /** Checks a page whose bytes are in `bytes` at its own offset; throws `corrupt` when it is damaged. */
  #check(page: number, bytes: Uint8Array): void {
    if (this.#state[page] !== 0) return;
    const from = page * this.#size;
    if (crc32(bytes.subarray(from, this.#pageEnd(page))) !== this.#crcs[page]) {
      this.#state[page] = 2;
      throw this.#damaged(page);
    }
    this.#state[page] = 1;
    this.#remaining -= 1;
  }

  ensure(start: number, end: number): void {
    if (end <= start) return;
    for (let page = Math.floor(start / this.#size); page <= Math.floor((end - 1) / this.#size); page += 1) {
      const state = this.#state[page];
      if (state === 1) continue;
      if (state === 2) throw this.#damaged(page);
      const from = page * this.#size;
      const into = this.#contents.subarray(from, this.#pageEnd(page));
      let done = 0;
      try {
        while (done < into.length) {
          const read = readSync(this.#handle.fd, into, done, into.length - done, this.#entry.contents.offset + from + done);
          if (read === 0) break;
          done += read;
        }
      } catch (error) {
        throw new LitmPackError('io_error', `Could not read the store file ${this.#path}: ${messageOf(error)}`, {
          cause: error,
          details: { path: this.#path },
        });
      }
      if (done < into.length) throw corruptError(this.#path, `it ends inside segment ${this.#entry.id} (a cut file?)`);
      this.#check(page, this.#contents);
    }
  }

  /**
   * Reads the pages still missing, a piece at a time into `scratch` (never into the memory itself while a query
   * may read it), checks each and copies it in; a damaged page is marked (reads that need it throw `corrupt`).
   */
  async readRest(scratch: Uint8Array): Promise<void> {
    const pages = this.#state.length;
    const perPiece = Math.max(1, Math.floor(scratch.length / this.#size));
    let page = 0;
    while (page < pages) {
      if (this.#state[page] !== 0) {
        page += 1;
        continue;
      }
      const last = Math.min(pages - 1, page + perPiece - 1);
      const from = page * this.#size;
      const length = this.#pageEnd(last) - from;
      if (!(await readFully(this.#handle, scratch.subarray(0, length), this.#entry.contents.offset + from))) return;
      for (let p = page; p <= last; p += 1) {
        if (this.#state[p] !== 0) continue;
        const bytes = scratch.subarray(p * this.#size - from, this.#pageEnd(p) - from);
        if (crc32(bytes) !== this.#crcs[p]) {
          this.#state[p] = 2;
          continue;
        }
        this.#contents.set(bytes, p * this.#size);
        this.#state[p] = 1;
        this.#remaining -= 1;
      }
      page = last + 1;
    }
  }
}

/** After a load: reads every page the loaded segments still lack, then closes the file (kept open if one failed). */
async function readRemainingPages(handle: FileHandle, paged: readonly PagedContents[]): Promise<void> {
  const scratch = new Uint8Array(READ_PIECE);
  try {
    for (const contents of paged) await contents.readRest(scratch);
  } catch {
    // A read that failed leaves its pages to `ensure`, which reports what stops it; the file stays open for it.
    return;
  }
  if (paged.every((contents) => contents.settled)) await handle.close().catch(() => undefined);
}

/** A list in ascending order of a string key, read through accessors (see `mergeSorted`). */
interface SortedList {
  readonly length: number;
  key(i: number): string;
  live(i: number): boolean;
}

/**
 * Visits the items of `lists` in key order (code units), equal keys one after another: a k-way merge over a heap
 * of the lists' heads. Returns false, having stopped, when a list is not in order.
 */
function mergeSorted(lists: readonly SortedList[], visit: (key: string, live: boolean) => void): boolean {
  const position = new Int32Array(lists.length);
  const head = lists.map((list) => (list.length > 0 ? list.key(0) : ''));
  const heap = lists.map((_, i) => i).filter((i) => lists[i]!.length > 0);
  const before = (a: number, b: number) => head[a]! < head[b]!;
  const siftDown = (from: number) => {
    let i = from;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) return;
      const child = left + 1 < heap.length && before(heap[left + 1]!, heap[left]!) ? left + 1 : left;
      if (!before(heap[child]!, heap[i]!)) return;
      [heap[i], heap[child]] = [heap[child]!, heap[i]!];
      i = child;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i -= 1) siftDown(i);
  while (heap.length > 0) {
    const l = heap[0]!;
    const list = lists[l]!;
    const key = head[l]!;
    visit(key, list.live(position[l]!));
    const next = (position[l] = position[l]! + 1);
    if (next < list.length) {
      const following = list.key(next);
      if (following < key) return false;
      head[l] = following;
    } else {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    siftDown(0);
  }
  return true;
}

/**
 * The live rows agree with the manifest's counts, and no chunk id is live twice. Each segment keeps its ids and
 * its sources sorted (per ACL class), so one merge of those lists finds a repeated id and counts the sources,
 * comparing neighbours instead of hashing every id and source into a set (a tenth of a load's time at 100k chunks).
 */
function checkLive(parts: readonly StoreFilePartition[], manifest: Manifest, path: string): void {
  const idLists: SortedList[] = [];
  const sourceLists: SortedList[] = [];
  for (const { segment, dead } of parts) {
    for (const aclClass of segment.aclClasses()) {
      const byId = segment.rowsById(aclClass);
      idLists.push({ length: byId.length, key: (i) => segment.id(byId[i]!), live: (i) => dead === null || dead[byId[i]!] !== 1 });
      const { count, source, offsets, rows } = segment.sourceLists(aclClass);
      const live = (i: number) => {
        if (dead === null) return true;
        for (let r = offsets[i]!; r < offsets[i + 1]!; r += 1) if (dead[rows[r]!] !== 1) return true;
        return false;
      };
      sourceLists.push({ length: count, key: source, live });
    }
  }
  let live = 0;
  let lastLive: string | undefined;
  const idsInOrder = mergeSorted(idLists, (id, isLive) => {
    if (!isLive) return;
    if (id === lastLive) throw corruptError(path, `chunk ${id} appears twice`);
    lastLive = id;
    live += 1;
  });
  if (!idsInOrder) throw corruptError(path, 'the chunk ids of a segment are out of order');
  const empty = new Set(manifest.emptySources.map(({ sourceId }) => sourceId));
  let sources = empty.size;
  let current: string | undefined;
  let currentLive = false;
  const close = () => {
    if (current === undefined || !currentLive) return;
    if (empty.has(current)) throw corruptError(path, `source ${current} is listed as empty and has chunks`);
    sources += 1;
  };
  const sourcesInOrder = mergeSorted(sourceLists, (sourceId, isLive) => {
    if (sourceId !== current) {
      close();
      current = sourceId;
      currentLive = false;
    }
    currentLive ||= isLive;
  });
  close();
  if (!sourcesInOrder) throw corruptError(path, 'the sources of a segment are out of order');
  if (live !== manifest.chunks || sources !== manifest.sources) {
    throw corruptError(path, `it counts ${manifest.sources} sources and ${manifest.chunks} chunks, and holds ${sources} and ${live}`);
  }
}

/**
 * The store file as sources and chunks, in order (for a copy into another store): the header, every source with
 * its chunk ids in document order, then every chunk with its record and vectors. A `@2` file is read as a stream.
 */
export async function* readStoreFileParts(path: string): AsyncGenerator<StoreFilePart> {
  const handle = await openForReading(path);
  let loaded: LoadedStore;
  try {
    if ((await formatOf(handle, path)) === 'json') {
      for await (const part of readLegacyParts(handle, path)) yield part;
      return;
    }
    requireLittleEndian(path);
    loaded = (await readBinary(handle, path, undefined, false)).loaded;
  } finally {
    await handle.close().catch(() => undefined);
  }
  yield { kind: 'header', header: loaded.header };
  yield* sourcesOf(loaded);
  for (const { segment, dead } of loaded.parts) {
    const sparse = segment.sparseRows();
    for (let row = 0; row < segment.size; row += 1) {
      if (dead !== null && dead[row] === 1) continue;
      const from = sparse.offsets[row] ?? 0;
      const to = sparse.offsets[row + 1] ?? 0;
      yield {
        kind: 'chunk',
        chunk: {
          record: segment.record(row),
          sparse: { indices: Array.from(sparse.indices.subarray(from, to)), values: Array.from(sparse.values.subarray(from, to)) },
          dense: segment.vectors?.has(row) ? segment.vectors.values(row) : null,
        },
      };
    }
  }
}

function* sourcesOf(loaded: LoadedStore): Generator<StoreFilePart> {
  const bySource = new Map<string, { version?: string; chunks: { id: string; start: number }[] }>();
  for (const { segment, dead } of loaded.parts) {
    for (let row = 0; row < segment.size; row += 1) {
      if (dead !== null && dead[row] === 1) continue;
      const sourceId = segment.sourceId(row);
      let entry = bySource.get(sourceId);
      if (entry === undefined) {
        const version = segment.version(row);
        entry = { ...(version === undefined ? {} : { version }), chunks: [] };
        bySource.set(sourceId, entry);
      }
      entry.chunks.push({ id: segment.id(row), start: segment.spanStart(row) });
    }
  }
  for (const [sourceId, entry] of loaded.emptySources) bySource.set(sourceId, { ...entry, chunks: [] });
  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  for (const sourceId of [...bySource.keys()].sort(byId)) {
    const { version, chunks } = bySource.get(sourceId) ?? { chunks: [] };
    // A document's chunks never overlap: span order is document order.
    const ids = chunks.sort((a, b) => a.start - b.start || byId(a.id, b.id)).map((chunk) => chunk.id);
    yield { kind: 'source', source: { sourceId, ...(version === undefined ? {} : { version }), ids } };
  }
}

// -------------------------------------------------------------------------------------------------
// Writing

/** The previous `@3` file at `path`, when there is one whose manifest reads (anything else: a fresh write). */
async function previousFile(path: string): Promise<{ manifest: Manifest; offset: number; trailer: Buffer } | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch {
    return null;
  }
  try {
    if ((await formatOf(handle, path)) !== 'binary') return null;
    return await readManifest(handle, path);
  } catch {
    return null;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Writes a store to `path` atomically as `litm-pack/memory-store@3`: the previous file stays as it was if anything
 * fails. When the previous file already holds most of the segments (see the module comment) only the others are
 * appended to a copy of it. Missing folders on the way are created; a path that is a folder is refused, naming the
 * file to give instead. Temporaries that dead writers left beside it are removed first.
 */
export async function writeStoreFile(path: string, contents: StoreContents): Promise<SaveReport> {
  if (await isFolder(path)) {
    throw new LitmPackError('invalid_input', `${path} is a folder; a store is a file: save to ${join(path, STORE_FILE_NAME)}`, {
      details: { path },
    });
  }
  requireLittleEndian(path);
  await removeStaleTemporaries(path);
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomUUID()}.tmp`);
  let handle: FileHandle | undefined;
  let report: SaveReport;
  try {
    await mkdir(directory, { recursive: true });
    const previous = await previousFile(path);
    const kept = keptSegments(previous?.manifest ?? null, contents);
    const written = await (kept !== null && previous !== null ? appendTo(path, temporary, previous, kept, contents) : null);
    if (written !== null) {
      handle = written.handle;
      report = written.report;
    } else {
      handle = await open(temporary, 'wx');
      await writeFully(handle, MAGIC, 0);
      const { end, entries, bytes } = await writeSegments(handle, MAGIC.length, contents, new Map());
      report = {
        incremental: false,
        bytesWritten: MAGIC.length + bytes + (await writeManifest(handle, end, contents, entries)),
        fileBytes: 0,
      };
    }
    await handle.sync();
    report.fileBytes = (await handle.stat()).size;
    await handle.close();
    handle = undefined;
    await rename(temporary, path);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    // A page of a lazily read segment found damaged while saving it is the store file's fault, not the save's.
    if (error instanceof LitmPackError && (error.code === 'unsupported' || error.code === 'corrupt')) throw error;
    throw new LitmPackError('io_error', `Could not save the store to ${path}: ${messageOf(error)}`, { cause: error, details: { path } });
  }
  // Make the rename itself durable where the platform allows syncing a directory.
  try {
    const dir = await open(directory, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the file content is already durable.
  }
  return report;
}

/**
 * The segments of `contents` the previous file holds (by id and shape) with their entries there, when keeping
 * them leaves at most `MAX_GARBAGE_SHARE` of the file to bytes no manifest refers to; else null (write afresh).
 */
function keptSegments(previous: Manifest | null, contents: StoreContents): Map<Segment, SegmentEntry> | null {
  if (previous === null) return null;
  const byId = new Map(previous.segments.map((entry) => [entry.id, entry]));
  const kept = new Map<Segment, SegmentEntry>();
  let keptBytes = 0;
  let newBytes = 0;
  for (const { segment } of contents.parts) {
    const entry = segment.contentId === undefined ? undefined : byId.get(segment.contentId);
    if (entry !== undefined && sameShape(entry.shape, segment.shape)) {
      kept.set(segment, entry);
      keptBytes += entry.contents.length + entry.heap.length;
    } else {
      newBytes += segment.bytes;
    }
  }
  const previousBytes = previous.segments.reduce(
    (sum, entry) => Math.max(sum, entry.contents.offset + entry.contents.length, entry.heap.offset + entry.heap.length),
    MAGIC.length,
  );
  const garbage = previousBytes - MAGIC.length - keptBytes;
  if (kept.size === 0 || garbage > MAX_GARBAGE_SHARE * (previousBytes + newBytes)) return null;
  return kept;
}

/**
 * A copy of the previous file (the kernel's: a reflink where the file system has them) cut after its last segment,
 * with the new segments and a new manifest appended; null when the copy is not the file whose manifest was read
 * (another writer replaced it meanwhile), so the caller writes afresh.
 */
async function appendTo(
  path: string,
  temporary: string,
  previous: { manifest: Manifest; offset: number; trailer: Buffer },
  kept: Map<Segment, SegmentEntry>,
  contents: StoreContents,
): Promise<{ handle: FileHandle; report: SaveReport } | null> {
  await copyFile(path, temporary, fsConstants.COPYFILE_EXCL | fsConstants.COPYFILE_FICLONE);
  const handle = await open(temporary, 'r+');
  try {
    const size = (await handle.stat()).size;
    const trailer = Buffer.alloc(TRAILER_BYTES);
    if (
      size !== previous.offset + Number(previous.trailer.readUInt32LE(8)) + TRAILER_BYTES ||
      !(await readFully(handle, trailer, size - TRAILER_BYTES)) ||
      !trailer.equals(previous.trailer)
    ) {
      await handle.close();
      await unlink(temporary);
      return null;
    }
    const end = previous.manifest.segments.reduce(
      (at, entry) => Math.max(at, entry.contents.offset + entry.contents.length, entry.heap.offset + entry.heap.length),
      MAGIC.length,
    );
    await handle.truncate(end);
    const { end: after, entries, bytes } = await writeSegments(handle, end, contents, kept);
    const manifestBytes = await writeManifest(handle, after, contents, entries);
    return { handle, report: { incremental: true, bytesWritten: bytes + manifestBytes, fileBytes: 0 } };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** Writes the segments not in `kept` from `at` on; returns the entries of all of them, in order. */
async function writeSegments(
  handle: FileHandle,
  at: number,
  contents: StoreContents,
  kept: Map<Segment, SegmentEntry>,
): Promise<{ end: number; entries: SegmentEntry[]; bytes: number }> {
  let position = at;
  let bytes = 0;
  const entries: SegmentEntry[] = [];
  for (const { segment, dead } of contents.parts) {
    const dead64 = deadBitmap(dead, segment.size);
    const live = liveRows(dead, segment.size);
    const previous = kept.get(segment);
    if (previous !== undefined) {
      entries.push({ ...previous, dead: dead64, live });
      continue;
    }
    const stored: StoredSegment = segment.toStored();
    let crc = contentsCrc.get(segment);
    if (crc === undefined) {
      crc = crc32(stored.contents);
      contentsCrc.set(segment, crc);
    }
    let pages = contentsPages.get(segment);
    if (pages === undefined) {
      pages = pageCrcs(stored.contents);
      contentsPages.set(segment, pages);
    }
    await writeFully(handle, stored.contents, position);
    const contentsSection = { offset: position, length: stored.contents.length, crc32: crc };
    position += stored.contents.length;
    const { heap } = stored;
    await writeFully(handle, heap, position);
    const heapSection = { offset: position, length: heap.length, crc32: crc32(heap) };
    position += heap.length;
    bytes += stored.contents.length + heap.length;
    entries.push({
      id: stored.contentId,
      shape: { ...stored.shape, classes: [...stored.shape.classes] },
      quantized: stored.quantized,
      contents: contentsSection,
      heap: heapSection,
      dead: dead64,
      live,
      pages,
    });
  }
  return { end: position, entries, bytes };
}

/** Writes the manifest and the trailer at `at`; returns the bytes written. */
async function writeManifest(handle: FileHandle, at: number, contents: StoreContents, segments: SegmentEntry[]): Promise<number> {
  const encodings = new Set<string>();
  for (const { segment } of contents.parts) for (const name of segment.encodings()) encodings.add(name);
  const { header } = contents;
  const manifest: Manifest = {
    schema: MEMORY_STORE_SCHEMA,
    chunkTokens: header.chunkTokens,
    dimension: header.dimension,
    embeddingModel: header.embeddingModel,
    indexedText: header.indexedText,
    encodings: [...encodings].sort(),
    sources: header.sources,
    chunks: header.chunks,
    acl: contents.classes.lists().map((acl) => [...acl]),
    emptySources: [...contents.emptySources].map(([sourceId, entry]) => ({
      sourceId,
      ...(entry.version === undefined ? {} : { version: entry.version }),
    })),
    segments,
  };
  const bytes = Buffer.from(JSON.stringify(manifest), 'utf8');
  const trailer = Buffer.alloc(TRAILER_BYTES);
  trailer.writeBigUInt64LE(BigInt(at), 0);
  trailer.writeUInt32LE(bytes.length, 8);
  trailer.writeUInt32LE(crc32(bytes), 12);
  END_MAGIC.copy(trailer, 16);
  await writeFully(handle, bytes, at);
  await writeFully(handle, trailer, at + bytes.length);
  return bytes.length + TRAILER_BYTES;
}
