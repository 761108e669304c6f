/**
 * The embedded store's file: its schema, an atomic write (a temporary file in the same folder, fsynced, then
 * renamed over the target; missing folders are created), and a read that says what to pass instead when the path
 * is a folder or missing. A store is one file.
 *
 * `litm-pack/memory-store@2` (written since the store became columnar) is JSON lines, read and written as a
 * stream so a store is never one string: a header line (counts included, so a cut file is caught), one line per
 * source (by id), one line per chunk (its record, BM25 vector and dense vector as base64 of little-endian
 * float32, exact). `@1` files (one JSON document) are still read. Earlier versions of litm-pack read a `@2`
 * file as corrupt ("not valid JSON"): upgrade to read it.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { canonicalStringify, sha256Hex } from '../base/canonical.js';
import { LitmPackError, describeIssues } from '../base/errors.js';
import { ChunkRecordSchema, type ChunkRecord } from '../store/schemas.js';
import { IndexedTextRecipeSchema, LEGACY_INDEXED_TEXT, type IndexedTextRecipe } from '../store/indexed-text.js';
import { pidRunning } from './lock.js';
import type { SparseVector } from '../tokenize/bm25.js';

/** The schema this version writes. */
export const MEMORY_STORE_SCHEMA = 'litm-pack/memory-store@2' as const;
/** The schema of files written before the columnar store; still read. */
export const MEMORY_STORE_SCHEMA_V1 = 'litm-pack/memory-store@1' as const;

/** The file a folder given as a store holds (the CLI's `--store DIR`). */
export const STORE_FILE_NAME = 'store.json';

const finiteNumber = z.number().refine(Number.isFinite, { message: 'must be finite' });
const SparseSchema = z
  .strictObject({ indices: z.array(z.number().int().nonnegative()), values: z.array(finiteNumber) })
  .superRefine((sparse, ctx) => {
    if (sparse.indices.length !== sparse.values.length) ctx.addIssue({ code: 'custom', message: 'indices and values differ in length' });
    for (let i = 1; i < sparse.indices.length; i += 1) {
      if (sparse.indices[i]! <= sparse.indices[i - 1]!) {
        ctx.addIssue({ code: 'custom', path: ['indices', i], message: 'indices must be ascending' });
        return;
      }
    }
  });
const SourceSchema = z.strictObject({ sourceId: z.string().min(1), version: z.string().optional(), ids: z.array(z.string().min(1)) });
const checkHash = (record: { text: string; textSha256: string }, ctx: z.RefinementCtx, path: (string | number)[]) => {
  // A record whose text no longer hashes to its textSha256 was edited or damaged.
  if (sha256Hex(record.text) !== record.textSha256) ctx.addIssue({ code: 'custom', path, message: 'does not match the text' });
};

const V1Schema = z
  .strictObject({
    schema: z.literal(MEMORY_STORE_SCHEMA_V1),
    chunkTokens: z.number().int().min(8).max(8192),
    dimension: z.number().int().positive().nullable(),
    /** The embedding model that made the vectors (absent in files written before it was recorded). */
    embeddingModel: z.string().min(1).nullable().optional(),
    sources: z.array(SourceSchema),
    chunks: z.array(z.strictObject({ record: ChunkRecordSchema, sparse: SparseSchema, dense: z.array(finiteNumber).nullable() })),
  })
  .superRefine((file, ctx) => {
    file.chunks.forEach((chunk, index) => checkHash(chunk.record, ctx, ['chunks', index, 'record', 'textSha256']));
  });

const HeaderSchema = z.strictObject({
  schema: z.literal(MEMORY_STORE_SCHEMA),
  chunkTokens: z.number().int().min(8).max(8192),
  dimension: z.number().int().positive().nullable(),
  embeddingModel: z.string().min(1).nullable(),
  /** How the chunks were indexed (absent in files written before it was recorded: `chunk-text`). */
  indexedText: IndexedTextRecipeSchema.optional(),
  sources: z.number().int().nonnegative(),
  chunks: z.number().int().nonnegative(),
});
const SourceLineSchema = z.strictObject({ source: SourceSchema });
const ChunkLineSchema = z
  .strictObject({
    chunk: z.strictObject({
      record: ChunkRecordSchema,
      sparse: SparseSchema,
      dense: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64').nullable(),
    }),
  })
  .superRefine((line, ctx) => checkHash(line.chunk.record, ctx, ['chunk', 'record', 'textSha256']));

/** What a store file says about itself. */
export interface StoreFileHeader {
  chunkTokens: number;
  dimension: number | null;
  /** The embedding model that made the vectors (null: not recorded). */
  embeddingModel: string | null;
  /** The recipe of the indexed text the BM25 vectors and embeddings were made from (see indexed-text.ts). */
  indexedText: IndexedTextRecipe;
  /** Number of source lines and chunk lines that follow. */
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

/** A store's contents, as `writeStoreFile` reads them: sources and chunks produced as they are written. */
export interface StoreFileContents {
  header: StoreFileHeader;
  sources(): Iterable<StoreFileSource>;
  chunks(): Iterable<StoreFileChunk>;
}

/** What `readStoreFile` hands on, in file order: the header, every source, then every chunk. */
export interface StoreFileReader {
  header(header: StoreFileHeader): void;
  source(source: StoreFileSource): void;
  chunk(chunk: StoreFileChunk): void;
}

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

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Removes the temporary files a save (`.store.json.<pid>.<uuid>.tmp`) or a lock (`store.json.lock.<pid>.<uuid>.tmp`)
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

/** Float32 values as base64 of their little-endian bytes (exact). */
export function encodeDense(values: Float32Array): string {
  if (isLittleEndian) return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function decodeDense(base64: string, dimension: number | null): Float32Array | string {
  const bytes = Buffer.from(base64, 'base64');
  if (dimension === null || bytes.length !== dimension * 4) return `a vector of ${bytes.length / 4} values where the store's dimension is ${dimension}`;
  const values = new Float32Array(dimension);
  for (let i = 0; i < dimension; i += 1) {
    const value = bytes.readFloatLE(i * 4);
    if (!Number.isFinite(value)) return 'a vector with a value that is not finite';
    values[i] = value;
  }
  return values;
}

/**
 * Writes a store to `path` atomically, as `litm-pack/memory-store@2`, line by line: the previous file stays as
 * it was if anything fails. Missing folders on the way are created; a path that is a folder is refused, naming
 * the file to give instead. Temporaries that dead writers left beside it are removed first.
 */
export async function writeStoreFile(path: string, contents: StoreFileContents): Promise<void> {
  if (await isFolder(path)) {
    throw new LitmPackError('invalid_input', `${path} is a folder; a store is a file: save to ${join(path, STORE_FILE_NAME)}`, {
      details: { path },
    });
  }
  await removeStaleTemporaries(path);
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomUUID()}.tmp`);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    await mkdir(directory, { recursive: true });
    handle = await open(temporary, 'wx');
    const out = handle;
    let pending: string[] = [];
    let size = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      await out.write(pending.join(''), null, 'utf8');
      pending = [];
      size = 0;
    };
    const line = async (text: string) => {
      pending.push(text, '\n');
      size += text.length + 1;
      // Written in pieces of about 4 MB: the file is never one string.
      if (size >= 4 * 2 ** 20) await flush();
    };
    const { header } = contents;
    await line(JSON.stringify({ schema: MEMORY_STORE_SCHEMA, ...header }));
    let sources = 0;
    for (const source of contents.sources()) {
      sources += 1;
      await line(canonicalStringify({ source }));
    }
    let chunks = 0;
    for (const { record, sparse, dense } of contents.chunks()) {
      chunks += 1;
      await line(
        `{"chunk":{"dense":${dense === null ? 'null' : `"${encodeDense(dense)}"`},"record":${canonicalStringify(record)},` +
          `"sparse":{"indices":${JSON.stringify(sparse.indices)},"values":${JSON.stringify(sparse.values)}}}}`,
      );
    }
    if (sources !== header.sources || chunks !== header.chunks) {
      throw new Error(`the header counts ${header.sources} sources and ${header.chunks} chunks, ${sources} and ${chunks} were written`);
    }
    await flush();
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temporary, path);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
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
}

/** A part of a store file, in file order: the header, every source, then every chunk. */
export type StoreFilePart =
  | { kind: 'header'; header: StoreFileHeader }
  | { kind: 'source'; source: StoreFileSource }
  | { kind: 'chunk'; chunk: StoreFileChunk };

/**
 * Reads and validates a store file (`@2`, or `@1`), handing its parts to `reader` in file order; `@2` is read
 * line by line. `not_found` for a missing or unreadable path (a folder: the message names the file inside it
 * to pass), `corrupt` for anything that is not a store file of a known schema, naming the line.
 */
export async function readStoreFile(path: string, reader: StoreFileReader): Promise<void> {
  for await (const part of readStoreFileParts(path)) {
    if (part.kind === 'header') reader.header(part.header);
    else if (part.kind === 'source') reader.source(part.source);
    else reader.chunk(part.chunk);
  }
}

/** `readStoreFile` as an async iteration: the next part is read when the caller asks for it (a copy waits on its writes). */
export async function* readStoreFileParts(path: string): AsyncGenerator<StoreFilePart> {
  if (await isFolder(path)) {
    throw new LitmPackError('not_found', `${path} is a folder; a store is a file: load ${join(path, STORE_FILE_NAME)} (the file ingest writes there)`, {
      details: { path },
    });
  }
  await removeStaleTemporaries(path);
  const corrupt = (message: string, options: { cause?: unknown; issues?: z.core.$ZodIssue[] } = {}): never => {
    throw new LitmPackError('corrupt', `Store file ${path} is corrupt: ${message}`, { ...options, details: { path } });
  };
  let lines: AsyncIterableIterator<string>;
  let stream: ReturnType<typeof createReadStream>;
  try {
    const handle = await open(path, 'r');
    stream = handle.createReadStream({ encoding: 'utf8' });
    lines = createInterface({ input: stream, crlfDelay: Infinity })[Symbol.asyncIterator]();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new LitmPackError('not_found', `No store file at ${path}: pass the path of a file a store was saved to`, { cause: error, details: { path } });
    }
    if (code === 'EACCES' || code === 'EPERM') {
      throw new LitmPackError('not_found', `The store file ${path} cannot be read (${code})`, { cause: error, details: { path } });
    }
    throw new LitmPackError('io_error', `Could not read the store file ${path}: ${messageOf(error)}`, { cause: error, details: { path } });
  }
  let number = 0;
  const next = async (): Promise<string | undefined> => {
    try {
      const { value, done } = await lines.next();
      if (done) return undefined;
      number += 1;
      return value;
    } catch (error) {
      throw new LitmPackError('io_error', `Could not read the store file ${path}: ${messageOf(error)}`, { cause: error, details: { path } });
    }
  };
  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (error) {
      return corrupt(`${number > 1 ? `line ${number} is ` : ''}not valid JSON: ${messageOf(error)}`, { cause: error });
    }
  };
  const check = <T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    return corrupt(`${where}: ${describeIssues(parsed.error.issues)}`, { cause: parsed.error, issues: parsed.error.issues });
  };
  try {
    const first = await next();
    if (first === undefined) corrupt('not valid JSON: the file is empty');
    const json = parse(first!);
    const schema = typeof json === 'object' && json !== null ? (json as { schema?: unknown }).schema : undefined;
    if (schema === MEMORY_STORE_SCHEMA_V1) {
      if ((await next()) !== undefined) corrupt(`line ${number}: a ${MEMORY_STORE_SCHEMA_V1} file is one JSON document`);
      yield* readV1(check(V1Schema, json, 'the file'));
      return;
    }
    if (schema !== MEMORY_STORE_SCHEMA) {
      corrupt(`it has schema ${JSON.stringify(schema)}; this version reads ${MEMORY_STORE_SCHEMA} and ${MEMORY_STORE_SCHEMA_V1}`);
    }
    const { schema: _schema, indexedText, ...header } = check(HeaderSchema, json, 'line 1 (the header)');
    yield { kind: 'header', header: { ...header, indexedText: indexedText ?? LEGACY_INDEXED_TEXT } };
    for (let i = 0; i < header.sources; i += 1) {
      const text = await next();
      if (text === undefined) corrupt(`it ends after ${i} of its ${header.sources} sources (a cut file?)`);
      yield { kind: 'source', source: check(SourceLineSchema, parse(text!), `line ${number}`).source as StoreFileSource };
    }
    for (let i = 0; i < header.chunks; i += 1) {
      const text = await next();
      if (text === undefined) corrupt(`it ends after ${i} of its ${header.chunks} chunks (a cut file?)`);
      const { chunk } = check(ChunkLineSchema, parse(text!), `line ${number}`);
      let dense: Float32Array | null = null;
      if (chunk.dense !== null) {
        const decoded = decodeDense(chunk.dense, header.dimension);
        if (typeof decoded === 'string') corrupt(`line ${number}: chunk ${chunk.record.id} has ${decoded}`);
        dense = decoded as Float32Array;
      }
      yield { kind: 'chunk', chunk: { record: chunk.record as ChunkRecord, sparse: chunk.sparse, dense } };
    }
    const extra = await next();
    if (extra !== undefined && extra.trim() !== '') corrupt(`line ${number}: more lines than the header counts`);
  } finally {
    stream.destroy();
  }
}

function* readV1(file: z.output<typeof V1Schema>): Generator<StoreFilePart> {
  yield {
    kind: 'header',
    header: {
      chunkTokens: file.chunkTokens,
      dimension: file.dimension,
      embeddingModel: file.embeddingModel ?? null,
      indexedText: LEGACY_INDEXED_TEXT,
      sources: file.sources.length,
      chunks: file.chunks.length,
    },
  };
  for (const source of file.sources) yield { kind: 'source', source: source as StoreFileSource };
  for (const { record, sparse, dense } of file.chunks) {
    yield { kind: 'chunk', chunk: { record: record as ChunkRecord, sparse, dense: dense === null ? null : Float32Array.from(dense) } };
  }
}
