import { createHash } from 'node:crypto';
import { MemoryHybridStore } from '../../src/memory/memory-hybrid-store.js';
import type { EmbeddingsLike } from '../../src/store/embeddings.js';
import type { IngestDocument } from '../../src/store/schemas.js';
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
  embedQuery(text: string): Promise<number[]> {
    return Promise.resolve(this.vector(text));
  }
  embedDocuments(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((t) => this.vector(t)));
  }
}

/**
 * Real words, so that tokenising costs what it costs on prose: the SciFact corpus's words of 3+ letters that are a
 * single token (with a leading space) in both shipped encodings, most frequent first (about 10k words).
 */
export function vocabulary(): string[] {
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
  /** Words per chunk, inclusive bounds (default 100–180). */
  words?: [number, number];
  /** Also time a plain Float32Array scan over the same vectors (default true). */
  plainScan?: boolean;
}

/**
 * The synthetic documents, one chunk each, in batches: the same texts for the same options on every run, made
 * as they are ingested so the documents never all sit in memory beside the store.
 */
export function* syntheticBatches(
  vocab: readonly string[],
  count: number,
  words: [number, number],
  rand: () => number,
  batch: number,
): Generator<IngestDocument[]> {
  const draw = zipfSampler(vocab.length, rand);
  const span = words[1] - words[0] + 1;
  for (let start = 0; start < count; start += batch) {
    const docs: IngestDocument[] = [];
    for (let i = start; i < Math.min(count, start + batch); i += 1) {
      const length = words[0] + Math.floor(rand() * span);
      const picked: string[] = [];
      for (let w = 0; w < length; w += 1) picked.push(vocab[draw()]!);
      docs.push({ id: `syn-${i}`, text: `${picked.join(' ')}.` });
    }
    yield docs;
  }
}

/** Queries of 2–5 words from the mid-frequency band (very common words are like stopwords, rare ones match nothing). */
export function syntheticQueries(vocab: readonly string[], rand: () => number, count: number): string[] {
  const queries: string[] = [];
  for (let q = 0; q < count; q += 1) {
    const n = 2 + Math.floor(rand() * 4);
    const picked: string[] = [];
    for (let w = 0; w < n; w += 1) picked.push(vocab[100 + Math.floor(rand() * 3000)]!);
    queries.push(picked.join(' '));
  }
  return queries;
}

/**
 * The dense baseline a store without any of litm-pack's machinery would run: every vector in one Float32Array,
 * norms computed once, a plain loop for each dot product, and a small sorted top-k.
 */
class PlainScan {
  #vectors = new Float32Array(0);
  #norms: number[] = [];
  readonly #ids: string[] = [];
  #dimension = 0;

  add(id: string, vector: readonly number[]): void {
    const d = vector.length;
    this.#dimension = d;
    const at = this.#ids.length * d;
    if (at + d > this.#vectors.length) {
      const grown = new Float32Array(Math.max(1024 * d, this.#vectors.length * 2));
      grown.set(this.#vectors);
      this.#vectors = grown;
    }
    let norm = 0;
    for (let i = 0; i < d; i += 1) {
      this.#vectors[at + i] = vector[i]!;
      norm += this.#vectors[at + i]! * this.#vectors[at + i]!;
    }
    this.#norms.push(Math.sqrt(norm));
    this.#ids.push(id);
  }

  search(query: readonly number[], limit: number): string[] {
    const d = this.#dimension;
    const q = Float32Array.from(query);
    let qn = 0;
    for (let i = 0; i < d; i += 1) qn += q[i]! * q[i]!;
    qn = Math.sqrt(qn);
    const vectors = this.#vectors;
    const top: { score: number; index: number }[] = [];
    for (let v = 0; v < this.#ids.length; v += 1) {
      const base = v * d;
      let dot = 0;
      for (let i = 0; i < d; i += 1) dot += q[i]! * vectors[base + i]!;
      const score = dot / (qn * this.#norms[v]!);
      if (top.length < limit || score > top[top.length - 1]!.score) {
        top.push({ score, index: v });
        top.sort((a, b) => b.score - a.score);
        if (top.length > limit) top.pop();
      }
    }
    return top.map((t) => this.#ids[t.index]!);
  }
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** JavaScript heap in use plus memory outside it (buffers, WebAssembly memories), after a collection. */
async function heldBytes(): Promise<number> {
  gc();
  // Buffers of collected objects are released after the collection; give that a moment, then collect again.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/**
 * Latency and memory at scale: `chunks` synthetic chunks (real words drawn Zipf-style, 100–180 words each by
 * default, about 150 tokens) with 384-d random unit vectors in MemoryHybridStore; then single queries, lexical,
 * dense and hybrid, limit 10, and the dense queries again beside a plain Float32Array scan of the same vectors.
 */
export async function runSynthetic(options: SyntheticOptions): Promise<string> {
  const started = now();
  const loadAtStart = loadNote();
  const words = options.words ?? [100, 180];
  const vocab = vocabulary();
  const heldStart = await heldBytes();
  const rssStart = rssMiB();
  const rand = mulberry32(20231107);
  const embeddings = new RandomEmbeddings();
  const store = new MemoryHybridStore({ embeddings, chunkTokens: 8192 });
  progress(`synthetic: ingesting ${options.chunks} chunks of ${words[0]}–${words[1]} words`);
  const batch = 5000;
  let ingestMs = 0;
  let peakIngestRss = rssStart;
  let done = 0;
  for (const docs of syntheticBatches(vocab, options.chunks, words, rand, batch)) {
    const start = now();
    await store.addDocuments(docs);
    ingestMs += now() - start;
    done += docs.length;
    peakIngestRss = Math.max(peakIngestRss, rssMiB());
    progress(`  ${done}/${options.chunks} chunks, ${(ingestMs / 1000).toFixed(0)} s, RSS ${rssMiB().toFixed(0)} MiB`);
  }
  const held = ((await heldBytes()) - heldStart) / store.size;
  const rssAfterIngest = rssMiB();
  const perChunk = ((rssAfterIngest - rssStart) * 2 ** 20) / store.size;

  const queryCount = options.queries ?? 200;
  const queries = syntheticQueries(vocab, rand, queryCount);
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

  // The same dense queries against a plain Float32Array scan of the same vectors, alternating query by query
  // so both see the same machine load. Built after every memory figure above was taken.
  let plain: { store: number[]; plain: number[]; agree: number } | null = null;
  if (options.plainScan !== false) {
    progress('  building the plain Float32Array scan');
    const scan = new PlainScan();
    for (const docs of syntheticBatches(vocab, options.chunks, words, mulberry32(20231107), batch)) {
      for (const doc of docs) scan.add(doc.id, embeddings.vector(doc.text));
    }
    const paired = queries.slice(0, Math.min(queries.length, 60));
    const storeMs: number[] = [];
    const plainMs: number[] = [];
    let agree = 0;
    for (const text of paired) {
      const vector = embeddings.vector(text);
      let start = now();
      const mine = await store.search({ text, mode: 'dense', limit: 10 });
      storeMs.push(now() - start);
      start = now();
      const theirs = scan.search(vector, 10);
      plainMs.push(now() - start);
      if (mine.map((c) => c.sourceId).join() === theirs.join()) agree += 1;
    }
    plain = { store: storeMs, plain: plainMs, agree };
    progress(`  plain scan: p50 ${ms(percentile(plainMs, 50))} ms, store dense ${ms(percentile(storeMs, 50))} ms`);
  }

  const lexP50 = percentile(latencies.lexical, 50);
  const hybP50 = percentile(latencies.hybrid, 50);
  const check = (ok: boolean) => (ok ? 'met' : 'missed');
  const ratio = plain === null ? Number.NaN : percentile(plain.store, 50) / percentile(plain.plain, 50);
  return [
    `### Synthetic corpus: ${options.chunks.toLocaleString('en-US')} chunks, MemoryHybridStore`,
    '',
    `Words drawn Zipf-style from a ${vocab.length.toLocaleString('en-US')}-word vocabulary (SciFact words that are one token), ${words[0]}–${words[1]} words per chunk, 384-d random unit vectors; ` +
      `${queryCount} queries of 2–5 mid-frequency words, one at a time, limit 10 (hybrid prefetches 50 per arm).`,
    '',
    markdownTable(
      ['Mode', 'p50 ms', 'p95 ms'],
      (['lexical', 'dense', 'hybrid'] as const).map((m) => [m, ms(percentile(latencies[m], 50)), ms(percentile(latencies[m], 95))]),
    ),
    '',
    ...(plain === null
      ? []
      : [
          markdownTable(
            [`Dense, ${plain.store.length} queries alternating`, 'p50 ms', 'p95 ms'],
            [
              ['MemoryHybridStore dense', ms(percentile(plain.store, 50)), ms(percentile(plain.store, 95))],
              ['plain Float32Array scan, same vectors', ms(percentile(plain.plain, 50)), ms(percentile(plain.plain, 95))],
            ],
          ),
          '',
          `Store dense / plain scan (p50): ${fixed(ratio, 2)}×; the same top 10 for ${plain.agree} of ${plain.store.length} queries.`,
          '',
        ]),
    markdownTable(
      ['Measure', 'Value'],
      [
        [
          'ingest (chunk, count tokens, BM25-encode, vectors; documents made between batches not counted)',
          `${fixed(ingestMs / 1000, 1)} s (${Math.round(options.chunks / (ingestMs / 1000))} chunks/s)`,
        ],
        ['RSS before ingest', `${rssStart.toFixed(0)} MiB`],
        ['RSS peak during ingest (sampled after each batch of 5,000)', `${peakIngestRss.toFixed(0)} MiB`],
        ['RSS after ingest', `${rssAfterIngest.toFixed(0)} MiB`],
        ['RSS peak while querying', `${peakRss.toFixed(0)} MiB`],
        ['bytes per chunk: RSS ((after ingest − before) / chunks)', `${Math.round(perChunk)}`],
        [
          'bytes per chunk the store holds (JavaScript heap in use + buffers and WebAssembly memory, after GC)',
          (globalThis as { gc?: unknown }).gc ? `${Math.round(held)}` : 'n/a (run with --expose-gc)',
        ],
      ],
    ),
    '',
    markdownTable(
      ['Target', 'Result'],
      options.chunks >= 500_000
        ? [
            ['hybrid p50 ≤ 60 ms', `${ms(hybP50)} ms: ${check(hybP50 <= 60)}`],
            ['dense ≤ 0.25× the plain scan (p50)', `${fixed(ratio, 2)}×: ${check(ratio <= 0.25)}`],
            [
              'RSS < 2.5 GiB',
              `${(Math.max(peakRss, peakIngestRss) / 1024).toFixed(2)} GiB: ${check(Math.max(peakRss, peakIngestRss) < 2.5 * 1024)}`,
            ],
          ]
        : [
            ['lexical p50 ≤ 50 ms', `${ms(lexP50)} ms: ${check(lexP50 <= 50)}`],
            ['hybrid p50 ≤ 80 ms', `${ms(hybP50)} ms: ${check(hybP50 <= 80)}`],
            ['RSS ≤ 1.5 GB', `${(peakRss / 1024).toFixed(2)} GiB: ${check(peakRss * 2 ** 20 <= 1.5e9)}`],
          ],
    ),
    '',
    `Run took ${((now() - started) / 1000).toFixed(0)} s; at the start ${loadAtStart}; at the end ${loadNote()}.`,
  ].join('\n');
}
