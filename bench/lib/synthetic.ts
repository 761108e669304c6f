import { createHash } from 'node:crypto';
import { MemoryHybridStore } from '../../src/retrieve/memory-store.js';
import type { EmbeddingsLike, IngestDocument } from '../../src/retrieve/types.js';
import { getTokenizer } from '../../src/tokenize/tiktoken.js';
import { loadSciFact } from './datasets.js';
import { percentile } from './metrics.js';
import { loadNote } from './report.js';
import { fixed, markdownTable, ms } from './table.js';
import { mulberry32 } from './random.js';
import { now, progress, rssMiB } from './timing.js';


const DIM = 384;

/** Deterministic random unit vectors keyed by the text's hash: stands in for a 384-d embedding model. */
export class RandomEmbeddings implements EmbeddingsLike {
  constructor(readonly dim = DIM) {}
  vector(text: string): number[] {
    const seed = createHash('sha256').update(text).digest().readUInt32LE(0);
    const rand = mulberry32(seed);
    const v = new Array<number>(this.dim);
    let norm = 0;
    for (let i = 0; i < this.dim; i += 1) {
      // Sum of uniforms ≈ Gaussian, so directions are spread evenly.
      const x = rand() + rand() + rand() - 1.5;
      v[i] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    return v.map((x) => x / norm);
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.vector(t));
  }
}

/**
 * Real words, so that tokenising costs what it costs on prose: the SciFact corpus's words of 3+ letters that are a
 * single token (with a leading space) in both shipped encodings, most frequent first (about 10k words).
 */
function vocabulary(): string[] {
  const o200k = getTokenizer('o200k_base');
  const cl100k = getTokenizer('cl100k_base');
  const counts = new Map<string, number>();
  for (const doc of loadSciFact().corpus) {
    for (const word of doc.text.toLowerCase().match(/[a-z]{3,}/g) ?? []) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts]
    .filter(([word]) => o200k.count(` ${word}`) === 1 && cl100k.count(` ${word}`) === 1)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([word]) => word);
}

function zipfSampler(n: number, rand: () => number): () => number {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i += 1) {
    total += 1 / (i + 1);
    cdf[i] = total;
  }
  return () => {
    const x = rand() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface SyntheticOptions {
  chunks: number;
  queries?: number;
}

/**
 * Latency and memory at scale: `chunks` synthetic chunks (real words drawn Zipf-style, 100–180 words each, about
 * 150 tokens)
 * with 384-d random unit vectors in MemoryHybridStore; then single queries, lexical and hybrid, limit 10.
 */
export async function runSynthetic(options: SyntheticOptions): Promise<string> {
  const started = now();
  const rand = mulberry32(20231107);
  const vocab = vocabulary();
  const draw = zipfSampler(vocab.length, rand);
  const docs: IngestDocument[] = [];
  for (let i = 0; i < options.chunks; i += 1) {
    const length = 100 + Math.floor(rand() * 81);
    const words: string[] = [];
    for (let w = 0; w < length; w += 1) words.push(vocab[draw()]!);
    docs.push({ id: `syn-${i}`, text: `${words.join(' ')}.` });
  }
  const rssBefore = rssMiB();
  const store = new MemoryHybridStore({ embeddings: new RandomEmbeddings(), chunkTokens: 8192 });
  progress(`synthetic: ingesting ${options.chunks} chunks`);
  const ingestStart = now();
  const batch = 5000;
  let peakIngestRss = rssBefore;
  for (let i = 0; i < docs.length; i += batch) {
    await store.addDocuments(docs.slice(i, i + batch));
    peakIngestRss = Math.max(peakIngestRss, rssMiB());
    progress(`  ${Math.min(i + batch, docs.length)}/${docs.length} chunks, ${((now() - ingestStart) / 1000).toFixed(0)} s, RSS ${rssMiB().toFixed(0)} MiB`);
  }
  const ingestMs = now() - ingestStart;
  docs.length = 0; // the store holds its own copy; keep RSS about the store
  (globalThis as { gc?: () => void }).gc?.();
  const rssAfterIngest = rssMiB();

  // Queries: 2–5 words from the mid-frequency band (very common words are like stopwords, rare ones match nothing).
  const queryCount = options.queries ?? 200;
  const queries: string[] = [];
  for (let q = 0; q < queryCount; q += 1) {
    const n = 2 + Math.floor(rand() * 4);
    const words: string[] = [];
    for (let w = 0; w < n; w += 1) words.push(vocab[100 + Math.floor(rand() * 3000)]!);
    queries.push(words.join(' '));
  }
  const latencies: Record<'lexical' | 'hybrid' | 'dense', number[]> = { lexical: [], hybrid: [], dense: [] };
  let peakRss = rssAfterIngest;
  for (const mode of ['lexical', 'dense', 'hybrid'] as const) {
    // Two warm-up queries per mode (JIT), not counted.
    for (const text of queries.slice(0, 2)) await store.search({ text, mode, limit: 10 });
    for (const text of queries) {
      const start = now();
      await store.search({ text, mode, limit: 10 });
      latencies[mode].push(now() - start);
    }
    peakRss = Math.max(peakRss, rssMiB());
    progress(`  ${mode}: p50 ${ms(percentile(latencies[mode], 50))} ms`);
  }
  const lexP50 = percentile(latencies.lexical, 50);
  const hybP50 = percentile(latencies.hybrid, 50);
  const check = (ok: boolean) => (ok ? 'met' : 'missed');
  return [
    `### Synthetic corpus: ${options.chunks.toLocaleString('en-US')} chunks, MemoryHybridStore`,
    '',
    `Words drawn Zipf-style from a ${vocab.length.toLocaleString('en-US')}-word vocabulary (SciFact words that are one token), 100–180 words per chunk, 384-d random unit vectors; ` +
      `${queryCount} queries of 2–5 mid-frequency words, one at a time, limit 10 (hybrid prefetches 50 per arm).`,
    '',
    markdownTable(
      ['Mode', 'p50 ms', 'p95 ms'],
      (['lexical', 'dense', 'hybrid'] as const).map((m) => [m, ms(percentile(latencies[m], 50)), ms(percentile(latencies[m], 95))]),
    ),
    '',
    markdownTable(
      ['Measure', 'Value'],
      [
        ['ingest (chunk, count tokens, BM25-encode, vectors)', `${fixed(ingestMs / 1000, 1)} s (${Math.round(options.chunks / (ingestMs / 1000))} chunks/s)`],
        ['RSS before ingest', `${rssBefore.toFixed(0)} MiB`],
        ['RSS peak during ingest (sampled after each batch of 5,000)', `${peakIngestRss.toFixed(0)} MiB`],
        ['RSS after ingest', `${rssAfterIngest.toFixed(0)} MiB`],
        ['RSS peak while querying', `${peakRss.toFixed(0)} MiB`],
      ],
    ),
    '',
    markdownTable(
      ['Target', 'Result'],
      [
        ['lexical p50 ≤ 50 ms', `${ms(lexP50)} ms: ${check(lexP50 <= 50)}`],
        ['hybrid p50 ≤ 80 ms', `${ms(hybP50)} ms: ${check(hybP50 <= 80)}`],
        ['RSS ≤ 1.5 GB', `${(peakRss / 1024).toFixed(2)} GiB: ${check(peakRss * 2 ** 20 <= 1.5e9)}`],
      ],
    ),
    '',
    `Run took ${((now() - started) / 1000).toFixed(0)} s; ${loadNote()}.`,
  ].join('\n');
}
