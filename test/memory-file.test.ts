// The store file's temporary files: a save killed half-way (kill -9) leaves `.store.json.<pid>.<uuid>.tmp`
// behind; the next save or load of that store removes the temporaries of processes that are gone.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { removeStaleTemporaries } from '../src/memory/file.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const SAVER = resolve(import.meta.dirname, 'helpers/saving-forever.ts');

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolveExit) => child.on('exit', resolveExit));
  return child.pid!;
}

const temporaries = async (dir: string) => (await readdir(dir)).filter((name) => name.endsWith('.tmp')).sort();

/** Starts a process that saves a 30 MB store again and again, and kills it (-9) while a temporary file exists. */
async function killDuringSave(path: string, dir: string): Promise<string[]> {
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const child = spawn(process.execPath, ['--import', TSX, SAVER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolveExit) => child.on('exit', resolveExit));
    await new Promise<void>((resolveStarted) => child.stdout.once('data', () => resolveStarted()));
    // Wait until a temporary file has data in it (the save is writing), then kill.
    const writing = async () => {
      for (const name of await temporaries(dir)) {
        if ((await stat(join(dir, name)).catch(() => null))?.size) return true;
      }
      return false;
    };
    for (let poll = 0; poll < 2000 && !(await writing()); poll += 1) await new Promise((r) => setTimeout(r, 2));
    child.kill('SIGKILL');
    await exited;
    const left = await temporaries(dir);
    if (left.length > 0) return left;
  }
  throw new Error('could not kill a writer in the middle of a save');
}

describe('temporary files of dead writers', () => {
  it('a save killed with -9 leaves a temporary file, which the next save removes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-tmp-'));
    const path = join(dir, 'store.json');
    const left = await killDuringSave(path, dir);
    expect(left[0]).toMatch(/^\.store\.json\.\d+\.[0-9a-f-]{36}\.tmp$/);
    expect((await stat(join(dir, left[0]!))).size).toBeGreaterThan(0);

    const store = new MemoryHybridStore();
    await store.addDocuments([{ id: 'a.md', text: 'Alpha.' }]);
    await store.save(path);
    expect(await temporaries(dir)).toEqual([]);
    expect((await MemoryHybridStore.load(path)).size).toBe(1);
  }, 120_000);

  it('a load removes them too; those of running processes (this one included) and other files stay', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-tmp-'));
    const path = join(dir, 'store.json');
    const store = new MemoryHybridStore();
    await store.addDocuments([{ id: 'a.md', text: 'Alpha.' }]);
    await store.save(path);
    const dead = await deadPid();
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      const names = {
        dead: `.store.json.${dead}.${randomUUID()}.tmp`,
        deadLock: `store.json.lock.${dead}.${randomUUID()}.tmp`,
        running: `.store.json.${sleeper.pid}.${randomUUID()}.tmp`,
        ours: `.store.json.${process.pid}.${randomUUID()}.tmp`,
        otherStore: `.other.json.${dead}.${randomUUID()}.tmp`,
        notOurs: `.store.json.${dead}.not-a-uuid.tmp`,
      };
      for (const name of Object.values(names)) await writeFile(join(dir, name), 'x'.repeat(1024));
      await MemoryHybridStore.load(path);
      expect(await temporaries(dir)).toEqual([names.running, names.ours, names.otherStore, names.notOurs].sort());
      expect(await removeStaleTemporaries(path)).toEqual([]);
    } finally {
      sleeper.kill();
    }
  });
});
