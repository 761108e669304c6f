// Several processes on one embedded store file: two ingests at once, an ingest beside a remove, and a running
// server that follows the file. Each write is one locked load → change → save, so nothing is lost.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, PackSchema, verifyCitations } from '../src/index.js';
import { runCli } from './helpers/cli.js';
import { spawnServe } from './helpers/serve-fixtures.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'litm-writers-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A folder of `n` markdown files, each with a word of its own, so every file is a source of its own. */
async function folder(name: string, n: number): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir, { recursive: true });
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      writeFile(
        join(dir, `note-${i}.md`),
        `# ${name} note ${i}\n\nThe ${name} team keeps note ${i} about refunds, retries and ${name}word${i}.\n`,
      ),
    ),
  );
  return dir;
}

const sourcesOf = async (file: string) => (await MemoryHybridStore.load(file)).sources().map((s) => s.sourceId);

describe('two writers of one store file', () => {
  it('two ingests at once both land: every file of both folders is in the store', async () => {
    const [alpha, beta] = await Promise.all([folder('alpha', 80), folder('beta', 80)]);
    const store = join(work, 'both', 'store.json');
    const [a, b] = await Promise.all([
      runCli(['ingest', alpha, '--store', store, '--quiet'], undefined, { cwd: work }),
      runCli(['ingest', beta, '--store', store, '--quiet'], undefined, { cwd: work }),
    ]);
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, '', '']);
    const ids = await sourcesOf(store);
    expect(ids.filter((id) => id.startsWith('alpha/'))).toHaveLength(80);
    expect(ids.filter((id) => id.startsWith('beta/'))).toHaveLength(80);
  });

  it('an ingest and a remove at once: the removed source is gone and the ingested ones are there', async () => {
    const gamma = await folder('gamma', 60);
    const delta = await folder('delta', 60);
    const store = join(work, 'mixed', 'store.json');
    expect((await runCli(['ingest', gamma, '--store', store, '--quiet'], undefined, { cwd: work })).code).toBe(0);
    const [ingest, remove] = await Promise.all([
      runCli(['ingest', delta, '--store', store, '--quiet'], undefined, { cwd: work }),
      runCli(['remove', 'gamma/note-0.md', 'gamma/note-1.md', '--store', store], undefined, { cwd: work }),
    ]);
    expect([ingest.code, remove.code]).toEqual([0, 0]);
    expect(remove.stdout).toMatch(/^Removed 2 of 2 sources/u);
    const ids = await sourcesOf(store);
    expect(ids).not.toContain('gamma/note-0.md');
    expect(ids).not.toContain('gamma/note-1.md');
    expect(ids.filter((id) => id.startsWith('gamma/'))).toHaveLength(58);
    expect(ids.filter((id) => id.startsWith('delta/'))).toHaveLength(60);
  });

  it('remove of a store that does not exist says so, and creates nothing', async () => {
    const missing = join(work, 'nowhere');
    const out = await runCli(['remove', 'a.md', '--store', missing]);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/No store at .*nowhere: run "litm-pack ingest/u);
    await expect(MemoryHybridStore.load(join(missing, 'store.json'))).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('litm-pack serve follows its store file', () => {
  it('serves what an ingest adds and stops serving what a remove takes away, while it runs', async () => {
    const docs = await folder('served', 3);
    const store = join(work, 'served-store');
    expect((await runCli(['ingest', docs, '--store', store, '--quiet'], undefined, { cwd: work })).code).toBe(0);
    const serve = await spawnServe(['--store', store, '--port', '0', '--no-rate-limits']);
    const bundle = async (q: string) =>
      PackSchema.parse(await (await fetch(`${serve.url}/api/bundle?q=${encodeURIComponent(q)}&budget=400`)).json());
    const until = async (what: string, check: () => Promise<boolean>) => {
      for (let i = 0; i < 100; i += 1) {
        if (await check()) return;
        await new Promise((done) => setTimeout(done, 100));
      }
      throw new Error(`the server never showed ${what}`);
    };
    try {
      const before = await bundle('servedword1');
      expect(before.citations.map((c) => c.sourceId)).toContain('served/note-1.md');
      // A new file, ingested by another process while the server runs.
      await writeFile(join(docs, 'late.md'), '# Late\n\nA late note about lateword and refunds.\n');
      expect((await runCli(['ingest', docs, '--store', store, '--quiet'], undefined, { cwd: work })).code).toBe(0);
      await until('the new file', async () => (await bundle('lateword')).citations.some((c) => c.sourceId === 'served/late.md'));
      // A removed one: no longer served, and a pack citing it no longer verifies as current there.
      expect((await runCli(['remove', 'served/note-1.md', '--store', store], undefined, { cwd: work })).code).toBe(0);
      await until('the removal', async () => !(await bundle('servedword1')).citations.some((c) => c.sourceId === 'served/note-1.md'));
      const verify = await fetch(`${serve.url}/api/citations/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ citations: before.citations }),
      });
      const report = (await verify.json()) as { checks: { sourceId: string; status: string }[] };
      expect(report.checks.find((r) => r.sourceId === 'served/note-1.md')?.status).toBe('missing');
      // The library's verify on the saved file agrees with the server.
      const local = await verifyCitations({
        store: await MemoryHybridStore.load(join(store, 'store.json')),
        citations: before.citations,
        principals: 'all',
      });
      expect(local.find((r) => r.sourceId === 'served/note-1.md')?.status).toBe('missing');
    } finally {
      serve.kill();
    }
  }, 120_000);
});

describe('ingest --prune says what is left', () => {
  it('the "in all" count is the store after the prune, not before it', async () => {
    const docs = await folder('pruned', 4);
    const store = join(work, 'prune-count', 'store.json');
    expect((await runCli(['ingest', docs, '--store', store, '--quiet'], undefined, { cwd: work })).code).toBe(0);
    await rm(join(docs, 'note-0.md'));
    await rm(join(docs, 'note-1.md'));
    const out = await runCli(['ingest', docs, '--store', store, '--quiet', '--prune'], undefined, { cwd: work });
    expect(out.code).toBe(0);
    const left = (await MemoryHybridStore.load(store)).size;
    expect(out.stdout).toContain(`(${left} chunks in all)`);
    expect(out.stdout).toMatch(/Pruned 2 sources whose files are gone/u);
  });
});
