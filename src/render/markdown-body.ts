/**
 * Markdown item bodies that stay readable and still cannot forge the pack's structure.
 *
 * An item is its header line (`[n] Title (p. 3)`) and its body; the pack's own structure is those headers,
 * the briefing's `## Zone` headings and its caveats list. A body may hold markdown of its own (paragraphs, lists,
 * code) as long as nothing in it reads as the pack's structure or hides what follows:
 * - a balanced fenced code block at the start of a line stays a fenced block: CommonMark closes it only with a
 *   fence of the same character at least as long as its opener, so shorter fences inside are its content and
 *   nothing after it is swallowed (one that is not closed in the body, or not at the start of a line, is escaped);
 * - lines indented four columns after a blank line stay an indented code block;
 * - lists stay lists (`- Leave the bags…`, `1. Step`), but not an empty item, one whose content starts as
 *   indented code, or a marker before a heading, quote or fence (escaped there);
 * - escaped (a backslash, which CommonMark reads as the literal character): ATX headings (`# x`), block quotes,
 *   setext underlines, thematic breaks and table delimiter rows (which would turn the line before into a
 *   heading, a rule or a table header), fences that are not kept, a line that defines a link reference
 *   (`[x]: url`, which hides the line), and `<` and `&` that could open HTML or a reference (outside code);
 * - a `[n]` marker lookalike at a line start (`[2] …`, `\[2]`, `*[2]*`) gets a backslash before its bracket, and
 *   where it would open a paragraph (and read as a header when rendered) the blank lines before it become hard
 *   line breaks (continuing the paragraph before), or, after code, its first character is escaped so the
 *   paragraph shows a backslash or a lead character first. `[Alba] The ferry…` and `[dependencies]` are text.
 * - inside code (kept fences, indented code) only what reads as the pack's own lines in the raw text is
 *   escaped: a `[n]` marker and a `## ` line; everything else is shown as written.
 *
 * Why hand-written: it runs on every item of every pack (a CommonMark parser per body would cost more than the
 * packing), and it must know exactly which constructs CommonMark lets interrupt a paragraph. The rule-9 tests
 * check it with two CommonMark parsers (markdown-it and commonmark.js) and a line splitter on hostile text.
 */
import {
  CR,
  LF,
  OPEN_BRACKET,
  OTHER_TERMINATOR,
  SPACE,
  TAB,
  blankLineBreaksBefore,
  bracketMarkerAt,
  endsLine,
  htmlAndReferenceStarts,
  insertBackslashes,
  mayBeBlank,
  onlyTerminatorsAndBlanks,
  rendersMarkerFirst,
  skipBlanks,
} from './lines.js';

// Character codes, named.
const [HASH, GT, BACKTICK, TILDE, DASH, STAR, PLUS, UNDERSCORE, EQUALS, COLON, PIPE, DOT, CLOSE_PAREN, CLOSE_BRACKET] = [
  0x23, 0x3e, 0x60, 0x7e, 0x2d, 0x2a, 0x2b, 0x5f, 0x3d, 0x3a, 0x7c, 0x2e, 0x29, 0x5d,
];

/**
 * ASCII characters a line may start with and need a look: blanks, block and list markers, digits, brackets
 * and the characters that can render before a bracket (`\ * _ \` ~ !`), fences, and `<` `&` (escaped where
 * they stand, by another pass, but harmless here).
 */
const LINE_START = new Uint8Array(128);
for (const c of ' \t#>-*+_=:|0123456789[\\`~!') LINE_START[c.charCodeAt(0)] = 1;

/** Whether a line whose text starts with this character needs no look (see LINE_START). */
function plain(code: number): boolean {
  return code < 0x80 ? LINE_START[code] !== 1 : !mayBeBlank(code);
}

/**
 * What a CommonMark line is, for the line after it: `blank` (spaces and tabs only), `shown-blank` (nothing
 * visible, but CommonMark reads text: it may open a paragraph), `para` (paragraph text, in a list item too:
 * a next line continues it), `code` (an indented code line), `fence` (a kept fenced block), `other` (an
 * indented line in a list, which may be the item's code).
 */
type LineKind = 'blank' | 'shown-blank' | 'para' | 'code' | 'fence' | 'other';

/**
 * The CommonMark lines of a text (ended by LF, CR or CRLF): `end(start)` is where the line that starts at
 * `start` ends (its LF or CR, or the end of the text). The next LF and CR are remembered, so walking the lines
 * in order reads the text once (a search for a CR the text lacks would read the rest of it at every line).
 */
class Lines {
  #lf = -2;
  #cr = -2;

  constructor(private readonly text: string) {}

  end(start: number): number {
    if (this.#lf !== -1 && this.#lf < start) this.#lf = this.text.indexOf('\n', start);
    if (this.#cr !== -1 && this.#cr < start) this.#cr = this.text.indexOf('\r', start);
    const lf = this.#lf;
    const cr = this.#cr;
    if (lf === -1) return cr === -1 ? this.text.length : cr;
    return cr === -1 || lf < cr ? lf : cr;
  }
}

/** Where the next CommonMark line starts after the line that ends at `end` (CRLF counts once). */
function nextLine(text: string, end: number): number {
  return text.charCodeAt(end) === CR && text.charCodeAt(end + 1) === LF ? end + 2 : end + 1;
}

/** Columns of the spaces and tabs at `start` (a tab reaches the next multiple of four), and where they end. */
function indentOf(text: string, start: number, from = 0): { columns: number; at: number } {
  let columns = from;
  let i = start;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === SPACE) columns += 1;
    else if (c === TAB) columns += 4 - (columns % 4);
    else return { columns: columns - from, at: i };
    i += 1;
  }
}

/** The run of `char` at `at`, and where it ends. */
function runOf(text: string, at: number, char: number): number {
  let i = at;
  while (text.charCodeAt(i) === char) i += 1;
  return i - at;
}

/** Whether `text[from, to)` is only spaces and tabs. */
function spacesAndTabsOnly(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== TAB) return false;
  }
  return true;
}

interface Fence {
  start: number;
  /** The end of the closing fence's line. */
  end: number;
  /** Where the line after the closing fence starts. */
  next: number;
}

/** A fence opener at the very start of a line (top level whatever came before): its character and length. */
function fenceOpener(text: string, start: number, end: number): { char: number; length: number } | null {
  const char = text.charCodeAt(start);
  if (char !== BACKTICK && char !== TILDE) return null;
  const length = runOf(text, start, char);
  if (length < 3) return null;
  // A backtick fence's info string holds no backtick (else the line is a code span).
  if (char === BACKTICK && text.slice(start + length, end).includes('`')) return null;
  return { char, length };
}

/** Whether the line closes a fence of `char` × `length`: up to three spaces, at least as long a run, then blanks. */
function closesFence(text: string, start: number, end: number, char: number, length: number): boolean {
  let i = start;
  while (i - start < 3 && text.charCodeAt(i) === SPACE) i += 1;
  const run = runOf(text, i, char);
  return run >= length && spacesAndTabsOnly(text, i + run, end);
}

/**
 * The fenced code blocks that open at the start of a line and close in `text`. With `continued` the renderer
 * appends to the last line (a truncated item's ellipsis), so the last line cannot close one.
 */
function keptFences(text: string, continued: boolean): Fence[] {
  const fences: Fence[] = [];
  // Only lines starting with a backtick or a tilde can open one: most texts hold no fence at all.
  if (text.indexOf('```') === -1 && text.indexOf('~~~') === -1) return fences;
  const lines = new Lines(text);
  for (let start = 0; start <= text.length;) {
    const end = lines.end(start);
    const opener = fenceOpener(text, start, end);
    let closed: Fence | undefined;
    if (opener !== null) {
      // The search for the closer walks lines of its own (its remembered positions run ahead of the outer walk's).
      const ahead = new Lines(text);
      for (let line = nextLine(text, end); line <= text.length;) {
        const lineEndAt = ahead.end(line);
        const last = lineEndAt >= text.length;
        if (!(continued && last) && closesFence(text, line, lineEndAt, opener.char, opener.length)) {
          closed = { start, end: lineEndAt, next: nextLine(text, lineEndAt) };
          break;
        }
        if (last) break;
        line = nextLine(text, lineEndAt);
      }
    }
    if (closed !== undefined) {
      fences.push(closed);
      start = closed.next;
      continue;
    }
    if (end >= text.length) break;
    start = nextLine(text, end);
  }
  return fences;
}

/**
 * The escapes code needs (kept fences, indented code) at the raw line starts in `[from, to)`: only what reads as
 * the pack's own lines in the raw text, a `[n]` marker and a `##` heading line (or, outside code, any heading).
 */
function rawLineStarts(text: string, from: number, to: number, code: boolean, positions: number[], except: number, others: boolean): void {
  for (let at = from; at <= to;) {
    const q = skipBlanks(text, at);
    if (q !== except && q < to) {
      if (bracketMarkerAt(text, q)) positions.push(q);
      else if (text.charCodeAt(q) === HASH) {
        const run = runOf(text, q, HASH);
        const after = text.charCodeAt(q + run);
        if ((code ? run === 2 : run <= 6) && (after === SPACE || after === TAB || endsLine(text, q + run))) positions.push(q);
      }
    }
    if (!others) return;
    // The next start inside this range: after a line terminator (VT, FF, NEL, LS, PS, FS-RS, and in a kept
    // fence's range LF and CR).
    let next = -1;
    for (let i = at; i < to; i += 1) {
      if (endsLine(text, i)) {
        next = i + 1;
        break;
      }
    }
    if (next === -1) return;
    at = next;
  }
}

/**
 * Whether the rest of the line from `at` is a thematic break (three or more of one of `- * _`, with blanks), a
 * setext underline (`=` or `-` only) or a table delimiter row (`-`, `:`, `|` and blanks with a `-`): each
 * would turn the line before into something else, or be a rule.
 */
function breakOrUnderline(text: string, at: number, end: number): boolean {
  const first = text.charCodeAt(at);
  if (first === STAR || first === UNDERSCORE || first === DASH) {
    let count = 0;
    let same = true;
    for (let i = at; i < end; i += 1) {
      const c = text.charCodeAt(i);
      if (c === first) count += 1;
      else if (c !== SPACE && c !== TAB) {
        same = false;
        break;
      }
    }
    if (same && count >= (first === DASH ? 1 : 3)) return true;
  }
  if (first === EQUALS) return spacesAndTabsOnly(text, at + runOf(text, at, EQUALS), end);
  if (first === DASH || first === COLON || first === PIPE) {
    let dash = false;
    for (let i = at; i < end; i += 1) {
      const c = text.charCodeAt(i);
      if (c === DASH) dash = true;
      else if (c !== COLON && c !== PIPE && c !== SPACE && c !== TAB) return false;
    }
    return dash;
  }
  return false;
}

/**
 * A list marker at `at` (`-`, `*`, `+`, or up to nine digits and `.` or `)`, then a space or a tab): where its
 * content starts, where an escape would go, and whether it is an item to escape (empty: it could be crowded by
 * the next line; or its content starting as indented code, five columns or more after the marker).
 */
function listMarker(
  text: string,
  at: number,
  end: number,
): { content: number; escapeAt: number; escape: boolean; startsAtOne: boolean } | null {
  const c = text.charCodeAt(at);
  let after: number;
  let escapeAt = at;
  let startsAtOne = true;
  if (c === DASH || c === STAR || c === PLUS) after = at + 1;
  else {
    let j = at;
    while (j - at < 10 && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) j += 1;
    if (j === at || j - at > 9) return null;
    const delimiter = text.charCodeAt(j);
    if (delimiter !== DOT && delimiter !== CLOSE_PAREN) return null;
    startsAtOne = Number(text.slice(at, j)) === 1;
    escapeAt = j;
    after = j + 1;
  }
  const next = text.charCodeAt(after);
  if (after < end && next !== SPACE && next !== TAB) return null;
  const gap = indentOf(text, after, after - lineStartOf(text, at));
  const content = gap.at;
  const empty = content >= end;
  return { content, escapeAt, escape: empty || gap.columns >= 5, startsAtOne };
}

/** Where the CommonMark line holding `at` starts. */
function lineStartOf(text: string, at: number): number {
  let i = at;
  while (i > 0 && text.charCodeAt(i - 1) !== LF && text.charCodeAt(i - 1) !== CR) i -= 1;
  return i;
}

/** Whether the line at `at` defines a link reference or footnote (`[x]: url`, `[^1]: note`), or may (its label runs on). */
function definesReference(text: string, at: number, end: number): boolean {
  if (text.charCodeAt(at) !== OPEN_BRACKET) return false;
  for (let i = at + 1; i < end; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i += 1;
    else if (c === CLOSE_BRACKET) return text.charCodeAt(i + 1) === COLON;
  }
  return true;
}

/** Past blanks and line terminators from `at` (inside the CommonMark line ending at `end`). */
function visibleStart(text: string, at: number, end: number): number {
  let p = at;
  for (;;) {
    const skipped = skipBlanks(text, p);
    if (skipped > p) p = skipped;
    else if (p < end && endsLine(text, p)) p += 1;
    else return p;
  }
}

/** Where the raw line (after the last line terminator before `at`, inside its CommonMark line) starts. */
function rawLineStart(text: string, start: number, at: number): number {
  for (let i = at - 1; i >= start; i -= 1) if (endsLine(text, i)) return i + 1;
  return start;
}

/** Escapes an item body for markdown (see the rules above). `continued`: the renderer appends to its last line. */
export function escapeMarkdownBody(text: string, continued = false): string {
  if (text.length === 0) return text;
  const positions: number[] = [];
  /** [start, end) pairs of code, where `<` and `&` are not read. */
  const verbatim: number[] = [];
  const fences = keptFences(text, continued);
  const lines = new Lines(text);
  // Line terminators other than LF and CR start raw lines inside a CommonMark line (most texts have none).
  const others = OTHER_TERMINATOR.test(text);
  let fence = 0;
  // The header line is paragraph text: the body's first line continues it.
  let previous: LineKind = 'para';
  let lastVisible: LineKind = 'para';
  let inList = false;
  for (let start = 0; start <= text.length;) {
    const kept = fences[fence];
    if (kept !== undefined && kept.start === start) {
      fence += 1;
      rawLineStarts(text, kept.start, kept.end, true, positions, -1, true);
      verbatim.push(kept.start, kept.end);
      previous = lastVisible = 'fence';
      inList = false;
      start = kept.next;
      continue;
    }
    const end = lines.end(start);
    const kind = escapeLine(text, start, end, { previous, lastVisible, inList, others }, positions, verbatim);
    if (kind.list) inList = true;
    else if (kind.closesList) inList = false;
    previous = kind.kind;
    if (kind.kind !== 'blank' && kind.kind !== 'shown-blank') lastVisible = kind.kind;
    if (end >= text.length) break;
    start = nextLine(text, end);
  }
  htmlAndReferenceStarts(text, positions, verbatim);
  return insertBackslashes(text, positions);
}

/** One CommonMark line outside kept fences: its escapes, and what it is for the line after it. */
function escapeLine(
  text: string,
  start: number,
  end: number,
  state: { previous: LineKind; lastVisible: LineKind; inList: boolean; others: boolean },
  positions: number[],
  verbatim: number[],
): { kind: LineKind; list: boolean; closesList: boolean } {
  const { previous, lastVisible, inList, others } = state;
  // Most lines start with a letter (or a CJK character): paragraph text at column 0 that nothing here escapes.
  if (start < end && !others && plain(text.charCodeAt(start))) return { kind: 'para', list: false, closesList: previous === 'blank' };
  const indent = indentOf(text, start);
  if (indent.at >= end) return { kind: 'blank', list: false, closesList: false };
  if (onlyTerminatorsAndBlanks(text, indent.at, end)) return { kind: 'shown-blank', list: false, closesList: false };
  // Indented code: four columns after a blank line, code or a fence, where no list item can hold the line.
  if (!inList && indent.columns >= 4 && (previous === 'blank' || previous === 'code' || previous === 'fence')) {
    rawLineStarts(text, start, end, true, positions, -1, others);
    verbatim.push(start, end);
    return { kind: 'code', list: false, closesList: false };
  }
  // Indented text that starts with a letter: nothing to escape either.
  if (!others && indent.at < end && plain(text.charCodeAt(indent.at))) {
    return {
      kind: inList && indent.columns >= 4 && (previous === 'blank' || previous === 'other') ? 'other' : 'para',
      list: false,
      closesList: previous === 'blank' && indent.columns === 0,
    };
  }
  const { j, markers, escaped } = blockEscapes(text, skipBlanks(text, start), end, previous, positions);
  // Where the line's rendered text starts (past blanks and other line terminators), and whether it reads as `[n]`.
  const p = visibleStart(text, j, end);
  const marker =
    !escaped && p < end && rendersMarkerFirst(text, p)
      ? markerEscapes(text, start, p, markers > 0, previous, lastVisible, positions)
      : null;
  const handled = marker === null ? -1 : p;
  const joined = marker === 'joined';
  // The raw view: line starts after other terminators inside this CommonMark line (the first was seen above
  // when the leaf rules ran there, or the marker was handled).
  if (p < end && (others || (p !== j && p !== handled)))
    rawLineStarts(text, p, end, false, positions, p === j || p === handled ? p : -1, others);
  const list = markers > 0;
  const closesList = !list && !joined && previous === 'blank' && indent.columns === 0;
  // In a list, an indented line after a blank line may be the item's code (and so may the lines after it).
  const maybeCode = inList && !closesList && indent.columns >= 4 && (previous === 'blank' || previous === 'other');
  return { kind: maybeCode ? 'other' : 'para', list, closesList };
}

/**
 * The escapes of a line's block structure from `i` (past its blanks): list markers (each level's, kept unless the
 * item is empty or starts as code), then a rule, underline or delimiter row, a heading, quote, fence or reference
 * definition. Returns where the content after the markers starts, how many markers, and whether it escaped one.
 */
function blockEscapes(
  text: string,
  i: number,
  end: number,
  previous: LineKind,
  positions: number[],
): { j: number; markers: number; escaped: boolean } {
  let j = i;
  let markers = 0;
  for (;;) {
    if (breakOrUnderline(text, j, end)) {
      positions.push(j);
      return { j, markers, escaped: true };
    }
    const marker = listMarker(text, j, end);
    if (marker === null) break;
    // An ordered list that does not start at 1 cannot interrupt a paragraph: after paragraph text the line is text.
    if (markers === 0 && !marker.startsAtOne && (previous === 'para' || previous === 'shown-blank')) break;
    if (marker.escape) {
      positions.push(marker.escapeAt);
      return { j, markers, escaped: true };
    }
    markers += 1;
    j = marker.content;
  }
  return { j, markers, escaped: escapeLeaf(text, j, end, positions) };
}

/**
 * The escapes of a line whose rendered text opens with a `[n]` marker at `p`. Returns `joined` when the blank lines
 * before it became hard breaks (the line then continues the paragraph before), else `escaped`.
 */
function markerEscapes(
  text: string,
  start: number,
  p: number,
  inItem: boolean,
  previous: LineKind,
  lastVisible: LineKind,
  positions: number[],
): 'joined' | 'escaped' {
  const bracket = text.charCodeAt(p) === OPEN_BRACKET;
  if (inItem || previous === 'para') {
    // Inside a list item, or continuing a paragraph: the bracket is escaped for the raw text.
    if (bracket) positions.push(p);
    return 'escaped';
  }
  if ((previous === 'blank' || previous === 'shown-blank') && lastVisible === 'para') {
    // It would open a paragraph: the blank lines before it become hard breaks of the paragraph before, which this
    // line then continues (in a list item too: it closes no list).
    blankLineBreaksBefore(text, rawLineStart(text, start, p), positions);
    if (bracket) positions.push(p);
    return 'joined';
  }
  // After code, a kept fence or a line that may be code, a paragraph opens here: it shows a backslash (or a lead
  // character) first.
  positions.push(p);
  if (bracket) positions.push(p);
  return 'escaped';
}

/** The leaf escapes at `j` (after blanks and list markers): heading, quote, fence, reference definition. */
function escapeLeaf(text: string, j: number, end: number, positions: number[]): boolean {
  const c = text.charCodeAt(j);
  if (c === HASH) {
    // An ATX heading: one to six `#` before a space, a tab or the line end (`#27` and `#hashtag` are text).
    const run = runOf(text, j, HASH);
    const after = text.charCodeAt(j + run);
    if (run <= 6 && (after === SPACE || after === TAB || endsLine(text, j + run))) {
      positions.push(j);
      return true;
    }
    return false;
  }
  if (c === GT || ((c === BACKTICK || c === TILDE) && runOf(text, j, c) >= 3)) {
    positions.push(j);
    return true;
  }
  if (c === OPEN_BRACKET && !rendersMarkerFirst(text, j) && definesReference(text, j, end)) {
    positions.push(j);
    return true;
  }
  return false;
}
