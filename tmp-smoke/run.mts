import { loadDocuments, MemoryHybridStore, packBundle } from '../src/index.ts';
const docs = await loadDocuments(['/tmp/mix/corpus'], { base: '/tmp/mix', onSkip: (s) => console.log('SKIP', s), onWarning: (w) => console.log('WARN', w) });
for (const d of docs) console.log(d.id, '|', d.title, '|', d.parentId, JSON.stringify(d.regions?.slice(0,3)));
const store = new MemoryHybridStore();
await store.addDocuments(docs);
for (const q of ['refunds page 2', 'circuit breaker record', 'renewal terms', 'welcome back retries', 'rollback', 'printer']) {
  const c = await store.search({ text: q, mode: 'lexical', limit: 3 });
  const pack = packBundle({ query: q, candidates: c, maxTokens: 300 });
  console.log('---', q); console.log(pack.context.split('\n').filter(l => l.startsWith('[')).join('\n')); console.log(JSON.stringify(pack.citations.map(c => c.locator)), JSON.stringify(pack.dropped));
}
