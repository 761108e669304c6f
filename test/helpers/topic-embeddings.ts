import type { EmbeddingsLike } from '../../src/index.js';
import { mulberry32 as random } from '../../bench/lib/random.js';

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Embeddings where a text's vector is its topic's direction (the first word after "topic-") plus a little
 * per-text noise: texts of one topic are near duplicates in vector space, topics are far apart. Real cosines,
 * no ties, which is what MMR needs to be tested on.
 */
export class TopicEmbeddings implements EmbeddingsLike {
  constructor(
    readonly dimension = 16,
    readonly noise = 0.25,
  ) {}

  embed(text: string): number[] {
    const topic = /topic-(\w+)/.exec(text)?.[1] ?? text;
    const base = random(hash(topic));
    const jitter = random(hash(text) ^ 0x9e3779b9);
    return Array.from({ length: this.dimension }, () => base() * 2 - 1 + (jitter() * 2 - 1) * this.noise);
  }

  embedQuery(text: string): Promise<number[]> {
    return Promise.resolve(this.embed(text));
  }

  embedDocuments(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((text) => this.embed(text)));
  }
}

/** Five topics, five near-duplicate documents each; every document mentions "guide" for the lexical arm. */
export function topicCorpus(): { id: string; text: string; acl?: string[] }[] {
  const topics = ['tea', 'bread', 'cars', 'garden', 'music'];
  const docs: { id: string; text: string; acl?: string[] }[] = [];
  topics.forEach((topic, t) => {
    for (let v = 0; v < 5; v += 1) {
      docs.push({
        id: `${topic}-${v}.md`,
        // Every text a different length in BM25 terms (not stopwords), so scores never tie (ties would order differently in the two stores).
        text: `topic-${topic} guide number ${v}: notes on ${topic} ${'extra '.repeat(t * 5 + v)}for beginners.`,
        ...(v === 4 ? { acl: ['staff'] } : {}),
      });
    }
  });
  return docs;
}
