import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { describeStoreMethods } from './helpers/store-contract.js';

describeStoreMethods('MemoryHybridStore', async ({ embeddings }) =>
  new MemoryHybridStore(embeddings ? { embeddings: new FakeEmbeddings() } : {}),
);
