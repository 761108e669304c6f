/**
 * Sentence boundaries with exact offsets, for sentence selection. Fixed rules and no locale data (the same
 * split on every machine, so packs stay byte-identical): a sentence ends after terminal punctuation
 * (optionally followed by closing quotes or brackets) that is followed by whitespace, or at a line break.
 *
 * Written here rather than taken from a segmenter package because the offsets must be exact code-unit
 * offsets into the original text and the result must not depend on the runtime's ICU data
 * (`Intl.Segmenter` does).
 */

/** A sentence as `[start, end)` code-unit offsets into the text; never empty, never starting or ending in whitespace. */
export interface SentenceRange {
  start: number;
  end: number;
}

// Candidate ends: terminal punctuation plus closing quotes/brackets, when whitespace follows; or a line break.
const END = /[.!?…。！？]["'”’)\]]*(?=\s)|\n/gu;
// Words whose trailing period is usually not a sentence end (lower-cased, without the period). Words that
// as often end a sentence ("Inc.", "etc.") are left out.
const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'ft',
  'no',
  'nos',
  'vs',
  'al',
  'cf',
  'ca',
  'approx',
  'fig',
  'figs',
  'eq',
  'vol',
  'ed',
  'eds',
  'rev',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'gov',
  'sen',
  'rep',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'dept',
  'univ',
]);
const WHITESPACE = /\s/u;
const LOWERCASE_START = /^\s+[\p{Ll}]/u;

/** The word that ends just before `dot` (letters, digits and inner periods), lower-cased. */
function wordBefore(text: string, dot: number): string {
  let start = dot;
  while (start > 0 && /[\p{L}\p{N}.]/u.test(text[start - 1] as string)) start -= 1;
  return text.slice(start, dot).toLowerCase();
}

/**
 * True when the period at `dot` most likely ends an abbreviation or an initial rather than a sentence:
 * a known abbreviation ("Dr."), a single letter ("J. Smith"), a dotted acronym ("U.S."), or any period
 * followed by a lower-case word ("approx. five").
 */
function isAbbreviation(text: string, dot: number, after: number): boolean {
  if (LOWERCASE_START.test(text.slice(after, after + 3))) return true;
  const word = wordBefore(text, dot);
  if (word === '') return false;
  if (ABBREVIATIONS.has(word)) return true;
  if (/^\p{L}$/u.test(word)) return true;
  return /^(?:\p{L}\.)+\p{L}$/u.test(word);
}

/** Trims whitespace off both ends of `[start, end)`; null when nothing is left. */
function trimmed(text: string, start: number, end: number): SentenceRange | null {
  let s = start;
  let e = end;
  while (s < e && WHITESPACE.test(text[s] as string)) s += 1;
  while (e > s && WHITESPACE.test(text[e - 1] as string)) e -= 1;
  return e > s ? { start: s, end: e } : null;
}

/**
 * Splits `text` into sentences, in order, as exact ranges: `text.slice(start, end)` is the sentence,
 * without surrounding whitespace. Text with no boundary is one sentence; blank text gives none.
 */
export function splitSentences(text: string): SentenceRange[] {
  const out: SentenceRange[] = [];
  let from = 0;
  END.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = END.exec(text)) !== null) {
    const token = match[0];
    let end: number;
    if (token === '\n') {
      end = match.index;
    } else {
      end = match.index + token.length;
      if (token[0] === '.' && isAbbreviation(text, match.index, end)) continue;
    }
    const range = trimmed(text, from, end);
    if (range !== null) out.push(range);
    from = token === '\n' ? end + 1 : end;
  }
  const last = trimmed(text, from, text.length);
  if (last !== null) out.push(last);
  return out;
}
