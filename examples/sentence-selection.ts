/**
 * More grounding per token: the same question packed from the example corpus with whole chunks and with
 * sentence selection, each kept sentence checked against its source through the citation's spans; then a
 * reranker that cannot be reached, to show that the pack is still built and says what degraded.
 * Offline: BM25 retrieval in the embedded store, no model.
 *
 *   npx tsx examples/sentence-selection.ts ["your question"]
 */
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { HttpReranker, MemoryHybridStore, packBundle, type IngestDocument } from '../src/index.js';
import { BundleRetriever } from '../src/langchain/index.js';

const dir = join(import.meta.dirname, 'corpus');
const files = (await readdir(dir)).filter((file) => file.endsWith('.md') && file !== 'README.md').sort();
const sources = new Map<string, string>();
const docs: IngestDocument[] = [];
for (const file of files) {
  const text = await readFile(join(dir, file), 'utf8');
  sources.set(file, text);
  docs.push({ id: file, text, version: 'v1' });
}

const question = process.argv[2] ?? 'How are token budgets counted exactly?';
const store = new MemoryHybridStore();
await store.addDocuments(docs);
const candidates = await store.search({ text: question, mode: 'lexical', limit: 20 });

const whole = packBundle({ query: question, candidates, maxTokens: 300 });
const selected = packBundle({ query: question, candidates, maxTokens: 300, compress: { mode: 'sentences' } });
console.log(
  `Whole chunks: ${whole.items.length} items from ${whole.coverage.distinctSourceCount} sources in ${whole.budget.usedTokens} tokens`,
);
console.log(
  `Sentences:    ${selected.items.length} items from ${selected.coverage.distinctSourceCount} sources in ${selected.budget.usedTokens} tokens\n`,
);
console.log(selected.context);

// Every kept sentence comes back byte for byte from its source document through the citation's spans.
for (const citation of selected.citations) {
  const source = sources.get(citation.sourceId)!;
  for (const span of citation.spans ?? []) {
    const sentence = source.slice(span.start, span.end);
    if (!selected.items[citation.ref - 1]!.text.includes(sentence))
      throw new Error(`span ${span.start}-${span.end} of ${citation.sourceId} is not in item ${citation.ref}`);
  }
}
console.log('\nEvery span checked against its source.');

// A reranker nobody answers: the pack keeps the retrieval order and reports the degraded stage.
const probe = createServer();
await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
const { port } = probe.address() as { port: number };
await new Promise<void>((resolve) => probe.close(() => resolve()));
const retriever = new BundleRetriever({
  store,
  maxTokens: 300,
  mode: 'lexical',
  compress: { mode: 'sentences' },
  rerank: { reranker: new HttpReranker({ url: `http://127.0.0.1:${port}/rerank` }), timeoutMs: 2000 },
});
const { pack, documents } = await retriever.retrieveWithCitations(question);
console.log(`With an unreachable reranker: ${pack.items.length} items; degraded ${JSON.stringify(pack.degraded)}`);
console.log(`metadata.litm.degraded of the first document: ${JSON.stringify(documents[0]?.metadata.litm.degraded)}`);
if (pack.degraded.length !== 1 || pack.items.length === 0) throw new Error('expected a degraded but complete pack');
