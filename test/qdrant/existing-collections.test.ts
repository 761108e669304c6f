// Collections litm-pack did not create, or that are not there: what a user of the library and of the CLI sees.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PackSchema, assembleBundle } from '../../src/index.js';
import { searchDegradedOf } from '../../src/store/types.js';
import { QdrantHybridStore } from '../../src/qdrant/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { runCli as cli } from '../helpers/cli.js';
import { admin, collectionNames, failure, url } from './helpers.js';

const collectionName = collectionNames('litm_existing');
const texts = ['Cookies need brown butter and chocolate.', 'Sourdough bread needs a lively starter.', 'Change the engine oil yearly.'];
const host = new URL(url).host;

/** A collection as `@langchain/qdrant` writes it: one unnamed cosine vector, no sparse vector, content + metadata. */
async function langchainCollection(label: string, embeddings: FakeEmbeddings): Promise<string> {
  const name = collectionName(label);
  await admin.createCollection(name, { vectors: { size: embeddings.dimension, distance: 'Cosine' } });
  await admin.upsert(name, {
    wait: true,
    points: texts.map((text, i) => ({
      id: randomUUID(),
      vector: embeddings.embed(text),
      payload: { content: text, metadata: { source: `doc-${i}.md` } },
    })),
  });
  return name;
}

describe('a missing collection', () => {
  it('is not_found, and the CLI exits 2 saying how to create it with the CLI', async () => {
    const missing = collectionName('missing');
    const store = new QdrantHybridStore({ url, collection: missing });
    const error = await failure(store.search({ text: 'tea', mode: 'lexical' }), 'not_found');
    expect(error.message).toContain(missing);

    const run = await cli(['bundle', 'tea', '--store', `qdrant://${host}/${missing}`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`litm-pack ingest PATH... --store qdrant://HOST:6333/${missing}`);
    expect(run.stderr).not.toMatch(/ensureCollection/);
  });
});

describe('a @langchain/qdrant collection', () => {
  it('read with the default vector names: config_mismatch naming its vectors and the presets that fit', async () => {
    const embeddings = new FakeEmbeddings({ dimension: 16 });
    const name = await langchainCollection('defaults', embeddings);
    const store = new QdrantHybridStore({ url, collection: name, embeddings });
    const error = await failure(store.search({ text: 'engine oil' }), 'config_mismatch');
    expect(error.message).toMatch(/has no dense vector "dense" \(it has dense: \(unnamed\) 16-d; sparse: none/);
    expect(error.message).toMatch(
      /open it with payloadPreset "langchain-js" or "llamaindex", or with QdrantHybridStore\.fromExistingCollection\(\)/,
    );
    expect(error.message).toMatch(/fromExistingCollection/);
    expect(error.message).not.toMatch(/Not existing vector name/);
    // A lexical search (nothing is read before it) gets the same explanation instead of Qdrant's words.
    const lexical = await failure(
      new QdrantHybridStore({ url, collection: name }).search({ text: 'engine oil', mode: 'lexical' }),
      'unsupported_mode',
    );
    expect(lexical.message).toMatch(/without one/);
  });

  it('fromExistingCollection picks the preset and vectors; hybrid search runs dense-only (rankings say so)', async () => {
    const embeddings = new FakeEmbeddings({ dimension: 16 });
    const name = await langchainCollection('detected', embeddings);
    const store = await QdrantHybridStore.fromExistingCollection({ url }, name, { embeddings });
    expect(store.toJSON()).toMatchObject({ payloadPreset: 'langchain-js', denseVectorName: '', sparseVectorName: null });
    const [top] = await store.search({ text: 'engine oil', limit: 2 });
    expect(top).toMatchObject({ text: texts[2], sourceId: 'doc-2.md' });
    expect(top!.similarity).toBeCloseTo(top!.score, 6);
    const rankings = await store.rankings({ text: 'engine oil', limit: 2 });
    expect(rankings.mode).toBe('dense');
    expect(rankings.lexical).toBeNull();
    // The pack says the lexical arm did not run; the memory store's hybrid search reports nothing of the kind.
    expect(searchDegradedOf(await store.search({ text: 'engine oil', limit: 2 }))).toEqual([
      { stage: 'lexical', code: 'unsupported_mode' },
    ]);
    const { pack } = await assembleBundle({ store, query: 'engine oil', maxTokens: 300 });
    expect(pack.degraded).toEqual([{ stage: 'lexical', code: 'unsupported_mode' }]);
    expect(JSON.stringify(await store.search({ text: 'engine oil', limit: 2 }))).not.toContain('unsupported_mode');
    // verifyCitations, getChunks and pins read litm-pack chunk records: refused, as the README says.
    await failure(store.getChunks({ sourceIds: ['doc-2.md'] }), 'unsupported');
  });

  it('fromExistingCollection on a collection litm-pack wrote opens it as litm, with its tenancy when given', async () => {
    const name = collectionName('own');
    const own = new QdrantHybridStore({
      url,
      collection: name,
      embeddings: new FakeEmbeddings({ dimension: 16 }),
      tenancy: 'payload',
      tenant: 'acme',
    });
    await own.ensureCollection();
    await own.addDocuments([{ id: 'oil.md', text: texts[2]! }]);
    const store = await QdrantHybridStore.fromExistingCollection({ url }, name, {
      embeddings: new FakeEmbeddings({ dimension: 16 }),
      tenancy: 'payload',
      tenant: 'acme',
      denseVectorName: undefined,
    });
    expect(store.toJSON()).toMatchObject({ payloadPreset: 'litm', denseVectorName: 'dense', sparseVectorName: 'bm25', tenant: 'acme' });
    expect((await store.search({ text: 'engine oil' }))[0]).toMatchObject({ sourceId: 'oil.md' });
    const empty = collectionName('empty');
    await admin.createCollection(empty, { vectors: { size: 16, distance: 'Cosine' } });
    const error = await failure(QdrantHybridStore.fromExistingCollection({ url }, empty), 'config_mismatch');
    expect(error.message).toMatch(/is empty and its vectors fit "langchain-js" and "llamaindex".*give payloadPreset/);
  });

  it('the same collection with the default preset and vector names given explicitly still names what it has', async () => {
    const embeddings = new FakeEmbeddings({ dimension: 16 });
    const name = await langchainCollection('named', embeddings);
    const store = new QdrantHybridStore({ url, collection: name, embeddings, payloadPreset: 'langchain-js', sparseVectorName: 'bm25' });
    const error = await failure(store.search({ text: 'engine oil', mode: 'dense' }), 'config_mismatch');
    expect(error.message).toMatch(/has no sparse vector "bm25"/);
  });
});

describe('an embedder of another dimension', () => {
  it('is config_mismatch naming both sizes before any query, also when the embedder names no model', async () => {
    const name = await langchainCollection('dimension', new FakeEmbeddings({ dimension: 16 }));
    const store = new QdrantHybridStore({
      url,
      collection: name,
      embeddings: new FakeEmbeddings({ dimension: 24 }),
      payloadPreset: 'langchain-js',
    });
    const error = await failure(store.search({ text: 'engine oil', mode: 'dense' }), 'config_mismatch');
    expect(error.message).toMatch(/dimension 24/);
    expect(error.message).toMatch(/dimension 16/);
    expect(error.message).not.toMatch(/Vector dimension error/);
  });
});

describe('the CLI: --tenant, --acl and --preset on a qdrant:// store', () => {
  it('ingests one tenant with a default ACL; another tenant and another principal see nothing of it', async () => {
    const name = collectionName('tenants');
    const store = `qdrant://${host}/${name}`;
    const ingest = await cli([
      'ingest',
      'examples/corpus/hybrid-fusion.md',
      '--store',
      store,
      '--tenant',
      'acme',
      '--acl',
      'support',
      '--quiet',
    ]);
    expect(ingest.stderr).toBe('');
    expect(ingest.code).toBe(0);
    const bundle = (args: string[]) => cli(['bundle', 'reciprocal rank fusion', '--store', store, '--budget', '300', '--json', ...args]);
    const seen = await bundle(['--tenant', 'acme', '--principals', 'support']);
    expect(seen.stderr).toBe('');
    expect(PackSchema.parse(JSON.parse(seen.stdout)).citations.length).toBeGreaterThan(0);
    for (const args of [
      ['--tenant', 'acme'],
      ['--tenant', 'other', '--principals', 'support'],
    ]) {
      const unseen = await bundle(args);
      expect(PackSchema.parse(JSON.parse(unseen.stdout)).citations, args.join(' ')).toEqual([]);
    }
    const local = await cli(['bundle', 'q', '--store', '.litm-store-unused', '--tenant', 'acme']);
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/--tenant apply to a Qdrant store/);
  });

  it('--preset names the payload of a collection another tool wrote', async () => {
    const name = await langchainCollection('preset', new FakeEmbeddings({ dimension: 16 }));
    const unnamed = await cli(['ingest', 'examples/corpus/hybrid-fusion.md', '--store', `qdrant://${host}/${name}`, '--quiet']);
    expect(unnamed.code).toBe(3); // config_mismatch: the collection is not what this store is configured for
    expect(unnamed.stderr).toMatch(
      /has no dense vector "dense" \(it has dense: \(unnamed\) 16-d; sparse: none\): another tool wrote it; give --preset langchain-js or --preset llamaindex/,
    );
    expect(unnamed.stderr).not.toMatch(/denseVectorName/);
    const wrong = await cli([
      'ingest',
      'examples/corpus/hybrid-fusion.md',
      '--store',
      `qdrant://${host}/${name}`,
      '--preset',
      'langchain-js',
      '--quiet',
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/addDocuments writes litm-pack payloads; this store reads a "langchain-js" collection/);
    // Without embeddings the CLI searches BM25, which the collection has no vector for: said in the CLI's words.
    const lexical = await cli(['bundle', 'engine oil', '--store', `qdrant://${host}/${name}`]);
    expect(lexical.code).toBe(2);
    expect(lexical.stderr).toMatch(/has no sparse \(BM25\) vector: search it with --mode dense and --embeddings URL --embed-model NAME/);
    expect(lexical.stderr).not.toMatch(/sparseVectorName|Not existing vector name/);
    const bad = await cli(['bundle', 'q', '--store', `qdrant://${host}/${name}`, '--preset', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Allowed choices are litm, langchain-js/);
  });
});
