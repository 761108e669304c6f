// Reading and rewriting saved store files in tests. A saved store is read through the library's own reader
// (every format: `@3` binary, `@2` JSON lines, `@1` one JSON document) into one plain shape; `writeSaved` and
// `writeV1` write that shape in the two JSON formats earlier versions wrote (`@2`: a header line, the sources, the
// chunks with their vectors as base64 of little-endian float32; `@1`: one JSON document with number arrays).
import { readFile, writeFile } from 'node:fs/promises';
import { readStoreFileParts } from '../../src/memory/file.js';

export interface SavedChunk {
  record: { id: string; text: string; textSha256: string; indexedAt: string; [key: string]: unknown };
  sparse: { indices: number[]; values: number[] };
  dense: string | null;
}

export interface SavedStore {
  header: {
    schema: string;
    chunkTokens: number;
    dimension: number | null;
    embeddingModel: string | null;
    indexedText?: string;
    sources: number;
    chunks: number;
  };
  sources: { sourceId: string; version?: string; ids: string[] }[];
  chunks: SavedChunk[];
}

/** The schema a store file says it has: the `@3` magic, or the JSON header's `schema`. */
export async function savedSchema(path: string): Promise<string> {
  const bytes = await readFile(path);
  if (bytes[0] === 0x89 && bytes.subarray(1, 5).toString('latin1') === 'LITM') return 'litm-pack/memory-store@3';
  return (JSON.parse(bytes.toString('utf8').split('\n', 1)[0]!) as { schema: string }).schema;
}

export async function readSaved(path: string): Promise<SavedStore> {
  const saved: SavedStore = { header: undefined as unknown as SavedStore['header'], sources: [], chunks: [] };
  for await (const part of readStoreFileParts(path)) {
    if (part.kind === 'header') saved.header = { schema: await savedSchema(path), ...part.header };
    else if (part.kind === 'source') saved.sources.push(part.source);
    else {
      const { record, sparse, dense } = part.chunk;
      saved.chunks.push({
        record,
        sparse: { indices: [...sparse.indices], values: [...sparse.values] },
        dense: dense === null ? null : encodeDense(dense),
      });
    }
  }
  return saved;
}

/** The store as a `litm-pack/memory-store@2` file (JSON lines, what the previous version wrote). */
export async function writeSaved(path: string, saved: SavedStore): Promise<void> {
  const lines = [
    JSON.stringify({ ...saved.header, schema: 'litm-pack/memory-store@2' }),
    ...saved.sources.map((source) => JSON.stringify({ source })),
    ...saved.chunks.map((chunk) => JSON.stringify({ chunk })),
  ];
  await writeFile(path, `${lines.join('\n')}\n`);
}

function encodeDense(values: Float32Array): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

export function decodeDense(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

/** The same store as a `litm-pack/memory-store@1` file (what earlier versions wrote), `embeddingModel` optional. */
export async function writeV1(path: string, saved: SavedStore, options: { withModel?: boolean } = {}): Promise<void> {
  const { header } = saved;
  await writeFile(
    path,
    JSON.stringify({
      schema: 'litm-pack/memory-store@1',
      chunkTokens: header.chunkTokens,
      dimension: header.dimension,
      ...(options.withModel === false ? {} : { embeddingModel: header.embeddingModel }),
      sources: saved.sources,
      chunks: saved.chunks.map((chunk) => ({
        record: chunk.record,
        sparse: chunk.sparse,
        dense: chunk.dense === null ? null : decodeDense(chunk.dense),
      })),
    }),
  );
}
