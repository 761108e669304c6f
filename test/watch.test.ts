// watchDocuments and `ingest --watch`: a store kept current while files are added, changed, renamed and
// deleted, one add/remove and one save per batch.
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, loadDocuments } from '../src/index.js';
import { applyFileChanges, watchDocuments, type WatchBatch } from '../src/sources/watch.js';
import { makeEmail, makeMbox } from './helpers/real-files.js';
import { readSaved } from './helpers/store-files.js';

const work = mkdtempSync(join(tmpdir(), 'litm-watch-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function until(what: string, test: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

const sourceIds = (store: MemoryHybridStore) =>
  store
    .sources()
    .map((s) => s.sourceId)
    .sort();

describe('watchDocuments', () => {
  it('adds, updates, renames and deletes sources as files change, saving once per batch', async () => {
    const dir = join(work, 'docs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.md'), '# A\n\nAlpha paragraph about refunds.\n');
    writeFileSync(join(dir, 'b.txt'), 'Bravo text about shipping.\n');
    const store = new MemoryHybridStore();
    await store.addDocuments(await loadDocuments([dir], { base: work }));
    const file = join(work, 'store.json');
    let saves = 0;
    const batches: WatchBatch[] = [];
    const watcher = await watchDocuments([dir], {
      store,
      base: work,
      debounceMs: 150,
      save: async () => {
        saves += 1;
        await store.save(file);
      },
      onBatch: (batch) => batches.push(batch),
    });
    try {
      // Added, and changed.
      writeFileSync(join(dir, 'c.md'), '# C\n\nCharlie paragraph about invoices.\n');
      writeFileSync(join(dir, 'a.md'), '# A\n\nAlpha paragraph, now about returns.\n');
      await until('c.md added and a.md changed', async () => {
        const hits = await store.search({ text: 'returns', mode: 'lexical', limit: 5 });
        return sourceIds(store).includes('docs/c.md') && hits.some((h) => h.sourceId === 'docs/a.md');
      });
      await watcher.idle();
      expect((await store.search({ text: 'refunds', mode: 'lexical', limit: 5 })).filter((h) => h.sourceId === 'docs/a.md')).toEqual([]);
      // Renamed: a delete and an add.
      renameSync(join(dir, 'b.txt'), join(dir, 'b2.txt'));
      await until('b.txt renamed to b2.txt', () => sourceIds(store).includes('docs/b2.txt') && !sourceIds(store).includes('docs/b.txt'));
      // Deleted.
      rmSync(join(dir, 'c.md'));
      await until('c.md deleted', () => !sourceIds(store).includes('docs/c.md'));
      await watcher.idle();
      expect(sourceIds(store)).toEqual(['docs/a.md', 'docs/b2.txt']);
      expect(saves).toBe(batches.length);
      const saved = await MemoryHybridStore.load(file);
      expect(
        saved
          .sources()
          .map((s) => s.sourceId)
          .sort(),
      ).toEqual(['docs/a.md', 'docs/b2.txt']);
    } finally {
      await watcher.close();
    }
  });

  it('removes what a file held when it changes or goes: a mailbox message gone, then the mailbox', async () => {
    const dir = join(work, 'mail');
    mkdirSync(dir, { recursive: true });
    const one = await makeEmail({
      from: 'a@example.com',
      to: 'b@example.com',
      subject: 'One',
      messageId: '<one@example.com>',
      date: new Date('2024-01-01T00:00:00Z'),
      text: 'First message.',
    });
    const two = await makeEmail({
      from: 'a@example.com',
      to: 'b@example.com',
      subject: 'Two',
      messageId: '<two@example.com>',
      date: new Date('2024-01-02T00:00:00Z'),
      text: 'Second message.',
    });
    const box = join(dir, 'inbox.mbox');
    writeFileSync(
      box,
      makeMbox([
        { from: 'a@example.com', date: new Date('2024-01-01T00:00:00Z'), raw: one },
        { from: 'a@example.com', date: new Date('2024-01-02T00:00:00Z'), raw: two },
      ]),
    );
    const store = new MemoryHybridStore();
    await store.addDocuments(await loadDocuments([dir], { base: work }));
    expect(sourceIds(store)).toEqual(['mail/inbox.mbox/one@example.com', 'mail/inbox.mbox/two@example.com']);
    writeFileSync(box, makeMbox([{ from: 'a@example.com', date: new Date('2024-01-01T00:00:00Z'), raw: one }]));
    const changed = await applyFileChanges([dir], { changed: [box], removed: [] }, { store, base: work });
    expect(changed.deleted).toEqual({ sources: 1, chunks: 1 });
    expect(sourceIds(store)).toEqual(['mail/inbox.mbox/one@example.com']);
    rmSync(box);
    const removed = await applyFileChanges([dir], { changed: [], removed: [box] }, { store, base: work });
    expect(removed.deleted.sources).toBe(1);
    expect(sourceIds(store)).toEqual([]);
  });

  it('a file its loader fails on is skipped with the reason; the rest of the batch is applied, and what the file held stays', async () => {
    const dir = join(work, 'fail');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.md'), '# A\n\nKept as it was.\n');
    const store = new MemoryHybridStore();
    await store.addDocuments(await loadDocuments([dir], { base: work }));
    writeFileSync(join(dir, 'a.md'), '# A\n\nA new text its reader crashes on.\n');
    writeFileSync(join(dir, 'b.txt'), 'Bravo, a good file of the same batch.\n');
    const failing = {
      name: 'failing',
      extensions: ['.md'],
      load: () => {
        throw new Error('reader crashed');
      },
    };
    const { textLoader } = await import('../src/sources/text.js');
    const batch = await applyFileChanges(
      [dir],
      { changed: [join(dir, 'a.md'), join(dir, 'b.txt')], removed: [] },
      { store, base: work, loaders: [failing, textLoader] },
    );
    expect(batch.skipped).toMatchObject([
      { path: join(dir, 'a.md'), reason: 'failed', message: 'the failing loader failed: reader crashed' },
    ]);
    expect(sourceIds(store)).toEqual(['fail/a.md', 'fail/b.txt']);
    expect((await store.search({ text: 'kept', mode: 'lexical', limit: 5 })).map((hit) => hit.sourceId)).toEqual(['fail/a.md']);
  });
});

describe('watching with hostile files', () => {
  it('one bad file in a batch of twenty good ones: the twenty are applied, the bad one is skipped with the reason', async () => {
    const dir = join(work, 'batch');
    mkdirSync(dir, { recursive: true });
    const store = new MemoryHybridStore();
    const changed: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      writeFileSync(join(dir, `good-${i}.md`), `# Good ${i}\n\nRefunds within ${i + 1} days.\n`);
      changed.push(join(dir, `good-${i}.md`));
    }
    writeFileSync(join(dir, 'deep.html'), `<html><body>${'<div>'.repeat(20_000)}deep${'</div>'.repeat(20_000)}</body></html>`);
    changed.splice(7, 0, join(dir, 'deep.html'));
    const batch = await applyFileChanges([dir], { changed, removed: [] }, { store, base: work });
    expect(sourceIds(store)).toHaveLength(20);
    expect(batch.skipped).toMatchObject([{ path: join(dir, 'deep.html'), reason: 'failed' }]);
  });

  it('watches a folder under a hidden one when that is the path given (~/.config/notes)', async () => {
    const dir = join(work, '.hidden', 'notes');
    mkdirSync(dir, { recursive: true });
    const store = new MemoryHybridStore();
    const watcher = await watchDocuments([dir], { store, base: work, debounceMs: 100 });
    try {
      writeFileSync(join(dir, 'a.md'), '# A\n\nA note kept in a hidden folder.\n');
      await until('a.md under .hidden/notes ingested', () => sourceIds(store).includes('.hidden/notes/a.md'));
      // What is hidden below the path given is still left alone.
      mkdirSync(join(dir, '.drafts'), { recursive: true });
      writeFileSync(join(dir, '.drafts', 'b.md'), '# B\n\nA draft.\n');
      writeFileSync(join(dir, 'c.md'), '# C\n\nAnother note.\n');
      await until('c.md ingested', () => sourceIds(store).includes('.hidden/notes/c.md'));
      await watcher.idle();
      expect(sourceIds(store)).toEqual(['.hidden/notes/a.md', '.hidden/notes/c.md']);
    } finally {
      await watcher.close();
    }
  });
});

describe('litm-pack ingest --watch', () => {
  it('ingests, then keeps the store file current until SIGINT, one line per batch', async () => {
    const dir = join(work, 'cli');
    mkdirSync(join(dir, 'notes'), { recursive: true });
    writeFileSync(join(dir, 'notes/a.md'), '# A\n\nAlpha paragraph.\n');
    const child = spawn(
      process.execPath,
      [
        '--import',
        pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
        join(__dirname, '../src/cli/main.ts'),
        'ingest',
        'notes',
        '--store',
        'st',
        '--watch',
        '--quiet',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (data: Buffer) => (out += data.toString()));
    child.stderr.on('data', (data: Buffer) => (err += data.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      await until('the watcher to start', () => err.includes('watching notes'), 60_000);
      expect(out).toMatch(/^Ingested 1 file into st: 1 chunk added/u);
      writeFileSync(join(dir, 'notes/b.md'), '# B\n\nBravo paragraph.\n');
      await until('a batch line', () => /Updated: 1 file read, 0 files gone: 1 chunk added/u.test(out));
      const saved = await readSaved(join(dir, 'st/store.json'));
      expect(saved.chunks.map((c) => c.record.sourceId).sort()).toEqual(['notes/a.md', 'notes/b.md']);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(existsSync(join(dir, 'st/store.json'))).toBe(true);
  }, 120_000);
});
