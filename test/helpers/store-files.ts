// Reading and rewriting saved store files in tests: `@2` is JSON lines (a header, the sources, the chunks with
// their vectors as base64 of little-endian float32); `@1` was one JSON document with vectors as number arrays.
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';

export interface SavedChunk {
  record: { id: string; text: string; textSha256: string; indexedAt: string; [key: string]: unknown };
  sparse: { indices: number[]; values: number[] };
  dense: string | null;
}

export interface SavedStore {
  header: { schema: string; chunkTokens: number; dimension: number | null; embeddingModel: string | null; sources: number; chunks: number };
  sources: { sourceId: string; version?: string; ids: string[] }[];
  chunks: SavedChunk[];
}

export async function readSaved(path: string): Promise<SavedStore> {
  return parseSaved(await readFile(path, 'utf8'));
}

export function readSavedSync(path: string): SavedStore {
  return parseSaved(readFileSync(path, 'utf8'));
}

function parseSaved(text: string): SavedStore {
  const lines = text.split('\n').filter((line) => line !== '');
  const header = JSON.parse(lines[0]!) as SavedStore['header'];
  const rest = lines.slice(1).map((line) => JSON.parse(line) as { source?: SavedStore['sources'][number]; chunk?: SavedChunk });
  return {
    header,
    sources: rest.flatMap((line) => (line.source ? [line.source] : [])),
    chunks: rest.flatMap((line) => (line.chunk ? [line.chunk] : [])),
  };
}

export async function writeSaved(path: string, saved: SavedStore): Promise<void> {
  const lines = [JSON.stringify(saved.header), ...saved.sources.map((source) => JSON.stringify({ source })), ...saved.chunks.map((chunk) => JSON.stringify({ chunk }))];
  await writeFile(path, `${lines.join('\n')}\n`);
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
      chunks: saved.chunks.map((chunk) => ({ record: chunk.record, sparse: chunk.sparse, dense: chunk.dense === null ? null : decodeDense(chunk.dense) })),
    }),
  );
}
