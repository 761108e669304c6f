import type { EmbeddingsLike } from '../../src/index.js';

/**
 * Deterministic embeddings for tests: a hashed bag of lower-cased words (FNV-1a into `dimension` buckets).
 * Texts sharing words get a positive cosine; it can be told to fail on a given `embedDocuments` call.
 */
export class FakeEmbeddings implements EmbeddingsLike {
  readonly dimension: number;
  documentCalls = 0;
  queryCalls = 0;
  embeddedTexts: string[] = [];
  /** 1-based `embedDocuments` call that rejects (once). */
  failOnCall: number | undefined;

  constructor(options: { dimension?: number; failOnCall?: number } = {}) {
    this.dimension = options.dimension ?? 64;
    this.failOnCall = options.failOnCall;
  }

  embed(text: string): number[] {
    const vector = new Array<number>(this.dimension).fill(0);
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      let hash = 0x811c9dc5;
      for (let i = 0; i < word.length; i += 1) {
        hash ^= word.charCodeAt(i);
        hash = Math.imul(hash, 0x01000193);
      }
      const bucket = (hash >>> 0) % this.dimension;
      vector[bucket] = (vector[bucket] ?? 0) + 1;
    }
    return vector;
  }

  embedQuery(text: string): Promise<number[]> {
    this.queryCalls += 1;
    return Promise.resolve(this.embed(text));
  }

  embedDocuments(texts: string[]): Promise<number[][]> {
    this.documentCalls += 1;
    if (this.failOnCall === this.documentCalls) {
      this.failOnCall = undefined;
      return Promise.reject(new Error('embedding service unavailable'));
    }
    this.embeddedTexts.push(...texts);
    return Promise.resolve(texts.map((text) => this.embed(text)));
  }
}
