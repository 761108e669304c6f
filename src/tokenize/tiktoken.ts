import { createRequire } from 'node:module';
import type { Tiktoken as TiktokenType, TiktokenBPE } from 'js-tiktoken/lite';
import { LitmPackError } from '../core/errors.js';
import { bytePairCount, type RankMap } from './bpe.js';
import { ENCODINGS, type EncodingName, type Tokenizer } from './types.js';

// The rank tables are large (o200k_base is several MB of JS) and building an encoder takes about a second,
// so both are loaded on first use, synchronously (packing is synchronous), once per encoding per process.
const require = createRequire(import.meta.url);
const cache = new Map<EncodingName, Tokenizer>();

/**
 * Distinct pieces whose counts are remembered per encoding. Text is counted piece by piece (tiktoken
 * encodes every pre-tokenised piece on its own, so the sum is exact) and words repeat across documents,
 * so most pieces are counted once per process. Cleared when full.
 */
const PIECE_CACHE_LIMIT = 200_000;

class TiktokenTokenizer implements Tokenizer {
  readonly name: EncodingName;
  readonly #pattern: RegExp;
  readonly #ranks: RankMap;
  readonly #maxTokenBytes: number;
  readonly #bytes = new TextEncoder();
  readonly #pieces = new Map<string, number>();

  constructor(name: EncodingName, encoder: TiktokenType, patStr: string) {
    this.name = name;
    this.#pattern = new RegExp(patStr, 'gu');
    // js-tiktoken keeps its rank table (bytes joined by commas → rank) in a field its typings mark
    // internal; we read it, and a property test checks every count against js-tiktoken's own encode.
    this.#ranks = (encoder as unknown as { rankMap: RankMap }).rankMap;
    let longest = 1;
    for (const key of this.#ranks.keys()) {
      let bytes = 1;
      for (let i = 0; i < key.length; i += 1) if (key.charCodeAt(i) === 44) bytes += 1;
      if (bytes > longest) longest = bytes;
    }
    this.#maxTokenBytes = longest;
  }

  /**
   * Exact token count. Special-token strings such as "<|endoftext|>" inside retrieved text are counted as
   * ordinary text: they are content, not control tokens, and must never make counting throw.
   */
  count(text: string): number {
    if (text.length === 0) return 0;
    let total = 0;
    for (const match of text.matchAll(this.#pattern)) total += this.#pieceCount(match[0]);
    return total;
  }

  #pieceCount(piece: string): number {
    const cached = this.#pieces.get(piece);
    if (cached !== undefined) return cached;
    const bytes = this.#bytes.encode(piece);
    // Byte-pair merging as tiktoken does it, in O(n log n) (js-tiktoken's own merge is quadratic with a
    // large constant: a 4,000-character run without spaces takes it seconds).
    const tokens = this.#ranks.has(bytes.join(',')) ? 1 : bytePairCount(bytes, this.#ranks, this.#maxTokenBytes);
    if (this.#pieces.size >= PIECE_CACHE_LIMIT) this.#pieces.clear();
    this.#pieces.set(piece, tokens);
    return tokens;
  }

  /** Forgets remembered piece counts (benchmarks use it to measure cold counting). */
  clearCache(): void {
    this.#pieces.clear();
  }


  /**
   * The number of pre-tokenised pieces: every piece encodes to at least one token, and most English
   * words are one piece and one token, so this bound is tight while costing no byte-pair merging.
   */
  lowerBound(text: string): number {
    if (text.length === 0) return 0;
    let pieces = 0;
    this.#pattern.lastIndex = 0;
    while (this.#pattern.exec(text) !== null) pieces += 1;
    return pieces;
  }
}

function loadRanks(name: EncodingName): TiktokenBPE {
  const mod = require(`js-tiktoken/ranks/${name}`) as TiktokenBPE | { default: TiktokenBPE };
  return 'default' in mod ? mod.default : mod;
}

/** The tokenizer for one of the shipped encodings, built on first use and kept for the process. */
export function getTokenizer(encoding: EncodingName): Tokenizer {
  const cached = cache.get(encoding);
  if (cached) return cached;
  if (!(ENCODINGS as readonly string[]).includes(encoding)) {
    throw new LitmPackError(
      'invalid_input',
      `Unknown encoding "${String(encoding)}": use one of ${ENCODINGS.join(', ')}, or pass a Tokenizer of your own`,
    );
  }
  const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
  const ranks = loadRanks(encoding);
  const tokenizer = new TiktokenTokenizer(encoding, new Tiktoken(ranks), ranks.pat_str);
  cache.set(encoding, tokenizer);
  return tokenizer;
}

/** True once the encoder for `encoding` has been built in this process (used to prove laziness). */
export function isTokenizerLoaded(encoding: EncodingName): boolean {
  return cache.has(encoding);
}
