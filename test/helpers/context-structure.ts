/**
 * Independent readers of a pack's context, one per format, for the rendering-safety tests (rule 9):
 * - markdown: two CommonMark parsers (markdown-it in CommonMark mode, and commonmark.js, the reference
 *   implementation) must see exactly the zone headings, one paragraph per item opening with its `[ref]`
 *   header, then only the item's own content (paragraphs that do not open with a `[n]` marker, lists, code
 *   blocks, rules) up to the next header, heading or the caveats list; no HTML, block quote, table, link
 *   reference definition or heading made by content, anywhere;
 * - xml: a strict XML 1.0 parser (saxes) must read exactly the expected elements, with every field and body
 *   as its text;
 * - text, and the raw text of every format: split at every Unicode line terminator (as Python's
 *   `str.splitlines` does), only the pack's own lines may start, after any blank or invisible prefix, like
 *   one of the pack's own lines: a `[n]` marker (`[` then a number), and in markdown a `## ` zone heading, in
 *   text a `=` zone line;
 * - every header line parses back into the item's own fields (no field passes for another).
 * Written from the format descriptions, not from the renderer: they share no code with src/render.
 */
import { Parser as CommonMarkParser, type Node as CommonMarkNode } from 'commonmark';
import MarkdownIt from 'markdown-it';

import { SaxesParser } from 'saxes';
import { expect } from 'vitest';
import type { Pack } from '../../src/index.js';

const markdownIt = new MarkdownIt('commonmark');
const commonMark = new CommonMarkParser();
/** markdown-it's default preset adds GFM tables (and strikethrough) to CommonMark. */
const markdownItWithTables = new MarkdownIt('default', { html: true });
type Token = ReturnType<typeof markdownIt.parse>[number];

/** What the pack was asked to render, beyond what the pack itself records. */
export interface RenderExpectation {
  gaps?: readonly string[];
  contradictions?: readonly string[];
  entity?: string | null;
}

/** Python's `str.splitlines` line boundaries. */
export const LINE_TERMINATORS = ['\r\n', '\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029'] as const;
// eslint-disable-next-line no-control-regex -- Python's line boundaries include control characters
const SPLIT_LINES = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/u;
/** Blank or invisible characters a reader does not see at the start of a line. */
const INVISIBLE_PREFIX = /^[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800\p{Default_Ignorable_Code_Point}]*/u;
/** A `[n]` marker as a reader sees one: `[`, then blanks, invisibles or more brackets, then a digit of any script. */
const MARKER_LOOKALIKE = /^\[[\t \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800\p{Default_Ignorable_Code_Point}[]*\p{Nd}/u;

export function splitLines(text: string): string[] {
  return text.split(SPLIT_LINES);
}

/** What a one-line field becomes: no control, line terminator or bidi control; whitespace collapsed. */
export function expectedOneLine(value: string): string {
  return value
    .replace(/[\p{Cc}\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

const stripBackslashes = (s: string) => s.replaceAll('\\', '');

// ---------------------------------------------------------------------------------------------
// Header lines: `[ref] TITLE (source: S, version: V, section: A > B, LOCATOR)[ — pinned; not shown in full (N tokens ...)]`,
// LOCATOR being `p. N`, `line N` or `lines N–M`, `MM:SS–MM:SS` (or `H:MM:SS`), in that order, joined by ", ".
// A value is bare (none of `( ) [ ] , " >`) or in double quotes with inner quotes doubled.

export interface ParsedHeader {
  ref: number;
  title?: string;
  source: string;
  version?: string;
  section?: string[];
  locator?: string;
  pointerTokens?: number;
}

const LOCATOR_PART = /^, (p\. \d+|lines? \d+(?:–\d+)?|(?:\d+:)?\d\d:\d\d–(?:\d+:)?\d\d:\d\d)/u;

/** A citation's locator as a header shows it (the grammar above), or undefined. */
export function expectedLocator(locator: Pack['citations'][number]['locator']): string | undefined {
  if (locator === undefined) return undefined;
  const clock = (seconds: number) => {
    const whole = Math.floor(seconds);
    const [h, m, s] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
    const mmss = `${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
    return h > 0 ? `${h}:${mmss}` : mmss;
  };
  const parts: string[] = [];
  if (locator.page !== undefined) parts.push(`p. ${locator.page}`);
  if (locator.lines !== undefined)
    parts.push(locator.lines[0] === locator.lines[1] ? `line ${locator.lines[0]}` : `lines ${locator.lines[0]}–${locator.lines[1]}`);
  if (locator.time !== undefined) parts.push(`${clock(locator.time[0])}–${clock(locator.time[1])}`);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

function readValue(line: string, at: number): { value: string; end: number } {
  if (line[at] === '"') {
    let value = '';
    let i = at + 1;
    for (;;) {
      const quote = line.indexOf('"', i);
      if (quote === -1) throw new Error(`unterminated quoted value in header: ${JSON.stringify(line)}`);
      value += line.slice(i, quote);
      if (line[quote + 1] === '"') {
        value += '"';
        i = quote + 2;
        continue;
      }
      return { value, end: quote + 1 };
    }
  }
  let end = at;
  while (end < line.length && !'()[]",>'.includes(line[end]!)) end += 1;
  return { value: line.slice(at, end), end };
}

function expectLiteral(line: string, at: number, literal: string): number {
  if (!line.startsWith(literal, at)) {
    throw new Error(`expected ${JSON.stringify(literal)} at ${at} in header ${JSON.stringify(line)}`);
  }
  return at + literal.length;
}

/** Parses one header line by the grammar above; throws when the line does not follow it. */
export function parseHeader(line: string): ParsedHeader {
  const marker = /^\[(\d+)\] /.exec(line);
  if (marker === null) throw new Error(`not a header: ${JSON.stringify(line)}`);
  let at = marker[0].length;
  const header: Partial<ParsedHeader> = { ref: Number(marker[1]) };
  if (line[at] !== '(') {
    const title = readValue(line, at);
    // A bare title runs up to the provenance's "(" and so ends with the space before it.
    const bare = line[at] !== '"';
    header.title = bare ? title.value.replace(/ $/u, '') : title.value;
    at = bare ? title.end : expectLiteral(line, title.end, ' ');
    if (bare && !title.value.endsWith(' ')) throw new Error(`title not followed by " (" in ${JSON.stringify(line)}`);
  }
  at = expectLiteral(line, at, '(source: ');
  const source = readValue(line, at);
  header.source = source.value;
  at = source.end;
  if (line.startsWith(', version: ', at)) {
    const version = readValue(line, at + ', version: '.length);
    header.version = version.value;
    at = version.end;
  }
  if (line.startsWith(', section: ', at)) {
    at += ', section: '.length;
    const parts: string[] = [];
    for (;;) {
      const part = readValue(line, at);
      const bare = line[at] !== '"';
      const next = bare ? part.end - (part.value.endsWith(' ') ? 1 : 0) : part.end;
      parts.push(bare ? part.value.replace(/ $/u, '') : part.value);
      at = next;
      if (line.startsWith(' > ', at)) {
        at += 3;
        continue;
      }
      break;
    }
    header.section = parts;
  }
  const locator: string[] = [];
  for (let part = LOCATOR_PART.exec(line.slice(at)); part !== null; part = LOCATOR_PART.exec(line.slice(at))) {
    locator.push(part[1]!);
    at += part[0].length;
  }
  if (locator.length > 0) header.locator = locator.join(', ');
  at = expectLiteral(line, at, ')');
  const rest = line.slice(at);
  if (rest !== '') {
    const note = /^ — pinned; not shown in full \((\d+) tokens did not fit the budget\)$/u.exec(rest);
    if (note === null) throw new Error(`unexpected text after the provenance: ${JSON.stringify(line)}`);
    header.pointerTokens = Number(note[1]);
  }
  return header as ParsedHeader;
}

/**
 * Compact and minimal header lines: `[ref] NAME[ (LOCATOR)][ — pinned; ...]`, NAME a value (bare or quoted) and
 * LOCATOR (compact only) its parts joined by ", ". Returned with NAME as `source`.
 */
export function parseShortHeader(line: string): ParsedHeader {
  const marker = /^\[(\d+)\] /.exec(line);
  if (marker === null) throw new Error(`not a header: ${JSON.stringify(line)}`);
  let rest = line.slice(marker[0].length);
  const header: Partial<ParsedHeader> = { ref: Number(marker[1]) };
  const note = / — pinned; not shown in full \((\d+) tokens did not fit the budget\)$/u.exec(rest);
  if (note !== null) {
    header.pointerTokens = Number(note[1]);
    rest = rest.slice(0, note.index);
  }
  const name = readValue(rest, 0);
  const bare = rest[0] !== '"';
  header.source = bare ? name.value.replace(/ $/u, '') : name.value;
  let at = bare && name.value.endsWith(' ') ? name.end - 1 : name.end;
  if (at < rest.length) {
    at = expectLiteral(rest, at, ' (');
    if (!rest.endsWith(')')) throw new Error(`expected ")" at the end of ${JSON.stringify(line)}`);
    const parts = rest.slice(at, -1).split(', ');
    for (const part of parts) {
      if (LOCATOR_PART.exec(`, ${part}`)?.[1] !== part)
        throw new Error(`not a locator part: ${JSON.stringify(part)} in ${JSON.stringify(line)}`);
    }
    header.locator = parts.join(', ');
    at = rest.length;
    if (at !== rest.length) throw new Error(`unexpected text after the locator: ${JSON.stringify(line)}`);
  }
  return header as ParsedHeader;
}

/** The one name a compact or minimal header shows: the title, or the source when there is none or it is the source. */
export function expectedName(citation: Pack['citations'][number]): { field: 'title' | 'source'; value: string } {
  const source = expectedOneLine(citation.sourceId);
  const title = citation.title === undefined ? '' : expectedOneLine(citation.title);
  return title === '' || title === source ? { field: 'source', value: source } : { field: 'title', value: title };
}

/** The header fields an item must show, from its citation (which holds the candidate's own values). */
function expectedHeader(pack: Pack, index: number): ParsedHeader {
  if (pack.header !== 'full') {
    const item = pack.items[index]!;
    const citation = pack.citations[index]!;
    const header: ParsedHeader = { ref: item.ref, source: expectedName(citation).value };
    const locator = pack.header === 'compact' ? expectedLocator(citation.locator) : undefined;
    if (locator !== undefined) header.locator = locator;
    if (item.pointer) header.pointerTokens = item.tokens;
    return header;
  }
  const item = pack.items[index]!;
  const citation = pack.citations[index]!;
  const header: ParsedHeader = { ref: item.ref, source: expectedOneLine(citation.sourceId) };
  if (citation.title !== undefined && expectedOneLine(citation.title) !== '') header.title = expectedOneLine(citation.title);
  if (citation.version !== undefined && expectedOneLine(citation.version) !== '') header.version = expectedOneLine(citation.version);
  if (citation.section !== undefined && citation.section.length > 0) header.section = citation.section.map(expectedOneLine);
  const locator = expectedLocator(citation.locator);
  if (locator !== undefined) header.locator = locator;
  if (item.pointer) header.pointerTokens = item.tokens;
  return header;
}

function checkHeader(pack: Pack, index: number, line: string, markdown: boolean): void {
  const parsed = pack.header === 'full' ? parseHeader(line) : parseShortHeader(line);
  const expected = expectedHeader(pack, index);
  // Markdown headers escape `[ ] < &` with backslashes (CommonMark drops them when it renders).
  const norm = (h: ParsedHeader): ParsedHeader =>
    markdown
      ? (JSON.parse(
          JSON.stringify(h, (_key, value: unknown) => (typeof value === 'string' ? stripBackslashes(value) : value)),
        ) as ParsedHeader)
      : h;
  expect(norm(parsed)).toEqual(norm(expected));
}

// ---------------------------------------------------------------------------------------------
// The raw view: lines at every Unicode line terminator

const ZONE_TITLES = { grounding: 'Grounding', evidence: 'Evidence' } as const;

interface RawLine {
  text: string;
  start: number;
}

function rawLines(context: string): RawLine[] {
  const out: RawLine[] = [];
  const pattern = new RegExp(SPLIT_LINES.source, 'gu');
  let start = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(context)) !== null) {
    out.push({ text: context.slice(start, match.index), start });
    start = match.index + match[0].length;
  }
  out.push({ text: context.slice(start), start });
  return out;
}

/** The lines the pack itself writes (headers, zone headings, caveats), in order, by format. */
function ownLineKinds(pack: Pack): { headers: number[]; zones: string[] } {
  const roles = pack.items.map((i) => i.role);
  const zones: string[] = [];
  if (pack.kind === 'briefing') {
    if (roles.includes('grounding')) zones.push(ZONE_TITLES.grounding);
    if (roles.includes('evidence')) zones.push(ZONE_TITLES.evidence);
    if (pack.caveats !== null) zones.push('Caveats');
  }
  return { headers: pack.items.map((i) => i.ref), zones };
}

/**
 * Splits the context at every Unicode line terminator. Lines whose first visible character is a marker
 * (`[`, `#`, `=`, `>`) must be the pack's own headers and zone lines, without any prefix, in order; and every
 * header line parses back into its item's fields. Returns the header lines' positions.
 */
function checkRawLines(pack: Pack, markdown: boolean): RawLine[] {
  const lines = rawLines(pack.context);
  const headers: RawLine[] = [];
  const zones: string[] = [];
  let inCaveats = false;
  for (const line of lines) {
    const prefix = INVISIBLE_PREFIX.exec(line.text)![0];
    const visible = line.text.slice(prefix.length);
    if (/^\[\d+\] /u.test(line.text)) {
      headers.push(line);
      continue;
    }
    const zone = markdown ? /^## (.*)$/u.exec(line.text) : /^== (.*) ==$/u.exec(line.text);
    if (zone !== null) {
      zones.push(zone[1]!);
      inCaveats = zone[1] === 'Caveats';
      continue;
    }
    if (inCaveats && line.text.startsWith('- ')) continue;
    // Anything else is content: it must not start, after any prefix, like one of the pack's own lines (a
    // block header, or a zone line of this format). Markdown of its own (lists, code, rules) is the markdown
    // readers' to check, below.
    const own = markdown ? /^##(?:[ \t]|$)/u : /^=/u;
    expect(MARKER_LOOKALIKE.test(visible) || own.test(visible), `content line looks like a marker: ${JSON.stringify(line.text)}`).toBe(
      false,
    );
  }
  const own = ownLineKinds(pack);
  expect(headers.map((h) => Number(/^\[(\d+)\]/u.exec(h.text)![1]))).toEqual(own.headers);
  expect(zones).toEqual(own.zones);
  headers.forEach((line, index) => checkHeader(pack, index, line.text, markdown));
  return headers;
}

/**
 * The caveat lines that carry the caller's slots show exactly those values, one line each, in order; pins that
 * were not found are listed as header-style values (quoted when needed), so one pin cannot pass for two.
 * `actual` and `expected` normalise the rendered line and the caller's value for comparison.
 */
function checkCaveatSlots(
  pack: Pack,
  lines: readonly string[],
  expectation: RenderExpectation,
  actual: (line: string) => string,
  expected: (value: string) => string,
): void {
  const plain = lines.map(actual);
  // (a value that is blank on one line leaves "Label:" alone, the line being trimmed)
  const slot = (label: string) =>
    plain.filter((l) => l === `${label}:` || l.startsWith(`${label}: `)).map((l) => l.slice(label.length + 2));
  const want = (values: readonly string[]) => values.map((v) => expected(expectedOneLine(v)));
  if (expectation.entity !== undefined && expectation.entity !== null) expect(slot('Entity')).toEqual(want([expectation.entity]));
  if (expectation.gaps) expect(slot('Gap')).toEqual(want(expectation.gaps));
  if (expectation.contradictions) expect(slot('Contradiction')).toEqual(want(expectation.contradictions));
  const missing = pack.briefing?.missingPins ?? [];
  const listed = slot('Pinned but not found');
  if (missing.length === 0) {
    expect(listed).toEqual([]);
    return;
  }
  expect(listed).toHaveLength(1);
  const line = listed[0]!;
  const pins: string[] = [];
  let at = 0;
  for (;;) {
    const { value, end } = readValue(line, at);
    const last = end === line.length;
    // A bare last value runs into the closing full stop.
    pins.push(line[at] !== '"' && last ? value.replace(/\.$/u, '') : value);
    if (last || line.slice(end) === '.') break;
    expect(line.startsWith(', ', end), `pins separated by ", " in ${JSON.stringify(line)}`).toBe(true);
    at = end + 2;
  }
  expect(pins).toEqual(want(missing));
}

// ---------------------------------------------------------------------------------------------
// text

export function checkTextContext(pack: Pack, expectation: RenderExpectation = {}): void {
  if (pack.context === '') return;
  const headers = checkRawLines(pack, false);
  // Each body runs from its header's line end to the next of the pack's own lines.
  const ends = [...headers.slice(1).map((h) => h.start), ...zoneStarts(pack.context, /^== (Grounding|Evidence|Caveats) ==$/u)].sort(
    (a, b) => a - b,
  );
  headers.forEach((header, index) => {
    const item = pack.items[index]!;
    const end = ends.find((e) => e > header.start) ?? pack.context.length;
    let block = pack.context.slice(header.start, end);
    if (end < pack.context.length) {
      expect(block.endsWith('\n\n'), 'blocks are separated by a blank line').toBe(true);
      block = block.slice(0, -2);
    }
    if (item.pointer) {
      expect(block).toBe(header.text);
      return;
    }
    const body = block.slice(header.text.length + 1);
    // The text format escapes by inserting backslashes only.
    expect(stripBackslashes(body)).toBe(stripBackslashes(item.text + (item.truncated ? ' …' : '')));
  });
  if (pack.caveats !== null) {
    const lines = pack.caveats.split('\n');
    expect(lines[0]).toBe('== Caveats ==');
    expect(lines.slice(1).every((l) => l.startsWith('- '))).toBe(true);
    checkCaveatSlots(
      pack,
      lines.slice(1).map((l) => l.slice(2)),
      expectation,
      (l) => l,
      (v) => v,
    );
  }
}

function zoneStarts(context: string, zone: RegExp): number[] {
  return rawLines(context)
    .filter((l) => zone.test(l.text))
    .map((l) => l.start);
}

// ---------------------------------------------------------------------------------------------
// markdown

/** markdown-it's own input normalisation (CRLF and CR to LF, NUL to U+FFFD), so line numbers match. */
function normaliseForMarkdownIt(text: string): string {
  return text.replace(/\r\n?/gu, '\n').replace(/\0/gu, '\ufffd');
}

/** Blocks content may never make: HTML (which can hide what follows), block quotes, tables. */
const FORBIDDEN_BLOCKS = new Set(['html_block', 'blockquote_open', 'table_open']);
/** Blocks an item's content may hold after its header paragraph (top level), beside paragraphs. */
const CONTENT_BLOCKS = new Set(['bullet_list_open', 'ordered_list_open', 'code_block', 'fence', 'hr']);
/** Text that opens with a `[n]` marker, as rendered (after any whitespace). */
const RENDERED_MARKER = /^[\s\p{Default_Ignorable_Code_Point}]*\[[\s\p{Default_Ignorable_Code_Point}[]*\p{Nd}/u;

/** The plain text of a node's inline children up to the first line break. */
function firstLineText(node: CommonMarkNode): string {
  let text = '';
  for (let child = node.firstChild; child !== null; child = child.next) {
    if (child.type === 'softbreak' || child.type === 'linebreak') break;
    if (child.type === 'text' || child.type === 'code') text += child.literal ?? '';
    else text += firstLineText(child);
  }
  return text;
}

/**
 * The top-level structure a reader takes from a markdown context: zone headings, item headers (a paragraph
 * opening with `[n] `), the caveats list; an item's content (paragraphs, lists, code, rules) after its header
 * is part of the item, and a paragraph of content must not open with a `[n]` marker.
 */
function topLevelShape(blocks: readonly { type: string; text: string; heading: boolean }[]): string[] {
  const seen: string[] = [];
  let inItem = false;
  for (const block of blocks) {
    if (block.heading) {
      seen.push(`heading:${block.text}`);
      inItem = false;
      continue;
    }
    const marker = block.type === 'paragraph' ? /^\[(\d+)\] /u.exec(block.text) : null;
    if (marker !== null) {
      seen.push(`paragraph:[${marker[1]}]`);
      inItem = true;
      continue;
    }
    if (inItem && block.type === 'paragraph') {
      expect(RENDERED_MARKER.test(block.text), `a paragraph of content opens with a marker: ${JSON.stringify(block.text)}`).toBe(false);
      continue;
    }
    if (inItem) continue;
    seen.push(block.type === 'paragraph' ? `paragraph:${JSON.stringify(block.text.slice(0, 40))}` : block.type);
  }
  return seen;
}

/** The same structure as read by commonmark.js, the CommonMark reference implementation. */
function checkWithReferenceParser(pack: Pack, expected: readonly string[], caveatCount: number): void {
  const document = commonMark.parse(pack.context);
  const walker = document.walker();
  for (let event = walker.next(); event !== null; event = walker.next()) {
    if (!event.entering) continue;
    expect(['html_block', 'html_inline', 'block_quote'], 'commonmark.js').not.toContain(event.node.type);
    if (event.node.type === 'heading') expect(event.node.parent?.type, 'a heading made by content').toBe('document');
  }
  const blocks: { type: string; text: string; heading: boolean }[] = [];
  let caveatsList: CommonMarkNode | null = null;
  let afterCaveats = false;
  for (let node = document.firstChild; node !== null; node = node.next) {
    if (node.type === 'heading') {
      expect(node.level).toBe(2);
      expect(node.sourcepos[0][0], 'an ATX heading: one line').toBe(node.sourcepos[1][0]);
      afterCaveats = firstLineText(node) === 'Caveats';
      blocks.push({ type: 'heading', text: firstLineText(node), heading: true });
    } else if (node.type === 'paragraph') {
      blocks.push({ type: 'paragraph', text: firstLineText(node), heading: false });
    } else {
      expect(['list', 'code_block', 'thematic_break'], `top-level ${node.type}`).toContain(node.type);
      if (afterCaveats && node.type === 'list') caveatsList = node;
      blocks.push({ type: node.type, text: '', heading: false });
    }
  }
  expect(topLevelShape(blocks)).toEqual(expected);
  if (caveatCount > 0) {
    const list = caveatsList;
    expect(list?.listType).toBe('bullet');
    const items: CommonMarkNode[] = [];
    for (let item = list?.firstChild ?? null; item !== null; item = item.next) items.push(item);
    expect(items).toHaveLength(caveatCount);
    for (const item of items) {
      expect(item.firstChild?.type).toBe('paragraph');
      expect(item.firstChild?.next).toBeNull();
    }
  }
}

export function checkMarkdownContext(pack: Pack, expectation: RenderExpectation = {}): void {
  if (pack.context === '') return;
  checkRawLines(pack, true);
  const source = normaliseForMarkdownIt(pack.context);
  const sourceLines = source.split('\n');
  const env: { references?: Record<string, unknown> } = {};
  const tokens = markdownIt.parse(pack.context, env as Parameters<typeof markdownIt.parse>[1]);
  // No link reference definition: it hides its line and could retarget links elsewhere.
  expect(env.references ?? {}, 'a link reference definition').toEqual({});

  // No HTML anywhere, inline or block; no quote or table; headings only the zones (top level).
  for (const token of tokens) {
    expect(FORBIDDEN_BLOCKS.has(token.type), `content opened ${token.type}`).toBe(false);
    if (token.type === 'heading_open') expect(token.level, 'a heading made by content').toBe(0);
    for (const child of token.children ?? []) expect(child.type, 'inline HTML').not.toBe('html_inline');
  }

  // The top level: zone headings (h2, ATX), one paragraph per item and its content, one bullet list for the caveats.
  const top = tokens.filter((t) => t.level === 0 && t.nesting !== -1);
  const expected: string[] = [];
  const zoneOf = (role: string) => (role === 'grounding' ? ZONE_TITLES.grounding : ZONE_TITLES.evidence);
  let zone: string | null = null;
  for (const item of pack.items) {
    if (pack.kind === 'briefing' && zoneOf(item.role) !== zone) {
      zone = zoneOf(item.role);
      expected.push(`heading:${zone}`);
    }
    expected.push(`paragraph:[${item.ref}]`);
  }
  if (pack.caveats !== null) expected.push('heading:Caveats', 'list');
  const inlineAfter = (token: Token) => tokens[tokens.indexOf(token) + 1]!;
  const blocks = top
    .map((t) => {
      if (t.type === 'heading_open') {
        expect(t.markup, 'an ATX heading').toBe('##');
        return { type: 'heading', text: inlineAfter(t).content, heading: true };
      }
      if (t.type === 'paragraph_open') return { type: 'paragraph', text: inlineAfter(t).content, heading: false };
      if (t.type === 'bullet_list_open' || t.type === 'ordered_list_open') return { type: 'list', text: '', heading: false };
      expect(CONTENT_BLOCKS.has(t.type) || t.type === 'inline', `top-level ${t.type}`).toBe(true);
      return { type: t.type, text: '', heading: false };
    })
    .filter((b) => b.type !== 'inline');
  expect(topLevelShape(blocks)).toEqual(expected);
  checkWithReferenceParser(pack, expected, pack.caveats === null ? 0 : pack.caveats.split('\n').length - 2);
  const withTables = markdownItWithTables.parse(pack.context, {});
  expect(
    withTables.filter((t) => t.type === 'table_open' || t.type === 'html_block'),
    'GFM-style tables',
  ).toEqual([]);

  // Each item: its header paragraph and every top-level block after it up to the next header, heading or the
  // caveats list; together they span its whole block, header line then every line of its body.
  const isHeaderParagraph = (t: Token) => t.type === 'paragraph_open' && /^\[\d+\] /u.test(inlineAfter(t).content);
  const groups: Token[][] = [];
  let open = false;
  for (const t of top) {
    if (isHeaderParagraph(t)) {
      groups.push([t]);
      open = true;
    } else if (t.type === 'heading_open') open = false;
    else if (open && t.type !== 'inline') groups.at(-1)!.push(t);
  }
  // The caveats list follows the Caveats heading, so it never joins an item's group.
  groups.forEach((group, index) => {
    const first = group[0]!;
    const item = pack.items[index]!;
    const inline = inlineAfter(first);
    // The header line is plain: the first child is text opening with the marker, and before the first line
    // break there is no link, image or HTML (so no part of the header is hidden or re-targeted).
    const children = inline.children ?? [];
    expect(children[0]?.type).toBe('text');
    expect(children[0]?.content.startsWith(`[${item.ref}] `)).toBe(true);
    const firstBreak = children.findIndex((c) => c.type === 'softbreak' || c.type === 'hardbreak');
    const headerChildren = firstBreak === -1 ? children : children.slice(0, firstBreak);
    for (const child of headerChildren) expect(['link_open', 'image', 'html_inline']).not.toContain(child.type);

    const [from] = first.map!;
    const to = Math.max(...group.map((t) => t.map![1]));
    const lines = sourceLines.slice(from, to);
    if (item.pointer) {
      expect(lines).toHaveLength(1);
      return;
    }
    const body = lines.slice(1).join('\n');
    // Markdown escapes by inserting backslashes only.
    const expectedBody = normaliseForMarkdownIt(item.text + (item.truncated ? ' …' : ''));
    const trimEnd = (s: string) => stripBackslashes(s).replace(/[\n \t]*$/u, '');
    expect(trimEnd(body)).toBe(trimEnd(expectedBody));
  });

  // The caveats: one list item per line, each a single paragraph, nothing nested.
  if (pack.caveats !== null) {
    const caveatsHeading = top.findIndex((t) => t.type === 'heading_open' && inlineAfter(t).content === 'Caveats');
    const list = top.slice(caveatsHeading).find((t) => t.type === 'bullet_list_open')!;
    const start = tokens.indexOf(list);
    const end = tokens.findIndex((t, i) => i > start && t.type === 'bullet_list_close' && t.level === 0);
    const inside = tokens.slice(start + 1, end);
    const items = inside.filter((t) => t.type === 'list_item_open');
    const raw = pack.caveats.split('\n').slice(2);
    expect(items).toHaveLength(raw.length);
    expect(inside.map((t) => t.type)).toEqual(
      raw.flatMap(() => ['list_item_open', 'paragraph_open', 'inline', 'paragraph_close', 'list_item_close']),
    );
    checkCaveatSlots(
      pack,
      raw.map((l) => l.slice(2)),
      expectation,
      stripBackslashes,
      stripBackslashes,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// xml

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

/** Parses with saxes (strict XML 1.0: well-formedness and allowed characters); throws on any error. */
export function parseXml(xml: string): XmlElement {
  const parser = new SaxesParser();
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  // Set by the handlers: typed wide, or tsc narrows it to null at the `throw` below (it cannot see them assign it).
  let failure = null as Error | null;
  parser.on('error', (error) => {
    failure ??= error;
  });
  parser.on('opentag', (node) => {
    const element: XmlElement = { name: node.name, attributes: { ...(node.attributes as Record<string, string>) }, children: [], text: '' };
    stack.at(-1)!.children.push(element);
    stack.push(element);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.on('text', (text) => {
    stack.at(-1)!.text += text;
  });
  for (const event of ['cdata', 'comment', 'processinginstruction', 'doctype'] as const) {
    parser.on(event, () => {
      failure ??= new Error(`unexpected ${event}`);
    });
  }
  parser.write(xml).close();
  if (failure !== null) throw failure;
  return root;
}

/** What XML can carry of a string: characters outside XML 1.0 become U+FFFD; line ends read as LF. */
function xmlText(value: string): string {
  return (
    value
      // eslint-disable-next-line no-control-regex -- the control characters XML 1.0 forbids
      .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|\p{Surrogate}/gu, '\ufffd')
      .replace(/\r\n?/gu, '\n')
  );
}

const quoteIfNeeded = (value: string) => (value !== '' && !/[()[\]",>]/u.test(value) ? value : `"${value.replaceAll('"', '""')}"`);

export function checkXmlContext(pack: Pack, expectation: RenderExpectation = {}): void {
  if (pack.context === '') return;
  const document = parseXml(pack.context);
  expect(document.children).toHaveLength(1);
  const root = document.children[0]!;
  const documents: XmlElement[] = [];
  if (pack.kind === 'bundle') {
    expect(root.name).toBe('documents');
    documents.push(...root.children);
  } else {
    expect(root.name).toBe('briefing');
    const zones = root.children.map((c) => c.name);
    const expectedZones = [
      ...(pack.items.some((i) => i.role === 'grounding') ? ['grounding'] : []),
      ...(pack.items.some((i) => i.role === 'evidence') ? ['evidence'] : []),
      ...(pack.caveats !== null ? ['caveats'] : []),
    ];
    expect(zones).toEqual(expectedZones);
    for (const zone of root.children.filter((c) => c.name !== 'caveats')) {
      for (const child of zone.children) documents.push(child);
      const roles = pack.items.filter((i) => i.role === zone.name).map((i) => i.ref);
      expect(zone.children.map((c) => Number(c.attributes.index))).toEqual(roles);
    }
    const caveats = root.children.find((c) => c.name === 'caveats');
    if (caveats !== undefined) {
      expect(caveats.children).toEqual([]);
      const lines = caveats.text.split('\n').filter((l) => l !== '');
      expect(lines.every((l) => l.startsWith('- '))).toBe(true);
      checkCaveatSlots(
        pack,
        lines.map((l) => l.slice(2)),
        expectation,
        (l) => l,
        xmlText,
      );
    }
  }
  expect(documents.map((d) => d.name)).toEqual(pack.items.map(() => 'document'));
  expect(documents.map((d) => d.attributes.index)).toEqual(pack.items.map((i) => String(i.ref)));
  documents.forEach((doc, index) => {
    const item = pack.items[index]!;
    const citation = pack.citations[index]!;
    const fields: Array<[string, string]> = [];
    if (pack.header === 'full') {
      fields.push(['source', xmlText(expectedOneLine(citation.sourceId))]);
      if (citation.title !== undefined && expectedOneLine(citation.title) !== '')
        fields.push(['title', xmlText(expectedOneLine(citation.title))]);
      if (citation.version !== undefined && expectedOneLine(citation.version) !== '')
        fields.push(['version', xmlText(expectedOneLine(citation.version))]);
      if (citation.section !== undefined && citation.section.length > 0) {
        fields.push(['section', xmlText(citation.section.map((p) => quoteIfNeeded(expectedOneLine(p))).join(' > '))]);
      }
    } else {
      const name = expectedName(citation);
      fields.push([name.field, xmlText(name.value)]);
    }
    const locator = pack.header === 'minimal' ? undefined : expectedLocator(citation.locator);
    if (locator !== undefined) fields.push(['locator', locator]);
    if (item.pointer) fields.push(['note', `pinned; not shown in full (${item.tokens} tokens did not fit the budget)`]);
    // (XML reads CR and CRLF as LF over the whole document, so a body's trailing CR joins the tag's line end)
    else fields.push(['document_content', xmlText(`\n${item.text}${item.truncated ? ' …' : ''}\n`)]);
    expect(doc.children.map((c) => [c.name, c.text])).toEqual(fields);
    for (const child of doc.children) expect(child.children).toEqual([]);
  });
}

export function checkContext(pack: Pack, expectation: RenderExpectation = {}): void {
  if (pack.format === 'markdown') checkMarkdownContext(pack, expectation);
  else if (pack.format === 'xml') checkXmlContext(pack, expectation);
  else checkTextContext(pack, expectation);
}
