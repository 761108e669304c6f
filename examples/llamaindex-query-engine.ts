/**
 * A LlamaIndex.TS query engine over the embedded store: BundleRetriever → RetrieverQueryEngine. The
 * synthesizer uses LlamaIndex's MockLLM, so this runs offline; pass any LLM to getResponseSynthesizer.
 *
 *   npx tsx examples/llamaindex-query-engine.ts ["your question"]
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MockLLM } from '@llamaindex/core/llms/mock';
import { RetrieverQueryEngine } from '@llamaindex/core/query-engine';
import { getResponseSynthesizer } from '@llamaindex/core/response-synthesizers';
import type { IngestDocument } from '../src/index.js';
import { BundleRetriever } from '../src/llamaindex/index.js';
import { MemoryHybridStore } from '../src/retrieve/memory-store.js';

/** The markdown files in examples/corpus, or a few inline documents when that folder is absent. */
async function loadCorpus(): Promise<IngestDocument[]> {
  const dir = join(import.meta.dirname, 'corpus');
  const files = await readdir(dir).catch(() => [] as string[]);
  const markdown = files.filter((file) => file.endsWith('.md')).sort();
  if (markdown.length > 0) {
    return Promise.all(markdown.map(async (file) => ({ id: file, text: await readFile(join(dir, file), 'utf8'), version: 'v1' })));
  }
  return [
    { id: 'refunds.md', title: 'Refunds', text: '# Refunds\n\nRefunds are paid to the original payment method within 14 days of the return arriving. Gift cards are never refunded.' },
    { id: 'returns.md', title: 'Returns', text: '# Returns\n\nReturns are accepted within 30 days with the receipt. Refunds follow inspection of the returned item.' },
    { id: 'shipping.md', title: 'Shipping', text: '# Shipping\n\nShipping is free above 50 euros. Express shipping costs 9 euros and takes one day.' },
    { id: 'warranty.md', title: 'Warranty', text: '# Warranty\n\nThe warranty covers defects for two years; a defective item is repaired, replaced or refunded.' },
  ];
}

const question = process.argv[2] ?? 'How and when are refunds paid?';

const store = new MemoryHybridStore(); // no embeddings: hybrid search runs lexical (BM25)
await store.addDocuments(await loadCorpus());

const retriever = new BundleRetriever({ store, maxTokens: 500, limit: 20 });
const synthesizer = getResponseSynthesizer('compact', {
  llm: new MockLLM({ responseMessage: '(mock LLM) Refunds go back to the original payment method [1].' }),
});
const engine = new RetrieverQueryEngine(retriever, synthesizer);

const response = await engine.query({ query: question });
console.log(`Question: ${question}`);
console.log(`Answer: ${response.message.content}\n`);
console.log('Source nodes in context order (rank 1 first, rank 2 last):');
for (const { node, score } of response.sourceNodes ?? []) {
  const { ref, rank } = node.metadata.litm;
  const { sourceId, chunkId } = node.metadata.citation;
  console.log(`  [${ref}] rank ${rank} score ${score?.toFixed(4)} ${sourceId} (${chunkId})`);
}
