/**
 * `watchDocuments`: keeps a store current while the files under some paths are added, changed, renamed and
 * deleted. chokidar reports the changes; they are gathered for `debounceMs` after the last one and applied as
 * one batch by `applyFileChanges`: the changed files are read again (with `loadDocuments`, so with the same
 * loaders, limits and source ids as an ingest), their documents added, the sources of deleted files (and of
 * what they held: a mailbox's messages, a message's attachments, a file's records) removed, then the store
 * saved once. A file that cannot be read is skipped with the reason and keeps what it held; the rest of its
 * batch is applied. A rename is a delete and an add. Batches run one at a time, and `applyFileChanges` is the one
 * function that changes the store. With `update` each batch runs as one locked load → change → save of a store
 * file (`MemoryHybridStore.update`), so an ingest or a remove by another process between two batches is kept.
 */
import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { LitmPackError } from '../base/errors.js';
import type { IngestDocument } from '../store/schemas.js';
import { storeSourceIds } from '../store/source-ids.js';
import type { AddDocumentsResult, DeleteSourcesResult, Store } from '../store/types.js';
import { defaultLoaders, loadDocuments, sourceIdOf, type LoadDocumentsOptions, type LoadWarning, type SkippedFile } from './load.js';

/** Runs one batch's change of the store, e.g. `(change) => MemoryHybridStore.update(file, change)`. */
type StoreUpdate = <T>(change: (store: Store) => Promise<T>) => Promise<T>;

export interface WatchDocumentsOptions extends Omit<LoadDocumentsOptions, 'strict' | 'allowEmpty' | 'onProgress'> {
  /** The store kept current (a `MemoryHybridStore`, a `QdrantHybridStore`...); give it or `update`. */
  store?: Store;
  /**
   * Instead of `store`: how each batch gets the store it changes, e.g. `(change) => MemoryHybridStore.update(file,
   * change)` for an embedded store file shared with other writers (each batch loads, changes and saves it under
   * the file's lock).
   */
  update?: StoreUpdate;
  /** Called once after each batch is applied to `store` (e.g. `() => store.save(file)`); not with `update`. */
  save?: () => Promise<void>;
  /** Quiet time after the last change before a batch is applied (default 300 ms). */
  debounceMs?: number;
  /** Called after each batch with what it did. */
  onBatch?: (batch: WatchBatch) => void;
  /** Called when a batch fails (the store is left as the last saved batch left it; later batches still run). */
  onError?: (error: unknown) => void;
}

/** What one batch did. */
export interface WatchBatch {
  /** Files read again (added or changed). */
  changed: string[];
  /** Files gone (deleted, renamed away, or no longer readable). */
  removed: string[];
  documents: number;
  added: AddDocumentsResult;
  deleted: DeleteSourcesResult;
  skipped: SkippedFile[];
  warnings: LoadWarning[];
}

export interface DocumentWatcher {
  /** Resolves once the initial scan is done and changes are being watched. */
  readonly ready: Promise<void>;
  /** Resolves when no batch is pending or running. */
  idle(): Promise<void>;
  /** Stops watching; a batch under way is finished first. */
  close(): Promise<void>;
}

/** How a batch reaches its store: through `update`, or on `store` followed by `save`. */
function storeUpdateOf(store: Store | undefined, update: StoreUpdate | undefined, save: (() => Promise<void>) | undefined): StoreUpdate {
  if (update !== undefined) {
    if (store !== undefined || save !== undefined)
      throw new LitmPackError('invalid_input', 'Give watchDocuments either store (and save) or update, not both');
    return update;
  }
  if (store === undefined)
    throw new LitmPackError('invalid_input', 'watchDocuments needs the store to keep current: give store (and save), or update');
  return async (change) => {
    const result = await change(store);
    await save?.();
    return result;
  };
}

/** Whether `id` is the source `file` or one it holds (`inbox.mbox/<message>`, `renewal.eml/terms.pdf`). */
const heldBy = (id: string, file: string) => id === file || id.startsWith(`${file}/`);

/** The path given to the watcher that `path` lies under (the longest), or undefined. */
function rootOf(path: string, roots: readonly string[]): string | undefined {
  const absolute = resolve(path);
  let best: string | undefined;
  for (const root of roots) {
    const r = resolve(root);
    if ((absolute === r || absolute.startsWith(r.endsWith(sep) ? r : r + sep)) && (best === undefined || r.length > resolve(best).length))
      best = root;
  }
  return best;
}

/**
 * Applies one batch of file changes to a store: reads `changed` again, removes the sources of `removed`
 * (and of changed files that no longer give them), adds what was read, then calls `save` once. `roots` are
 * the paths being watched (source ids are relative to `base`, or to the folder holding the root for a root
 * outside it, as `loadDocuments` gives them). A file that cannot be read is skipped (`skipped` says why) and keeps
 * what it held; the rest of the batch is applied.
 */
export async function applyFileChanges(
  roots: readonly string[],
  change: { changed: readonly string[]; removed: readonly string[] },
  options: Omit<WatchDocumentsOptions, 'debounceMs' | 'onBatch' | 'onError'>,
): Promise<WatchBatch> {
  const { store, update, save, ...rest } = options;
  const withStore = storeUpdateOf(store, update, save);
  const base = rest.base ?? process.cwd();
  const skipped: SkippedFile[] = [];
  const warnings: LoadWarning[] = [];
  const docs: IngestDocument[] = [];
  const gone = new Set<string>();
  const reread = new Set<string>();
  for (const path of change.removed) {
    const root = rootOf(path, roots) ?? path;
    gone.add(sourceIdOf(path, root, base));
  }
  // Copies a re-read file holds but left out (the same message read from another file): not stale.
  const held = new Set<string>();
  for (const path of change.changed) {
    const root = rootOf(path, roots) ?? path;
    const id = sourceIdOf(path, root, base);
    // A root outside `base` names its files from the folder that holds it, as an ingest of that root does.
    const fromBase = relative(resolve(base), resolve(path));
    const inside = fromBase !== '' && !fromBase.startsWith('..') && !isAbsolute(fromBase);
    const skippedHere: SkippedFile[] = [];
    const report = (skip: SkippedFile) => {
      skippedHere.push(skip);
      skipped.push(skip);
      rest.onSkip?.(skip);
    };
    const found = await loadDocuments([path], {
      ...rest,
      base: inside ? base : dirname(resolve(root)),
      allowEmpty: true,
      onSkip: report,
      onWarning: (warning) => {
        warnings.push(warning);
        rest.onWarning?.(warning);
      },
      onFile: (file) => {
        for (const copy of file.held) held.add(copy);
        rest.onFile?.(file);
      },
    }).catch((error: unknown) => {
      // Gone between the event and the read: a delete.
      if ((error as { code?: string }).code === 'not_found') return null;
      // Anything else fails this file only: the rest of the batch is applied.
      report({ path, sourceId: id, reason: 'unreadable', message: error instanceof Error ? error.message.split('\n')[0]! : String(error) });
      return [];
    });
    if (found === null) gone.add(id);
    else if (found.length > 0) {
      reread.add(id);
      docs.push(...found);
    } else if (skippedHere.length === 0 || skippedHere.some((skip) => skip.reason === 'gone' || skip.reason === 'empty')) {
      // Removed while read, or emptied: what it held goes. A file skipped for another reason (a reader that
      // failed, a write in progress, over a limit) keeps what it held: only a file that is gone loses it.
      gone.add(id);
    }
  }
  const produced = new Set(docs.map((doc) => doc.id));
  const { added, deleted } = await withStore(async (target) => {
    const stored = gone.size > 0 || reread.size > 0 ? await storeSourceIds(target, 'watching') : [];
    const stale = stored.filter(
      (id) =>
        !produced.has(id) && !held.has(id) && ([...gone].some((file) => heldBy(id, file)) || [...reread].some((file) => heldBy(id, file))),
    );
    const added = docs.length > 0 ? await target.addDocuments(docs) : { added: 0, unchanged: 0, removed: 0 };
    let deleted: DeleteSourcesResult = { sources: 0, chunks: 0 };
    if (stale.length > 0) {
      if (typeof target.deleteSources !== 'function')
        throw new LitmPackError('unsupported', 'This store cannot delete sources, which watching needs');
      deleted = await target.deleteSources(stale);
    }
    return { added, deleted };
  });
  return { changed: [...change.changed], removed: [...change.removed], documents: docs.length, added, deleted, skipped, warnings };
}

/**
 * Watches `paths` and keeps `options.store` current (see the module comment). The files already there are
 * not read (ingest them first); every later add, change, rename or delete is.
 *
 * @example
 * await store.addDocuments(await loadDocuments(['docs/']));
 * const watcher = await watchDocuments(['docs/'], { store, save: () => store.save('.litm-store/store.json') });
 * // or, with other writers of the same store file (each batch under the file's lock):
 * // watchDocuments(['docs/'], { update: (change) => MemoryHybridStore.update('.litm-store/store.json', change) });
 * // ... later
 * await watcher.close();
 */
export async function watchDocuments(paths: readonly string[], options: WatchDocumentsOptions): Promise<DocumentWatcher> {
  if (paths.length === 0) throw new LitmPackError('invalid_input', 'watchDocuments: give at least one file or folder');
  for (const path of paths) {
    await stat(path).catch((error: unknown) => {
      throw new LitmPackError('not_found', `Cannot watch ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
        cause: error,
      });
    });
  }
  storeUpdateOf(options.store, options.update, options.save);
  const { debounceMs = 300, onBatch, onError, ...applyOptions } = options;
  const extensions = new Set((options.loaders ?? defaultLoaders()).flatMap((loader) => loader.extensions.map((e) => e.toLowerCase())));
  const { watch } = await import('chokidar');
  const watcher = watch([...paths], {
    ignoreInitial: true,
    followSymlinks: options.followSymlinks === true,
    // Hidden files and folders are not ingested, so they are not watched either; but a path given is watched,
    // hidden or under a hidden folder itself (`.notes/`, `~/.config/docs`): only what lies below it counts.
    ignored: (path: string, stats?: Stats) => {
      const root = rootOf(path, paths);
      const rel = root === undefined ? relative(process.cwd(), path) : relative(resolve(root), resolve(path));
      if (rel.split(sep).some((part) => part.startsWith('.') && part !== '.' && part !== '..')) return true;
      return stats?.isFile() === true && !extensions.has(extname(path).toLowerCase());
    },
    // An editor's save (write a temp file, rename it over) and a copy in progress settle before they are read.
    atomic: true,
    awaitWriteFinish: { stabilityThreshold: Math.min(200, debounceMs), pollInterval: 50 },
  });
  const pending = new Map<string, 'changed' | 'removed'>();
  const removedDirs = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let waiting = 0;
  let closed = false;

  const flush = () => {
    timer = undefined;
    if (pending.size === 0 && removedDirs.size === 0) return;
    const batch = [...pending];
    const dirs = [...removedDirs];
    pending.clear();
    removedDirs.clear();
    waiting += 1;
    running = running
      .then(async () => {
        const changed = batch.filter(([, kind]) => kind === 'changed').map(([path]) => path);
        const removed = [...batch.filter(([, kind]) => kind === 'removed').map(([path]) => path), ...dirs];
        const result = await applyFileChanges(paths, { changed, removed }, applyOptions);
        onBatch?.(result);
      })
      .catch((error: unknown) => onError?.(error))
      .finally(() => {
        waiting -= 1;
      });
  };
  const schedule = (path: string, kind: 'changed' | 'removed') => {
    if (closed) return;
    pending.set(path, kind);
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  };
  watcher.on('add', (path) => schedule(path, 'changed'));
  watcher.on('change', (path) => schedule(path, 'changed'));
  watcher.on('unlink', (path) => schedule(path, 'removed'));
  watcher.on('unlinkDir', (path) => {
    if (closed) return;
    removedDirs.add(path);
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  });
  watcher.on('error', (error) => onError?.(error));
  const ready = new Promise<void>((done) => watcher.once('ready', () => done()));
  await ready;

  const idle = async () => {
    for (;;) {
      const current = running;
      await current;
      if (timer === undefined && waiting === 0 && current === running) return;
      await new Promise((done) => setTimeout(done, Math.max(10, debounceMs / 4)));
    }
  };
  return {
    ready,
    idle,
    async close() {
      if (timer !== undefined) {
        clearTimeout(timer);
        flush();
      }
      closed = true;
      await watcher.close();
      await running;
    },
  };
}
