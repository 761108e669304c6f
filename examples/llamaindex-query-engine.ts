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
import { extractText } from '@llamaindex/core/utils';
import type { IngestDocument } from '../src/index.js';
import { BundleRetriever, type LitmItemMetadata } from '../src/llamaindex/index.js';
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

const retriever = new BundleRetriever({ store, maxTokens: 500, limit: 20 });
const synthesizer = getResponseSynthesizer('compact', {
  llm: new MockLLM({
    responseMessage: '(mock LLM) Models use the start and the end of a long context best, so the strongest passages go there [1].',
  }),
});
const engine = new RetrieverQueryEngine(retriever, synthesizer);

const response = await engine.query({ query: question });
console.log(`Question: ${question}`);
console.log(`Answer: ${extractText(response.message.content)}\n`);
console.log('Source nodes in context order (rank 1 first, rank 2 last):');
for (const { node, score } of response.sourceNodes ?? []) {
  // A BundleRetriever's nodes are items of its pack (a briefing adds a caveats node without a citation).
  const { litm, citation } = node.metadata as LitmItemMetadata;
  const { ref, rank } = litm;
  const { sourceId, chunkId } = citation;
  console.log(`  [${ref}] rank ${rank} score ${score?.toFixed(4)} ${sourceId} (${chunkId})`);
}
