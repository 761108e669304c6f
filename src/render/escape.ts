import { BoundedCache, cacheFor } from '../base/bounded-cache.js';
import type { PackFormat } from './formats.js';
import {
  OPEN_BRACKET,
  SPACE,
  TAB,
  bracketMarkerAt,
  endsLine,
  forEachLineStart,
  htmlAndReferenceStarts,
  insertBackslashes,
  mayBeBlank,
  skipBlanks,
} from './lines.js';
import { escapeMarkdownBody } from './markdown-body.js';

/*
 * Escaping for the three context formats. Content (item text, and every caller-supplied field) must never
 * create, close, renumber or hide a block. Each escape only inserts characters (a backslash, or an XML entity
 * for `& < >`), in one pass over the lines and over `<` and `&` (found by the engine's fast character scans),
 * and returns its input itself when there is nothing to escape, so token hints for unchanged text stay valid.
 *
 * Written here rather than taken from a package: markdown escapers (e.g. for whole documents) escape every
 * punctuation character, which changes most texts and costs tokens; what a context needs is narrower and
 * exact, and the test suite checks it with a CommonMark parser, a strict XML parser and a line splitter
 * that knows every Unicode line terminator.
 */

/**
 * Markdown item bodies: see markdown-body.ts. One-line markdown values (the briefing's caveat lines, each a list
 * item of the caveats list) are escaped strictly: at their start, after any blanks, everything that could open
 * a block or turn the line into another one is escaped with a backslash (CommonMark reads it as the literal
 * character): `>`, an ATX heading, `[`, `|` and `:` (table rows of GFM-style parsers), `=` `-` `*` `_` `+`
 * before a space, a tab, the end or (for `=` `-` `*` `_`) the same character, three backticks or tildes, an
 * ordered list marker (its `.` or `)`); anywhere, `<` and `&` that could open HTML or a reference.
 */

// Character codes, named.
const [GT, HASH, PIPE, COLON, EQUALS, STAR, UNDERSCORE, DASH, PLUS, BACKTICK, TILDE, DOT, CLOSE_PAREN] = [
  0x3e, 0x23, 0x7c, 0x3a, 0x3d, 0x2a, 0x5f, 0x2d, 0x2b, 0x60, 0x7e, 0x2e, 0x29,
];
const EQUALS_SIGN = EQUALS;

/** Where a backslash goes at the start of a one-line markdown value (see above), or -1. */
function strictMarkdownInsertion(text: string, at: number): number {
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

/**
 * The text format's line markers after the blanks: a `[n]` marker (the block header: `[` then a number, see
 * `bracketMarkerAt`; `[Alba]` is text) and `=` (the zone lines).
 */
function textLineInsertion(text: string, at: number): number {
  const i = skipBlanks(text, at);
  return bracketMarkerAt(text, i) || text.charCodeAt(i) === EQUALS_SIGN ? i : -1;
}

const textMayStart = (code: number) =>
  code < 0x80 ? code === OPEN_BRACKET || code === EQUALS_SIGN || code === SPACE || code === TAB : mayBeBlank(code);

function escapeText(text: string): string {
  const positions: number[] = [];
  forEachLineStart(text, textMayStart, (at) => {
    const insertion = textLineInsertion(text, at);
    if (insertion !== -1) positions.push(insertion);
  });
  return insertBackslashes(text, positions);
}

/** A one-line value escaped strictly for markdown (see above). */
function escapeMarkdownLine(text: string): string {
  const positions: number[] = [];
  const insertion = strictMarkdownInsertion(text, 0);
  if (insertion !== -1) positions.push(insertion);
  htmlAndReferenceStarts(text, positions);
  return insertBackslashes(text, positions);
}

/** A one-line value escaped for the text format: a `[` or `=` at its start (after blanks). */
function escapeTextLine(text: string): string {
  const i = skipBlanks(text, 0);
  const c = text.charCodeAt(i);
  return c === OPEN_BRACKET || c === EQUALS_SIGN ? insertBackslashes(text, [i]) : text;
}

/** Markdown inside one header line: brackets (links, images), raw HTML and entity references. */
const MARKDOWN_INLINE_ESCAPE = /\\*(?:[[\]]|<(?=[A-Za-z/!?])|&(?=#|[A-Za-z0-9]+;))/gu;

/** `&`, `<`, `>`, and characters XML 1.0 does not allow in a document at all (not even as references). */
// eslint-disable-next-line no-control-regex -- the control characters XML forbids are what these find
const XML_ESCAPE = /[&<>\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g;
// eslint-disable-next-line no-control-regex -- as above
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
 * Escapes `text` for the body of a block so it cannot create, close, renumber or hide a block (docs/packing.md
 * says what each format guarantees). `continued`: the renderer appends to the body's last line (a truncated
 * item's ellipsis). Returns `text` itself when nothing needs escaping.
 */
export function escapeBody(format: PackFormat, text: string, continued = false): string {
  switch (format) {
    case 'xml':
      return escapeXml(text);
    case 'markdown':
      return escapeMarkdownBody(text, continued);
    case 'text':
      return escapeText(text);
  }
}

/** Escapes a one-line value shown as a line of its own (a caveat line): strictly, so it stays one plain line. */
export function escapeLine(format: PackFormat, text: string): string {
  switch (format) {
    case 'xml':
      return escapeXml(text);
    case 'markdown':
      return escapeMarkdownLine(text);
    case 'text':
      return escapeTextLine(text);
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
