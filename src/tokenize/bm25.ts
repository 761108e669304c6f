/**
 * BM25 sparse encoding that reproduces fastembed's `Qdrant/bm25` model (`fastembed/sparse/bm25.py`), so vectors
 * written from Python and from TypeScript share indices and values:
 *
 * 1. every non-word character becomes a space (`remove_non_alphanumeric`), the text is lowercased, and tokens are
 *    the runs of word characters (`SimpleTokenizer`); "word" is Python's `\w` on `str`: letters, numbers and `_`;
 * 2. a token is dropped when it is `_` (fastembed's punctuation set holds single characters of category P, and `_`
 *    is the only one a word run can be), an NLTK English stopword, or longer than 40 code points;
 * 3. what is left is stemmed with Snowball English (Porter2);
 * 4. index = `abs(murmur3_32(utf8(stem), seed 0))`, the hash read as a signed 32-bit integer;
 * 5. document weight `tf·(k+1) / (tf + k·(1 − b + b·|d|/avg_len))`, where |d| counts the stems kept in step 3;
 *    query weight 1 per distinct index. IDF is applied by the engine (`modifier: "idf"`).
 *
 * Qdrant's own server-side BM25 (`Document` with model `qdrant/bm25`) tokenizes differently (it splits on `_` and
 * keeps tokens over 40 characters), so it is not what this matches.
 */
import { stem } from 'porter2';

import { LitmPackError } from '../base/errors.js';
import { SHORT_KEY_LENGTH, ShortKeyTable, isAsciiAlphanumeric, packedShift } from './short-keys.js';
import { ENGLISH_STOPWORDS } from './stopwords.js';

/** A sparse vector as Qdrant stores it: parallel arrays, indices ascending and unique. */
export interface SparseVector {
  indices: number[];
  values: number[];
}

export interface Bm25Options {
  /** Term-frequency saturation. Default 1.2. */
  k?: number;
  /** Document-length normalisation, 0 (none) to 1 (full). Default 0.75. */
  b?: number;
  /** Average document length in tokens the weights are normalised against. Default 256. */
  avgLen?: number;
}

const DEFAULT_K = 1.2;
const DEFAULT_B = 0.75;
const DEFAULT_AVG_LEN = 256;
const TOKEN_MAX_LENGTH = 40;

const STOPWORDS: ReadonlySet<string> = new Set(ENGLISH_STOPWORDS);

// Python's `\w` on str is `str.isalnum()` (categories L* and N*, i.e. Lu Ll Lt Lm Lo Nd Nl No) plus `_`.
// Combining marks (Mn, Mc) are not word characters there, so `é` written as `e` + U+0301 splits after the `e`.
// Up to the Unicode version of the Python that wrote the vectors (14.0 for 3.11, 15.0 for 3.12, 15.1 for 3.13) this
// class matches `\w` exactly; characters added to Unicode later are word characters here and separators there.
const NON_WORD = /[^\p{L}\p{N}_]/gu;
const WORD_RUN = /[\p{L}\p{N}_]+/gu;
const HAS_SURROGATE = /[\uD800-\uDFFF]/;
/** 1 for the ASCII characters that are not word characters ([A-Za-z0-9_]): they always separate tokens. */
const SEPARATOR = new Uint8Array(128).map((_, c) => (isAsciiAlphanumeric(c) || c === 95 ? 0 : 1));

/**
 * Lowercase stems of `text` in order, exactly as fastembed's `Qdrant/bm25` produces them (stopwords, `_` and tokens
 * over 40 code points removed). Repeated words repeat.
 */
export function tokenizeBm25(text: string): string[] {
  const stems: string[] = [];
  forEachTerm(text, (term) => stems.push(terms[term]!.stem));
  return stems;
}

/**
 * Document vector: BM25 term-frequency weights per stem (`k`, `b`, `avgLen` as fastembed's `Bm25`), indices
 * ascending and unique. An empty or stopword-only text gives an empty vector.
 */
export function encodeBm25Document(text: string, options: Bm25Options = {}): SparseVector {
  const k = checkedOption(options.k, DEFAULT_K, 'k', (v) => v >= 0);
  const b = checkedOption(options.b, DEFAULT_B, 'b', (v) => v >= 0 && v <= 1);
  const avgLen = checkedOption(options.avgLen, DEFAULT_AVG_LEN, 'avgLen', (v) => v > 0);

  // Term frequencies per stem, stems in order of first occurrence.
  const order: number[] = [];
  let docLen = 0;
  forEachTerm(text, (term) => {
    docLen += 1;
    if (term >= frequencies.length) frequencies = grown(frequencies, term);
    if (frequencies[term] === 0) order.push(term);
    frequencies[term] = frequencies[term]! + 1;
  });

  // Same operation order as fastembed, so the float64 results are identical, not merely close.
  const norm = k * (1 - b + (b * docLen) / avgLen);
  const n = order.length;
  const ids = new Array<number>(n);
  const weights = new Array<number>(n);
  const places = new Array<number>(n);
  for (let i = 0; i < n; i += 1) {
    const term = order[i]!;
    const tf = frequencies[term]!;
    frequencies[term] = 0;
    ids[i] = terms[term]!.index;
    weights[i] = (tf * (k + 1)) / (tf + norm);
    places[i] = i;
  }
  // Indices ascending. Two stems with the same id: fastembed's dict keeps the weight of the stem seen last
  // (counts are per stem, never summed); the sort is stable, so of equal ids the last in first-occurrence order
  // is the one kept. (Written without a Map: one per chunk was a tenth of encoding.)
  places.sort((x, y) => ids[x]! - ids[y]!);
  const indices: number[] = [];
  const values: number[] = [];
  for (let p = 0; p < n; p += 1) {
    const at = places[p]!;
    const id = ids[at]!;
    if (indices.length > 0 && indices[indices.length - 1] === id) values[values.length - 1] = weights[at]!;
    else {
      indices.push(id);
      values.push(weights[at]!);
    }
  }
  return { indices, values };
}

/** Query vector: weight 1.0 for each distinct stem id, indices ascending. */
export function encodeBm25Query(text: string): SparseVector {
  const weights = new Map<number, number>();
  forEachTerm(text, (term) => weights.set(terms[term]!.index, 1));
  return sortedVector(weights);
}

/** `abs(murmur3_32(utf8(token), seed 0))` with the hash read as signed 32-bit (Python's `abs(mmh3.hash(token))`). */
export function bm25TokenId(token: string): number {
  return Math.abs(murmur3x86_32(utf8(token), 0) | 0);
}

function sortedVector(weights: Map<number, number>): SparseVector {
  const indices = [...weights.keys()].sort((x, y) => x - y);
  return { indices, values: indices.map((i) => weights.get(i) as number) };
}

// ---------------------------------------------------------------------------------------------
// Terms. Stemming and hashing every token costs more than the rest of encoding, and words repeat, so each
// distinct stem becomes a numbered term once per process, and each short ASCII token is looked up in a
// table keyed by its packed characters (no string is made for a token seen before).

interface Term {
  readonly stem: string;
  /** The sparse index, `bm25TokenId(stem)`. */
  readonly index: number;
}

const TERM_LIMIT = 200_000;
const DROPPED = 2 ** 26 - 1;
let terms: Term[] = [];
let termsByStem = new Map<string, number>();
/** Lower-cased ASCII tokens of up to 12 characters → term number, or DROPPED (stopword, `_`). */
const asciiTokens = new ShortKeyTable(TERM_LIMIT);
/** Tokens from segments with characters beyond ASCII → term number, or DROPPED. */
const otherTokens = new Map<string, number>();
/**
 * Lower-cased ASCII tokens longer than the short keys → term number, or DROPPED: without it every occurrence of a
 * long word (common in technical text) is stemmed again, which costs several times the lookup.
 */
const longAsciiTokens = new Map<string, number>();
/** Per-document term frequencies by term number; entries are reset to 0 after each document. */
let frequencies: Int32Array = new Int32Array(4096);

function grown(array: Int32Array, index: number): Int32Array {
  let length = array.length * 2;
  while (length <= index) length *= 2;
  const out = new Int32Array(length);
  out.set(array);
  return out;
}

/**
 * Calls `visit` with the term number of every kept token of `text`, in order.
 *
 * The text is read in segments: maximal runs of characters that are ASCII word characters ([A-Za-z0-9_]) or
 * not ASCII at all, separated by ASCII non-word characters (which fastembed turns into spaces). A segment of
 * ASCII alone is one token, lower-cased by character code. A segment holding other characters is tokenised
 * as fastembed does (below), on its own: that gives the same tokens as on the whole text, because the only
 * context-dependent lower-casing (final sigma) treats a space and the end of the text alike.
 */
function forEachTerm(text: string, visit: (term: number) => void): void {
  // Forgetting happens between texts only, so numbers stay valid while one text is read.
  if (terms.length >= TERM_LIMIT) {
    terms = [];
    termsByStem = new Map();
    asciiTokens.clear();
    otherTokens.clear();
    longAsciiTokens.clear();
  }
  const length = text.length;
  let i = 0;
  while (i < length) {
    while (i < length && SEPARATOR[text.charCodeAt(i)] === 1) i += 1;
    const start = i;
    let a = 0;
    let b = 0;
    let c = 0;
    let ascii = true;
    for (; i < length; i += 1) {
      let code = text.charCodeAt(i);
      if (code >= 128) {
        ascii = false;
        continue;
      }
      if (SEPARATOR[code] === 1) break;
      if (code <= 90 && code >= 65) code += 32;
      const at = i - start;
      if (at < 4) a |= code << packedShift(at);
      else if (at < 8) b |= code << packedShift(at);
      else if (at < SHORT_KEY_LENGTH) c |= code << packedShift(at);
    }
    const size = i - start;
    if (size === 0) return;
    if (!ascii) {
      forEachOtherTerm(text.slice(start, i), visit);
      continue;
    }
    let term: number;
    if (size <= SHORT_KEY_LENGTH) {
      term = asciiTokens.get(a, b, c, size);
      if (term < 0) {
        term = termOfToken(text.slice(start, i).toLowerCase(), true);
        asciiTokens.set(a, b, c, size, term);
      }
    } else {
      const token = text.slice(start, i).toLowerCase();
      const known = longAsciiTokens.get(token);
      if (known === undefined) {
        term = termOfToken(token, true);
        if (longAsciiTokens.size >= TERM_LIMIT) longAsciiTokens.clear();
        longAsciiTokens.set(token, term);
      } else {
        term = known;
      }
    }
    if (term !== DROPPED) visit(term);
  }
}

/**
 * fastembed replaces non-word characters before lowercasing and splits again after. Both steps matter: a final
 * sigma depends on its neighbours (`ΑΣ.Β` lowercases to `ασ.β`, `ΑΣ Β` to `ας β`), and lowercasing can turn a word
 * character into a letter plus a combining mark (`İ` → `i̇`), which then separates tokens.
 */
function forEachOtherTerm(segment: string, visit: (term: number) => void): void {
  const lowered = segment.replace(NON_WORD, ' ').toLowerCase();
  for (const match of lowered.matchAll(WORD_RUN)) {
    const token = match[0];
    let term = otherTokens.get(token);
    if (term === undefined) {
      term = termOfToken(token, false);
      if (otherTokens.size >= TERM_LIMIT) otherTokens.clear();
      otherTokens.set(token, term);
    }
    if (term !== DROPPED) visit(term);
  }
}

/** The term number of a lower-cased token, or DROPPED. */
function termOfToken(token: string, ascii: boolean): number {
  if (token === '_' || STOPWORDS.has(token)) return DROPPED;
  if (token.length > TOKEN_MAX_LENGTH && (ascii || codePointLength(token) > TOKEN_MAX_LENGTH)) return DROPPED;
  const stemmed = ascii ? stem(token) : stemToken(token);
  if (stemmed === '') return DROPPED;
  let term = termsByStem.get(stemmed);
  if (term === undefined) {
    term = terms.length;
    terms.push({ stem: stemmed, index: bm25TokenId(stemmed) });
    termsByStem.set(stemmed, term);
  }
  return term;
}

function checkedOption(value: number | undefined, fallback: number, name: string, ok: (v: number) => boolean): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || !ok(value)) {
    throw new LitmPackError('invalid_input', `Invalid BM25 option ${name}: ${String(value)}`, {
      details: { option: name, value },
    });
  }
  return value;
}

function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Snowball English on a lowercase token. The Python stemmer (rust-stemmers) counts characters as code points,
 * `porter2` as UTF-16 units, which differs for letters outside the BMP (`𝐛y` stays `𝐛y` in Python; `porter2`
 * would make it `𝐛i`). Such letters are swapped for private-use characters, which the stemmer treats as the same
 * kind of non-vowel and which never occur in tokens (category Co is not a word character), then swapped back.
 */
function stemToken(token: string): string {
  return HAS_SURROGATE.test(token) ? stemAstral(token) : stem(token);
}

function stemAstral(token: string): string {
  const astral: string[] = [];
  let bmp = '';
  for (const ch of token) {
    if (ch.length === 2) {
      let slot = astral.indexOf(ch);
      if (slot < 0) slot = astral.push(ch) - 1;
      bmp += String.fromCharCode(0xe000 + slot);
    } else {
      bmp += ch;
    }
  }
  let out = '';
  for (const ch of stem(bmp)) {
    const c = ch.charCodeAt(0);
    out += c >= 0xe000 && c < 0xe000 + astral.length ? (astral[c - 0xe000] as string) : ch;
  }
  return out;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(256);

function utf8(s: string): Uint8Array {
  // Tokens are at most 40 code points (160 bytes); longer strings get a bigger buffer.
  if (s.length * 3 > scratch.length) scratch = new Uint8Array(s.length * 3);
  // ASCII (nearly every stem) is copied by code; the encoder call costs more than the copy.
  for (let i = 0; i < s.length; i += 1) {
    const code = s.charCodeAt(i);
    if (code >= 0x80) return scratch.subarray(0, encoder.encodeInto(s, scratch).written);
    scratch[i] = code;
  }
  return scratch.subarray(0, s.length);
}

/** MurmurHash3 x86 32-bit over bytes (Austin Appleby's reference algorithm), as unsigned 32-bit. */
function murmur3x86_32(bytes: Uint8Array, seed: number): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const len = bytes.length;
  const blocks = len & ~3;
  let h = seed | 0;
  for (let i = 0; i < blocks; i += 4) {
    let k1 = (bytes[i] as number) | ((bytes[i + 1] as number) << 8) | ((bytes[i + 2] as number) << 16) | ((bytes[i + 3] as number) << 24);
    k1 = Math.imul(k1, c1);
    k1 = (k1 << 15) | (k1 >>> 17);
    k1 = Math.imul(k1, c2);
    h ^= k1;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k1 = 0;
  switch (len & 3) {
    case 3:
      k1 ^= (bytes[blocks + 2] as number) << 16;
    // falls through
    case 2:
      k1 ^= (bytes[blocks + 1] as number) << 8;
    // falls through
    case 1:
      k1 ^= bytes[blocks] as number;
      k1 = Math.imul(k1, c1);
      k1 = (k1 << 15) | (k1 >>> 17);
      k1 = Math.imul(k1, c2);
      h ^= k1;
  }
  h ^= len;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
