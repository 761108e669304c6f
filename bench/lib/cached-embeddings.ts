import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EmbeddingsLike } from '../../src/store/embeddings.js';
import { EMBED_CACHE_DIR, EMBED_MODEL, EMBED_SETUP_COMMAND } from './paths.js';

interface CacheIndex {
  model: string;
  dim: number;
  normalized: boolean;
  /** sha256 of each row's text, in row order. */
  rows: string[];
}

export class EmbeddingNotCachedError extends Error {
  override readonly name = 'EmbeddingNotCachedError';
  constructor(
    readonly text: string,
    readonly datasets: string[],
  ) {
    const preview = text.length > 80 ? `${text.slice(0, 77)}...` : text;
    super(
      `no cached ${EMBED_MODEL} embedding for text ${JSON.stringify(preview)} ` +
        `(looked in ${datasets.join(', ')} under ${join(EMBED_CACHE_DIR, EMBED_MODEL)}). ` +
        `Compute the embeddings with: ${EMBED_SETUP_COMMAND}`,
    );
  }
}

export interface CachedEmbeddingsOptions {
  /** Cache dataset names written by embed.py, e.g. `['scifact-corpus', 'scifact-queries']`. */
  datasets: string[];
  cacheDir?: string;
}

/**
 * An `EmbeddingsLike` that serves all-MiniLM-L6-v2 vectors precomputed by bench/python/embed.py, looked up by the
 * sha256 of the exact text. A text that is not cached throws `EmbeddingNotCachedError` naming the setup command:
 * benchmarks must never silently fall back to other vectors.
 */
export class CachedEmbeddings implements EmbeddingsLike {
  readonly dim: number;
  private readonly byHash = new Map<string, Float32Array>();
  private readonly datasets: string[];
  /** Texts served so far (for throughput accounting). */
  served = 0;

  constructor(options: CachedEmbeddingsOptions) {
    const dir = join(options.cacheDir ?? EMBED_CACHE_DIR, EMBED_MODEL);
    this.datasets = options.datasets;
    let dim = 0;
    for (const name of options.datasets) {
      const indexPath = join(dir, `${name}.json`);
      const binPath = join(dir, `${name}.f32`);
      if (!existsSync(indexPath) || !existsSync(binPath)) {
        throw new Error(`embedding cache ${name} not found in ${dir}. Compute it with: ${EMBED_SETUP_COMMAND}`);
      }
      const index = JSON.parse(readFileSync(indexPath, 'utf8')) as CacheIndex;
      const bytes = readFileSync(binPath);
      if (bytes.byteLength !== index.rows.length * index.dim * 4) {
        throw new Error(`embedding cache ${binPath} does not match its index; rerun: ${EMBED_SETUP_COMMAND}`);
      }
      if (dim !== 0 && dim !== index.dim) throw new Error(`embedding caches disagree on dimension in ${dir}`);
      dim = index.dim;
      // Copy into an aligned buffer (a Buffer may sit at an odd offset in Node's pool).
      const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      index.rows.forEach((hash, row) => {
        this.byHash.set(hash, all.subarray(row * index.dim, (row + 1) * index.dim));
      });
    }
    this.dim = dim;
  }

  get size(): number {
    return this.byHash.size;
  }

  has(text: string): boolean {
    return this.byHash.has(sha256(text));
  }

  vector(text: string): Float32Array {
    const found = this.byHash.get(sha256(text));
    if (found) return found;
    // LITM_BENCH_COLLECT_MISSING=FILE: a dry run that lists the texts to embed (JSON lines, for embed.py --texts)
    // and answers zero vectors meanwhile; its figures mean nothing and are never written.
    const collect = process.env.LITM_BENCH_COLLECT_MISSING;
    if (collect === undefined || collect === '') throw new EmbeddingNotCachedError(text, this.datasets);
    appendFileSync(collect, `${JSON.stringify({ text })}\n`);
    const zero = new Float32Array(this.dim);
    this.byHash.set(sha256(text), zero);
    return zero;
  }

  embedQuery(text: string): Promise<number[]> {
    this.served += 1;
    return Promise.resolve(Array.from(this.vector(text)));
  }

  embedDocuments(texts: string[]): Promise<number[][]> {
    this.served += texts.length;
    return Promise.resolve(texts.map((text) => Array.from(this.vector(text))));
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
