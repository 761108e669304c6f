// One writer per store file, checked with real processes: two writers of one store never both "succeed" with
// one change lost; a second writer waits, or refuses with StoreLockedError naming the holder; a lock left by a
// dead process is taken over; every way out of a writer releases its lock.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { lutimes, mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isLitmPackError } from '../src/base/errors.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { StoreLockedError, acquireStoreLock, storeLockPath, withStoreLock } from '../src/memory/lock.js';

const WRITER = resolve(import.meta.dirname, 'helpers/store-writer.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface Writer {
  child: ChildProcess;
  /** Resolves when the writer's change has started (it holds the lock). */
  locked: Promise<void>;
  done: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    result: { ok: boolean; code?: string; locked?: boolean; holder?: { pid: number; host: string } } | null;
    stdout: string;
  }>;
  output: () => string;
}

function writer(store: string, sourceId: string, holdMs: number, waitMs: number, mode?: 'exit' | 'throw' | 'signal'): Writer {
  const child = spawn(
    process.execPath,
    ['--import', TSX, WRITER, store, sourceId, String(holdMs), String(waitMs), ...(mode ? [mode] : [])],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  let onLocked: () => void;
  const locked = new Promise<void>((resolveLocked) => (onLocked = resolveLocked));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    if (stdout.includes('locked\n')) onLocked();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<Awaited<Writer['done']>>((resolveDone) =>
    child.on('close', (code, signal) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      let result: Awaited<Writer['done']>['result'] = null;
      try {
        result = JSON.parse(last) as Awaited<Writer['done']>['result'];
      } catch {
        // no result line (killed, or exited inside the change)
      }
      resolveDone({ code, signal, result, stdout });
    }),
  );
  return { child, locked, done, output: () => `${stdout}\n${stderr}` };
}

async function storeDir(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'litm-lock-')), 'store.json');
}

async function sourcesIn(path: string): Promise<string[]> {
  return (await MemoryHybridStore.load(path)).sources().map((s) => s.sourceId);
}

/** The pid of a process that has exited (so certainly not running now). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolveExit) => child.on('exit', resolveExit));
  return child.pid!;
}

describe('one writer per store file (two real processes)', () => {
  it('two writers at once: both changes are kept (the second waits for the first)', async () => {
    for (let round = 0; round < 3; round += 1) {
      const path = await storeDir();
      const first = writer(path, 'first.md', round === 0 ? 1500 : 400, 20_000);
      // Round 0 starts the second writer while the first holds the store (without the lock it would load the
      // store before the first saved, and save over it); the other rounds start both together.
      if (round === 0) await first.locked;
      const second = writer(path, 'second.md', 400, 20_000);
      const [a, b] = await Promise.all([first.done, second.done]);
      expect(a.result, first.output()).toEqual({ ok: true });
      expect(b.result, second.output()).toEqual({ ok: true });
      expect(await sourcesIn(path)).toEqual(['first.md', 'second.md']);
      expect(existsSync(storeLockPath(path))).toBe(false);
    }
  }, 120_000);

  it("a writer that may not wait is refused with StoreLockedError naming the holder, and the holder's change is kept", async () => {
    const path = await storeDir();
    const first = writer(path, 'first.md', 1500, 20_000);
    await first.locked;
    const second = writer(path, 'second.md', 0, 0);
    const refused = await second.done;
    expect(refused.result, second.output()).toMatchObject({
      ok: false,
      code: 'timeout',
      locked: true,
      holder: { pid: first.child.pid, host: hostname() },
    });
    expect(refused.code).toBe(3);
    expect((await first.done).result).toEqual({ ok: true });
    expect(await sourcesIn(path)).toEqual(['first.md']);
  }, 60_000);

  it('the refusal says who holds the lock and how to proceed', async () => {
    const path = await storeDir();
    const release = await acquireStoreLock(path);
    try {
      const error = await withStoreLock(path, () => 'never', { waitMs: 120 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreLockedError);
      const locked = error as StoreLockedError;
      expect(locked.code).toBe('timeout');
      expect(locked.holder?.pid).toBe(process.pid);
      expect(locked.message).toContain(`process ${process.pid} on ${hostname()}`);
      expect(locked.message).toContain(`delete ${storeLockPath(path)}`);
      expect(locked.details.lockPath).toBe(storeLockPath(path));
    } finally {
      await release();
    }
    expect(existsSync(storeLockPath(path))).toBe(false);
  });

  it('in one process, concurrent updates of one file run one after the other', async () => {
    const path = await storeDir();
    await Promise.all(
      ['a.md', 'b.md', 'c.md'].map((id) =>
        MemoryHybridStore.update(path, (store) => store.addDocuments([{ id, text: `Text of ${id}.` }]), { create: true }),
      ),
    );
    expect(await sourcesIn(path)).toEqual(['a.md', 'b.md', 'c.md']);
  });
});

describe('stale locks and every way out', () => {
  it('takes over a lock whose process is gone', async () => {
    const path = await storeDir();
    const pid = await deadPid();
    await writeFile(
      storeLockPath(path),
      JSON.stringify({
        pid,
        host: hostname(),
        lockedAt: new Date().toISOString(),
        processStartedAt: new Date().toISOString(),
        token: 'left-behind',
      }),
    );
    await MemoryHybridStore.update(path, (store) => store.addDocuments([{ id: 'after.md', text: 'Written after a crash.' }]), {
      create: true,
      waitMs: 0,
    });
    expect(await sourcesIn(path)).toEqual(['after.md']);
    expect(existsSync(storeLockPath(path))).toBe(false);
  });

  it('takes over a lock of this pid that this process did not take (an earlier process had the pid)', async () => {
    const path = await storeDir();
    await writeFile(
      storeLockPath(path),
      JSON.stringify({ pid: process.pid, host: hostname(), lockedAt: '', processStartedAt: '', token: 'not-ours' }),
    );
    await withStoreLock(path, () => undefined, { waitMs: 0 });
    expect(existsSync(storeLockPath(path))).toBe(false);
  });

  it.runIf(existsSync('/proc/self/stat'))('takes over a lock whose pid now belongs to a process started later (pid reused)', async () => {
    const path = await storeDir();
    // The parent of this test process is running; a lock claiming it with another start time is stale.
    await writeFile(
      storeLockPath(path),
      JSON.stringify({ pid: process.ppid, host: hostname(), lockedAt: '', processStartedAt: '', procStart: '1', token: 'reused' }),
    );
    await withStoreLock(path, () => undefined, { waitMs: 0 });
    expect(existsSync(storeLockPath(path))).toBe(false);
  });

  it('never takes over a lock of another host: it names the host', async () => {
    const path = await storeDir();
    const pid = await deadPid();
    await writeFile(
      storeLockPath(path),
      JSON.stringify({ pid, host: 'other-host.example', lockedAt: '2025-01-01T00:00:00.000Z', processStartedAt: '', token: 'remote' }),
    );
    const error = await withStoreLock(path, () => undefined, { waitMs: 60 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreLockedError);
    expect((error as StoreLockedError).message).toContain(`process ${pid} on other-host.example`);
    expect(existsSync(storeLockPath(path))).toBe(true);
  });

  it('a change that throws saves nothing and releases the lock', async () => {
    const path = await storeDir();
    await MemoryHybridStore.update(path, (store) => store.addDocuments([{ id: 'kept.md', text: 'Kept.' }]), { create: true });
    const before = await readFile(path, 'utf8');
    const failing = writer(path, 'lost.md', 0, 5000, 'throw');
    const result = await failing.done;
    expect(result.result, failing.output()).toMatchObject({ ok: false });
    expect(await readFile(path, 'utf8')).toBe(before);
    expect(existsSync(storeLockPath(path))).toBe(false);
  }, 60_000);

  it('process.exit inside the change releases the lock', async () => {
    const path = await storeDir();
    const exiting = writer(path, 'gone.md', 0, 5000, 'exit');
    await exiting.locked;
    expect((await exiting.done).code).toBe(7);
    expect(existsSync(storeLockPath(path))).toBe(false);
  }, 60_000);

  it('SIGTERM while holding the lock releases it and still ends the process', async () => {
    const path = await storeDir();
    const holding = writer(path, 'held.md', 0, 5000, 'signal');
    await new Promise<void>((resolveHeld) => holding.child.stdout!.on('data', () => holding.output().includes('holding') && resolveHeld()));
    expect(existsSync(storeLockPath(path))).toBe(true);
    holding.child.kill('SIGTERM');
    const ended = await holding.done;
    expect(ended.signal).toBe('SIGTERM');
    expect(existsSync(storeLockPath(path))).toBe(false);
  }, 60_000);

  it('after kill -9 the lock stays, and the next writer takes it over', async () => {
    const path = await storeDir();
    const holding = writer(path, 'held.md', 0, 5000, 'signal');
    await new Promise<void>((resolveHeld) => holding.child.stdout!.on('data', () => holding.output().includes('holding') && resolveHeld()));
    holding.child.kill('SIGKILL');
    await holding.done;
    expect(existsSync(storeLockPath(path))).toBe(true);
    const next = writer(path, 'next.md', 0, 0);
    expect((await next.done).result, next.output()).toEqual({ ok: true });
    expect(await sourcesIn(path)).toEqual(['next.md']);
  }, 60_000);
});

describe('lock files that are not lock files', () => {
  const lock = (holder: Record<string, unknown>) =>
    JSON.stringify({ host: hostname(), lockedAt: '', processStartedAt: '', token: 'odd', ...holder });

  it("a symbolic link to nothing at the lock's name: waited for within waitMs, then refused (never a busy loop)", async () => {
    const path = await storeDir();
    await symlink(join(path, '..', 'nowhere'), storeLockPath(path));
    const error = await withStoreLock(path, () => 'never', { waitMs: 150 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreLockedError);
    expect(lstatSync(storeLockPath(path)).isSymbolicLink()).toBe(true);
  });

  it('an old symbolic link to nothing is a stale lock: taken over', async () => {
    const path = await storeDir();
    await symlink(join(path, '..', 'nowhere'), storeLockPath(path));
    const longAgo = new Date(Date.now() - 60_000);
    await lutimes(storeLockPath(path), longAgo, longAgo);
    expect(await withStoreLock(path, () => 'written', { waitMs: 0 })).toBe('written');
    expect(existsSync(storeLockPath(path))).toBe(false);
  });

  it("a directory at the lock's name is a typed error saying what to remove", async () => {
    const path = await storeDir();
    await mkdir(storeLockPath(path), { recursive: true });
    const error = await withStoreLock(path, () => 'never', { waitMs: 0 }).catch((e: unknown) => e);
    expect(isLitmPackError(error, 'corrupt')).toBe(true);
    expect((error as Error).message).toContain(`rmdir ${storeLockPath(path)}`);
  });

  it('a lock naming pid 0 or -1 (process groups, never a writer) is stale: taken over at once', async () => {
    for (const pid of [0, -1]) {
      const path = await storeDir();
      await writeFile(storeLockPath(path), lock({ pid }));
      expect(await withStoreLock(path, () => pid, { waitMs: 0 })).toBe(pid);
      expect(existsSync(storeLockPath(path))).toBe(false);
    }
  });
});
