import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BoundedCache } from '../base/bounded-cache.js';
import { LitmPackError } from '../base/errors.js';
import { EVERY, FLAT_MAX, PrefixCounts, RING, bytePairCount } from './bpe.js';
import { splitterFor, type PieceSplitter } from './pretokenize.js';
import { SHORT_KEY_LENGTH, ShortKeyTable, isAsciiAlphanumeric, packedShift } from './short-keys.js';
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
/** Pieces up to this many characters are remembered by their text (bounded by the characters held). */
const PIECE_CACHE_MAX_CHARS = 256;
const PIECE_CACHE_CHARS = 4_000_000;
/**
 * Longer pieces (runs without spaces) keep the counts of all their prefixes for the next call: a cut and a
 * chunk count many prefixes of one run, each a prefix or an extension of the last. Up to 4 runs and 2 MiB
 * of their bytes (about 9 bytes of memory per byte); a longer run is counted in constant memory and forgotten.
 */
const RUN_CACHE_ENTRIES = 4;
/** What of a possible long run is read first when counting up to a limit (then twice as much, and so on). */
export const RUN_HEAD_CHARS = 256;
const RUN_CACHE_BYTES = 1 << 21;

interface Run {
  text: string;
  counts: PrefixCounts;
}

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
  /** The other pieces up to PIECE_CACHE_MAX_CHARS (a few in a hundred in English prose), by their text. */
  #long = new BoundedCache<string, number>(PIECE_CACHE_CHARS, (key) => key.length);
  /** Runs longer than that, most recent first, with the counts of their prefixes. */
  #runs: Run[] = [];
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
    return this.countUpTo(text, Infinity);
  }

  /**
   * `count(text)` when it is at most `limit`; otherwise some number above `limit` (counting stops as soon as
   * the count is known to pass it). What a budget check needs, at a cost bounded by the budget rather than
   * by the text.
   */
  countUpTo(text: string, limit: number): number {
    let total = 0;
    const length = text.length;
    let start = 0;
    while (start < length) {
      const end = this.#pieceEnd(text, start);
      if (end < 0) {
        start = -end - 1;
        continue;
      }
      const pieceLength = end - start;
      if (pieceLength <= SHORT_KEY_LENGTH) total += this.#shortPieceCount(text, start, end);
      else if (pieceLength <= PIECE_CACHE_MAX_CHARS) total += this.#longPieceCount(text, start, end, limit - total);
      else total += this.#runCount(text.slice(start, end), limit - total, true);
      if (total > limit) return total;
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
      // Every token is at most maxTokenBytes bytes, and a character at least one byte.
      const maxTokenBytes = this.#table.maxTokenBytes;
      pieces += end - start > maxTokenBytes ? Math.ceil((end - start) / maxTokenBytes) : 1;
      start = end;
    }
    return pieces;
  }

  /** The most bytes one token can have: a text of more characters than `limit` times this has more than `limit` tokens. */
  get maxTokenBytes(): number {
    return this.#table.maxTokenBytes;
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
    this.#long = new BoundedCache<string, number>(PIECE_CACHE_CHARS, (key) => key.length);
    this.#runs = [];
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
      if (code > 0xff) return this.#longPieceCount(text, start, end, Infinity);
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

  #longPieceCount(text: string, start: number, end: number, limit: number): number {
    const piece = text.slice(start, end);
    const known = this.#long.get(piece);
    if (known !== undefined) return known;
    // A prefix of a run held (a cut or a chunk measuring prefixes of one long run) reads its counts; a piece
    // too long for the flat merge is counted as a run itself (the next probe of a search may extend it).
    let counted = this.#runs.length > 0 ? this.#runCount(piece, limit, false) : -1;
    if (counted < 0 && piece.length * 3 > FLAT_MAX && utf8Length(piece) > FLAT_MAX) counted = this.#runCount(piece, limit, true);
    if (counted > limit) return counted;
    return this.#long.set(piece, counted >= 0 ? counted : this.#bytePairCount(piece));
  }

  #bytePairCount(piece: string): number {
    if (this.#bytes.length < piece.length * 3) this.#bytes = new Uint8Array(piece.length * 3);
    const length = this.#encode(piece, this.#bytes);
    return this.#table.rank(this.#bytes, 0, length) >= 0 ? 1 : bytePairCount(this.#bytes, length, this.#table);
  }

  /** UTF-8 of `text` into `bytes` (at least 3 bytes per character), as js-tiktoken encodes it; returns the length. */
  #encode(text: string, bytes: Uint8Array): number {
    const length = text.length;
    for (let i = 0; i < length; i += 1) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return this.#encoder.encodeInto(text, bytes).written;
      bytes[i] = code;
    }
    return length;
  }

  /**
   * `countUpTo` of one long piece (see `#run`); without `hold`, -1 when no run held starts with the piece.
   */
  #runCount(piece: string, limit: number, hold: boolean): number {
    if (limit < 1) return 1;
    const run = this.#run(piece, hold);
    return run === null ? -1 : this.#prefixCount(run.counts, run.bytes, limit);
  }

  /**
   * The prefix counts that hold `piece`. A piece that starts a run held (a shorter prefix of it: a cut
   * measuring prefixes of one text) reads that run's counts; one that extends a run carries its counts on;
   * otherwise (with `hold`) a new run is held, or, past RUN_CACHE_BYTES, counted in constant memory and not
   * held. A piece ending in a high surrogate is counted apart: alone it is U+FFFD, in a longer text half of
   * a pair, so its bytes are not a prefix of the longer text's.
   */
  #run(piece: string, hold: boolean): { counts: PrefixCounts; bytes: number } | null {
    const pieceLength = piece.length;
    const open = isHighSurrogate(piece.charCodeAt(pieceLength - 1));
    for (let r = 0; r < this.#runs.length && !open; r += 1) {
      const run = this.#runs[r]!;
      let bytes: number;
      if (run.text.length >= pieceLength && run.text.startsWith(piece)) {
        bytes = utf8Length(piece);
      } else if (
        pieceLength > run.text.length &&
        piece.startsWith(run.text) &&
        !isHighSurrogate(run.text.charCodeAt(run.text.length - 1))
      ) {
        const buffer = new Uint8Array(pieceLength * 3);
        bytes = this.#encode(piece, buffer);
        if (bytes > RUN_CACHE_BYTES) break;
        run.counts.grow(buffer, bytes);
        run.text = piece;
      } else continue;
      if (r > 0) this.#runs = [run, ...this.#runs.filter((other) => other !== run)];
      return { counts: run.counts, bytes };
    }
    if (!hold) return null;
    const buffer = new Uint8Array(pieceLength * 3);
    const bytes = this.#encode(piece, buffer);
    if (open || bytes > RUN_CACHE_BYTES) return { counts: new PrefixCounts(this.#table, buffer, bytes, RING), bytes };
    const counts = new PrefixCounts(this.#table, buffer, bytes, EVERY);
    this.#runs = [{ text: piece, counts }, ...this.#runs];
    let held = 0;
    this.#runs = this.#runs.filter((run, index) => {
      held += run.counts.length;
      return index < RUN_CACHE_ENTRIES && held <= RUN_CACHE_BYTES;
    });
    return { counts, bytes };
  }

  /**
   * A length k such that every text that starts as `text` does from `start` and runs k characters or more
   * has more than `limit` tokens; Infinity when none was found. For a long run without spaces, found without
   * reading the run to its end: the piece at `start` is matched in the next k characters, for k = 256, 512,
   * ...; when the match takes all k, the piece in any text that runs on is at least k - 1 characters long
   * (a property test checks this of both patterns) and starts with those, so once the prefix counts of
   * those show that every longer piece has more than `limit` tokens, so has the text.
   */
  runLimit(text: string, start: number, limit: number): number {
    const maxTokenBytes = this.#table.maxTokenBytes;
    for (let k = RUN_HEAD_CHARS; start + k <= text.length; k *= 2) {
      const head = text.slice(start, start + k);
      if (this.#pieceEnd(head, 0) !== k) return Infinity;
      // Its first k - 1 characters, or k - 2 when that would end in half of a pair.
      const known = isHighSurrogate(head.charCodeAt(k - 2)) ? k - 2 : k - 1;
      if (known > limit * maxTokenBytes) return k;
      const run = this.#run(head.slice(0, known), true)!;
      if (run.bytes > run.counts.done) run.counts.extend(run.bytes, limit);
      // Proven past the first q bytes, q under the head's: then also from a shorter head just past them,
      // if it too is matched whole (most often it is).
      const q = run.counts.firstProof(limit, run.bytes - 1);
      if (q >= 0) {
        const past = charsPast(head, q) + 1;
        if (past < k && this.#pieceEnd(head.slice(0, past), 0) === past && !isHighSurrogate(head.charCodeAt(past - 2))) return past;
        return k;
      }
    }
    return Infinity;
  }

  /** The count of the first `bytes` bytes, or (when it passes `limit`) a bound above `limit`. */
  #prefixCount(counts: PrefixCounts, bytes: number, limit: number): number {
    if (bytes > counts.done) counts.extend(bytes, limit);
    return bytes <= counts.done ? counts.at(bytes) : counts.floor();
  }
}

/** The fewest characters from the start of `text` whose UTF-8 takes more than `bytes` bytes (as `utf8Length` counts). */
function charsPast(text: string, bytes: number): number {
  let taken = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) taken += 1;
    else if (code < 0x800) taken += 2;
    else if (isHighSurrogate(code) && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      taken += 4;
      i += 1;
    } else taken += 3;
    if (taken > bytes) return i + 1;
  }
  return text.length;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Bytes of `text` in UTF-8, lone surrogates as U+FFFD (3 bytes), as TextEncoder writes it. */
function utf8Length(text: string): number {
  let bytes = 0;
  const length = text.length;
  for (let i = 0; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (isHighSurrogate(code) && i + 1 < length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * `tokenizer.count(text)` when that is at most `limit`, otherwise some number above `limit`. The shipped
 * tokenizers stop counting once the count passes `limit`, so a budget check costs what the budget holds
 * rather than what the text holds; other tokenizers count the whole text.
 */
export function countUpTo(tokenizer: Tokenizer, text: string, limit: number): number {
  return tokenizer instanceof TiktokenTokenizer ? tokenizer.countUpTo(text, limit) : tokenizer.count(text);
}

/**
 * A length k such that every text that starts as `text` does from `start` and has k or more characters has
 * more than `limit` tokens (under a shipped tokenizer: a long run without spaces is bounded from its first
 * characters); Infinity when none is known.
 */
export function runLimit(tokenizer: Tokenizer, text: string, start: number, limit: number): number {
  return tokenizer instanceof TiktokenTokenizer ? tokenizer.runLimit(text, start, limit) : Infinity;
}

/**
 * The most characters one token can span: a text with more than `limit` times this many characters has
 * more than `limit` tokens (a shipped encoding's longest token, in bytes, since every character takes at
 * least one byte). Infinity for tokenizers this package does not know.
 */
export function maxTokenChars(tokenizer: Tokenizer): number {
  return tokenizer instanceof TiktokenTokenizer ? tokenizer.maxTokenBytes : Infinity;
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
export function countBySegments(
  tokenizer: Tokenizer,
  text: string,
  memo: { get(segment: string): number | undefined; set(segment: string, count: number): unknown },
): number {
  if (!(tokenizer instanceof TiktokenTokenizer)) return tokenizer.count(text);
  let total = 0;
  for (const segment of countingSegments(text)) {
    let count = memo.get(segment);
    if (count === undefined) {
      count = tokenizer.count(segment);
      memo.set(ownString(segment), count);
    }
    total += count;
  }
  return total;
}

/**
 * `text` as a string of its own: a slice of a longer string keeps that whole string alive for as long as it is
 * held (V8 makes slices of 13 characters or more views into their parent), and a memo that outlives a pack must not
 * keep every context it was sliced from. Appending a character makes V8 write a new flat string; the slice of that
 * holds one character more than `text` and nothing else.
 */
function ownString(text: string): string {
  return `${text} `.slice(0, -1);
}

const WHITESPACE = /\s/u;

/**
 * True when, under both shipped patterns, `count(text.slice(s, e))` is `count(text.slice(s, at))` plus
 * `count(text.slice(at, e))` for every `s < at < e`: `at` falls between a character other than whitespace
 * and whitespace, and not between punctuation and a line break (which one piece takes together). No other
 * piece takes a character other than whitespace together with the whitespace after it, and none before
 * `at` looks past it. A property test checks the sum. Chunking grows a range word by word with it,
 * counting each word once instead of the whole range again.
 */
export function splitsAt(text: string, at: number): boolean {
  if (at <= 0 || at >= text.length) return false;
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  if (!WHITESPACE.test(text[at]!) || WHITESPACE.test(text[at - 1]!)) return false;
  // Punctuation (anything but a letter or digit; non-ASCII letters counted in, to stay on the safe side)
  // takes the line breaks after it.
  return !((after === 0x0a || after === 0x0d) && !isAsciiAlphanumeric(before));
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
  for (const path of [
    `../tokenize/ranks/${encoding}.ranks`,
    `./tokenize/ranks/${encoding}.ranks`,
    `../../tokenize/ranks/${encoding}.ranks`,
  ]) {
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
