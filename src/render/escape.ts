import { BoundedCache, cacheFor } from '../base/bounded-cache.js';
import type { PackFormat } from './formats.js';

/*
 * Escaping for the three context formats. Content (item text, and every caller-supplied field) must never
 * create, close, renumber or hide a block. Each escape only inserts characters (a backslash, or an XML entity
 * for `& < >`), in one pass that looks only at line starts and at `<` and `&` (found by the engine's fast
 * character scans), and returns its input itself when there is nothing to escape, so token hints for
 * unchanged text stay valid.
 *
 * Written here rather than taken from a package: markdown escapers (e.g. for whole documents) escape every
 * punctuation character, which changes most texts and costs tokens; what a context needs is narrower and
 * exact, and the test suite checks it with a CommonMark parser, a strict XML parser and a line splitter
 * that knows every Unicode line terminator.
 */

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
const LINE_TERMINATOR = /[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/g;
const OTHER_TERMINATOR = /[\v\f\x1c-\x1e\x85\u2028\u2029]/;

/**
 * Markdown (CommonMark). An item is one paragraph: its header line, then its body. Inside a paragraph only
 * these constructs can start a block or turn the paragraph into something else (a setext heading, a table),
 * and each is escaped with a backslash, which CommonMark reads as the literal character:
 * - at the start of a line, after any blanks: `>` (block quote), one to six `#` before a space, a tab or the
 *   line end (ATX heading; `#27` is text), `[` (a block marker
 *   lookalike, a link reference or footnote definition), `|` and `:` (table rows of GFM-style parsers);
 *   `=` `-` `*` `_` `+` before a space, a tab, the end of the line or (for `=` `-` `*` `_`) the same
 *   character (setext underlines, thematic breaks, list items; `-` also before `|` `:`, table delimiter
 *   rows); three backticks or tildes (code fences); a number of up to nine digits followed by `.` or `)`
 *   and a space, tab or line end (ordered list items; the `.` or `)` is escaped);
 * - a blank line is left as it is: it ends a paragraph, and the content's next paragraph still belongs to
 *   the block (only a header line starts one), except before a line that can render as text opening with `[`
 *   (`[2]`, `\[2]`, `*[2]*`, `` `[2]` ``: a `[` after any of `\ * _ \` ~ !` and blanks): there each blank line, and
 *   each line that shows as blank (only blanks, invisibles and other terminators), gets a backslash (a hard line break), so that line stays inside the paragraph before it and cannot open a
 *   paragraph that reads as a block header. After a blank line a paragraph is not being continued, so a
 *   line indented four or more columns would open an indented code block: it gets a backslash at its very
 *   start (CommonMark shows it; such lines are rare in prose and cost one token);
 * - anywhere, `<` that could open raw HTML, an HTML block or an autolink (`<a`, `</`, `<!--`, `<?`, `<!X`)
 *   and `&` that could form an entity or character reference (which could produce any character, a line
 *   break too). A backslash already in front of them counts: one more is added only when the run of
 *   backslashes before them is even (an odd run already escapes them).
 * Indented code cannot interrupt a paragraph, so indentation is otherwise left alone.
 */
const HTML_START = /[A-Za-z/!?]/y;
const REFERENCE_END = /#|[A-Za-z0-9]+;/y;
/** One blank or invisible code point (checked only for characters beyond ASCII). */
const BLANK_AT = new RegExp(BLANK, 'uy');

// Character codes, named.
const [SPACE, TAB, LF, CR] = [0x20, 0x09, 0x0a, 0x0d];
const [GT, HASH, OPEN_BRACKET, PIPE, COLON, EQUALS, STAR, UNDERSCORE, DASH, PLUS, BACKTICK, TILDE, DOT, CLOSE_PAREN] = [
  0x3e, 0x23, 0x5b, 0x7c, 0x3a, 0x3d, 0x2a, 0x5f, 0x2d, 0x2b, 0x60, 0x7e, 0x2e, 0x29,
];

/** Whether a line ends at `at`: a line terminator there (see LINE_TERMINATOR), or the end of the text. */
function endsLine(text: string, at: number): boolean {
  if (at >= text.length) return true;
  const c = text.charCodeAt(at);
  return c === LF || c === CR || c === 0x0b || c === 0x0c || (c >= 0x1c && c <= 0x1e) || c === 0x85 || c === 0x2028 || c === 0x2029;
}

/** Where the blanks at the start of a line end: spaces, tabs, and (beyond ASCII) blank or invisible characters. */
function skipBlanks(text: string, at: number): number {
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

/**
 * Where a backslash goes for the markdown line that starts at `at` (see the rules above), or -1. Written as
 * a few comparisons rather than one pattern: it runs at every line start of every item, and a pattern with
 * Unicode property classes costs microseconds a call.
 */
function markdownLineInsertion(text: string, at: number): number {
  const i = skipBlanks(text, at);
  const c = text.charCodeAt(i);
  const next = text.charCodeAt(i + 1);
  const spaceOrEnd = next === SPACE || next === TAB || endsLine(text, i + 1);
  switch (c) {
    case HASH: {
      // An ATX heading: one to six `#` before a space, a tab or the line end (`#27` and `#hashtag` are text).
      let j = i;
      while (j - i < 7 && text.charCodeAt(j) === HASH) j += 1;
      const after = text.charCodeAt(j);
      return j - i <= 6 && (after === SPACE || after === TAB || endsLine(text, j)) ? i : -1;
    }
    case GT:
    case OPEN_BRACKET:
    case PIPE:
    case COLON:
      return i;
    case EQUALS:
    case STAR:
    case UNDERSCORE:
      return next === c || spaceOrEnd ? i : -1;
    case DASH:
      return next === c || next === PIPE || next === COLON || spaceOrEnd ? i : -1;
    case PLUS:
      return spaceOrEnd ? i : -1;
    case BACKTICK:
    case TILDE:
      return next === c && text.charCodeAt(i + 2) === c ? i : -1;
    case LF:
    case CR:
      return -1; // a blank line: it may end the paragraph (see indentedAfterBlank)
    default: {
      let j = i;
      while (j - i < 10 && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) j += 1;
      if (j === i || j - i > 9) return -1;
      const delimiter = text.charCodeAt(j);
      if (delimiter !== DOT && delimiter !== CLOSE_PAREN) return -1;
      const after = text.charCodeAt(j + 1);
      return after === SPACE || after === TAB || endsLine(text, j + 1) ? j : -1;
    }
  }
}

/** The text format's line markers after the blanks: `[` (block header) and `=` (zone line). */
function textLineInsertion(text: string, at: number): number {
  const i = skipBlanks(text, at);
  const c = text.charCodeAt(i);
  return c === OPEN_BRACKET || c === EQUALS ? i : -1;
}

/**
 * Calls `visit` with each line start (0, and after each line terminator; CR only when not in CRLF) whose
 * first character `mayStart` says could begin an escape; lines starting with anything else are skipped
 * without running a pattern, which keeps escaping cheap on ordinary prose.
 */
function forEachLineStart(text: string, mayStart: (code: number) => boolean, visit: (at: number) => void): void {
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

/**
 * The characters a line can start with and still render as text that opens with `[`: a backslash escape,
 * emphasis and strikethrough delimiters, a code span (which drops one space), an image's `!`, and blanks
 * between them. (Block markers such as `#`, `>`, `-` are escaped at a line start, so those lines render
 * opening with the marker; `<` and `&` are escaped anywhere.)
 */
const BRACKET_LEADS = '\\*_`~! \t';
const BRACKET_LEAD = new Uint8Array(128);
for (const c of BRACKET_LEADS) BRACKET_LEAD[c.charCodeAt(0)] = 1;

/** Whether the line at `at` can render as text that opens with `[`: past any BRACKET_LEADS, a `[`. */
function rendersBracketFirst(text: string, at: number): boolean {
  let i = at;
  while (i < text.length && text.charCodeAt(i) < 0x80 && BRACKET_LEAD[text.charCodeAt(i)] === 1) i += 1;
  return text.charCodeAt(i) === OPEN_BRACKET;
}

/** ASCII characters a markdown line can start with and need an escape: markers, digits, blanks, a CommonMark line end. */
const MARKDOWN_MAY_START = new Uint8Array(128);
for (const c of '>#[|:=-*_+`~0123456789 \t\r\n') MARKDOWN_MAY_START[c.charCodeAt(0)] = 1;
// These also start lines whose rendered text can begin with `[` (`\[2]`, `*[2]*`, `` `[2]` ``, `~~[2]~~`, `![[2]](x)`):
// such a line after a blank line keeps the blank line's hard break (see escapeMarkdown).
for (const c of BRACKET_LEADS) MARKDOWN_MAY_START[c.charCodeAt(0)] = 1;
MARKDOWN_MAY_START[OPEN_BRACKET] = 1;

/** Beyond ASCII, only blank and invisible characters matter; CJK and Hangul syllables (common line starts) do not. */
function mayBeBlank(code: number): boolean {
  return !((code >= 0x3040 && code < 0xd800 && code !== 0x3164) || (code >= 0x00c0 && code < 0x0300));
}

const markdownMayStart = (code: number) => (code < 0x80 ? MARKDOWN_MAY_START[code] === 1 : mayBeBlank(code));
const textMayStart = (code: number) => (code < 0x80 ? code === 0x5b || code === 0x3d || code === 0x20 || code === 0x09 : mayBeBlank(code));

/** `text` with a backslash inserted at each of `positions` (ascending, distinct); `text` itself when none. */
function insertBackslashes(text: string, positions: number[]): string {
  if (positions.length === 0) return text;
  let out = '';
  let from = 0;
  for (const at of positions) {
    out += `${text.slice(from, at)}\\`;
    from = at;
  }
  return out + text.slice(from);
}

/**
 * Whether the line at `at` follows a CommonMark blank line (spaces and tabs only) and is indented four or
 * more columns (a tab reaches the next multiple of four): it would open an indented code block.
 */
function indentedAfterBlank(text: string, at: number): boolean {
  let columns = 0;
  for (let i = at; columns < 4; i += 1) {
    const c = text.charCodeAt(i);
    if (c === SPACE) columns += 1;
    else if (c === TAB) columns += 4 - (columns % 4);
    else return false;
  }
  // The line before: back over its line end (LF, CR or CRLF), then only spaces and tabs to the line before it.
  let j = at - 1;
  if (j < 0) return false;
  if (text.charCodeAt(j) === LF && j > 0 && text.charCodeAt(j - 1) === CR) j -= 1;
  if (text.charCodeAt(j) !== LF && text.charCodeAt(j) !== CR) return false;
  for (j -= 1; j >= 0; j -= 1) {
    const c = text.charCodeAt(j);
    if (c === LF || c === CR) return true;
    if (c !== SPACE && c !== TAB) return false;
  }
  // The text's first line is blank: the block's header line is before it, then this blank line.
  return true;
}

/**
 * The hard-line-break backslash for each blank line right before the line at `at` (after the blank's spaces
 * and tabs), so that line stays inside the paragraph before it: a paragraph of its own opening with `[2]`
 * would read as another block, escaped bracket or not.
 */
function blankLineBreaksBefore(text: string, at: number, positions: number[]): void {
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

/** Whether `text[from, to)` holds only blanks (see skipBlanks) and line terminators (see endsLine). */
function onlyTerminatorsAndBlanks(text: string, from: number, to: number): boolean {
  let i = from;
  while (i < to) {
    const skipped = skipBlanks(text, i);
    if (skipped > i) i = skipped;
    else if (endsLine(text, i)) i += 1;
    else return false;
  }
  return true;
}

function escapeMarkdown(text: string): string {
  const positions: number[] = [];
  let sorted = true;
  forEachLineStart(text, markdownMayStart, (at) => {
    if (indentedAfterBlank(text, at)) {
      positions.push(at);
      return;
    }
    const insertion = markdownLineInsertion(text, at);
    // A line that could render as text opening with `[` (`[2]`, `\[2]`, `*[2]*`; see BRACKET_LEADS): after a
    // blank line it would open a paragraph that reads as a block header, so each blank line before it keeps
    // a hard break. Lines of ordinary prose, lists and headings start otherwise and keep their blank lines.
    if (rendersBracketFirst(text, skipBlanks(text, at))) {
      const before = positions.length;
      blankLineBreaksBefore(text, at, positions);
      if (positions.length > before) sorted = false;
    }
    if (insertion === -1) return;
    positions.push(insertion);
  });
  // indexOf is much faster than a pattern scan, and most texts hold neither character.
  for (const char of ['<', '&']) {
    const follows = char === '<' ? HTML_START : REFERENCE_END;
    for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) {
      follows.lastIndex = at + 1;
      if (!follows.test(text)) continue;
      let backslashes = 0;
      while (backslashes < at && text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes += 1;
      if (backslashes % 2 === 1) continue; // already escaped
      positions.push(at);
      sorted = false;
    }
  }
  if (!sorted) {
    positions.sort((a, b) => a - b);
    return insertBackslashes(text, positions.filter((at, index) => index === 0 || positions[index - 1] !== at));
  }
  return insertBackslashes(text, positions);
}

function escapeText(text: string): string {
  const positions: number[] = [];
  forEachLineStart(text, textMayStart, (at) => {
    const insertion = textLineInsertion(text, at);
    if (insertion !== -1) positions.push(insertion);
  });
  return insertBackslashes(text, positions);
}

/** Markdown inside one header line: brackets (links, images), raw HTML and entity references. */
const MARKDOWN_INLINE_ESCAPE = /\\*(?:[[\]]|<(?=[A-Za-z/!?])|&(?=#|[A-Za-z0-9]+;))/gu;

/** `&`, `<`, `>`, and characters XML 1.0 does not allow in a document at all (not even as references). */
const XML_ESCAPE = /[&<>\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g;
const XML_FORBIDDEN = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/;

const XML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Inserts a backslash before the last character of `match` unless an odd run of backslashes precedes it.
 * (Replacers here read the match itself, not capture groups: V8 11.3, in Node 20, was seen to report a group
 * that did not take part in a match as "" instead of undefined.)
 */
function escapeLast(match: string): string {
  const backslashes = match.length - 1 - match.slice(0, -1).replace(/\\+$/u, '').length;
  if (backslashes % 2 === 1) return match;
  return `${match.slice(0, -1)}\\${match.slice(-1)}`;
}

function escapeMarkdownInline(text: string): string {
  MARKDOWN_INLINE_ESCAPE.lastIndex = 0;
  if (!MARKDOWN_INLINE_ESCAPE.test(text)) return text;
  return text.replace(MARKDOWN_INLINE_ESCAPE, escapeLast);
}

/** XML character data: entities for `& < >`; characters XML cannot carry (lone surrogates too) become U+FFFD. */
export function escapeXml(text: string): string {
  // isWellFormed/toWellFormed (lone surrogates) are in Node 20 but not in the ES2023 lib typings.
  const wellFormed = text as string & { isWellFormed(): boolean; toWellFormed(): string };
  const clean = wellFormed.isWellFormed();
  // indexOf first: much faster than a pattern scan, and most texts hold none of these.
  if (clean && text.indexOf('&') === -1 && text.indexOf('<') === -1 && text.indexOf('>') === -1 && !XML_FORBIDDEN.test(text)) {
    return text;
  }
  return (clean ? text : wellFormed.toWellFormed()).replace(XML_ESCAPE, (char) => XML_ENTITIES[char] ?? '\ufffd');
}

/**
 * Escapes `text` for the body of a block so it cannot create, close, renumber or hide a block (see the
 * README's rules section for what each format guarantees). Returns `text` itself when nothing needs escaping.
 */
export function escapeBody(format: PackFormat, text: string): string {
  switch (format) {
    case 'xml':
      return escapeXml(text);
    case 'markdown':
      return escapeMarkdown(text);
    case 'text':
      return escapeText(text);
  }
}

// Control characters (C0, C1 with NEL, DEL), the Unicode line and paragraph separators, and bidi controls
// (which can make one field display as another): each becomes a space in a one-line field.
const NOT_ONE_LINE = /[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** Fields made one line, remembered (titles and sources repeat in every header of every pack): values up to 1,000 characters. */
const ONE_LINE_CACHE_LIMIT = 50_000;
const ONE_LINE_CACHE_CHARS = 1_000;
const oneLines = new BoundedCache<string, string>(ONE_LINE_CACHE_LIMIT);

/** One line: no line terminator, control or bidi control; whitespace runs become one space; trimmed. */
export function oneLine(value: string): string {
  const known = oneLines.get(value);
  if (known !== undefined) return known;
  const line = value.replace(NOT_ONE_LINE, ' ').replace(/\s+/gu, ' ').trim();
  return value.length <= ONE_LINE_CACHE_CHARS ? oneLines.set(value, line) : line;
}

// Characters that delimit the parts of a header line: a value holding any of them is quoted.
const NEEDS_QUOTES = /[()[\]",>]/u;

/**
 * A field value as a header shows it: bare when it cannot be mistaken for header syntax, else in double
 * quotes with inner quotes doubled (a form that survives markdown rendering, unlike a backslash).
 * `value` must already be one line.
 */
export function quoteField(value: string): string {
  if (value !== '' && !NEEDS_QUOTES.test(value)) return value;
  return `"${value.replaceAll('"', '""')}"`;
}

/**
 * Header fields as rendered, per format: titles, sources and sections repeat across blocks and packs. Up to
 * 50,000 values of at most 1,000 characters each are remembered.
 */
const HEADER_FIELD_CACHE_LIMIT = 50_000;
const HEADER_FIELD_CACHE_CHARS = 1_000;
const headerFields = new Map<PackFormat, BoundedCache<string, string>>();

/** A one-line field as it appears inside a header line of `format` (markdown or text). */
export function headerField(format: PackFormat, value: string): string {
  const cache = cacheFor(headerFields, format, () => new BoundedCache<string, string>(HEADER_FIELD_CACHE_LIMIT));
  const known = cache.get(value);
  if (known !== undefined) return known;
  const quoted = quoteField(oneLine(value));
  const field = format === 'markdown' ? escapeMarkdownInline(quoted) : quoted;
  return value.length <= HEADER_FIELD_CACHE_CHARS ? cache.set(value, field) : field;
}
