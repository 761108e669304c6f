import { createRequire } from 'node:module';
import type { Tiktoken as TiktokenType, TiktokenBPE } from 'js-tiktoken/lite';
import { LitmPackError } from '../core/errors.js';
import { bytePairCount, type RankMap } from './bpe.js';
import { ENCODINGS, type EncodingName, type Tokenizer } from './types.js';

// The rank tables are large (o200k_base is several MB of JS) and building an encoder takes about a second,
// so both are loaded on first use, synchronously (packing is synchronous), once per encoding per process.
const require = createRequire(import.meta.url);
const cache = new Map<EncodingName, Tokenizer>();

/** Pieces longer than this (in UTF-8 bytes) are merged by `bytePairCount` instead of js-tiktoken. */
const LONG_PIECE_BYTES = 64;
const LONG_RUN = new RegExp(`\\S{${LONG_PIECE_BYTES},}`, 'u');

class TiktokenTokenizer implements Tokenizer {
  readonly name: EncodingName;
  readonly #encoder: TiktokenType;
  readonly #pattern: RegExp;
  readonly #bytes = new TextEncoder();
  #maxTokenBytes = 0;

  constructor(name: EncodingName, encoder: TiktokenType, patStr: string) {
    this.name = name;
    this.#encoder = encoder;
    this.#pattern = new RegExp(patStr, 'gu');
  }

  count(text: string): number {
    if (text.length === 0) return 0;
    // Special-token strings such as "<|endoftext|>" inside retrieved text are counted as ordinary text:
    // they are content, not control tokens, and must never make counting throw.
    if (!LONG_RUN.test(text)) return this.#encoder.encode(text, [], []).length;
    return this.#countPiecewise(text);
  }

  /** Same pre-tokenisation as js-tiktoken, long pieces merged in O(n log n) (see bpe.ts). */
  #countPiecewise(text: string): number {
    // js-tiktoken keeps its rank table in a field its typings mark internal; we read it, and a test checks
    // the counts against js-tiktoken's own encode.
    const ranks = (this.#encoder as unknown as { rankMap: RankMap }).rankMap;
    if (this.#maxTokenBytes === 0) {
      for (const key of ranks.keys()) {
        let commas = 0;
        for (let i = 0; i < key.length; i += 1) if (key.charCodeAt(i) === 44) commas += 1;
        if (commas + 1 > this.#maxTokenBytes) this.#maxTokenBytes = commas + 1;
      }
    }
    let total = 0;
    for (const match of text.matchAll(this.#pattern)) {
      const piece = match[0];
      const bytes = this.#bytes.encode(piece);
      if (bytes.length <= LONG_PIECE_BYTES) total += this.#encoder.encode(piece, [], []).length;
      else total += bytePairCount(bytes, ranks, this.#maxTokenBytes);
    }
    return total;
  }

  encode(text: string): number[] {
    return this.#encoder.encode(text, [], []);
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
