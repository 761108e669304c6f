/**
 * Lost-in-the-Middle packing behind a retriever you already have: LitmCompressor in a
 * ContextualCompressionRetriever over a MemoryVectorStore retriever. The compressor dedupes, fits the
 * token budget, reorders best-first/second-best-last and attaches citations.
 *
 *   npx tsx examples/langchain-compressor.ts
 */
import { Document } from '@langchain/core/documents';
import { Embeddings } from '@langchain/core/embeddings';
import { ContextualCompressionRetriever } from '@langchain/classic/retrievers/contextual_compression';
import { MemoryVectorStore } from '@langchain/classic/vectorstores/memory';
import { LitmCompressor, type LitmDocumentMetadata } from '../src/langchain/index.js';

/** Offline stand-in for a real embedding model: hashed bag of words, so shared words mean similarity. */
class BagOfWordsEmbeddings extends Embeddings {
  constructor(private readonly dimension = 64) {
    super({});
  }
  private embed(text: string): number[] {
    const vector = new Array<number>(this.dimension).fill(0);
    for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
      let hash = 0;
      for (const char of word) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) >>> 0;
      vector[hash % this.dimension]! += 1;
    }
    return vector;
  }
  embedDocuments(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((text) => this.embed(text)));
  }
  embedQuery(text: string): Promise<number[]> {
    return Promise.resolve(this.embed(text));
  }
}

const docs = [
  ['refunds.md', 'Refunds are paid to the original payment method within 14 days of the return arriving.'],
  ['refunds-copy.md', 'Refunds are paid to the original payment method within 14 days of the return arriving.'],
  ['returns.md', 'Returns are accepted within 30 days with the receipt; refunds follow inspection of the item.'],
  ['giftcards.md', 'Gift cards are never refunded and do not expire.'],
  ['warranty.md', 'The warranty covers defects for two years; a defective item is repaired, replaced or refunded.'],
  ['shipping.md', 'Shipping is free above 50 euros; express shipping costs 9 euros.'],
  ['loyalty.md', 'Loyalty points are removed when an order is refunded.'],
].map(([source, text]) => new Document({ pageContent: text!, metadata: { source } }));

const vectorStore = await MemoryVectorStore.fromDocuments(docs, new BagOfWordsEmbeddings());
const baseRetriever = vectorStore.asRetriever(6);
const retriever = new ContextualCompressionRetriever({
  baseRetriever,
  baseCompressor: new LitmCompressor({ maxTokens: 120 }),
});

const query = 'when are refunds paid to the original payment method';
const before = await baseRetriever.invoke(query);
const after = (await retriever.invoke(query)) as Document<LitmDocumentMetadata>[];

console.log(`Query: ${query}\n`);
console.log('Base retriever order (best first):');
before.forEach((doc, i) => console.log(`  ${i + 1}. ${doc.metadata.source}`));
console.log('\nAfter LitmCompressor (context order; rank 1 first, rank 2 last; duplicates and overflow dropped):');
for (const doc of after) {
  const { ref, rank } = doc.metadata.litm;
  console.log(`  [${ref}] rank ${rank} ${String(doc.metadata.source)}: ${doc.pageContent}`);
}
// Documents without scores keep their retriever's order as the rank order (synthetic scores 1, 5/6, ...).
const { pack } = await new LitmCompressor({ maxTokens: 120 }).compressWithCitations(before, query);
console.log(
  `\nBudget: ${pack.budget.usedTokens}/${pack.budget.maxTokens} tokens; dropped: ${pack.dropped.map((d) => d.reason).join(', ') || 'none'}`,
);
