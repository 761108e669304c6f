/**
 * The embedded store's file: its schema (`litm-pack/memory-store@1`), an atomic write (a temporary file in the
 * same folder, fsynced, then renamed over the target; missing folders are created), and a read that says what
 * to pass instead when the path is a folder or missing. A store is one file.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { sha256Hex } from '../base/canonical.js';
import { LitmPackError, describeIssues } from '../base/errors.js';
import { ChunkRecordSchema } from './schemas.js';

export const MEMORY_STORE_SCHEMA = 'litm-pack/memory-store@1' as const;

/** The file a folder given as a store holds (the CLI's `--store DIR`). */
export const STORE_FILE_NAME = 'store.json';

const finiteNumber = z.number().refine(Number.isFinite, { message: 'must be finite' });

export const StoreFileSchema = z
  .strictObject({
    schema: z.literal(MEMORY_STORE_SCHEMA),
    chunkTokens: z.number().int().min(8).max(8192),
    dimension: z.number().int().positive().nullable(),
    /** The embedding model that made the vectors (absent in files written before it was recorded). */
    embeddingModel: z.string().min(1).nullable().optional(),
    sources: z.array(
      z.strictObject({ sourceId: z.string().min(1), version: z.string().optional(), ids: z.array(z.string().min(1)) }),
    ),
    chunks: z.array(
      z.strictObject({
        record: ChunkRecordSchema,
        sparse: z.strictObject({ indices: z.array(z.number().int().nonnegative()), values: z.array(finiteNumber) }),
        dense: z.array(finiteNumber).nullable(),
      }),
    ),
  })
  .superRefine((file, ctx) => {
    file.chunks.forEach((chunk, index) => {
      // A record whose text no longer hashes to its textSha256 was edited or damaged.
      if (sha256Hex(chunk.record.text) === chunk.record.textSha256) return;
      ctx.addIssue({ code: 'custom', path: ['chunks', index, 'record', 'textSha256'], message: 'does not match the text' });
    });
  });
export type StoreFile = z.output<typeof StoreFileSchema>;

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

function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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

/**
 * Writes `file` to `path` atomically: the previous file stays as it was if anything fails. Missing folders
 * on the way are created; a path that is a folder is refused, naming the file to give instead.
 */
export async function writeStoreFile(path: string, file: StoreFile): Promise<void> {
  if (await isFolder(path)) {
    throw new LitmPackError('invalid_input', `${path} is a folder; a store is a file: save to ${join(path, STORE_FILE_NAME)}`, {
      details: { path },
    });
  }
  await removeStaleTemporaries(path);
  const data = JSON.stringify(file);
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomUUID()}.tmp`);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    await mkdir(directory, { recursive: true });
    handle = await open(temporary, 'wx');
    await handle.writeFile(data, 'utf8');
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

/**
 * Reads and validates a store file. `not_found` for a missing or unreadable path (a folder: the message names
 * the file inside it to pass), `corrupt` for anything that is not a store file of this schema version.
 */
export async function readStoreFile(path: string): Promise<StoreFile> {
  if (await isFolder(path)) {
    throw new LitmPackError('not_found', `${path} is a folder; a store is a file: load ${join(path, STORE_FILE_NAME)} (the file ingest writes there)`, {
      details: { path },
    });
  }
  await removeStaleTemporaries(path);
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
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
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw new LitmPackError('corrupt', `Store file ${path} is not valid JSON: ${messageOf(error)}`, { cause: error, details: { path } });
  }
  const schema = typeof json === 'object' && json !== null ? (json as { schema?: unknown }).schema : undefined;
  if (schema !== MEMORY_STORE_SCHEMA) {
    throw new LitmPackError('corrupt', `Store file ${path} has schema ${JSON.stringify(schema)}; this version reads ${MEMORY_STORE_SCHEMA}`, {
      details: { path },
    });
  }
  const parsed = StoreFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new LitmPackError('corrupt', `Store file ${path} is corrupt: ${describeIssues(parsed.error.issues)}`, {
      cause: parsed.error,
      issues: parsed.error.issues,
      details: { path },
    });
  }
  return parsed.data;
}
