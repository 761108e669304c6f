/**
 * Ingest as one pipeline step that every door calls: read paths into documents (`loadDocuments`, every skipped
 * file and copy left out remembered), add them to a store, and with `prune` delete the sources under those paths
 * whose files are gone. Read and apply are separate so a caller can read before it takes a store's lock (the
 * CLI reads everything first: an unreadable folder fails before the store is touched); `ingestPaths` is both.
 */
import { LitmPackError } from '../base/errors.js';
import type { AddDocumentsOptions, IngestDocument } from '../store/schemas.js';
import { storeSourceIds } from '../store/source-ids.js';
import type { AddDocumentsResult, DeleteSourcesResult, Store } from '../store/types.js';
import { loadDocuments, sourceScope, type LoadDocumentsOptions, type SkippedFile } from '../sources/load.js';

/** What reading the paths found: the documents, and what pruning must not take for gone. */
export interface IngestRead {
  /** The paths read (files and folders), as given. */
  paths: string[];
  /** The folder source ids are relative to (`LoadDocumentsOptions.base`; default the working directory). */
  base?: string | undefined;
  documents: IngestDocument[];
  /** Files that gave documents (a mailbox is one file of many sources). */
  files: number;
  /** Files and links skipped, with the reason. */
  skipped: SkippedFile[];
  /** Source ids whose documents were left out as copies of another file's (a message read from another mailbox). */
  held: Set<string>;
}

export interface ReadPathsOptions extends LoadDocumentsOptions {
  /** Reading for a prune: an emptied folder is no error (its sources are removed). */
  prune?: boolean | undefined;
}

/** Reads `paths` with `loadDocuments`, remembering what `applyIngest`'s prune needs (the caller's callbacks still run). */
export async function readPaths(paths: readonly string[], options: ReadPathsOptions = {}): Promise<IngestRead> {
  const { prune, onFile, onSkip, ...load } = options;
  const skipped: SkippedFile[] = [];
  const held = new Set<string>();
  let files = 0;
  const documents = await loadDocuments(paths, {
    ...load,
    ...(prune === true ? { allowEmpty: true } : {}),
    onFile: (file) => {
      files += 1;
      for (const id of file.held) held.add(id);
      onFile?.(file);
    },
    onSkip: (skip) => {
      skipped.push(skip);
      onSkip?.(skip);
    },
  });
  return { paths: [...paths], base: options.base, documents, files, skipped, held };
}

export interface ApplyIngestOptions {
  /** Delete the sources under the paths read whose files are gone (see `pruneGone`). */
  prune?: boolean | undefined;
  /** The store's `addDocuments` options (progress, signal). */
  add?: AddDocumentsOptions | undefined;
}

export interface IngestResult {
  added: AddDocumentsResult;
  /** What pruning removed; null without `prune`. */
  pruned: DeleteSourcesResult | null;
}

/** Adds what `readPaths` found to `store`, then prunes when asked. */
export async function applyIngest(store: Store, read: IngestRead, options: ApplyIngestOptions = {}): Promise<IngestResult> {
  const added = await store.addDocuments(read.documents, options.add);
  const pruned = options.prune === true ? await pruneGone(store, read) : null;
  return { added, pruned };
}

/**
 * Reads `paths` and adds their documents to `store` (and prunes, with `prune`): `readPaths` then `applyIngest`.
 *
 * @example
 * const store = new MemoryHybridStore();
 * const { added, pruned } = await ingestPaths(store, ['docs/'], { prune: true });
 */
export async function ingestPaths(
  store: Store,
  paths: readonly string[],
  options: ReadPathsOptions & { add?: AddDocumentsOptions | undefined } = {},
): Promise<IngestResult & { read: IngestRead }> {
  const { add, ...readOptions } = options;
  const read = await readPaths(paths, readOptions);
  return { ...(await applyIngest(store, read, { prune: options.prune, add })), read };
}

/**
 * Deletes the sources that lie under the paths read (or are the files read) whose files are gone: not read this
 * time, nor held by a file read this time (a message read from another mailbox), nor by a file or folder that is
 * still there but was skipped (unreadable now, being written): what it held stays until it is read again. A
 * message gone from a mailbox that was read is gone. Source ids are as `loadDocuments` writes them (`sourceScope`).
 */
export async function pruneGone(store: Store, read: IngestRead): Promise<DeleteSourcesResult> {
  const roots = await Promise.all(read.paths.map((path) => (read.base === undefined ? sourceScope(path) : sourceScope(path, read.base))));
  const under = (sourceId: string) =>
    roots.some(({ prefix, folder }) =>
      // A file covers its own source and those it holds (a mailbox's messages, a message's attachments, records).
      !folder
        ? sourceId === prefix || sourceId.startsWith(`${prefix}/`)
        : prefix === ''
          ? !sourceId.startsWith('../') && !sourceId.startsWith('/')
          : sourceId.startsWith(`${prefix}/`),
    );
  const found = new Set(read.documents.map((document) => document.id));
  // Emptied, or removed while read: those files are gone as far as their sources go.
  const kept = read.skipped
    .filter((skip) => skip.reason !== 'empty' && skip.reason !== 'gone')
    .map((skip) => skip.sourceId)
    .filter((id): id is string => id !== undefined);
  const stays = (id: string) => found.has(id) || read.held.has(id) || kept.some((file) => id === file || id.startsWith(`${file}/`));
  const gone = (await storeSourceIds(store, 'pruning')).filter((id) => under(id) && !stays(id));
  if (gone.length === 0) return { sources: 0, chunks: 0 };
  if (typeof store.deleteSources !== 'function')
    throw new LitmPackError('unsupported', 'This store cannot delete sources, which pruning needs');
  return store.deleteSources(gone);
}
