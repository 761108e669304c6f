// Indexed text vs cited text in the embedded store: a chunk is found by its document's title and heading path
// (an e-mail's subject and sender, through the title the e-mail loader gives it) while its text, span and hash stay
// the chunk's own bytes; the recipe is recorded in the store file, and a store built the old way keeps working the
// old way until it is re-indexed.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/base/canonical.js';
import { isLitmPackError } from '../src/base/errors.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { loadDocuments } from '../src/sources/load.js';
import { indexedTextOf } from '../src/store/indexed-text.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { makeEmail } from './helpers/real-files.js';
import { readSaved, writeSaved, writeV1 } from './helpers/store-files.js';

const NOW = () => new Date('2025-01-01T00:00:00.000Z');

const ids = (candidates: { id: string }[]) => candidates.map((c) => c.id);

describe('indexedTextOf', () => {
  it('puts the title and the heading path in front of the text, without repeating either', () => {
    expect(indexedTextOf({ text: 'Body.', title: 'Guide', section: ['Install', 'Linux'] }, 'title-headings@1')).toBe(
      'Guide\nInstall > Linux\n\nBody.',
    );
    // A markdown H1 that is the title, an empty heading, a text that opens with its title: said once.
    expect(indexedTextOf({ text: 'Body.', title: 'Guide', section: ['guide', '', 'Linux'] }, 'title-headings@1')).toBe(
      'Guide\nLinux\n\nBody.',
    );
    expect(indexedTextOf({ text: 'Guide to things. Body.', title: 'Guide', section: [] }, 'title-headings@1')).toBe(
      'Guide to things. Body.',
    );
    expect(indexedTextOf({ text: 'Body.', section: [] }, 'title-headings@1')).toBe('Body.');
    expect(indexedTextOf({ text: 'Body.', title: 'Guide', section: ['Install'] }, 'chunk-text')).toBe('Body.');
  });
});

describe('contextual indexing in MemoryHybridStore', () => {
  it('finds a chunk by a word of its title only; the candidate cites the chunk text, span and hash unchanged', async () => {
    const store = new MemoryHybridStore({ now: NOW });
    const text = 'Growth rates rose in the second tank after the feeding change.';
    await store.addDocuments([
      { id: 'report.md', title: 'Quarterly Zebrafish Report', text },
      { id: 'other.md', title: 'Budget', text: 'Spending stayed flat.' },
    ]);
    const [hit] = await store.search({ text: 'zebrafish', mode: 'lexical' });
    expect(hit?.id).toMatch(/^report\.md#/);
    expect(hit?.text).toBe(text);
    expect(hit?.span).toEqual({ start: 0, end: text.length });
    const [record] = await store.getChunks({ sourceIds: ['report.md'], principals: 'all' });
    expect(record?.textSha256).toBe(sha256Hex(text));
    expect(store.indexedText).toBe('title-headings@1');
    expect(store.reindexAdvice).toBeNull();
  });

  it('finds a chunk by a word of its heading path only, and the best chunk of that section first', async () => {
    const store = new MemoryHybridStore({ now: NOW });
    const text = '# Build guide\n\n## The pipeline\n\nEach stage reads the output of the one before.\n\n## Releases\n\nTags are signed.';
    await store.addDocuments([{ id: 'guide.md', text }]);
    const hits = await store.search({ text: 'pipeline', mode: 'lexical' });
    expect(hits.map((h) => h.text)).toEqual(['Each stage reads the output of the one before.']);
    expect(hits[0]?.section).toEqual(['Build guide', 'The pipeline']);
  });

  it('finds an e-mail (loaded by the e-mail loader from a message nodemailer wrote) by its subject and its sender', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-indexed-'));
    await writeFile(
      join(dir, 'bounce.eml'),
      await makeEmail({
        from: 'Mail Delivery System <mailer-daemon@relay.example.org>',
        to: 'you@example.com',
        subject: 'Delivery Status Notification (Failure)',
        date: new Date('2024-05-01T08:00:00Z'),
        messageId: '<bounce-1@relay.example.org>',
        text: 'Your message to bob@example.net could not be delivered: the mailbox is full.',
      }),
    );
    await writeFile(join(dir, 'note.md'), '# Notes\n\nThe mailbox migration is planned for June.\n');
    const docs = await loadDocuments([dir], { base: dir });
    const store = new MemoryHybridStore({ now: NOW });
    await store.addDocuments(docs);
    const bySubject = await store.search({ text: 'notification', mode: 'lexical' });
    expect(bySubject.map((c) => c.sourceId)).toEqual(['bounce.eml']);
    expect(bySubject[0]?.text).not.toMatch(/notification/i);
    const bySender = await store.search({ text: 'mailer-daemon', mode: 'lexical' });
    expect(bySender.map((c) => c.sourceId)).toEqual(['bounce.eml']);
  });

  it('embeds the indexed text, and embeds a chunk again when only its title changed', async () => {
    const embeddings = new FakeEmbeddings();
    const store = new MemoryHybridStore({ embeddings, now: NOW });
    await store.addDocuments([{ id: 'a.md', title: 'Alpha', text: '# Alpha\n\n## Setup\n\nRun the installer.' }]);
    expect(embeddings.embeddedTexts).toEqual(['Alpha\nSetup\n\nRun the installer.']);
    // Same document again: nothing to embed, nothing changed.
    expect(await store.addDocuments([{ id: 'a.md', title: 'Alpha', text: '# Alpha\n\n## Setup\n\nRun the installer.' }])).toEqual({
      added: 0,
      unchanged: 1,
      removed: 0,
    });
    expect(embeddings.embeddedTexts).toHaveLength(1);
    // A new title: same chunk id (the text did not change), new vector.
    await store.addDocuments([{ id: 'a.md', title: 'Beta', text: '# Alpha\n\n## Setup\n\nRun the installer.' }]);
    expect(embeddings.embeddedTexts.at(-1)).toBe('Beta\nAlpha > Setup\n\nRun the installer.');
    const [hit] = await store.search({ text: 'beta', mode: 'dense', limit: 1 });
    expect(hit?.similarity).toBeGreaterThan(0);
  });

  it('records the recipe in the store file and reads it back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-indexed-'));
    const path = join(dir, 'store.json');
    const store = new MemoryHybridStore({ now: NOW });
    await store.addDocuments([{ id: 'report.md', title: 'Quarterly Zebrafish Report', text: 'Growth rates rose.' }]);
    await store.save(path);
    const loaded = await MemoryHybridStore.load(path);
    expect(loaded.indexedText).toBe('title-headings@1');
    expect(ids(await loaded.search({ text: 'zebrafish', mode: 'lexical' }))).toHaveLength(1);
  });
});

describe('a store indexed before the recipe was recorded', () => {
  /** A store file as earlier versions wrote it: chunk text alone indexed, no recipe recorded. */
  async function oldStoreFile(format: '@1' | '@2'): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'litm-indexed-'));
    const path = join(dir, 'store.json');
    const store = new MemoryHybridStore({ now: NOW, indexedText: 'chunk-text' });
    await store.addDocuments([{ id: 'report.md', title: 'Quarterly Zebrafish Report', text: 'Growth rates rose in the second tank.' }]);
    await store.save(path);
    const saved = await readSaved(path);
    delete (saved.header as { indexedText?: string }).indexedText;
    saved.header.schema = 'litm-pack/memory-store@2';
    if (format === '@1') await writeV1(path, saved);
    else await writeSaved(path, saved);
    return path;
  }

  for (const format of ['@1', '@2'] as const) {
    it(`(${format}) keeps working as it was built, says how to re-index, and keeps one recipe for new chunks`, async () => {
      const path = await oldStoreFile(format);
      const store = await MemoryHybridStore.load(path, { now: NOW });
      expect(store.indexedText).toBe('chunk-text');
      expect(store.reindexAdvice).toMatch(/reindex\(\)/);
      expect(await store.search({ text: 'zebrafish', mode: 'lexical' })).toEqual([]);
      expect(await store.search({ text: 'tank', mode: 'lexical' })).toHaveLength(1);
      // A new document is indexed the way the store was built: one recipe per index.
      await store.addDocuments([{ id: 'memo.md', title: 'Octopus memo', text: 'Tanks were cleaned.' }]);
      expect(await store.search({ text: 'octopus', mode: 'lexical' })).toEqual([]);
      // Asking for another recipe than the file's is refused, with the way out.
      const refused = await MemoryHybridStore.load(path, { indexedText: 'title-headings@1' }).catch((error: unknown) => error);
      expect(isLitmPackError(refused, 'config_mismatch')).toBe(true);
      expect((refused as Error).message).toMatch(/reindex\(\)/);
    });
  }

  it('reindex() moves it to the current recipe (vectors made again from the indexed text), and the file records it', async () => {
    const path = await oldStoreFile('@2');
    const embeddings = new FakeEmbeddings();
    // The old store has no vectors: reindex needs no embeddings; with vectors, it embeds every chunk that had one.
    const result = await MemoryHybridStore.update(path, (store) => store.reindex());
    expect(result).toEqual({ chunks: 1 });
    const store = await MemoryHybridStore.load(path, { embeddings });
    expect(store.indexedText).toBe('title-headings@1');
    expect(store.reindexAdvice).toBeNull();
    const [hit] = await store.search({ text: 'zebrafish', mode: 'lexical' });
    expect(hit?.text).toBe('Growth rates rose in the second tank.');

    const withVectors = new MemoryHybridStore({ embeddings, now: NOW, indexedText: 'chunk-text' });
    await withVectors.addDocuments([{ id: 'r.md', title: 'Zebrafish', text: 'Growth rates rose.' }]);
    expect(embeddings.embeddedTexts.at(-1)).toBe('Growth rates rose.');
    await expect(new MemoryHybridStore({ now: NOW }).reindex()).resolves.toEqual({ chunks: 0 });
    await withVectors.reindex();
    expect(embeddings.embeddedTexts.at(-1)).toBe('Zebrafish\n\nGrowth rates rose.');
    const [dense] = await withVectors.search({ text: 'zebrafish', mode: 'dense', limit: 1 });
    expect(dense?.similarity).toBeGreaterThan(0);
  });

  it('reindex() of a store with vectors but no embeddings says what it needs', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'litm-indexed-')), 'store.json');
    const store = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), now: NOW, indexedText: 'chunk-text' });
    await store.addDocuments([{ id: 'r.md', title: 'Zebrafish', text: 'Growth rates rose.' }]);
    await store.save(path);
    const error = await (await MemoryHybridStore.load(path)).reindex().catch((e: unknown) => e);
    expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toMatch(/embeddings/);
  });
});
