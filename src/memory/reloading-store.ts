/**
 * A store that serves a store file and follows it: before each request it checks the file (device, inode,
 * size, modification and change times; `save` writes a new file and renames it over the old one, so every
 * save changes the inode), and when the file changed it loads the new version and swaps it in at once. A new
 * version reads only the segments the one served lacks (a save that changed a few sources appended a few): the
 * others are shared with it, as they never change.
 * Requests already running finish on the version they started on; a new version that cannot be loaded (a
 * corrupt or missing file) is reported and the previous version keeps serving.
 */
import { stat } from 'node:fs/promises';
import { LitmPackError, isLitmPackError } from '../base/errors.js';
import type { Candidate } from '../core/schemas.js';
import { MemoryHybridStore, type MemoryHybridStoreOptions, type SourceInfo } from './memory-hybrid-store.js';
import { withStoreLock, type StoreLockOptions } from './lock.js';
import type { AddDocumentsOptions, ChunkRecord, GetChunksRequest, IngestDocument, SearchRequest } from '../store/schemas.js';
import type { AddDocumentsResult, DeleteSourcesResult, Rankings, Store } from '../store/types.js';

export interface ReloadingStoreOptions extends MemoryHybridStoreOptions {
  /**
   * Least time between two checks of the file, in ms (default 0: every request waits for a check; a check is one
   * `stat`). Above 0, requests do not wait for checks: one that finds the last check `checkIntervalMs` old
   * starts the next in the background and is answered from the version being served, so a busy server never
   * queues its requests behind a `stat` or a reload. After a quiet spell (no check for twice the interval) the
   * first request waits for its check. A request therefore sees every version saved more than twice the interval
   * (and the time its load takes) before it starts.
   */
  checkIntervalMs?: number;
  /**
   * Called when a changed file could not be loaded (`corrupt`, `not_found`, `io_error`); the previous version
   * keeps serving, and that file is not tried again until it changes.
   */
  onReloadError?: (error: LitmPackError) => void;
  /** Called after a new version was loaded: its chunks, and its segments (`read` of them from the file, the rest shared). */
  onReload?: (info: ReloadInfo) => void;
  /** For writes made through this store: how long to wait for another writer's lock (see `withStoreLock`). */
  waitMs?: StoreLockOptions['waitMs'];
}

export interface ReloadInfo {
  path: string;
  chunks: number;
  segments: number;
  /** Segments read from the file; the others were shared with the version served before. */
  segmentsRead: number;
}

type Identity = string;

async function identityOf(path: string): Promise<Identity> {
  const info = await stat(path);
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

function asStoreError(error: unknown, path: string): LitmPackError {
  if (isLitmPackError(error)) return error;
  return new LitmPackError('io_error', `Could not read the store file ${path}: ${(error as Error).message}`, {
    cause: error,
    details: { path },
  });
}

/**
 * A `Store` over a store file that reloads it when it changes on disk (another process's `ingest` or
 * `remove`). Writes through it (`addDocuments`, `deleteSources`) go through `MemoryHybridStore.update`: under
 * the file's lock, on the file's latest version.
 *
 * @example
 * const store = await ReloadingStore.open('.litm-store/store.json', { embeddings, onReloadError: (e) => log.warn(e.message) });
 * const server = await startServer({ store });   // every request sees the latest saved version
 */
export class ReloadingStore implements Store {
  readonly path: string;
  readonly #options: MemoryHybridStoreOptions;
  readonly #checkIntervalMs: number;
  readonly #onReloadError: ((error: LitmPackError) => void) | undefined;
  readonly #onReload: ((info: ReloadInfo) => void) | undefined;
  readonly #waitMs: number | undefined;
  #current: MemoryHybridStore;
  /** The file the current version was read from. */
  #loaded: Identity;
  /** A file that failed to load: not tried again until the file changes. */
  #failed: Identity | null = null;
  #error: LitmPackError | undefined;
  #checking: Promise<void> | null = null;
  #lastCheck = 0;

  private constructor(path: string, options: ReloadingStoreOptions, store: MemoryHybridStore, identity: Identity) {
    const { checkIntervalMs, onReloadError, onReload, waitMs, ...storeOptions } = options;
    if (checkIntervalMs !== undefined && (!Number.isFinite(checkIntervalMs) || checkIntervalMs < 0)) {
      throw new LitmPackError('invalid_input', `checkIntervalMs must be a number of milliseconds >= 0, got ${checkIntervalMs}`);
    }
    this.path = path;
    this.#options = storeOptions;
    this.#checkIntervalMs = checkIntervalMs ?? 0;
    this.#onReloadError = onReloadError;
    this.#onReload = onReload;
    this.#waitMs = waitMs;
    this.#current = store;
    this.#loaded = identity;
    this.#lastCheck = Date.now();
  }

  /**
   * Loads the store file at `path` (as `MemoryHybridStore.load`: `not_found` or `corrupt` if it cannot) and
   * returns a store that follows it. `options` configure every version loaded, as for `MemoryHybridStore.load`.
   */
  static async open(path: string, options: ReloadingStoreOptions = {}): Promise<ReloadingStore> {
    const { checkIntervalMs: _interval, onReloadError: _onError, onReload: _onReload, waitMs: _wait, ...storeOptions } = options;
    // The identity is taken before reading: if the file changes meanwhile, the next check loads it again.
    const identity = await identityOf(path).catch(() => '');
    const store = await MemoryHybridStore.load(path, storeOptions);
    return new ReloadingStore(path, options, store, identity);
  }

  /** The version requests are served from now. */
  get current(): MemoryHybridStore {
    return this.#current;
  }

  /** Why the latest change of the file could not be loaded (undefined once a version loads again). */
  get reloadError(): LitmPackError | undefined {
    return this.#error;
  }

  get size(): number {
    return this.#current.size;
  }

  get embedding(): MemoryHybridStore['embedding'] {
    return this.#current.embedding;
  }

  sources(): SourceInfo[] {
    return this.#current.sources();
  }

  /** See `MemoryHybridStore.newestIndexedAt`: of the version being served. */
  newestIndexedAt(): number {
    return this.#current.newestIndexedAt();
  }

  /**
   * Checks the file now and loads it if it changed; resolves to whether a new version is being served.
   * Concurrent callers share one check. Requests call it themselves (see `checkIntervalMs`).
   */
  async refresh(): Promise<boolean> {
    const before = this.#current;
    if (this.#checking === null) {
      this.#checking = this.#check().finally(() => {
        this.#checking = null;
      });
    }
    await this.#checking;
    return this.#current !== before;
  }

  async #check(): Promise<void> {
    this.#lastCheck = Date.now();
    let identity: Identity;
    try {
      identity = await identityOf(this.path);
    } catch (error) {
      this.#fail(
        'missing',
        new LitmPackError('not_found', `The store file ${this.path} is gone; still serving the version loaded before`, {
          cause: error,
          details: { path: this.path },
        }),
      );
      return;
    }
    if (identity === this.#loaded || identity === this.#failed) return;
    try {
      const store = await MemoryHybridStore.load(this.path, this.#options, this.#current);
      this.#swap(store, identity);
    } catch (error) {
      this.#fail(identity, asStoreError(error, this.path));
    }
  }

  #swap(store: MemoryHybridStore, identity: Identity): void {
    // One assignment: a request either started on the old version or starts on this one.
    this.#current = store;
    this.#loaded = identity;
    this.#failed = null;
    this.#error = undefined;
    const { segments, read } = store.loadedSegments ?? { segments: 0, read: 0 };
    this.#onReload?.({ path: this.path, chunks: store.size, segments, segmentsRead: read });
  }

  #fail(identity: Identity, error: LitmPackError): void {
    if (this.#failed === identity) return;
    this.#failed = identity;
    this.#error = error;
    this.#onReloadError?.(error);
  }

  /** The version a request starts on: the latest the file holds, checked at most every `checkIntervalMs` (see there). */
  async #fresh(): Promise<MemoryHybridStore> {
    const interval = this.#checkIntervalMs;
    if (interval === 0) {
      await this.refresh();
      return this.#current;
    }
    if (this.#checking === null) {
      const since = Date.now() - this.#lastCheck;
      if (since >= 2 * interval) await this.refresh();
      // A failed load is reported through onReloadError and `reloadError`; only a throwing callback can reject
      // here, and in the background that must not become an unhandled rejection that ends the server.
      else if (since >= interval) this.refresh().catch(() => undefined);
    }
    return this.#current;
  }

  async search(request: SearchRequest): Promise<Candidate[]> {
    return (await this.#fresh()).search(request);
  }

  async rankings(request: SearchRequest): Promise<Rankings> {
    return (await this.#fresh()).rankings(request);
  }

  async getChunks(request: GetChunksRequest): Promise<ChunkRecord[]> {
    return (await this.#fresh()).getChunks(request);
  }

  /** Adds documents to the file under its lock (on the file's latest version), then serves the result. */
  addDocuments(docs: IngestDocument[], options: AddDocumentsOptions = {}): Promise<AddDocumentsResult> {
    return this.#write((store) => store.addDocuments(docs, options));
  }

  /** Removes sources from the file under its lock, then serves the result. */
  deleteSources(sourceIds: string[], options: { signal?: AbortSignal } = {}): Promise<DeleteSourcesResult> {
    return this.#write((store) => store.deleteSources(sourceIds, options));
  }

  async #write<T>(change: (store: MemoryHybridStore) => Promise<T>): Promise<T> {
    // What MemoryHybridStore.update does, plus the saved file's identity taken under the lock, so the version
    // written here is served at once and not read back (another writer's later save still is).
    return withStoreLock(
      this.path,
      async () => {
        const store = await MemoryHybridStore.load(this.path, this.#options, this.#current);
        const result = await change(store);
        await store.save(this.path);
        this.#swap(store, await identityOf(this.path));
        return result;
      },
      this.#waitMs === undefined ? {} : { waitMs: this.#waitMs },
    );
  }
}
