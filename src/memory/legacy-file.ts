/**
 * The store files earlier versions wrote, still read (and saved again as `@3` by file.ts):
 *
 * - `litm-pack/memory-store@2` (the columnar store's first file): JSON lines, read as a stream so a store is never
 *   one string: a header line (counts included, so a cut file is caught), one line per source (by id), one line
 *   per chunk (its record, BM25 vector and dense vector as base64 of little-endian float32, exact).
 * - `litm-pack/memory-store@1`: one JSON document.
 *
 * Every record is validated (and its text checked against its hash), and the chunks become segments as they
 * come (`restoreLegacy`): nothing is trusted that a newer file would have checked by its checksums.
 */
import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { sha256Hex } from '../base/canonical.js';
import { LitmPackError, describeIssues } from '../base/errors.js';
import { IndexedTextRecipeSchema, LEGACY_INDEXED_TEXT, type IndexedTextRecipe } from '../store/indexed-text.js';
import { ChunkRecordSchema, type ChunkRecord } from '../store/schemas.js';
import type { SparseVector } from '../tokenize/bm25.js';
import type { AclClasses } from './acl-classes.js';
import { Segment, type NewRow } from './segment.js';

export const MEMORY_STORE_SCHEMA_V2 = 'litm-pack/memory-store@2' as const;
export const MEMORY_STORE_SCHEMA_V1 = 'litm-pack/memory-store@1' as const;

/** Rows per segment of a legacy file (as many as a merge makes at most: see snapshot.ts). */
const LEGACY_SEGMENT_ROWS = 65_536;

const finiteNumber = z.number().refine(Number.isFinite, { message: 'must be finite' });
const SparseSchema = z
  .strictObject({ indices: z.array(z.number().int().nonnegative()), values: z.array(finiteNumber) })
  .superRefine((sparse, ctx) => {
    if (sparse.indices.length !== sparse.values.length) ctx.addIssue({ code: 'custom', message: 'indices and values differ in length' });
    for (let i = 1; i < sparse.indices.length; i += 1) {
      if ((sparse.indices[i] ?? 0) <= (sparse.indices[i - 1] ?? 0)) {
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

const V2HeaderSchema = z.strictObject({
  schema: z.literal(MEMORY_STORE_SCHEMA_V2),
  chunkTokens: z.number().int().min(8).max(8192),
  dimension: z.number().int().positive().nullable(),
  embeddingModel: z.string().min(1).nullable(),
  /** How the chunks were indexed (recorded by no released version: absent means `chunk-text`). */
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
      dense: z
        .string()
        .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')
        .nullable(),
    }),
  })
  .superRefine((line, ctx) => checkHash(line.chunk.record, ctx, ['chunk', 'record', 'textSha256']));

/** What a legacy file says about itself (the same shape as file.ts's `StoreFileHeader`). */
export interface LegacyHeader {
  chunkTokens: number;
  dimension: number | null;
  embeddingModel: string | null;
  indexedText: IndexedTextRecipe;
  sources: number;
  chunks: number;
}

export type LegacyPart =
  | { kind: 'header'; header: LegacyHeader }
  | { kind: 'source'; source: { sourceId: string; version?: string; ids: string[] } }
  | { kind: 'chunk'; chunk: { record: ChunkRecord; sparse: SparseVector; dense: Float32Array | null } };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function decodeDense(base64: string, dimension: number | null): Float32Array | string {
  const bytes = Buffer.from(base64, 'base64');
  if (dimension === null || bytes.length !== dimension * 4)
    return `a vector of ${bytes.length / 4} values where the store's dimension is ${dimension}`;
  const values = new Float32Array(dimension);
  for (let i = 0; i < dimension; i += 1) {
    const value = bytes.readFloatLE(i * 4);
    if (!Number.isFinite(value)) return 'a vector with a value that is not finite';
    values[i] = value;
  }
  return values;
}

/**
 * The parts of a legacy file open in `handle` (read from its start, line by line), in file order: the header,
 * every source, then every chunk. `corrupt` for anything that is not a file of either schema, naming the line.
 */
export async function* readLegacyParts(handle: FileHandle, path: string): AsyncGenerator<LegacyPart> {
  const corrupt = (message: string, options: { cause?: unknown; issues?: z.core.$ZodIssue[] } = {}): never => {
    throw new LitmPackError('corrupt', `Store file ${path} is corrupt: ${message}`, { ...options, details: { path } });
  };
  const stream = handle.createReadStream({ encoding: 'utf8', start: 0, autoClose: false });
  const lines = createInterface({ input: stream, crlfDelay: Infinity })[Symbol.asyncIterator]();
  let number = 0;
  const next = async (): Promise<string | undefined> => {
    try {
      const result: IteratorResult<string> = await lines.next();
      if (result.done === true) return undefined;
      number += 1;
      return result.value;
    } catch (error) {
      throw new LitmPackError('io_error', `Could not read the store file ${path}: ${messageOf(error)}`, {
        cause: error,
        details: { path },
      });
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
    if (first === undefined) return corrupt('not valid JSON: the file is empty');
    const json = parse(first);
    const schema = typeof json === 'object' && json !== null ? (json as { schema?: unknown }).schema : undefined;
    if (schema === MEMORY_STORE_SCHEMA_V1) {
      if ((await next()) !== undefined) corrupt(`line ${number}: a ${MEMORY_STORE_SCHEMA_V1} file is one JSON document`);
      yield* v1Parts(check(V1Schema, json, 'the file'));
      return;
    }
    if (schema !== MEMORY_STORE_SCHEMA_V2) {
      corrupt(
        `it has schema ${JSON.stringify(schema)}; this version reads litm-pack/memory-store@3, ${MEMORY_STORE_SCHEMA_V2} and ${MEMORY_STORE_SCHEMA_V1}`,
      );
    }
    const { schema: _schema, indexedText, ...header } = check(V2HeaderSchema, json, 'line 1 (the header)');
    yield { kind: 'header', header: { ...header, indexedText: indexedText ?? LEGACY_INDEXED_TEXT } };
    for (let i = 0; i < header.sources; i += 1) {
      const text = await next();
      if (text === undefined) return corrupt(`it ends after ${i} of its ${header.sources} sources (a cut file?)`);
      yield { kind: 'source', source: check(SourceLineSchema, parse(text), `line ${number}`).source };
    }
    for (let i = 0; i < header.chunks; i += 1) {
      const text = await next();
      if (text === undefined) return corrupt(`it ends after ${i} of its ${header.chunks} chunks (a cut file?)`);
      const { chunk } = check(ChunkLineSchema, parse(text), `line ${number}`);
      let dense: Float32Array | null = null;
      if (chunk.dense !== null) {
        const decoded = decodeDense(chunk.dense, header.dimension);
        if (typeof decoded === 'string') return corrupt(`line ${number}: chunk ${chunk.record.id} has ${decoded}`);
        dense = decoded;
      }
      yield { kind: 'chunk', chunk: { record: chunk.record, sparse: chunk.sparse, dense } };
    }
    const extra = await next();
    if (extra !== undefined && extra.trim() !== '') corrupt(`line ${number}: more lines than the header counts`);
  } finally {
    stream.destroy();
  }
}

function* v1Parts(file: z.output<typeof V1Schema>): Generator<LegacyPart> {
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
  for (const source of file.sources) yield { kind: 'source', source };
  for (const { record, sparse, dense } of file.chunks) {
    yield { kind: 'chunk', chunk: { record, sparse, dense: dense === null ? null : Float32Array.from(dense) } };
  }
}

/** A legacy file made into segments: its header, its segments (every row live) and its sources without chunks. */
export interface RestoredLegacy {
  header: LegacyHeader;
  segments: Segment[];
  emptySources: Map<string, { version?: string }>;
}

/**
 * Builds segments of a legacy file's chunks as they are read (a segment per 65,536 rows), checking that sources
 * and chunks agree: each chunk listed by its source once, each listed chunk present, vectors of the dimension.
 */
export async function restoreLegacy(parts: AsyncIterable<LegacyPart>, classes: AclClasses, path: string): Promise<RestoredLegacy> {
  const corrupt = (message: string): never => {
    throw new LitmPackError('corrupt', `Store file ${path} is corrupt: ${message}`, { details: { path } });
  };
  let header: LegacyHeader | undefined;
  /** Listed chunk id → its source (false once the chunk was read). */
  const listed = new Map<string, string | false>();
  const seenSources = new Set<string>();
  const emptySources = new Map<string, { version?: string }>();
  const segments: Segment[] = [];
  let pending: NewRow[] = [];
  const flush = () => {
    if (pending.length > 0) segments.push(Segment.fromRows(classes, pending));
    pending = [];
  };
  for await (const part of parts) {
    if (part.kind === 'header') {
      header = part.header;
    } else if (part.kind === 'source') {
      const { source } = part;
      if (seenSources.has(source.sourceId)) corrupt(`source ${source.sourceId} appears twice`);
      seenSources.add(source.sourceId);
      for (const id of source.ids) {
        if (listed.has(id)) corrupt(`chunk ${id} is listed twice`);
        listed.set(id, source.sourceId);
      }
      if (source.ids.length === 0) emptySources.set(source.sourceId, source.version === undefined ? {} : { version: source.version });
    } else {
      const { record, sparse, dense } = part.chunk;
      const owner = listed.get(record.id);
      if (owner === false) corrupt(`chunk ${record.id} appears twice`);
      if (owner !== record.sourceId) corrupt(`chunk ${record.id} is not listed by its source ${record.sourceId}`);
      listed.set(record.id, false);
      if (dense !== null && dense.length !== header?.dimension) corrupt(`chunk ${record.id} has a vector of the wrong dimension`);
      pending.push({ record, sparse, dense, aclClass: classes.classOf(record.acl) });
      if (pending.length >= LEGACY_SEGMENT_ROWS) flush();
    }
  }
  for (const [id, owner] of listed) if (owner !== false) corrupt(`source ${owner} lists unknown chunk ${id}`);
  flush();
  if (header === undefined) return corrupt('it has no header');
  return { header, segments, emptySources };
}
