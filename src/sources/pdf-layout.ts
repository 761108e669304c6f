/**
 * What a PDF's page layout adds to its text and a reader does not read as text: running headers and footers
 * (lines repeated at the top or bottom of page after page, page numbers included) and words split across two lines
 * by a hyphen. Pure functions over the lines pdf.js gives (pdf.ts reads them), so they are tested without a PDF.
 *
 * Running lines: the two highest and the two lowest lines of each page (by baseline, whatever the order the PDF
 * draws them in) are compared across pages with their numbers made alike (`Chapter 4: Function reference 10` and
 * `… 11` read the same, and so do roman numerals), separately for the top and the bottom. A line is running when
 * it is there on at least 3 pages and on at least half the pages from its first to its last (a chapter's header
 * repeats only in its chapter; odd and even pages may carry different ones), unless it is most often the only
 * line of its page (then it is the text: a page of one line). Only documents of 3 or more pages.
 *
 * Hyphenation: a line that ends in a letter and a hyphen, followed in the same paragraph by a line that starts with
 * a lower-case letter, is a word cut in two (`manip-` / `ulation`) or a compound cut at its hyphen (`well-` /
 * `known`). The document decides (words are counted on every page, the two halves at line ends left out):
 *   1. a soft hyphen (U+00AD) is always joined away; before an upper-case letter (`non-` / `English`) the hyphen stays;
 *   2. else the form written more often elsewhere in the document wins (`manipulation` or `well-known`; a tie joins);
 *   3. else, seen in neither form, the hyphen stays when both halves are words of the document on their own
 *      (`read` and `only`: a compound), and is joined away otherwise (`manip`, `ulation`: a word cut by the typesetter).
 * Either way the two lines become one, so the word is whole and searchable.
 */

/** One line of a page as pdf.js gives it: its text, its baseline, and what separates it from the line before. */
export interface PageLine {
  text: string;
  /** The baseline of its first item (PDF units, from the bottom of the page). */
  y: number;
  /** A line break, or a blank line where the gap from the line before is wider than a line. */
  sep: '\n' | '\n\n';
}

/** Lines at each end of a page looked at for running headers and footers. */
const ZONE_LINES = 2;
/** Pages a line must be repeated on to be a running header or footer. */
const MIN_REPEATS = 3;

/** A roman numeral, lower case (`iv`, `xii`): bounded repeats, so no backtracking. */
const ROMAN = /^(?=[mdclxvi])m{0,4}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})$/u;

/** A line with its numbers made alike: what a running header is on every page. */
function runningKey(text: string): string {
  return text
    .toLowerCase()
    .split(/\s+/u)
    .filter((word) => word !== '')
    .map((word) => (ROMAN.test(word) ? '#' : word.replace(/\d+/gu, '#')))
    .join(' ');
}

/** The indices of a page's lines in its top and bottom zones (by baseline: PDFs draw headers in any order). */
function zonesOf(lines: readonly PageLine[]): { top: Set<number>; bottom: Set<number> } {
  const ys = [...new Set(lines.map((line) => line.y))].sort((a, b) => b - a);
  const topYs = new Set(ys.slice(0, ZONE_LINES));
  const bottomYs = new Set(ys.slice(-ZONE_LINES));
  const top = new Set<number>();
  const bottom = new Set<number>();
  lines.forEach((line, index) => {
    if (topYs.has(line.y)) top.add(index);
    if (bottomYs.has(line.y)) bottom.add(index);
  });
  return { top, bottom };
}

/**
 * The pages without their running headers and footers, and how many lines were dropped. A dropped line's
 * neighbours are kept apart as paragraphs.
 */
export function dropRunningLines(pages: readonly (readonly PageLine[])[]): { pages: PageLine[][]; dropped: number } {
  const copy = pages.map((lines) => lines.map((line) => ({ ...line })));
  if (pages.filter((lines) => lines.length > 0).length < MIN_REPEATS) return { pages: copy, dropped: 0 };
  const zones = pages.map(zonesOf);
  // Zone and key → the pages it is on (each page once, in page order).
  const seen = new Map<string, number[]>();
  const keyOf = (page: number, index: number, zone: 'top' | 'bottom') => {
    const text = pages[page]![index]!.text;
    // A line of punctuation alone (`}` at the foot of code) is not a header.
    return /[\p{L}\p{N}]/u.test(text) ? `${zone}\u0000${runningKey(text)}` : undefined;
  };
  pages.forEach((_, page) => {
    for (const zone of ['top', 'bottom'] as const) {
      for (const index of zones[page]![zone]) {
        const key = keyOf(page, index, zone);
        if (key === undefined) continue;
        const list = seen.get(key) ?? [];
        if (list.at(-1) !== page) list.push(page);
        seen.set(key, list);
      }
    }
  });
  const running = new Set<string>();
  for (const [key, list] of seen) {
    // A header sits above other text: a line that is most often all its page holds is the text (one line a page).
    const alone = list.filter((page) => pages[page]!.length === 1).length;
    if (list.length >= MIN_REPEATS && list.length * 2 >= list.at(-1)! - list[0]! + 1 && alone * 2 <= list.length) running.add(key);
  }
  let dropped = 0;
  const out = copy.map((lines, page) => {
    const kept: PageLine[] = [];
    let dropBefore = false;
    lines.forEach((line, index) => {
      const top = zones[page]!.top.has(index) ? keyOf(page, index, 'top') : undefined;
      const bottom = zones[page]!.bottom.has(index) ? keyOf(page, index, 'bottom') : undefined;
      if ((top !== undefined && running.has(top)) || (bottom !== undefined && running.has(bottom))) {
        dropped += 1;
        dropBefore = true;
        return;
      }
      kept.push(dropBefore && kept.length > 0 ? { ...line, sep: '\n\n' } : line);
      dropBefore = false;
    });
    return kept;
  });
  return { pages: out, dropped };
}

const isLetter = (char: string | undefined) => char !== undefined && /\p{L}/u.test(char);
const isLower = (char: string | undefined) => char !== undefined && /\p{Ll}/u.test(char);
const HYPHENS = new Set(['-', '\u2010', '\u00ad']);

/** The word a line ends with before its hyphen (`manip` of `the manip-`), or undefined when it ends otherwise. */
function endFragment(text: string): { word: string; hyphen: string } | undefined {
  const hyphen = text.at(-1);
  if (hyphen === undefined || !HYPHENS.has(hyphen)) return undefined;
  let start = text.length - 1;
  while (start > 0 && isLetter(text[start - 1])) start -= 1;
  return start < text.length - 1 ? { word: text.slice(start, -1), hyphen } : undefined;
}

/** The word a line starts with (`ulation` of `ulation of data`). */
function startFragment(text: string): string {
  let end = 0;
  while (end < text.length && isLetter(text[end])) end += 1;
  return text.slice(0, end);
}

/** Words and hyphenated compounds, lower case; a U+2010 hyphen counted as `-`. */
const WORDS = /\p{L}+(?:[-\u2010]\p{L}+)*/gu;

/** Whether the hyphen at a line break stays (a compound) or is joined away (a word cut in two). */
function keepsHyphen(left: string, right: string, hyphen: string, counts: ReadonlyMap<string, number>): boolean {
  if (hyphen === '\u00ad') return false;
  if (!isLower(right[0])) return true;
  const l = left.toLowerCase();
  const r = right.toLowerCase();
  const joined = counts.get(l + r) ?? 0;
  const hyphenated = counts.get(`${l}-${r}`) ?? 0;
  if (joined > 0 || hyphenated > 0) return hyphenated > joined;
  return (counts.get(l) ?? 0) > 0 && (counts.get(r) ?? 0) > 0;
}

/**
 * The pages with line-end hyphenation resolved (see the rule above), how many breaks were joined into one word
 * and how many kept their hyphen; soft hyphens inside lines (invisible) are removed.
 */
export function joinHyphenation(pages: readonly (readonly PageLine[])[]): { pages: PageLine[][]; joined: number; kept: number } {
  // Where a word is cut: the line's fragment at its end and the next line's at its start are not counted as words.
  const breaks = pages.map((lines) =>
    lines.map((line, index) => {
      const next = lines[index + 1];
      if (next === undefined || next.sep !== '\n') return undefined;
      const end = endFragment(line.text);
      if (end === undefined) return undefined;
      const start = startFragment(next.text);
      return start === '' ? undefined : { ...end, right: start };
    }),
  );
  const counts = new Map<string, number>();
  pages.forEach((lines, page) => {
    lines.forEach((line, index) => {
      const own = breaks[page]![index];
      const previous = index > 0 ? breaks[page]![index - 1] : undefined;
      const from = previous === undefined ? 0 : previous.right.length;
      const to = own === undefined ? line.text.length : line.text.length - own.word.length - 1;
      for (const [word] of line.text.slice(from, Math.max(from, to)).matchAll(WORDS)) {
        const key = word.toLowerCase().replace(/\u2010/gu, '-');
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    });
  });
  let joined = 0;
  let kept = 0;
  const out = pages.map((lines, page) => {
    const result: PageLine[] = [];
    // The line being built from lines that continue one another, as pieces joined once (a chain of cut lines
    // would otherwise copy the text built so far at every line).
    let first: PageLine | undefined;
    let pieces: string[] = [];
    lines.forEach((line, index) => {
      first ??= line;
      const cut = breaks[page]![index];
      if (cut === undefined) {
        pieces.push(line.text);
        result.push({ ...first, text: pieces.join('') });
        first = undefined;
        pieces = [];
        return;
      }
      const keep = keepsHyphen(cut.word, cut.right, cut.hyphen, counts);
      if (keep) kept += 1;
      else joined += 1;
      // The next line continues this one: the word is whole, the line break inside it gone.
      pieces.push(keep ? line.text : line.text.slice(0, -1));
    });
    if (first !== undefined) result.push({ ...first, text: pieces.join('') });
    return result.map((line) => (line.text.includes('\u00ad') ? { ...line, text: line.text.replaceAll('\u00ad', '') } : line));
  });
  return { pages: out, joined, kept };
}
