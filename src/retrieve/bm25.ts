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

import { LitmPackError } from '../core/errors.js';
import { ENGLISH_STOPWORDS } from './stopwords.js';
import type { SparseVector } from './types.js';

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
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_WORD_RUN = /[a-z0-9_]+/g;

/**
 * Lowercase stems of `text` in order, exactly as fastembed's `Qdrant/bm25` produces them (stopwords, `_` and tokens
 * over 40 code points removed). Repeated words repeat.
 */
export function tokenizeBm25(text: string): string[] {
  const stems: string[] = [];
  if (ASCII_ONLY.test(text)) {
    // Fast path, same result: in ASCII, word characters are [A-Za-z0-9_] and lowercasing is per character.
    for (const match of text.toLowerCase().matchAll(ASCII_WORD_RUN)) pushStem(stems, match[0]);
    return stems;
  }
  // fastembed replaces non-word characters before lowercasing and splits again after. Both steps matter: a
  // final sigma depends on its neighbours (`ΑΣ.Β` lowercases to `ασ.β`, `ΑΣ Β` to `ας β`), and lowercasing can
  // turn a word character into a letter plus a combining mark (`İ` → `i̇`), which then separates tokens.
  const lowered = text.replace(NON_WORD, ' ').toLowerCase();
  for (const match of lowered.matchAll(WORD_RUN)) pushStem(stems, match[0]);
  return stems;
}

function pushStem(stems: string[], token: string): void {
  if (token === '_' || STOPWORDS.has(token)) return;
  if (token.length > TOKEN_MAX_LENGTH && codePointLength(token) > TOKEN_MAX_LENGTH) return;
  const stemmed = stemToken(token);
  if (stemmed !== '') stems.push(stemmed);
}

/**
 * Document vector: BM25 term-frequency weights per stem (`k`, `b`, `avgLen` as fastembed's `Bm25`), indices
 * ascending and unique. An empty or stopword-only text gives an empty vector.
 */
export function encodeBm25Document(text: string, options: Bm25Options = {}): SparseVector {
  const k = checkedOption(options.k, DEFAULT_K, 'k', (v) => v >= 0);
  const b = checkedOption(options.b, DEFAULT_B, 'b', (v) => v >= 0 && v <= 1);
  const avgLen = checkedOption(options.avgLen, DEFAULT_AVG_LEN, 'avgLen', (v) => v > 0);

  const stems = tokenizeBm25(text);
  const counts = new Map<string, number>();
  for (const s of stems) counts.set(s, (counts.get(s) ?? 0) + 1);

  // Same operation order as fastembed, so the float64 results are identical, not merely close.
  const docLen = stems.length;
  const norm = k * (1 - b + (b * docLen) / avgLen);
  const weights = new Map<number, number>();
  for (const [s, tf] of counts) {
    // Two stems with the same id: fastembed's dict keeps the weight of the stem seen last (counts are per stem,
    // never summed). Map.set in first-occurrence order reproduces that.
    weights.set(bm25TokenId(s), (tf * (k + 1)) / (tf + norm));
  }
  return sortedVector(weights);
}

/** Query vector: weight 1.0 for each distinct stem id, indices ascending. */
export function encodeBm25Query(text: string): SparseVector {
  const weights = new Map<number, number>();
  for (const s of tokenizeBm25(text)) weights.set(bm25TokenId(s), 1);
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
  const { written } = encoder.encodeInto(s, scratch);
  return scratch.subarray(0, written);
}

/** MurmurHash3 x86 32-bit over bytes (Austin Appleby's reference algorithm), as unsigned 32-bit. */
function murmur3x86_32(bytes: Uint8Array, seed: number): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const len = bytes.length;
  const blocks = len & ~3;
  let h = seed | 0;
  for (let i = 0; i < blocks; i += 4) {
    let k1 =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
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
