// An ingest without embeddings into a collection whose points have dense vectors writes points that dense and
// hybrid search never find: refused (config_mismatch, naming --embeddings) before anything is written, as the
// embedded store refuses it, unless it is asked for (lexicalOnly, --lexical-only). The CLI exits with the code the
// one error table gives config_mismatch.
import { describe, expect, it } from 'vitest';
import { ERROR_SURFACES, isLitmPackError } from '../../src/base/errors.js';
import { QdrantHybridStore } from '../../src/qdrant/qdrant-hybrid-store.js';
import { runCli } from '../helpers/cli.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { admin, collectionNames, url } from './helpers.js';

const name = collectionNames('lexwrite');
const first = { id: 'refunds.md', text: 'Refunds are paid within 14 days to the original payment method.' };
const second = { id: 'shipping.md', text: 'Shipping is free above 50 euros.' };

describe('writing without embeddings into a collection of dense vectors', () => {
  it('is refused before anything is written; lexicalOnly writes on purpose', async () => {
    const collection = name('dense');
    const withVectors = new QdrantHybridStore({ url, collection, embeddings: new FakeEmbeddings() });
    await withVectors.ensureCollection();
    await withVectors.addDocuments([first]);
    const before = (await admin.count(collection, { exact: true })).count;

    const without = new QdrantHybridStore({ url, collection, vectorSize: 64 });
    const refused = await without.addDocuments([second]).catch((error: unknown) => error);
    expect(isLitmPackError(refused, 'config_mismatch')).toBe(true);
    expect((refused as Error).message).toMatch(
      /holds dense vectors.*--embeddings URL --embed-model NAME.*--lexical-only \(lexicalOnly: true\)/u,
    );
    expect((await admin.count(collection, { exact: true })).count).toBe(before);

    const meant = new QdrantHybridStore({ url, collection, vectorSize: 64, lexicalOnly: true });
    expect((await meant.addDocuments([second])).added).toBeGreaterThan(0);
    expect((await meant.search({ text: 'shipping euros', mode: 'lexical' }))[0]?.sourceId).toBe('shipping.md');
  });

  it('a collection without dense vectors takes keyword-only points as before', async () => {
    const collection = name('lexical');
    const store = new QdrantHybridStore({ url, collection, vectorSize: 64 });
    await store.ensureCollection();
    expect((await store.addDocuments([first])).added).toBeGreaterThan(0);
    expect((await store.addDocuments([second])).added).toBeGreaterThan(0);
  });

  it('the CLI refuses naming --embeddings, and --lexical-only ingests', async () => {
    const collection = name('cli');
    // 384-d: the size the CLI gives a collection it opens without embeddings.
    const withVectors = new QdrantHybridStore({ url, collection, embeddings: new FakeEmbeddings({ dimension: 384 }) });
    await withVectors.ensureCollection();
    await withVectors.addDocuments([first]);
    const spec = `qdrant://${new URL(url).host}/${collection}`;
    const refused = await runCli(['ingest', 'examples/corpus', '--store', spec, '--quiet'], undefined, {
      env: { LITM_EMBEDDINGS_URL: undefined, LITM_EMBEDDINGS_MODEL: undefined },
    });
    expect(refused.code).toBe(ERROR_SURFACES.config_mismatch.exit);
    expect(refused.stderr).toMatch(/holds dense vectors.*--embeddings/u);
    const meant = await runCli(['ingest', 'examples/corpus', '--store', spec, '--quiet', '--lexical-only'], undefined, {
      env: { LITM_EMBEDDINGS_URL: undefined, LITM_EMBEDDINGS_MODEL: undefined },
    });
    expect(meant.code, meant.stderr).toBe(0);
    expect(meant.stdout).toMatch(/[1-9]\d* chunks added/u);
  });
});
