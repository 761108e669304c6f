/**
 * One writer per store file: an advisory lock file beside the store (`store.json.lock`) holding its owner's
 * pid, host and start times, taken for the whole load → change → save of a write. A second writer waits up to
 * `waitMs`, then refuses with `StoreLockedError` naming the holder. A lock whose owner is gone (same host, pid
 * not running, or running but started after the lock was written: the pid was reused) is taken over; a lock is
 * released when its work ends, on `exit`, and on SIGINT/SIGTERM/SIGHUP when nothing else handles those.
 *
 * Written here rather than taken from a package: the lockfile packages on npm judge staleness by a lock's age,
 * which cannot tell a slow save from a dead writer, and record no owner to name in the error.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, lstat, mkdir, open, readFile, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { LitmPackError } from '../base/errors.js';

/** What a lock file holds. */
export interface StoreLockHolder {
  pid: number;
  host: string;
  /** When the lock was taken (ISO 8601). */
  lockedAt: string;
  /** When the owning process started (ISO 8601). */
  processStartedAt: string;
  /** Linux: the process's start time in clock ticks since boot and the boot id, to tell a reused pid. */
  procStart?: string;
  bootId?: string;
  /** Unique per lock taken. */
  token: string;
}

export interface StoreLockOptions {
  /** How long to wait for another writer to finish before refusing (default 10,000 ms; 0: refuse at once). */
  waitMs?: number;
  /** Gives up waiting (with `aborted`) when aborted. */
  signal?: AbortSignal;
}

const DEFAULT_LOCK_WAIT_MS = 10_000;
const POLL_MS = 50;
/** A takeover in progress (a directory) older than this was left by a process that died during it. */
const TAKEOVER_STALE_MS = 10_000;
/** A lock file without valid content older than this was left by a writer that died while writing it. */
const UNREADABLE_STALE_MS = 5_000;

/** The lock file of a store file. */
export function storeLockPath(storePath: string): string {
  return join(dirname(storePath), `${basename(storePath)}.lock`);
}

/** Thrown when another live process holds the store's lock after `waitMs`. Code `timeout`: retry later. */
export class StoreLockedError extends LitmPackError {
  readonly lockPath: string;
  /** The owner as its lock file says (undefined when the file could not be read). */
  readonly holder: StoreLockHolder | undefined;

  constructor(lockPath: string, holder: StoreLockHolder | undefined, waitedMs: number) {
    const who = holder === undefined ? 'another writer' : `process ${holder.pid} on ${holder.host} (since ${holder.lockedAt})`;
    super(
      'timeout',
      `The store is being written by ${who}; waited ${waitedMs} ms for its lock ${lockPath}. ` +
        `Retry when it has finished (or wait longer), or, if no such process is running, delete ${lockPath}`,
      { details: { lockPath, ...(holder === undefined ? {} : { holder: { ...holder } }) } },
    );
    this.lockPath = lockPath;
    this.holder = holder;
  }
}

// -------------------------------------------------------------------------------------------------
// Who this process is

const PROCESS_STARTED_AT = new Date(Date.now() - process.uptime() * 1000).toISOString();

/** Start time of a process (Linux: field 22 of /proc/PID/stat, clock ticks since boot); undefined elsewhere. */
function procStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

const OWN_PROC_START = procStartOf(process.pid);
const BOOT_ID = bootId();
const HOST = hostname();

/** Locks this process holds or is creating: token → lock path. */
const held = new Map<string, string>();

/** Whether a process with this pid runs on this host (EPERM: it exists but belongs to another user). */
export function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the lock's owner is certainly gone; a lock of another host is never judged from here. */
function ownerGone(holder: StoreLockHolder): boolean {
  if (holder.host !== HOST) return false;
  // Not a process: kill(0) and kill(-1) signal process groups, which always "run", so such a lock would never go stale.
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return true;
  if (holder.bootId !== undefined && BOOT_ID !== undefined && holder.bootId !== BOOT_ID) return true;
  if (holder.pid === process.pid) {
    // Our own pid: ours if we hold it, else left by an earlier process that had this pid.
    return !held.has(holder.token);
  }
  if (!pidRunning(holder.pid)) return true;
  const start = holder.procStart === undefined ? undefined : procStartOf(holder.pid);
  return start !== undefined && start !== holder.procStart;
}

// -------------------------------------------------------------------------------------------------
// Release on every way out

function releaseAllSync(): void {
  for (const [token, path] of held) {
    try {
      if (parseHolder(readFileSync(path, 'utf8'))?.token === token) unlinkSync(path);
    } catch {
      // Already gone.
    }
  }
  held.clear();
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const onSignal = (signal: NodeJS.Signals): void => {
  // Another handler (a server's graceful shutdown) keeps the process alive: the work under the lock may still
  // be running, so the lock stays until `exit`. Alone, we release and die of the signal as we would have.
  if (process.listenerCount(signal) > 1) return;
  releaseAllSync();
  uninstall();
  process.kill(process.pid, signal);
};
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', releaseAllSync);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off('exit', releaseAllSync);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

// -------------------------------------------------------------------------------------------------

function parseHolder(text: string): StoreLockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<StoreLockHolder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.token === 'string') return value as StoreLockHolder;
  } catch {
    // Not (yet) a lock file's content.
  }
  return undefined;
}

/**
 * The lock file's holder and age; null when there is none. A symbolic link to nothing (or in a loop) at the lock's
 * name is a lock without valid content (stale once old, like a half-written one); a directory there is `corrupt`.
 */
async function readLock(path: string): Promise<{ holder: StoreLockHolder | undefined; ageMs: number } | null> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    return { holder: parseHolder(text), ageMs: Date.now() - info.mtimeMs };
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ELOOP') {
      // The name may still exist as a link that leads nowhere: link() then says it exists, readFile that it does not.
      const link = await lstat(path).catch(() => null);
      if (link === null) return null;
      return { holder: undefined, ageMs: Date.now() - link.mtimeMs };
    }
    if (code === 'EISDIR') {
      throw new LitmPackError(
        'corrupt',
        `The store lock ${path} is a directory, not a lock file; remove it (rmdir ${path}) if no writer is running`,
        {
          cause: error,
          details: { lockPath: path },
        },
      );
    }
    throw new LitmPackError('io_error', `Could not read the store lock ${path}: ${(error as Error).message}`, {
      cause: error,
      details: { lockPath: path },
    });
  }
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Creates the lock file with its content in one step: written to a temporary file, then hard-linked to the
 * lock's name, which fails if the lock exists (so no reader ever sees an empty lock). Filesystems without hard
 * links get an exclusive create and a write.
 */
async function createLock(path: string, holder: StoreLockHolder): Promise<boolean> {
  const content = `${JSON.stringify(holder)}\n`;
  const temporary = `${path}.${process.pid}.${holder.token}.tmp`;
  await writeFile(temporary, content, { flag: 'wx' });
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errorCode(error) ?? '')) throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  try {
    const handle = await open(path, 'wx');
    try {
      await handle.writeFile(content, 'utf8');
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Removes a lock left by a gone owner, once: under a takeover directory (mkdir is atomic), the lock is read
 * again and removed only if it still is the stale one, so two processes taking over cannot remove each
 * other's new lock.
 */
async function takeOver(path: string, stale: { holder: StoreLockHolder | undefined }): Promise<boolean> {
  const mutex = `${path}.takeover`;
  try {
    await mkdir(mutex);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
    const age = await stat(mutex).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (age > TAKEOVER_STALE_MS) await rmdir(mutex).catch(() => undefined);
    return false;
  }
  try {
    const now = await readLock(path);
    if (now !== null && now.holder?.token === stale.holder?.token) await unlink(path).catch(() => undefined);
    return true;
  } finally {
    await rmdir(mutex).catch(() => undefined);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Takes the store's lock, waiting up to `waitMs` for another writer; returns the function that releases it.
 * Prefer `withStoreLock` (or `MemoryHybridStore.update`), which release it whatever happens.
 */
export async function acquireStoreLock(storePath: string, options: StoreLockOptions = {}): Promise<() => Promise<void>> {
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  if (!Number.isFinite(waitMs) || waitMs < 0) {
    throw new LitmPackError('invalid_input', `waitMs must be a number of milliseconds >= 0, got ${waitMs}`);
  }
  const path = storeLockPath(storePath);
  const started = Date.now();
  const holder: StoreLockHolder = {
    pid: process.pid,
    host: HOST,
    lockedAt: '',
    processStartedAt: PROCESS_STARTED_AT,
    ...(OWN_PROC_START === undefined ? {} : { procStart: OWN_PROC_START }),
    ...(BOOT_ID === undefined ? {} : { bootId: BOOT_ID }),
    token: randomUUID(),
  };
  for (let attempt = 0; ; attempt += 1) {
    if (options.signal?.aborted) {
      throw new LitmPackError('aborted', `Gave up waiting for the store lock ${path}`, { cause: options.signal.reason });
    }
    holder.lockedAt = new Date().toISOString();
    let created: boolean;
    // Registered before the file exists: another acquire in this process must not take it for a dead one's.
    held.set(holder.token, path);
    try {
      created = await createLock(path, holder);
    } catch (error) {
      held.delete(holder.token);
      if (errorCode(error) === 'ENOENT') {
        await mkdir(dirname(path), { recursive: true });
        continue;
      }
      throw new LitmPackError('io_error', `Could not create the store lock ${path}: ${(error as Error).message}`, {
        cause: error,
        details: { lockPath: path },
      });
    }
    if (!created) held.delete(holder.token);
    if (created) {
      install();
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        held.delete(holder.token);
        if (held.size === 0) uninstall();
        const now = await readLock(path).catch(() => null);
        if (now?.holder?.token === holder.token) await unlink(path).catch(() => undefined);
      };
    }
    const current = await readLock(path);
    if (current === null) {
      // Gone since the create failed: try again, within the wait like any other round.
      const waited = Date.now() - started;
      if (waited >= waitMs && attempt > 0) throw new StoreLockedError(path, undefined, waited);
      continue;
    }
    const stale = current.holder === undefined ? current.ageMs > UNREADABLE_STALE_MS : ownerGone(current.holder);
    if (stale) {
      // Someone else is taking it over: let them finish.
      if (!(await takeOver(path, current))) await sleep(POLL_MS);
      continue;
    }
    const waited = Date.now() - started;
    if (waited >= waitMs) throw new StoreLockedError(path, current.holder, waited);
    // A little jitter, so writers that wait together do not retry together.
    await sleep(Math.min(POLL_MS + ((attempt * 17) % 23), Math.max(1, waitMs - waited)));
  }
}

/**
 * Runs `fn` holding the store file's lock (see `acquireStoreLock`), and releases it when `fn` settles.
 *
 * @example
 * await withStoreLock('.litm-store/store.json', async () => {
 *   const store = await MemoryHybridStore.load('.litm-store/store.json');
 *   await store.deleteSources(['old.md']);
 *   await store.save('.litm-store/store.json');
 * }, { waitMs: 5000 });
 */
export async function withStoreLock<T>(storePath: string, fn: () => Promise<T> | T, options: StoreLockOptions = {}): Promise<T> {
  const release = await acquireStoreLock(storePath, options);
  try {
    return await fn();
  } finally {
    await release();
  }
}
