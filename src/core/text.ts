import { isAsciiAlphanumeric } from '../tokenize/short-keys.js';

// eslint-disable-next-line no-control-regex -- the whole ASCII range, NUL included, on purpose
const ASCII = /^[\x00-\x7f]*$/;

/** Normalised form used for exact-duplicate detection: NFKC, lower case, whitespace collapsed. */
export function normalizeText(text: string): string {
  // NFKC changes no ASCII character, so pure-ASCII text skips it; text whose only whitespace is single
  // spaces has nothing to collapse.
  const composed = ASCII.test(text) ? text : text.normalize('NFKC');
  const lower = composed.toLowerCase();
  return (COLLAPSIBLE.test(lower) ? lower.replace(/\s+/gu, ' ') : lower).trim();
}

/** Whitespace that collapsing changes: a run of two, or any whitespace character other than a space. */
const COLLAPSIBLE = /\s\s|[^\S ]/u;

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Word shingles of width `size` as 32-bit FNV-1a hashes (a set, sorted ascending).
 * Texts shorter than `size` words give one shingle of all their words, so short texts still compare.
 */
export function shingleHashes(normalised: string, size: number): Uint32Array {
  const bounds = wordBounds(normalised);
  const words = bounds.length / 2;
  if (words === 0) return new Uint32Array(0);
  const count = Math.max(1, words - size + 1);
  const hashes = new Uint32Array(count);
  for (let i = 0; i < count; i += 1) {
    let hash = 0x811c9dc5;
    const end = Math.min(words, i + size);
    for (let w = i; w < end; w += 1) {
      const to = bounds[2 * w + 1]!;
      for (let c = bounds[2 * w]!; c < to; c += 1) {
        hash ^= normalised.charCodeAt(c);
        hash = Math.imul(hash, 0x01000193);
      }
      hash ^= 0x20; // word separator
      hash = Math.imul(hash, 0x01000193);
    }
    hashes[i] = hash >>> 0;
  }
  hashes.sort();
  let unique = 0;
  for (let i = 0; i < count; i += 1) if (i === 0 || hashes[i] !== hashes[unique - 1]) hashes[unique++] = hashes[i]!;
  return unique === count ? hashes : hashes.slice(0, unique);
}

/** 1 for ASCII letters and digits (the ASCII members of [\p{L}\p{N}]). */
const ASCII_WORD = new Uint8Array(128).map((_, c) => (isAsciiAlphanumeric(c) ? 1 : 0));

/** Start and end offsets of the words ([\p{L}\p{N}]+ runs) of `text`, flattened. */
function wordBounds(text: string): Int32Array | number[] {
  if (!ASCII.test(text)) {
    const bounds: number[] = [];
    for (const match of text.matchAll(WORD)) bounds.push(match.index, match.index + match[0].length);
    return bounds;
  }
  // ASCII: found by character code, without a regular expression or a string per word.
  const bounds = new Int32Array(text.length + 1);
  let n = 0;
  let i = 0;
  while (i < text.length) {
    while (i < text.length && ASCII_WORD[text.charCodeAt(i)] === 0) i += 1;
    if (i === text.length) break;
    bounds[n++] = i;
    while (i < text.length && ASCII_WORD[text.charCodeAt(i)] === 1) i += 1;
    bounds[n++] = i;
  }
  return bounds.subarray(0, n);
}

/** Number of hashes two sorted hash sets share. */
export function sharedCount(a: Uint32Array, b: Uint32Array): number {
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      shared += 1;
      i += 1;
      j += 1;
    } else if (x < y) i += 1;
    else j += 1;
  }
  return shared;
}

// A sentence ends after terminal punctuation (optionally followed by closing quotes or brackets) that is
// followed by whitespace, or at a line break. Fixed rules, no locale data: the cut must be the same on
// every machine.
const SENTENCE_END = /[.!?…。！？](?:["'”’)\]]*)(?=\s)|\n/gu;
const WORD_END = /\S(?=\s)/gu;

/**
 * Offsets (exclusive ends) where `text` may be cut, ascending: sentence ends, or, when `unit` is `word`,
 * word ends. Prefixes cut there are trimmed of trailing whitespace by the caller.
 */
export function cutPoints(text: string, unit: 'sentence' | 'word'): number[] {
  const pattern = unit === 'sentence' ? SENTENCE_END : WORD_END;
  const points: number[] = [];
  // A prefix holds more than whitespace once it reaches past the first other character (found once, rather
  // than trimming every prefix: that reads the leading whitespace again for every point).
  const firstVisible = text.search(/\S/u);
  if (firstVisible < 0) return points;
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    const end = unit === 'sentence' && match[0] === '\n' ? match.index : match.index + match[0].length;
    // Matches come in order and their ends never go down, so a repeat is the last point.
    if (end > firstVisible && end !== points[points.length - 1]) points.push(end);
  }
  return points;
}

/**
 * Code-point-safe cut points for text with no whitespace at all (e.g. CJK runs), every `step` code units:
 * how many there are, and the one at an index (computed when asked, not listed: a long run has as many as
 * it has characters).
 */
export function characterCutPoints(text: string, step: number): [count: number, pointAt: (index: number) => number] {
  const count = Math.max(0, Math.ceil((text.length - step) / step));
  const pointAt = (index: number) => {
    const i = (index + 1) * step;
    // never split a surrogate pair
    const code = text.charCodeAt(i - 1);
    return code >= 0xd800 && code <= 0xdbff ? i + 1 : i;
  };
  return [count, pointAt];
}
