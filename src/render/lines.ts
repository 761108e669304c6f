// What the escapers share: where lines start and end for any reader, what shows as blank, the `[n]` marker
// lookalikes, inserting backslashes, and the scan for `<` and `&` that could open HTML or a reference.

/**
 * Characters that show as blank or as nothing: whitespace other than line terminators, and default-ignorable
 * code points (zero-width space and joiners, word joiner, BOM, soft hyphen, bidi controls, Hangul fillers,
 * variation selectors, tags), plus the blank braille pattern. A marker after them looks like one at the
 * start of the line, so it is escaped there too.
 */
const BLANK = String.raw`[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800\p{Default_Ignorable_Code_Point}]`;

/**
 * Where a line ends for any reader: LF, CR (CRLF counts once), and every other Unicode line terminator that
 * some readers break on (VT, FF, NEL, LS, PS, and the FS/GS/RS separators that Python's `str.splitlines`
 * also breaks on). CommonMark itself breaks only on LF, CR and CRLF. A line starts after each.
 */
// eslint-disable-next-line no-control-regex -- the FS, GS and RS separators are control characters, and line ends
const LINE_TERMINATOR = /[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex -- as above
export const OTHER_TERMINATOR = /[\v\f\x1c-\x1e\x85\u2028\u2029]/;

/** One blank or invisible code point (checked only for characters beyond ASCII). */
const BLANK_AT = new RegExp(BLANK, 'uy');
/** A decimal digit beyond ASCII (full-width and other scripts' digits read as numbers too). */
const DIGIT_AT = /\p{Nd}/uy;

// Character codes, named.
export const [SPACE, TAB, LF, CR] = [0x20, 0x09, 0x0a, 0x0d];
export const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;

/** Whether a line ends at `at`: a line terminator there (see LINE_TERMINATOR), or the end of the text. */
export function endsLine(text: string, at: number): boolean {
  if (at >= text.length) return true;
  const c = text.charCodeAt(at);
  return c === LF || c === CR || c === 0x0b || c === 0x0c || (c >= 0x1c && c <= 0x1e) || c === 0x85 || c === 0x2028 || c === 0x2029;
}

/** Where the blanks at the start of a line end: spaces, tabs, and (beyond ASCII) blank or invisible characters. */
export function skipBlanks(text: string, at: number): number {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === SPACE || c === TAB) i += 1;
    else if (c >= 0x80) {
      BLANK_AT.lastIndex = i;
      if (!BLANK_AT.test(text)) return i;
      i = BLANK_AT.lastIndex;
    } else return i;
  }
}

/** Whether `text[from, to)` holds only blanks (see skipBlanks) and line terminators (see endsLine). */
export function onlyTerminatorsAndBlanks(text: string, from: number, to: number): boolean {
  let i = from;
  while (i < to) {
    const skipped = skipBlanks(text, i);
    if (skipped > i) i = skipped;
    else if (endsLine(text, i)) i += 1;
    else return false;
  }
  return true;
}

/** Whether a decimal digit is at `at`. */
function digitAt(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c >= 0x30 && c <= 0x39) return true;
  if (c < 0x80 || Number.isNaN(c)) return false;
  DIGIT_AT.lastIndex = at;
  return DIGIT_AT.test(text);
}

/**
 * The characters a line can start with and still render as text that opens with `[`: a backslash escape,
 * emphasis and strikethrough delimiters, a code span (which drops one space), an image's `!`, and blanks
 * between them. (Block markers such as `#` and `>` are escaped at a line start, so those lines render
 * opening with the marker; `<` and `&` are escaped anywhere.)
 */
const BRACKET_LEADS = '\\*_`~! \t';
const BRACKET_LEAD = new Uint8Array(128);
for (const c of BRACKET_LEADS) BRACKET_LEAD[c.charCodeAt(0)] = 1;

/**
 * Past blanks, invisibles, `[` and, when `rendered`, the BRACKET_LEADS and line terminators (a rendered
 * paragraph runs on across them) from `at`, whether a digit follows.
 */
function digitAfter(text: string, at: number, rendered: boolean): boolean {
  let i = at;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACKET || (rendered && ((c < 0x80 && BRACKET_LEAD[c] === 1) || (i < text.length && endsLine(text, i))))) i += 1;
    else {
      const skipped = skipBlanks(text, i);
      if (skipped === i) return digitAt(text, i);
      i = skipped;
    }
  }
}

/**
 * Whether a line reads, as plain text, as a block marker: `[` then a number (`[2]`, `[ 10 ]`, `[[3]`), the
 * pack's own `[n]` header; `at` is where its visible text starts. `[Alba]`, `[x](y)` and `[dependencies]` do not.
 */
export function bracketMarkerAt(text: string, at: number): boolean {
  return text.charCodeAt(at) === OPEN_BRACKET && digitAfter(text, at + 1, false);
}

/**
 * Whether the line at `at` can render, in markdown, as text that opens with a `[n]` marker: past any
 * BRACKET_LEADS (`\[2]`, `*[2]*`, `` `[2]` ``, `![[2]](x)`), a `[`, then past blanks, brackets and leads
 * (`[*2*]`), a digit.
 */
export function rendersMarkerFirst(text: string, at: number): boolean {
  let i = at;
  while (i < text.length && text.charCodeAt(i) < 0x80 && BRACKET_LEAD[text.charCodeAt(i)] === 1) i += 1;
  return text.charCodeAt(i) === OPEN_BRACKET && digitAfter(text, i + 1, true);
}

/**
 * Calls `visit` with each line start (0, and after each line terminator; CR only when not in CRLF) whose
 * first character `mayStart` says could begin an escape; lines starting with anything else are skipped
 * without running a pattern, which keeps escaping cheap on ordinary prose.
 */
export function forEachLineStart(text: string, mayStart: (code: number) => boolean, visit: (at: number) => void): void {
  if (text.length === 0) return;
  if (mayStart(text.charCodeAt(0))) visit(0);
  if (text.indexOf('\r') === -1 && !OTHER_TERMINATOR.test(text)) {
    // Only LF: indexOf finds them several times faster than a pattern.
    for (let at = text.indexOf('\n') + 1; at !== 0 && at < text.length; at = text.indexOf('\n', at) + 1) {
      if (mayStart(text.charCodeAt(at))) visit(at);
    }
    return;
  }
  LINE_TERMINATOR.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = LINE_TERMINATOR.exec(text)) !== null) {
    const at = match.index + 1;
    if (at >= text.length) break;
    const code = text.charCodeAt(at);
    if (match[0] === '\r' && code === LF) continue;
    if (mayStart(code)) visit(at);
  }
}

/** Beyond ASCII, only blank and invisible characters matter; CJK and Hangul syllables (common line starts) do not. */
export function mayBeBlank(code: number): boolean {
  return !((code >= 0x3040 && code < 0xd800 && code !== 0x3164) || (code >= 0x00c0 && code < 0x0300));
}

/**
 * `text` with a backslash inserted at each of `positions` (any order; a position given twice gets two
 * backslashes); `text` itself when none.
 */
export function insertBackslashes(text: string, positions: number[]): string {
  if (positions.length === 0) return text;
  positions.sort((a, b) => a - b);
  let out = '';
  let from = 0;
  for (const at of positions) {
    out += `${text.slice(from, at)}\\`;
    from = at;
  }
  return out + text.slice(from);
}

/**
 * The hard-line-break backslash for each blank line right before the line at `at` (after the blank's spaces
 * and tabs), so that line stays inside the paragraph before it: a paragraph of its own opening with `[2]`
 * would read as another block, escaped bracket or not.
 */
export function blankLineBreaksBefore(text: string, at: number, positions: number[]): void {
  // CommonMark ends lines at LF and CR only: a line start after another terminator (a vertical tab, U+2028...)
  // is inside a CommonMark line, which begins a paragraph of its own when that line holds nothing visible
  // before it (a paragraph's content is trimmed). Then the blank lines before are counted from there.
  let lineStart = at;
  let cmStart = at;
  while (cmStart > 0 && text.charCodeAt(cmStart - 1) !== LF && text.charCodeAt(cmStart - 1) !== CR) cmStart -= 1;
  if (cmStart < at) {
    if (!onlyTerminatorsAndBlanks(text, cmStart, at)) return;
    lineStart = cmStart;
  }
  // Lines that show as blank but are not CommonMark blank lines are kept only when a CommonMark blank line
  // lies before them: after a visible line they continue its paragraph and need no break.
  let kept = positions.length;
  for (;;) {
    let end = lineStart - 1; // the line end before `lineStart`
    if (end < 0) break;
    if (text.charCodeAt(end) === LF && end > 0 && text.charCodeAt(end - 1) === CR) end -= 1;
    if (text.charCodeAt(end) !== LF && text.charCodeAt(end) !== CR) break;
    // The CommonMark line before: spaces and tabs only make a CommonMark blank line; blanks beyond them
    // (U+2029, a zero-width space...) and other terminators make a line CommonMark reads as a paragraph of its
    // own after a blank line, which shows as blank, so the line after would open it as read. Visible ASCII
    // ends the scan at once (most lines).
    let start = end;
    let spacesAndTabs = true;
    let visible = false;
    for (; start > 0; start -= 1) {
      const c = text.charCodeAt(start - 1);
      if (c === LF || c === CR) break;
      if (c === SPACE || c === TAB) continue;
      spacesAndTabs = false;
      if (c < 0x80 && !endsLine(text, start - 1)) {
        visible = true;
        break;
      }
    }
    if (visible || (!spacesAndTabs && !onlyTerminatorsAndBlanks(text, start, end))) break;
    positions.push(end);
    if (spacesAndTabs) kept = positions.length;
    lineStart = start;
  }
  positions.length = kept;
}

const HTML_START = /[A-Za-z/!?]/y;
const REFERENCE_END = /#|[A-Za-z0-9]+;/y;

/**
 * Pushes the position of each `<` that could open raw HTML, an HTML block or an autolink (`<a`, `</`, `<!--`,
 * `<?`, `<!X`) and each `&` that could form an entity or character reference (which could produce any
 * character, a line break too), outside `verbatim` (flat [start, end) pairs, ascending: code, where neither
 * is read). A backslash already in front counts: one more only when the run of backslashes before is even.
 */
export function htmlAndReferenceStarts(text: string, positions: number[], verbatim: readonly number[] = []): void {
  // indexOf is much faster than a pattern scan, and most texts hold neither character.
  for (const char of ['<', '&']) {
    const follows = char === '<' ? HTML_START : REFERENCE_END;
    let range = 0;
    for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) {
      while (range < verbatim.length && verbatim[range + 1]! <= at) range += 2;
      if (range < verbatim.length && verbatim[range]! <= at) continue;
      follows.lastIndex = at + 1;
      if (!follows.test(text)) continue;
      let backslashes = 0;
      while (backslashes < at && text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes += 1;
      if (backslashes % 2 === 1) continue; // already escaped
      positions.push(at);
    }
  }
}
