import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { LitmPackError } from '../base/errors.js';
import { bytePairCount } from './bpe.js';
import { splitterFor, type PieceSplitter } from './pretokenize.js';
import { SHORT_KEY_LENGTH, ShortKeyTable, packedShift } from './short-keys.js';
import { decodeRankTableFile, vocabularyFromTiktoken, type RankTable, type TiktokenRanks, type Vocabulary } from './rank-table.js';
import { ENCODINGS, type EncodingName, type Tokenizer } from './types.js';

// Vocabularies are loaded on first use, synchronously (packing is synchronous), once per encoding per process.
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
  /** The written-out split for ASCII text, when the pattern is one this package knows. */
  readonly #split: PieceSplitter | null;
  /** Sticky: each match must start where the previous one ended. */
  readonly #sticky: RegExp;
  /** Global: finds the next match when text between pieces matches nothing (js-tiktoken skips it). */
  readonly #global: RegExp;
  readonly #table: RankTable;
  /** Pieces of at most 12 characters below U+0100 (nearly every piece of Latin-script text). */
  readonly #short = new ShortKeyTable(PIECE_CACHE_LIMIT);
  /** The other pieces (a few in a hundred in English prose), by their text. */
  readonly #long = new Map<string, number>();
  #bytes = new Uint8Array(256);
  readonly #encoder = new TextEncoder();

  constructor(name: EncodingName, vocabulary: Vocabulary) {
    this.name = name;
    this.#split = splitterFor(vocabulary.patStr);
    this.#sticky = new RegExp(vocabulary.patStr, 'uy');
    this.#global = new RegExp(vocabulary.patStr, 'gu');
    this.#table = vocabulary.table;
  }

  /**
   * Exact token count, equal to js-tiktoken's `encode(text, [], []).length`. Special-token strings such as
   * "<|endoftext|>" inside retrieved text are counted as ordinary text: they are content, not control
   * tokens, and must never make counting throw.
   */
  count(text: string): number {
    let total = 0;
    const length = text.length;
    let start = 0;
    while (start < length) {
      const end = this.#pieceEnd(text, start);
      if (end < 0) {
        start = -end - 1;
        continue;
      }
      total += end - start <= SHORT_KEY_LENGTH ? this.#shortPieceCount(text, start, end) : this.#longPieceCount(text, start, end);
      start = end;
    }
    return total;
  }

  /**
   * The number of pre-tokenised pieces: every piece encodes to at least one token, and most English
   * words are one piece and one token, so this bound is tight while costing no byte-pair merging.
   * Stops once it exceeds `limit`.
   */
  lowerBound(text: string, limit = Infinity): number {
    let pieces = 0;
    const length = text.length;
    let start = 0;
    while (start < length && pieces <= limit) {
      const end = this.#pieceEnd(text, start);
      if (end < 0) {
        start = -end - 1;
        continue;
      }
      pieces += 1;
      start = end;
    }
    return pieces;
  }

  /** The pre-tokenised pieces of `text`, in order (tests compare them with the pattern's own matches). */
  pieces(text: string): string[] {
    const out: string[] = [];
    let start = 0;
    while (start < text.length) {
      const end = this.#pieceEnd(text, start);
      if (end < 0) {
        start = -end - 1;
        continue;
      }
      out.push(text.slice(start, end));
      start = end;
    }
    return out;
  }

  /** Forgets remembered piece counts (benchmarks use it to measure cold counting). */
  clearCache(): void {
    this.#short.clear();
    this.#long.clear();
  }

  /**
   * End of the piece that starts at `start`; when nothing matches there, -(where the next piece starts) - 1
   * (js-tiktoken skips text no alternative matches).
   */
  #pieceEnd(text: string, start: number): number {
    const split = this.#split;
    if (split !== null) {
      const end = split(text, start);
      if (end >= 0) return end;
    }
    const sticky = this.#sticky;
    sticky.lastIndex = start;
    if (sticky.test(text)) return sticky.lastIndex;
    const global = this.#global;
    global.lastIndex = start;
    const next = global.exec(text);
    return -(next === null ? text.length : next.index) - 1;
  }

  #shortPieceCount(text: string, start: number, end: number): number {
    // Characters 0-3, 4-7 and 8-11 of the piece, one byte each; the length tells trailing zeros apart.
    let a = 0;
    let b = 0;
    let c = 0;
    for (let i = 0; i < end - start; i += 1) {
      const code = text.charCodeAt(start + i);
      if (code > 0xff) return this.#longPieceCount(text, start, end);
      const shifted = code << packedShift(i);
      if (i < 4) a |= shifted;
      else if (i < 8) b |= shifted;
      else c |= shifted;
    }
    const known = this.#short.get(a, b, c, end - start);
    if (known >= 0) return known;
    const count = this.#bytePairCount(text.slice(start, end));
    this.#short.set(a, b, c, end - start, count);
    return count;
  }

  #longPieceCount(text: string, start: number, end: number): number {
    const piece = text.slice(start, end);
    let count = this.#long.get(piece);
    if (count === undefined) {
      count = this.#bytePairCount(piece);
      if (this.#long.size >= PIECE_CACHE_LIMIT) this.#long.clear();
      this.#long.set(piece, count);
    }
    return count;
  }

  #bytePairCount(piece: string): number {
    let length = piece.length;
    if (this.#bytes.length < length * 3) this.#bytes = new Uint8Array(length * 3);
    const bytes = this.#bytes;
    let ascii = true;
    for (let i = 0; i < length; i += 1) {
      const code = piece.charCodeAt(i);
      if (code >= 0x80) {
        ascii = false;
        break;
      }
      bytes[i] = code;
    }
    if (!ascii) length = this.#encoder.encodeInto(piece, bytes).written;
    return this.#table.rank(bytes, 0, length) >= 0 ? 1 : bytePairCount(bytes, length, this.#table);
  }
}

const SPACE_OR_SLASH = /[\s/]/u;

/**
 * `tokenizer.count(text)`, remembering the counts of the text's segments in `memo`, so that counting a text
 * that shares most of its lines with texts counted before costs little more than reading it.
 *
 * Segments end after a line feed followed by a character that is neither whitespace nor "/". Both shipped
 * patterns always end a piece there (a piece holding a line feed is whitespace, or punctuation followed by
 * line breaks and, for o200k_base, slashes), and a piece before it never looks past it, so the count of the
 * text is the sum of its segments' counts. A property test checks the sum. Other tokenizers are counted whole.
 */
export function countBySegments(tokenizer: Tokenizer, text: string, memo: Map<string, number>): number {
  if (!(tokenizer instanceof TiktokenTokenizer)) return tokenizer.count(text);
  let total = 0;
  for (const segment of countingSegments(text)) {
    let count = memo.get(segment);
    if (count === undefined) {
      count = tokenizer.count(segment);
      memo.set(segment, count);
    }
    total += count;
  }
  return total;
}

/** The segments `countBySegments` sums over (tests check that they add up). */
export function countingSegments(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', newline + 1)) {
    const cut = newline + 1;
    if (cut < text.length && !SPACE_OR_SLASH.test(text[cut]!)) {
      out.push(text.slice(start, cut));
      start = cut;
    }
  }
  out.push(text.slice(start));
  return out;
}

/**
 * The vocabulary of `encoding`: the compact table the package build writes next to the compiled module, or,
 * when running from source, decoded from js-tiktoken's rank module (the same data, a little slower to read).
 */
function loadVocabulary(encoding: EncodingName): Vocabulary {
  let file: Uint8Array | undefined;
  // The tables live in dist/tokenize/ranks/. This code runs from a bundled chunk (dist/chunks/), an entry of the
  // ESM build (dist/ or one level down) or the CommonJS build's copy of this module (dist/cjs/tokenize/).
  for (const path of [`../tokenize/ranks/${encoding}.ranks`, `./tokenize/ranks/${encoding}.ranks`, `../../tokenize/ranks/${encoding}.ranks`]) {
    try {
      file = readFileSync(new URL(path, import.meta.url));
      break;
    } catch {
      file = undefined;
    }
  }
  if (file !== undefined) {
    try {
      const vocabulary = decodeRankTableFile(file, encoding);
      sources.set(encoding, 'rank table');
      return vocabulary;
    } catch {
      // A damaged or foreign table: js-tiktoken's module holds the same vocabulary, so counts stay exact.
    }
  }
  sources.set(encoding, 'js-tiktoken');
  return vocabularyFromTiktoken(loadTiktokenRanks(encoding));
}

const sources = new Map<EncodingName, 'rank table' | 'js-tiktoken'>();

/**
 * Where the vocabulary of `encoding` was read from, once loaded: `'rank table'` (the compact table the package
 * build writes into dist/, the fast path) or `'js-tiktoken'` (decoded from js-tiktoken's rank module, as when
 * running from source); undefined before the first use. The build checks that what it ships reads the table.
 */
export function vocabularySource(encoding: EncodingName): 'rank table' | 'js-tiktoken' | undefined {
  return sources.get(encoding);
}

/** js-tiktoken's rank module for `encoding` (its text form of the vocabulary). */
export function loadTiktokenRanks(encoding: EncodingName): TiktokenRanks {
  const mod = require(`js-tiktoken/ranks/${encoding}`) as TiktokenRanks | { default: TiktokenRanks };
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
  const tokenizer = new TiktokenTokenizer(encoding, loadVocabulary(encoding));
  cache.set(encoding, tokenizer);
  return tokenizer;
}

/** A tokenizer over a given vocabulary (tests use it to check a rank table file against js-tiktoken). */
export function tokenizerFromVocabulary(encoding: EncodingName, vocabulary: Vocabulary): Tokenizer {
  return new TiktokenTokenizer(encoding, vocabulary);
}

/** True once the encoder for `encoding` has been built in this process (used to prove laziness). */
export function isTokenizerLoaded(encoding: EncodingName): boolean {
  return cache.has(encoding);
}
