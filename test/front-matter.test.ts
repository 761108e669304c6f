import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLitmPackError, MemoryHybridStore } from '../src/index.js';
import { readFrontMatter } from '../src/sources/front-matter.js';
import { runCli } from './helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'litm-front-matter-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function invalid(text: string): string {
  try {
    readFrontMatter(text, 'docs/x.md');
  } catch (error) {
    expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected invalid_input');
}

describe('readFrontMatter', () => {
  it('reads clusters, kind and title, and blanks the block so offsets stay file offsets', () => {
    const file =
      '---\nclusters: [billing, finance]\nkind: insight\ntitle: "Refunds: the rules"\nauthor: Ann\n---\n# Refunds\n\nWithin 14 days.\n';
    const { text, frontMatter } = readFrontMatter(file, 'refunds.md');
    expect(frontMatter).toEqual({ clusters: ['billing', 'finance'], kind: 'insight', title: 'Refunds: the rules' });
    expect(text).toHaveLength(file.length);
    expect(text.slice(text.indexOf('# Refunds'))).toBe(file.slice(file.indexOf('# Refunds')));
    expect(text.slice(0, text.indexOf('# Refunds')).trim()).toBe('');
    expect(text.split('\n')).toHaveLength(file.split('\n').length);
  });

  it('accepts one cluster as a string, an empty block, CRLF and a BOM; leaves files without a block alone', () => {
    expect(readFrontMatter('---\nclusters: billing\n---\nBody', 'a.md').frontMatter).toEqual({ clusters: ['billing'] });
    expect(readFrontMatter('---\n---\nBody', 'a.md')).toEqual({ text: '   \n   \nBody', frontMatter: {} });
    expect(readFrontMatter('\uFEFF---\r\nkind: segment\r\n---\r\nBody', 'a.md').frontMatter).toEqual({ kind: 'segment' });
    const plain = '# Title\n\n---\n\nA rule, not front matter.';
    expect(readFrontMatter(plain, 'a.md')).toEqual({ text: plain, frontMatter: {} });
    // Dates stay strings (YAML core schema), so unknown keys never break ingest.
    expect(readFrontMatter('---\ndate: 2024-01-02\n---\nx', 'a.md').frontMatter).toEqual({});
  });

  it('rejects malformed YAML and wrong types with invalid_input naming the file', () => {
    expect(invalid('---\nclusters: [billing\n---\nBody')).toMatch(/Front matter of docs\/x\.md is not valid YAML/);
    expect(invalid('---\nclusters: [1, 2]\n---\nBody')).toMatch(/docs\/x\.md.*clusters/);
    expect(invalid('---\nkind: [a]\n---\nBody')).toMatch(/kind must be a string/);
    expect(invalid('---\n- a\n- b\n---\nBody')).toMatch(/must be a mapping/);
  });
});

describe('litm-pack ingest: front matter and --clusters/--kind', () => {
  it('stores clusters and kind on every chunk; spans are offsets into the file', async () => {
    const docs = join(work, 'docs');
    mkdirSync(docs, { recursive: true });
    const refunds =
      '---\nclusters: [billing]\nkind: insight\n---\n# Refunds\n\nRefunds are issued within 14 days.\n\n## Exceptions\n\nGift cards are never refunded.\n';
    writeFileSync(join(docs, 'refunds.md'), refunds);
    writeFileSync(join(docs, 'notes.txt'), '---\nkind: insight\n---\nPlain text keeps its dashes.');
    const store = join(work, 'store');
    const out = await runCli(['ingest', docs, '--store', store, '--clusters', 'handbook, policies', '--kind', 'segment', '--quiet']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const loaded = await MemoryHybridStore.load(join(store, 'store.json'));
    // Outside the working directory a source id is the path below the folder holding the folder ingested.
    const id = (name: string) => `docs/${name}`;
    const chunks = await loaded.getChunks({ sourceIds: [id('refunds.md'), id('notes.txt')] });
    const refundChunks = chunks.filter((c) => c.sourceId === id('refunds.md'));
    expect(refundChunks.length).toBeGreaterThan(0);
    for (const chunk of refundChunks) {
      expect(chunk.clusters).toEqual(['billing', 'handbook', 'policies']);
      expect(chunk.kind).toBe('insight');
      expect(refunds.slice(chunk.span.start, chunk.span.end)).toBe(chunk.text);
      expect(chunk.text).not.toContain('clusters:');
    }
    const notes = chunks.filter((c) => c.sourceId === id('notes.txt'));
    expect(notes[0]!.kind).toBe('segment');
    expect(notes[0]!.clusters).toEqual(['handbook', 'policies']);
    expect(notes[0]!.text).toContain('kind: insight');
    const billing = await loaded.getChunks({ filter: { must: [{ key: 'clusters', match: { any: ['billing'] } }] } });
    expect(new Set(billing.map((c) => c.sourceId))).toEqual(new Set([id('refunds.md')]));
  });

  it('skips a file whose front matter is malformed with one line naming it; the rest is ingested (exit 0)', async () => {
    const dir = join(work, 'bad');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'broken.md'), '---\nclusters: [billing\n---\nBody\n');
    writeFileSync(join(dir, 'good.md'), '# Good\n\nRefunds take 14 days.\n');
    const store = join(work, 'bad-store');
    const out = await runCli(['ingest', dir, '--store', store, '--quiet']);
    expect(out.code).toBe(0);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(/skipped .*broken\.md: Front matter of .*broken\.md is not valid YAML/u);
    expect(out.stdout).toContain('Skipped 1 file: 1 with bad front matter.');
    expect((await MemoryHybridStore.load(join(store, 'store.json'))).sources().map((s) => s.sourceId)).toEqual([
      expect.stringMatching(/good\.md$/u),
    ]);
  });

  it('alone, such a file leaves nothing to ingest: exit 2 naming why, and no store behind', async () => {
    const dir = join(work, 'only-bad');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'broken.md'), '---\nclusters: [billing\n---\nBody\n');
    const store = join(work, 'only-bad-store');
    const out = await runCli(['ingest', dir, '--store', store, '--quiet']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/No documents to ingest .*1 with bad front matter/u);
    await expect(MemoryHybridStore.load(join(store, 'store.json'))).rejects.toThrow(/No store file at /);
  });
});
