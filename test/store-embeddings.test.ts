import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, isLitmPackError } from '../src/index.js';
import { readSaved, writeV1 } from './helpers/store-files.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { WordEmbedding } from './helpers/word-embedding.js';

const DOCS = [
  { id: 'refunds.md', text: 'Refunds are paid to the original payment method within 14 days.' },
  { id: 'shipping.md', text: 'Shipping is free above 50 euros; express shipping costs 9 euros.' },
];

/** Test embeddings that name their model, as real providers do (`model`). */
class NamedEmbeddings extends FakeEmbeddings {
  constructor(
    readonly model: string,
    dimension = 32,
  ) {
    super({ dimension });
  }
}

/** The LlamaIndex embedding, recording the batches LlamaIndex's getTextEmbeddingsBatch makes. */
class BatchRecordingEmbedding extends WordEmbedding {
  batches: number[] = [];
  constructor() {
    super();
    this.embedBatchSize = 2;
  }
  override getTextEmbeddings = (texts: string[]) => {
    this.batches.push(texts.length);
    return Promise.resolve(texts.map((text) => this.words.embed(text)));
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'litm-store-embeddings-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('MemoryHybridStore remembers the embedding model and dimension', () => {
  it('records them in the store file and refuses a query or ingest embedder of another model', async () => {
    const store = new MemoryHybridStore({ embeddings: new NamedEmbeddings('model-a') });
    await store.addDocuments(DOCS);
    expect(store.embedding).toEqual({ model: 'model-a', dimension: 32 });
    const file = join(dir, 'named.json');
    await store.save(file);
    const saved = (await readSaved(file)).header;
    expect(saved).toMatchObject({ embeddingModel: 'model-a', dimension: 32 });

    const same = await MemoryHybridStore.load(file, { embeddings: new NamedEmbeddings('model-a') });
    expect((await same.search({ text: 'refunds', mode: 'dense' }))[0]?.sourceId).toBe('refunds.md');

    const other = await MemoryHybridStore.load(file, { embeddings: new NamedEmbeddings('model-b') });
    for (const run of [() => other.search({ text: 'refunds' }), () => other.addDocuments([{ id: 'x.md', text: 'x' }])]) {
      const error = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isLitmPackError(error, 'config_mismatch')).toBe(true);
      expect((error as Error).message).toContain('made by the embedding model "model-a" (dimension 32); these embeddings use "model-b"');
    }
    // Lexical search needs no query vector, so it still works.
    expect((await other.search({ text: 'refunds', mode: 'lexical' })).length).toBeGreaterThan(0);

    // Without embeddings the store still says what its vectors are; a model it cannot name is checked by size.
    expect((await MemoryHybridStore.load(file)).embedding).toEqual({ model: 'model-a', dimension: 32 });
    const unnamed = await MemoryHybridStore.load(file, { embeddings: new FakeEmbeddings({ dimension: 16 }) });
    await expect(unnamed.search({ text: 'refunds' })).rejects.toSatisfy((e) => isLitmPackError(e, 'config_mismatch'));
  });

  it('reads store files written before the model was recorded', async () => {
    const store = new MemoryHybridStore({ embeddings: new NamedEmbeddings('model-a') });
    await store.addDocuments(DOCS);
    const file = join(dir, 'old.json');
    await store.save(file);
    // A litm-pack/memory-store@1 file without embeddingModel, as earlier versions wrote them.
    await writeV1(file, await readSaved(file), { withModel: false });
    const loaded = await MemoryHybridStore.load(file, { embeddings: new NamedEmbeddings('model-b') });
    expect(loaded.embedding).toEqual({ model: null, dimension: 32 });
    expect((await loaded.search({ text: 'refunds' })).length).toBeGreaterThan(0);
  });
});

describe('a LlamaIndex BaseEmbedding as the store embeddings', () => {
  it('embeds documents through getTextEmbeddingsBatch (its own batches) and queries through getQueryEmbedding', async () => {
    const embedding = new BatchRecordingEmbedding();
    const store = new MemoryHybridStore({ embeddings: embedding });
    await store.addDocuments(DOCS);
    expect(embedding.batches).toEqual([2]);
    const [best] = await store.search({ text: 'refunds payment method', mode: 'dense' });
    expect(best?.sourceId).toBe('refunds.md');
    expect(best?.similarity).toBeGreaterThan(0.3);
  });

  it('is told apart from what is neither shape', () => {
    let error: unknown;
    try {
      new MemoryHybridStore({ embeddings: { getTextEmbedding: () => Promise.resolve([1]) } as never });
    } catch (caught) {
      error = caught;
    }
    expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toContain('getTextEmbeddingsBatch(texts) and getQueryEmbedding(query) (a LlamaIndex BaseEmbedding)');
  });
});
