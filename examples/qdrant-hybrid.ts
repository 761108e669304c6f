/**
 * Hybrid retrieval from Qdrant, packed: ingest examples/corpus into a collection, then one hybrid query
 * (dense + BM25 prefetches fused on the server, in one request) packed into a cited bundle.
 *
 *   docker compose -f docker-compose.qdrant.yml up -d
 *   QDRANT_URL=http://localhost:6333 npx tsx examples/qdrant-hybrid.ts ["your question"]
 *
 * The dense side uses a small deterministic hashing embedder so the example runs offline; pass any
 * LangChain Embeddings (OpenAI, Ollama, ...) instead.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packBundle, type EmbeddingsLike, type IngestDocument } from '../src/index.js';
import { QdrantHybridStore } from '../src/qdrant/index.js';

const url = process.env.QDRANT_URL;
if (!url) {
  console.error('Set QDRANT_URL (e.g. http://localhost:6333 after `docker compose -f docker-compose.qdrant.yml up -d`).');
  process.exit(2);
}

/** Hashed bag of words, L2-normalised: a stand-in for a real embedding model. */
class HashingEmbeddings implements EmbeddingsLike {
  constructor(private readonly size = 256) {}
  #embed(text: string): number[] {
    const v = new Array<number>(this.size).fill(0);
    for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      const h = createHash('sha256').update(word).digest();
      v[h.readUInt32BE(0) % this.size]! += h[4]! % 2 === 0 ? 1 : -1;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  }
  embedQuery(text: string) {
    return Promise.resolve(this.#embed(text));
  }
  embedDocuments(texts: string[]) {
    return Promise.resolve(texts.map((t) => this.#embed(t)));
  }
}

const dir = join(import.meta.dirname, 'corpus');
const files = (await readdir(dir)).filter((f) => f.endsWith('.md') && f !== 'README.md').sort();
const docs: IngestDocument[] = await Promise.all(
  files.map(async (f) => ({ id: f, text: await readFile(join(dir, f), 'utf8'), version: 'v1' })),
);

const store = new QdrantHybridStore({
  url,
  collection: process.env.QDRANT_COLLECTION ?? 'litm_example',
  embeddings: new HashingEmbeddings(),
});
await store.ensureCollection();
const ingest = await store.addDocuments(docs);
console.log(`Ingested ${docs.length} documents: ${ingest.added} added, ${ingest.unchanged} unchanged, ${ingest.removed} removed.`);

const question = process.argv[2] ?? 'How does reciprocal rank fusion combine lexical and dense results?';
const candidates = await store.search({ text: question, mode: 'hybrid', limit: 30 });
const pack = packBundle({ query: question, candidates, maxTokens: 800 });
console.log(`\nQuestion: ${question}\n\n${pack.context}\n`);
console.log(
  `${pack.budget.usedTokens}/${pack.budget.maxTokens} tokens; confidence ${pack.coverage.confidence} (top similarity ${pack.coverage.topSimilarity.toFixed(3)})`,
);
for (const c of pack.citations) console.log(`  [${c.ref}] ${c.sourceId} chunk ${c.chunkId} sha256 ${c.textSha256.slice(0, 12)}`);
