// Indexed text vs cited text in the Qdrant store: the sparse and dense vectors come from the chunk's title and
// heading path in front of its text, the payload keeps the chunk's own text, and the collection records the recipe:
// a collection written before recipes were recorded keeps being indexed its way and says how to re-index; a copy
// of an embedded store into a collection indexed the other way is refused.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLitmPackError } from '../../src/base/errors.js';
import { MemoryHybridStore } from '../../src/memory/memory-hybrid-store.js';
import { QdrantHybridStore, copyToQdrant } from '../../src/qdrant/index.js';
import type { IngestDocument } from '../../src/store/schemas.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { admin, clock, collectionNames, url } from './helpers.js';

const names = collectionNames('indexed');

const docs: IngestDocument[] = [
  {
    id: 'report.md',
    title: 'Quarterly Zebrafish Report',
    text: '# Results\n\nGrowth rates rose in the second tank.\n\n## The pipeline\n\nEach stage reads the output of the one before.',
  },
  { id: 'budget.md', title: 'Budget', text: 'Spending stayed flat this quarter.' },
];

const recorded = async (collection: string) => {
  const info = await admin.getCollection(collection);
  return (info.config.metadata as { litm_pack?: Record<string, unknown> } | null | undefined)?.litm_pack ?? {};
};

describe('contextual indexing in QdrantHybridStore', () => {
  it('records the recipe when it creates a collection; finds chunks by title and heading words, cites their own text', async () => {
    const collection = names('new');
    const embeddings = new FakeEmbeddings();
    const store = new QdrantHybridStore({ url, collection, embeddings, now: clock() });
    await store.ensureCollection();
    expect(await recorded(collection)).toMatchObject({ indexed_text: 'title-headings@1' });
    await store.addDocuments(docs);
    expect(embeddings.embeddedTexts.sort()).toEqual(
      [
        'Budget\n\nSpending stayed flat this quarter.',
        'Quarterly Zebrafish Report\nResults\n\nGrowth rates rose in the second tank.',
        'Quarterly Zebrafish Report\nResults > The pipeline\n\nEach stage reads the output of the one before.',
      ].sort(),
    );
    const byTitle = await store.search({ text: 'zebrafish', mode: 'lexical' });
    expect(byTitle.map((c) => c.text).sort()).toEqual([
      'Each stage reads the output of the one before.',
      'Growth rates rose in the second tank.',
    ]);
    const [byHeading] = await store.search({ text: 'pipeline', mode: 'lexical' });
    expect(byHeading?.text).toBe('Each stage reads the output of the one before.');
    expect(await store.indexedText()).toEqual({ recipe: 'title-headings@1', reindexAdvice: null });

    // The same lexical ranking and scores as the embedded store (Qdrant's IDF: the memory store's idfCorpus "all").
    const memory = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), now: clock(), idfCorpus: 'all' });
    await memory.addDocuments(docs);
    for (const text of ['zebrafish pipeline', 'quarter results', 'budget growth']) {
      const ours = await memory.search({ text, mode: 'lexical', limit: 10 });
      const theirs = await store.search({ text, mode: 'lexical', limit: 10 });
      expect(
        theirs.map((c) => c.id),
        text,
      ).toEqual(ours.map((c) => c.id));
      theirs.forEach((c, i) => expect(Math.abs(c.score - ours[i]!.score), text).toBeLessThan(1e-5));
    }
  });

  it('a collection of points written before recipes were recorded keeps its recipe, records it, and says how to re-index', async () => {
    const collection = names('old');
    // Points indexed by chunk text alone (an embedded store of that recipe, copied in), then the metadata as
    // earlier versions wrote it: no recipe.
    const path = join(await mkdtemp(join(tmpdir(), 'litm-indexed-')), 'store.json');
    const old = new MemoryHybridStore({ now: clock(), indexedText: 'chunk-text' });
    await old.addDocuments(docs);
    await old.save(path);
    await copyToQdrant({ from: path, to: { url, collection, vectorSize: 8 } });
    expect(await recorded(collection)).toMatchObject({ indexed_text: 'chunk-text' });
    await admin.updateCollection(collection, { metadata: { litm_pack: { dense_dimension: 8 } } });

    const store = new QdrantHybridStore({ url, collection, lexicalOnly: true, now: clock() });
    expect(await store.search({ text: 'zebrafish', mode: 'lexical' })).toEqual([]);
    const { recipe, reindexAdvice } = await store.indexedText();
    expect(recipe).toBe('chunk-text');
    expect(reindexAdvice).toMatch(/--reindex --alias/);
    expect(await recorded(collection)).toMatchObject({ indexed_text: 'chunk-text', dense_dimension: 8 });
    // New points are indexed the collection's way: one recipe per collection.
    await new QdrantHybridStore({ url, collection, lexicalOnly: true, now: clock() }).addDocuments([
      { id: 'memo.md', title: 'Octopus memo', text: 'Tanks were cleaned.' },
    ]);
    expect(await store.search({ text: 'octopus', mode: 'lexical' })).toEqual([]);
    expect((await store.search({ text: 'cleaned', mode: 'lexical' })).map((c) => c.sourceId)).toEqual(['memo.md']);

    // A store file indexed the current way is not copied into it.
    const current = new MemoryHybridStore({ now: clock() });
    await current.addDocuments(docs);
    await current.save(path);
    const refused = await copyToQdrant({ from: path, to: { url, collection, vectorSize: 8 } }).catch((error: unknown) => error);
    expect(isLitmPackError(refused, 'config_mismatch')).toBe(true);
    expect((refused as Error).message).toMatch(/chunk-text.*title-headings@1|title-headings@1.*chunk-text/);
  });

  it('a recipe this version does not know is refused before anything is written', async () => {
    const collection = names('future');
    const store = new QdrantHybridStore({ url, collection, lexicalOnly: true, vectorSize: 8, now: clock() });
    await store.ensureCollection();
    await admin.updateCollection(collection, { metadata: { litm_pack: { dense_dimension: 8, indexed_text: 'summaries@9' } } });
    const fresh = new QdrantHybridStore({ url, collection, lexicalOnly: true, now: clock() });
    const error = await fresh.addDocuments(docs).catch((e: unknown) => e);
    expect(isLitmPackError(error, 'config_mismatch')).toBe(true);
    expect((error as Error).message).toMatch(/summaries@9/);
    expect((await admin.count(collection, { exact: true })).count).toBe(0);
  });
});
