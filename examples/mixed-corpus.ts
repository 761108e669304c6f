// A bundle from a mixed corpus: a PDF manual, source code, e-mails (one with a PDF attachment), a podcast
// transcript, an HTML runbook, a markdown handbook and JSON Lines tickets, all through the one ingest path.
// The citations say where each item is: a PDF page, a code symbol with its lines, an e-mail, a transcript time.
//   npx tsx examples/mixed-corpus.ts
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryHybridStore, assembleBundle, loadDocuments } from '../src/index.js';
import { defaultLoaders, recordsLoader } from '../src/sources/index.js';

const corpus = join(dirname(fileURLToPath(import.meta.url)), 'mixed');
const docs = await loadDocuments([corpus], {
  base: corpus,
  // The tickets export names its fields its own way.
  loaders: [
    ...defaultLoaders(),
    recordsLoader({ idField: 'key', textField: 'description', titleField: 'summary', metadataFields: ['status', 'priority'] }),
  ],
  onSkip: (skip) => console.error(`skipped ${skip.path}: ${skip.message}`),
  onWarning: (warning) => console.error(`${warning.path}: ${warning.message}`),
});
const store = new MemoryHybridStore();
await store.addDocuments(docs);

const { pack } = await assembleBundle({
  store,
  query: 'how are refund webhook retries spaced out, with backoff and jitter?',
  mode: 'lexical',
  maxTokens: 1200,
});
console.log(pack.context);
console.log('\nCitations:');
for (const c of pack.citations)
  console.log(
    `  [${c.ref}] ${c.sourceId}${c.section ? ` § ${c.section.join(' > ')}` : ''} ${JSON.stringify(c.locator ?? {})}${c.parentId ? ` (attachment of ${c.parentId})` : ''}`,
  );
