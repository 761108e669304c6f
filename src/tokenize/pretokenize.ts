/**
 * The pre-tokenising split of the two shipped encodings, written out for ASCII text.
 *
 * tiktoken first splits text with a regular expression, then byte-pair encodes each piece. On ASCII prose
 * that expression (Unicode property classes, alternation, lookahead) costs more than everything else in
 * counting, so each encoding's expression is reproduced here as a scanner over character classes. The
 * scanner answers only while every character it classifies is ASCII; at the first non-ASCII character it
 * would have to classify it returns -1 and the caller asks the expression for that piece. Each function
 * is applied only when the vocabulary's pattern is exactly the one it reproduces, and a property test
 * checks the splits against the expression.
 */

export const O200K_PATTERN =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
export const CL100K_PATTERN =
  "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** End of the piece starting at `start` (< text.length), or -1 when the expression must decide. */
export type PieceSplitter = (text: string, start: number) => number;

const END = 0; // past the end of the text: in no class
const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
const SPACE = 8; // JavaScript's \s among ASCII: \t \n \v \f \r and space
const NEWLINE = 16; // \r and \n (also SPACE)
const OTHER = 32; // neither letter, digit nor space
const NON_ASCII = 64;
const LETTER = UPPER | LOWER;

const CLASSES = new Uint8Array(128);
for (let c = 0; c < 128; c += 1) {
  if (c >= 65 && c <= 90) CLASSES[c] = UPPER;
  else if (c >= 97 && c <= 122) CLASSES[c] = LOWER;
  else if (c >= 48 && c <= 57) CLASSES[c] = DIGIT;
  else if (c === 10 || c === 13) CLASSES[c] = SPACE | NEWLINE;
  else if (c === 9 || c === 11 || c === 12 || c === 32) CLASSES[c] = SPACE;
  else CLASSES[c] = OTHER;
}

function classAt(text: string, i: number): number {
  if (i >= text.length) return END;
  const code = text.charCodeAt(i);
  return code < 128 ? CLASSES[code]! : NON_ASCII;
}

/** Length of the contraction (`'s`, `'re`, ... in either case, as listed in both patterns) at `i`, else 0. */
function contractionAt(text: string, i: number): number {
  if (text.charCodeAt(i) !== 39) return 0;
  const a = text.charCodeAt(i + 1) | 0x20; // ASCII letters to lower case; NaN past the end becomes 0x20
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return 2; // s t m d
  const b = text.charCodeAt(i + 2) | 0x20;
  if ((a === 0x72 || a === 0x76) && b === 0x65) return 3; // re ve
  if (a === 0x6c && b === 0x6c) return 3; // ll
  return 0;
}

/** End of the run of characters in `mask` from `i`, or -1 when a non-ASCII character ends it. */
function runEnd(text: string, i: number, mask: number): number {
  let end = i;
  for (;;) {
    const k = classAt(text, end);
    if (k === NON_ASCII) return -1;
    if ((k & mask) === 0) return end;
    end += 1;
  }
}

/** ` ?[^\s\p{L}\p{N}]+` then `[\r\n]*` (or `[\r\n/]*`) from `i`, the run of OTHER starting at `i`. */
function punctuationEnd(text: string, i: number, slash: boolean): number {
  let end = runEnd(text, i, OTHER);
  if (end < 0) return -1;
  for (;;) {
    const code = text.charCodeAt(end);
    if (code === 10 || code === 13 || (slash && code === 47)) end += 1;
    else return end;
  }
}

/** `\p{N}{1,3}` from a digit at `i`. */
function digitsEnd(text: string, i: number): number {
  let end = i + 1;
  while (end < i + 3) {
    const k = classAt(text, end);
    if (k === NON_ASCII) return -1;
    if ((k & DIGIT) === 0) break;
    end += 1;
  }
  return end;
}

/** `\s*[\r\n]+|\s+(?!\S)|\s+` from a space at `i`. */
function spacesEnd(text: string, i: number): number {
  const end = runEnd(text, i, SPACE);
  if (end < 0) return -1;
  // \s*[\r\n]+ : up to and including the run's last line break.
  for (let j = end - 1; j >= i; j -= 1) {
    const code = text.charCodeAt(j);
    if (code === 10 || code === 13) return j + 1;
  }
  // \s+(?!\S) : the whole run at the end of the text, else all but its last character; \s+ : one character.
  if (end === text.length || end - i === 1) return end;
  return end - 1;
}

/** cl100k_base: `'s|…|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`. */
export function splitCl100k(text: string, start: number): number {
  const k = classAt(text, start);
  if (k === NON_ASCII) return -1;
  const contraction = contractionAt(text, start);
  if (contraction > 0) return start + contraction;
  if (k & LETTER) return runEnd(text, start, LETTER);
  if ((k & (NEWLINE | DIGIT)) === 0) {
    const next = classAt(text, start + 1);
    if (next === NON_ASCII) return -1;
    if (next & LETTER) return runEnd(text, start + 1, LETTER);
  }
  if (k & DIGIT) return digitsEnd(text, start);
  return punctuationOrSpaces(text, start, k, false);
}

/**
 * o200k_base: `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+(contraction)?|[^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*(contraction)?`
 * then digits, punctuation (`[\r\n/]*` after it) and spaces as cl100k_base.
 */
export function splitO200k(text: string, start: number): number {
  const k = classAt(text, start);
  if (k === NON_ASCII) return -1;
  let word = -1;
  if (k & LETTER) word = start;
  else if ((k & (NEWLINE | DIGIT)) === 0) {
    const next = classAt(text, start + 1);
    if (next === NON_ASCII) return -1;
    if (next & LETTER) word = start + 1;
  }
  if (word >= 0) {
    // Upper-case run, then lower-case run: the first alternative needs a lower-case letter, the second
    // (reached only without one) an upper-case letter, which `word` starts with.
    const upperEnd = runEnd(text, word, UPPER);
    if (upperEnd < 0) return -1;
    const lowerEnd = runEnd(text, upperEnd, LOWER);
    if (lowerEnd < 0) return -1;
    return lowerEnd + contractionAt(text, lowerEnd);
  }
  if (k & DIGIT) return digitsEnd(text, start);
  return punctuationOrSpaces(text, start, k, true);
}

function punctuationOrSpaces(text: string, start: number, k: number, slash: boolean): number {
  if (text.charCodeAt(start) === 32) {
    const next = classAt(text, start + 1);
    if (next === NON_ASCII) return -1;
    if (next & OTHER) return punctuationEnd(text, start + 1, slash);
  }
  if (k & OTHER) return punctuationEnd(text, start, slash);
  return spacesEnd(text, start);
}

/** The scanner that reproduces `patStr` exactly, or null when it is not one of the two known patterns. */
export function splitterFor(patStr: string): PieceSplitter | null {
  if (patStr === O200K_PATTERN) return splitO200k;
  if (patStr === CL100K_PATTERN) return splitCl100k;
  return null;
}
