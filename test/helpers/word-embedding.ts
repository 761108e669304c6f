import { BaseEmbedding } from '@llamaindex/core/embeddings';
import { FakeEmbeddings } from './fake-embeddings.js';

/** A LlamaIndex embedding class (LlamaIndex's own BaseEmbedding) over deterministic hashed word vectors. */
export class WordEmbedding extends BaseEmbedding {
  readonly words = new FakeEmbeddings({ dimension: 32 });
  constructor() {
    super();
  }
  getTextEmbedding(text: string): Promise<number[]> {
    return Promise.resolve(this.words.embed(text));
  }
}
