// A store that follows its file: a new version saved by another store (temp file + rename, as `save` does) is
// served from the next request on; searches running during the swap never throw and read one version; a file
// that cannot be loaded is reported and the previous version keeps serving.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { canonicalStringify } from '../src/base/canonical.js';
import type { LitmPackError } from '../src/base/errors.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { ReloadingStore } from '../src/memory/reloading-store.js';
import type { IngestDocument } from '../src/store/schemas.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';

const FIXED = () => new Date(Date.UTC(2025, 0, 1));
const doc = (id: string, words: string): IngestDocument => ({ id, version: '1', text: `# ${id}\n\n${words}.` });

async function storeFile(docs: IngestDocument[]): Promise<{ path: string; writer: MemoryHybridStore }> {
  const path = join(await mkdtemp(join(tmpdir(), 'litm-reload-')), 'store.json');
  const writer = new MemoryHybridStore({ now: FIXED });
  await writer.addDocuments(docs);
  await writer.save(path);
  return { path, writer };
}

const ids = (results: { sourceId?: string }[]) => [...new Set(results.map((r) => r.sourceId))].sort();

describe('ReloadingStore', () => {
  it('serves a new version of the file from the next request: new documents appear, removed ones go', async () => {
    const { path, writer } = await storeFile([doc('old.md', 'refunds take fourteen days'), doc('kept.md', 'refunds need a receipt')]);
    const reloads: number[] = [];
    const store = await ReloadingStore.open(path, { onReload: ({ chunks }) => reloads.push(chunks) });
    expect(ids(await store.search({ text: 'refunds', mode: 'lexical' }))).toEqual(['kept.md', 'old.md']);

    await writer.deleteSources(['old.md']);
    await writer.addDocuments([doc('new.md', 'refunds by bank transfer')]);
    await writer.save(path);
    expect(ids(await store.search({ text: 'refunds', mode: 'lexical' }))).toEqual(['kept.md', 'new.md']);
    expect(await store.getChunks({ sourceIds: ['old.md'] })).toEqual([]);
    expect(store.sources().map((s) => s.sourceId)).toEqual(['kept.md', 'new.md']);
    expect(reloads).toEqual([2]);

    // Unchanged file: no reload.
    await store.search({ text: 'refunds' });
    expect(reloads).toEqual([2]);
  });

  it('searches running while versions are swapped never throw, and each reads one whole version', async () => {
    const embeddings = new FakeEmbeddings();
    const path = join(await mkdtemp(join(tmpdir(), 'litm-reload-')), 'store.json');
    const versions = Array.from({ length: 6 }, (_, v) =>
      Array.from({ length: 30 }, (_, i) => doc(`v${v}-doc${i}.md`, `harbor lantern ${['amber', 'cedar', 'fjord'][i % 3]} ${v} ${i}`)),
    );
    // Canonical JSON: a loaded store's records have their keys in canonical order, a fresh store's in ingest order.
    const answers: string[] = [];
    const request = { text: 'harbor lantern amber', limit: 100 } as const;
    for (const docs of versions) {
      const reference = new MemoryHybridStore({ embeddings, now: FIXED });
      await reference.addDocuments(docs);
      answers.push(canonicalStringify(await reference.search(request)));
    }
    const writer = new MemoryHybridStore({ embeddings, now: FIXED });
    await writer.addDocuments(versions[0]!);
    await writer.save(path);
    const store = await ReloadingStore.open(path, { embeddings });

    const results: Promise<string>[] = [];
    for (let v = 1; v < versions.length; v += 1) {
      const next = new MemoryHybridStore({ embeddings, now: FIXED });
      await next.addDocuments(versions[v]!);
      const saving = next.save(path);
      // Requests before, during and after the save and the reload it causes.
      for (let i = 0; i < 20; i += 1) {
        results.push(store.search(request).then((r) => canonicalStringify(r)));
        if (i % 5 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await saving;
    }
    const settled = await Promise.allSettled(results);
    expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
    for (const s of settled) expect(answers).toContain((s as PromiseFulfilledResult<string>).value);
    // The last request after the last save sees the last version.
    expect(canonicalStringify(await store.search(request))).toBe(answers[answers.length - 1]);
  });

  it('a corrupt or missing file is reported once and the previous version keeps serving', async () => {
    const { path, writer } = await storeFile([doc('a.md', 'alpha beta')]);
    const errors: LitmPackError[] = [];
    const store = await ReloadingStore.open(path, { onReloadError: (error) => errors.push(error) });
    const before = await store.search({ text: 'alpha', mode: 'lexical' });
    expect(before.length).toBe(1);

    await writeFile(path, '{"schema": "litm-pack/memory-store@1", "chunks": [');
    expect(await store.search({ text: 'alpha', mode: 'lexical' })).toEqual(before);
    expect(await store.search({ text: 'alpha', mode: 'lexical' })).toEqual(before);
    expect(errors.map((e) => e.code)).toEqual(['corrupt']);
    expect(store.reloadError?.code).toBe('corrupt');

    await rm(path);
    expect(await store.search({ text: 'alpha', mode: 'lexical' })).toEqual(before);
    expect(errors.map((e) => e.code)).toEqual(['corrupt', 'not_found']);

    // A good file again: loaded, the error cleared.
    await writer.addDocuments([doc('b.md', 'alpha gamma')]);
    await writer.save(path);
    expect(ids(await store.search({ text: 'alpha', mode: 'lexical' }))).toEqual(['a.md', 'b.md']);
    expect(store.reloadError).toBeUndefined();
  });

  it('checks at most every checkIntervalMs; refresh() checks now', async () => {
    const { path, writer } = await storeFile([doc('a.md', 'alpha')]);
    const store = await ReloadingStore.open(path, { checkIntervalMs: 60_000 });
    await writer.addDocuments([doc('b.md', 'alpha again')]);
    await writer.save(path);
    expect(ids(await store.search({ text: 'alpha', mode: 'lexical' }))).toEqual(['a.md']);
    expect(await store.refresh()).toBe(true);
    expect(ids(await store.search({ text: 'alpha', mode: 'lexical' }))).toEqual(['a.md', 'b.md']);
    expect(await store.refresh()).toBe(false);
  });

  it('with an interval, a busy server does not wait for checks; after a quiet spell the first request does', async () => {
    const { path, writer } = await storeFile([doc('a.md', 'alpha')]);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const start = Date.now();
      const store = await ReloadingStore.open(path, { checkIntervalMs: 1000 });
      await writer.addDocuments([doc('b.md', 'alpha again')]);
      await writer.save(path);
      // Within the interval: no check, the version loaded.
      vi.setSystemTime(start + 500);
      expect(ids(await store.search({ text: 'alpha', mode: 'lexical' }))).toEqual(['a.md']);
      // Past it: answered from the version served, while the check runs behind; later requests see the new one.
      vi.setSystemTime(start + 1500);
      expect(ids(await store.search({ text: 'alpha', mode: 'lexical' }))).toEqual(['a.md']);
      await vi.waitFor(async () => expect(ids(await store.search({ text: 'alpha', mode: 'lexical' }))).toEqual(['a.md', 'b.md']));
      // Quiet for twice the interval: the first request waits for its check and sees what was saved meanwhile.
      await writer.addDocuments([doc('c.md', 'alpha three')]);
      await writer.save(path);
      vi.setSystemTime(start + 1500 + 2500);
      expect(ids(await store.search({ text: 'alpha', mode: 'lexical' }))).toEqual(['a.md', 'b.md', 'c.md']);
    } finally {
      vi.useRealTimers();
    }
  });

  it("writes through it go to the file under its lock, on the file's latest version", async () => {
    const { path, writer } = await storeFile([doc('a.md', 'alpha')]);
    const store = await ReloadingStore.open(path, { checkIntervalMs: 60_000 });
    // Another writer saves first; the write below must not save over it.
    await writer.addDocuments([doc('b.md', 'alpha two')]);
    await writer.save(path);
    await store.addDocuments([doc('c.md', 'alpha three')]);
    expect(store.sources().map((s) => s.sourceId)).toEqual(['a.md', 'b.md', 'c.md']);
    expect((await MemoryHybridStore.load(path)).sources().map((s) => s.sourceId)).toEqual(['a.md', 'b.md', 'c.md']);
    expect(await store.deleteSources(['a.md'])).toEqual({ sources: 1, chunks: 1 });
    expect((await MemoryHybridStore.load(path)).sources().map((s) => s.sourceId)).toEqual(['b.md', 'c.md']);
  });

  it('open fails like load on a missing or corrupt file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-reload-'));
    await expect(ReloadingStore.open(join(dir, 'none.json'))).rejects.toMatchObject({ code: 'not_found' });
    await writeFile(join(dir, 'bad.json'), 'nope');
    await expect(ReloadingStore.open(join(dir, 'bad.json'))).rejects.toMatchObject({ code: 'corrupt' });
  });
});
