import { randomUUID } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { QdrantHybridStore } from '../../src/qdrant/index.js';
import { WordEmbedding } from '../helpers/word-embedding.js';

const url = inject('qdrantUrl');
const collection = `litm_${randomUUID().slice(0, 8)}_llamaindex_embedding`;
const admin = new QdrantClient({ url, checkCompatibility: false });
afterAll(() => admin.deleteCollection(collection).catch(() => undefined));

describe('QdrantHybridStore with a LlamaIndex BaseEmbedding', () => {
  it('sizes the collection, ingests and searches densely through the LlamaIndex calls', async () => {
    const store = new QdrantHybridStore({ url, collection, embeddings: new WordEmbedding() });
    await store.ensureCollection();
    await store.addDocuments([
      { id: 'refunds.md', text: 'Refunds are paid to the original payment method within 14 days.' },
      { id: 'shipping.md', text: 'Shipping is free above 50 euros; express shipping costs 9 euros.' },
    ]);
    const [best] = await store.search({ text: 'refunds payment method', mode: 'dense' });
    expect(best?.sourceId).toBe('refunds.md');
    expect(best?.similarity).toBeGreaterThan(0.3);
  });
});
