// Ingest as a pipeline step (`readPaths`, `applyIngest`, `ingestPaths`, `pruneGone`): what the CLI's `ingest`
// and `--prune` call, usable from the library; and the one way a store's source ids are listed.
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, applyIngest, ingestPaths, isLitmPackError, pruneGone, readPaths } from '../src/index.js';
import { storeSourceIds } from '../src/store/source-ids.js';
import type { ChunkRecord } from '../src/store/schemas.js';
import type { Store } from '../src/store/types.js';

const work = mkdtempSync(join(tmpdir(), 'litm-pipeline-ingest-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

const ids = (store: MemoryHybridStore) =>
  store
    .sources()
    .map((s) => s.sourceId)
    .sort();

describe('ingestPaths', () => {
  it('reads a folder and adds its documents, ids relative to base', async () => {
    const dir = folder('plain', { 'a.md': '# A\n\nRefunds take ten days.\n', 'b.txt': 'Shipping is free over fifty euros.\n' });
    const store = new MemoryHybridStore();
    const { added, pruned, read } = await ingestPaths(store, [dir], { base: work });
    expect(read.files).toBe(2);
    expect(added.added).toBeGreaterThanOrEqual(2);
    expect(pruned).toBeNull();
    expect(ids(store)).toEqual(['plain/a.md', 'plain/b.txt']);
  });

  it('with prune, removes the sources whose files are gone, and only those under the paths read', async () => {
    const dir = folder('pruned', { 'keep.md': '# Keep\n\nStays.\n', 'gone.md': '# Gone\n\nLeaves.\n' });
    const other = folder('other', { 'x.md': '# Other\n\nNot read again.\n' });
    const store = new MemoryHybridStore();
    await ingestPaths(store, [dir, other], { base: work });
    unlinkSync(join(dir, 'gone.md'));
    const { pruned } = await ingestPaths(store, [dir], { base: work, prune: true });
    expect(pruned).toEqual({ sources: 1, chunks: 1 });
    expect(ids(store)).toEqual(['other/x.md', 'pruned/keep.md']);
  });

  it('with prune, a file skipped today keeps what it held; an emptied folder is no error and loses everything', async () => {
    const dir = folder('skipping', { 'a.md': '# A\n\nOne.\n', 'b.md': '# B\n\nTwo.\n' });
    const store = new MemoryHybridStore();
    await ingestPaths(store, [dir], { base: work });
    writeFileSync(join(dir, 'b.md'), '---\nacl: []\n---\n# B\n\nTwo.\n'); // bad front matter: skipped, still there
    const skips: string[] = [];
    const { pruned, read } = await ingestPaths(store, [dir], { base: work, prune: true, onSkip: (skip) => skips.push(skip.path) });
    expect(read.skipped.map((s) => s.sourceId)).toEqual(['skipping/b.md']);
    expect(skips).toEqual([join(dir, 'b.md')]);
    expect(pruned).toEqual({ sources: 0, chunks: 0 });
    expect(ids(store)).toEqual(['skipping/a.md', 'skipping/b.md']);
    unlinkSync(join(dir, 'a.md'));
    unlinkSync(join(dir, 'b.md'));
    const emptied = await ingestPaths(store, [dir], { base: work, prune: true });
    expect(emptied.pruned).toEqual({ sources: 2, chunks: 2 });
    expect(ids(store)).toEqual([]);
  });

  it('read and apply apart: reading touches no store, and applying is what ingestPaths does', async () => {
    const dir = folder('apart', { 'a.md': '# A\n\nRefunds take ten days.\n' });
    const read = await readPaths([dir], { base: work });
    expect(read.documents.map((d) => d.id)).toEqual(['apart/a.md']);
    const store = new MemoryHybridStore();
    const { added } = await applyIngest(store, read);
    expect(added.added).toBe(1);
    expect(await pruneGone(store, read)).toEqual({ sources: 0, chunks: 0 });
  });
});

/** A store of the contract alone: chunks in an array; `listSources` pages when given. */
function contractStore(sourceIds: string[], options: { pages?: boolean; getChunks?: boolean } = {}): Store & { pagesAsked: number } {
  const chunks: ChunkRecord[] = sourceIds.map(
    (sourceId, i) => ({ id: `${sourceId}#${i}`, sourceId, text: 't', span: { start: 0, end: 1 }, version: 'v1' }) as ChunkRecord,
  );
  const store: Store & { pagesAsked: number } = {
    pagesAsked: 0,
    addDocuments: () => Promise.reject(new Error('not used')),
    search: () => Promise.resolve([]),
  };
  if (options.getChunks !== false) store.getChunks = (request) => Promise.resolve(chunks.slice(0, request.limit));
  if (options.pages === true) {
    store.listSources = (request) => {
      store.pagesAsked += 1;
      const sorted = [...new Set(sourceIds)].sort();
      const from = request.after === undefined ? 0 : sorted.findIndex((id) => id > request.after!);
      const page = from < 0 ? [] : sorted.slice(from, from + request.limit);
      const last = from < 0 || from + request.limit >= sorted.length;
      return Promise.resolve({ sources: page.map((sourceId) => ({ sourceId })), ...(last ? {} : { next: page.at(-1)! }) });
    };
  }
  return store;
}

describe('storeSourceIds', () => {
  it("follows listSources's pages to the end when the store has an index of sources", async () => {
    const sources = Array.from({ length: 2500 }, (_, i) => `doc-${String(i).padStart(5, '0')}.md`);
    const store = contractStore(sources, { pages: true, getChunks: false });
    expect(await storeSourceIds(store, 'pruning')).toEqual(sources);
    expect(store.pagesAsked).toBe(3);
  });

  it('reads the embedded store through its list of sources, and others through getChunks', async () => {
    const memory = new MemoryHybridStore();
    await memory.addDocuments([
      { id: 'b.md', text: 'Beta.' },
      { id: 'a.md', text: 'Alpha.' },
    ]);
    expect((await storeSourceIds(memory, 'pruning')).sort()).toEqual(['a.md', 'b.md']);
    expect(await storeSourceIds(contractStore(['x', 'y', 'x']), 'pruning')).toEqual(['x', 'y']);
  });

  it('refuses a scan that would be cut short (a partial list would prune sources still there), and a store that cannot list', async () => {
    const many = contractStore(Array.from({ length: 100_000 }, (_, i) => `s${i}`));
    const error = await storeSourceIds(many, 'pruning').catch((e: unknown) => e);
    expect(isLitmPackError(error, 'too_large')).toBe(true);
    expect((error as Error).message).toMatch(/too many to list for pruning; remove sources by name instead/u);
    const none = await storeSourceIds(contractStore(['a'], { getChunks: false }), 'watching').catch((e: unknown) => e);
    expect(isLitmPackError(none, 'unsupported')).toBe(true);
    expect((none as Error).message).toMatch(/which watching needs/u);
  });
});
