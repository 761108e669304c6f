import { MemoryHybridStore } from '../src/index.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { describeStoreMethods } from './helpers/store-contract.js';

describeStoreMethods('MemoryHybridStore', ({ embeddings }) =>
  Promise.resolve(new MemoryHybridStore(embeddings ? { embeddings: new FakeEmbeddings() } : {})),
);
