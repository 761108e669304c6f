/**
 * Retrieval-augmented generation with LangChain.js: BundleRetriever → prompt → chat model, printing the
 * answer and the citations. The model is LangChain's FakeListChatModel, so this runs offline; swap in any
 * chat model.
 *
 *   npx tsx examples/langchain-rag.ts ["your question"]
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnableLambda, RunnablePassthrough } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import type { IngestDocument } from '../src/index.js';
import { BundleRetriever, formatDocumentsAsContext } from '../src/langchain/index.js';
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

const retriever = new BundleRetriever({ store, maxTokens: 600, limit: 20 });
const prompt = ChatPromptTemplate.fromMessages([
  ['system', 'Answer only from the numbered context below and cite sources as [n].\n\n{context}'],
  ['human', '{question}'],
]);
const model = new FakeListChatModel({ responses: ['(fake model) Refunds go back to the original payment method [1].'] });

// Retrieval with the citation sidecar, then the answer; the retriever and the model share one trace.
const chain = RunnableLambda.from(async (input: string, config) => {
  const { documents, pack } = await retriever.retrieveWithCitations(input, config);
  return { question: input, context: formatDocumentsAsContext(documents), citations: pack.citations, budget: pack.budget };
}).pipe(RunnablePassthrough.assign({ answer: prompt.pipe(model).pipe(new StringOutputParser()) }));

const result = await chain.invoke(question);

console.log(`Question: ${result.question}\n`);
console.log(`Context (${result.budget.usedTokens}/${result.budget.maxTokens} tokens, ${result.budget.encoding}):`);
console.log(result.context);
console.log(`\nAnswer: ${result.answer}\n`);
console.log('Citations:');
for (const citation of result.citations) {
  const where = citation.section && citation.section.length > 0 ? ` § ${citation.section.join(' > ')}` : '';
  console.log(`  [${citation.ref}] ${citation.sourceId}${where} (chunk ${citation.chunkId}, sha256 ${citation.textSha256.slice(0, 12)}…)`);
}
