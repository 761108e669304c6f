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
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';

/** The markdown files in examples/corpus (its README excepted), each as one source document. */
async function loadCorpus(): Promise<IngestDocument[]> {
  const dir = join(import.meta.dirname, 'corpus');
  const files = (await readdir(dir)).filter((file) => file.endsWith('.md') && file !== 'README.md').sort();
  return Promise.all(files.map(async (file) => ({ id: file, text: await readFile(join(dir, file), 'utf8'), version: 'v1' })));
}

const question = process.argv[2] ?? 'Why should the best passage come first and the second best last?';

const store = new MemoryHybridStore(); // no embeddings: hybrid search runs lexical (BM25)
await store.addDocuments(await loadCorpus());

const retriever = new BundleRetriever({ store, maxTokens: 600, limit: 20 });
const prompt = ChatPromptTemplate.fromMessages([
  ['system', 'Answer only from the numbered context below and cite sources as [n].\n\n{context}'],
  ['human', '{question}'],
]);
const model = new FakeListChatModel({
  responses: ['(fake model) Models use the start and the end of a long context best, so the strongest passages go there [1].'],
});

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
