import type { PackFormat } from '../core/schemas.js';

/*
 * Escaping for the three context formats. Content (item text, and every caller-supplied field) must never
 * create, close, renumber or hide a block. Each escape only inserts characters (a backslash, or an XML entity
 * for `& < >`), runs in one regular-expression pass, and returns its input unchanged when there is nothing to
 * escape, so token hints for unchanged text stay valid.
 *
 * Written here rather than taken from a package: markdown escapers (e.g. for whole documents) escape every
 * punctuation character, which changes most texts and costs tokens; what a context needs is narrower and
 * exact, and the test suite checks it with a CommonMark parser, a strict XML parser and a line splitter
 * that knows every Unicode line terminator.
 */

/**
 * Where a line starts for any reader: after LF, CR (not inside CRLF), and every other Unicode line
 * terminator that some readers break on (VT, FF, NEL, LS, PS, and the FS/GS/RS separators that Python's
 * `str.splitlines` also breaks on). CommonMark itself breaks only on LF, CR and CRLF.
 */
const LINE_START = String.raw`(?<=^|[\n\v\f\x1c-\x1e\x85\u2028\u2029]|\r(?!\n))`;

/**
 * Characters that show as blank or as nothing: whitespace other than line terminators, and default-ignorable
 * code points (zero-width space and joiners, word joiner, BOM, soft hyphen, bidi controls, Hangul fillers,
 * variation selectors, tags), plus the blank braille pattern. A marker after them looks like one at the
 * start of the line, so it is escaped there too.
 */
const BLANK = String.raw`[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800\p{Default_Ignorable_Code_Point}]`;

/** The end of a line for any reader (see LINE_START), or of the text. */
const EOL = String.raw`(?:[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]|$)`;

/**
 * Markdown (CommonMark). An item is one paragraph: its header line, then its body. Inside a paragraph only
 * these constructs can start a block or turn the paragraph into something else (a setext heading, a table),
 * and each is escaped with a backslash, which CommonMark reads as the literal character:
 * - at the start of a line, after any blanks: `>` (block quote), `#` (ATX heading), `[` (a block marker
 *   lookalike, a link reference or footnote definition), `|` and `:` (table rows of GFM-style parsers);
 *   `=` `-` `*` `_` `+` before a space, a tab, the end of the line or (for `=` `-` `*` `_`) the same
 *   character (setext underlines, thematic breaks, list items; `-` also before `|` `:`, table delimiter
 *   rows); three backticks or tildes (code fences); a number of up to nine digits followed by `.` or `)`
 *   and a space, tab or line end (ordered list items; the `.` or `)` is escaped);
 * - a blank line (it would end the paragraph): a backslash is put on it, which CommonMark reads as a hard
 *   line break, so the content's paragraphs stay visibly apart inside the one block;
 * - anywhere, `<` that could open raw HTML, an HTML block or an autolink (`<a`, `</`, `<!--`, `<?`, `<!X`)
 *   and `&` that could form an entity or character reference (which could produce any character, a line
 *   break too). A backslash already in front of them counts: one more is added only when the run of
 *   backslashes before them is even (an odd run already escapes them).
 * Indented code cannot interrupt a paragraph, so indentation is left alone.
 */
const MARKDOWN_ESCAPE = new RegExp(
  `${LINE_START}${BLANK}*(?:(?:` +
    [
      '[>#[|:]',
      `[=](?=[= \\t]|${EOL})`,
      `-(?=[- \\t|:]|${EOL})`,
      `[*](?=[* \\t]|${EOL})`,
      `_(?=[_ \\t]|${EOL})`,
      `[+](?=[ \\t]|${EOL})`,
      '`(?=``)',
      '~(?=~~)',
    ].join('|') +
    `)|\\d{1,9}(?=[.)](?:[ \\t]|${EOL}))|(?=[\\r\\n]))` +
    String.raw`|\\*(?:<(?=[A-Za-z/!?])|&(?=#|[A-Za-z0-9]+;))`,
  'gu',
);

/** The text format: block headers `[n] ...` and zone lines `== Zone ==`; a content line that starts like them is escaped. */
const TEXT_ESCAPE = new RegExp(`${LINE_START}${BLANK}*[[=]`, 'gu');

/** Markdown inside one header line: brackets (links, images), raw HTML and entity references. */
const MARKDOWN_INLINE_ESCAPE = /\\*(?:[[\]]|<(?=[A-Za-z/!?])|&(?=#|[A-Za-z0-9]+;))/gu;

/** `&`, `<`, `>`, and characters XML 1.0 does not allow in a document at all (not even as references). */
const XML_ESCAPE = /[&<>\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|\p{Surrogate}/gu;

const XML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** A non-global twin for the fast path: `search` finds whether there is anything to escape at all. */
function probe(pattern: RegExp): RegExp {
  return new RegExp(pattern.source, pattern.flags.replace('g', ''));
}
const MARKDOWN_PROBE = probe(MARKDOWN_ESCAPE);
const TEXT_PROBE = probe(TEXT_ESCAPE);
const MARKDOWN_INLINE_PROBE = probe(MARKDOWN_INLINE_ESCAPE);
const XML_PROBE = probe(XML_ESCAPE);

// The replacers read what to do from the match itself, not from capture groups: V8 (11.3, Node 20) was seen
// to report a group that did not take part in a match as "" instead of undefined with this pattern.

/** Inserts a backslash before the last character of `match` unless an odd run of backslashes precedes it. */
function escapeLast(match: string): string {
  const backslashes = match.length - 1 - match.slice(0, -1).replace(/\\+$/u, '').length;
  if (backslashes % 2 === 1) return match;
  return `${match.slice(0, -1)}\\${match.slice(-1)}`;
}

const DIGIT = /\d$/u;
const LAST_IS_MARKER = /[>#[|:=*_+`~<&-]$/u;

function markdownReplacer(match: string): string {
  // A number of an ordered list item: the `.` or `)` after it is what gets escaped.
  if (DIGIT.test(match)) return `${match}\\`;
  // A line-start marker, or an inline `<` or `&` (after its run of backslashes).
  if (LAST_IS_MARKER.test(match)) return escapeLast(match);
  // A blank line (only blanks, or nothing): a hard line break keeps the paragraph going.
  return `${match}\\`;
}

function escapeMarkdown(text: string): string {
  if (text.search(MARKDOWN_PROBE) === -1) return text;
  return text.replace(MARKDOWN_ESCAPE, markdownReplacer);
}

function escapeMarkdownInline(text: string): string {
  if (text.search(MARKDOWN_INLINE_PROBE) === -1) return text;
  return text.replace(MARKDOWN_INLINE_ESCAPE, escapeLast);
}

function escapeText(text: string): string {
  if (text.search(TEXT_PROBE) === -1) return text;
  return text.replace(TEXT_ESCAPE, escapeLast);
}

/** XML character data: entities for `& < >`; characters XML cannot carry become U+FFFD. */
export function escapeXml(text: string): string {
  if (text.search(XML_PROBE) === -1) return text;
  return text.replace(XML_ESCAPE, (char) => XML_ENTITIES[char] ?? '\ufffd');
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

/** One line: no line terminator, control or bidi control; whitespace runs become one space; trimmed. */
export function oneLine(value: string): string {
  return value.replace(NOT_ONE_LINE, ' ').replace(/\s+/gu, ' ').trim();
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

/** A one-line field as it appears inside a header line of `format` (markdown or text). */
export function headerField(format: PackFormat, value: string): string {
  const quoted = quoteField(oneLine(value));
  return format === 'markdown' ? escapeMarkdownInline(quoted) : quoted;
}
