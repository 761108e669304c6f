// The mixed corpus (PDF, code, e-mail with an attachment, transcript, HTML, records) through Qdrant: locators
// and parent ids survive the payload, packs equal the memory store's, and the attachment rule holds.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryHybridStore, loadDocuments, packBundle, verifyCitations, type Candidate } from '../../src/index.js';
import { defaultLoaders } from '../../src/sources/load.js';
import { recordsLoader } from '../../src/sources/records.js';
import { QdrantHybridStore, QdrantRestClient } from '../../src/qdrant/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { clock, collectionNames, url } from './helpers.js';

const collectionName = collectionNames('formats');
const MIXED = join(import.meta.dirname, '../../examples/mixed');

async function mixedDocuments() {
  return loadDocuments([MIXED], {
    base: MIXED,
    loaders: [...defaultLoaders(), recordsLoader({ idField: 'key', textField: 'description', titleField: 'summary' })],
  });
}

const strip = (candidates: Candidate[]) =>
  candidates.map(({ score: _score, similarity: _similarity, indexedAt: _indexedAt, ...rest }) => rest);

describe('the mixed corpus in Qdrant', () => {
  it('keeps every chunk locator and parent id in the payload, as the memory store does, and packs cite them the same way', async () => {
    const docs = await mixedDocuments();
    const qdrant = new QdrantHybridStore({
      client: new QdrantRestClient({ url }),
      collection: collectionName('mixed'),
      embeddings: new FakeEmbeddings(),
      now: clock(),
    });
    await qdrant.ensureCollection();
    await qdrant.addDocuments(docs);
    const memory = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), now: clock() });
    await memory.addDocuments(docs);

    for (const query of [
      'refund webhook retries backoff jitter',
      'contract renewal 24 months',
      'circuit breaker record',
      'rollback deploy',
    ]) {
      const fromQdrant = await qdrant.search({ text: query, mode: 'lexical', limit: 8 });
      const fromMemory = await memory.search({ text: query, mode: 'lexical', limit: 8 });
      expect(strip(fromQdrant).map((c) => [c.id, c.locator, c.parentId, c.section])).toEqual(
        strip(fromMemory).map((c) => [c.id, c.locator, c.parentId, c.section]),
      );
      const a = packBundle({ query, candidates: fromQdrant, maxTokens: 800 });
      const b = packBundle({ query, candidates: fromMemory, maxTokens: 800 });
      expect(a.context).toBe(b.context);
      expect(a.citations).toEqual(b.citations);
    }

    const kinds = await qdrant.search({ text: 'retries jitter backoff refund', mode: 'lexical', limit: 30 });
    const locators = kinds.map((c) => c.locator).filter((l) => l !== undefined);
    expect(locators.some((l) => l.page !== undefined)).toBe(true);
    expect(locators.some((l) => l.lines !== undefined)).toBe(true);
    expect(locators.some((l) => l.time !== undefined)).toBe(true);

    const renewal = await qdrant.search({ text: 'renewal terms attached 24 months', mode: 'lexical', limit: 10 });
    const pack = packBundle({ query: 'renewal', candidates: renewal, maxTokens: 2000 });
    const attachment = pack.citations.find((c) => c.sourceId === 'mail/renewal.eml/renewal-terms.pdf');
    expect(attachment).toMatchObject({ parentId: 'mail/renewal.eml', locator: { page: 1 } });
    expect(pack.citations.some((c) => c.sourceId === 'mail/renewal.eml')).toBe(false);
    expect(pack.dropped.filter((d) => d.reason === 'attachment-preferred').length).toBeGreaterThan(0);
    const checks = await verifyCitations({ store: qdrant, pack });
    expect(checks.every((c) => c.status === 'current')).toBe(true);
  });
});
