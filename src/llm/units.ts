/**
 * The citable units of a pack item: the pieces its text is cut into for a provider's citation input (one text
 * block per sentence, line or caption cue), and the way back from a range of the item's text to the exact
 * ranges of the source it shows.
 *
 * An item's text is the chunk's text, a prefix of it (a budget cut), or, with sentence selection, its kept
 * sentences joined by their source gap or an elision marker (" … "); the citation's `spans` record each kept
 * sentence's source range. So the text is read here as segments, each one recoverable byte for byte from the
 * source: one segment (the chunk's `span`, shifted to the prefix) without selection, one per kept sentence with
 * it. Units never cross an elision marker; a unit's source ranges are those of the segments it covers.
 */
import { ELISION } from '../core/sentences.js';
import { splitSentences } from '../core/split.js';
import type { Citation, Locator, PackItem, Span } from '../core/schemas.js';

/** What one text block holds: a sentence, a line, a caption cue (a transcript's line), or the whole item. */
export const GRANULARITIES = ['sentence', 'line', 'cue', 'item'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** `[start, end)` code-unit offsets into an item's text. */
export interface TextRange {
  start: number;
  end: number;
}

/** A piece of the item's text that is the source's text at `source` (absent when the citation has no span). */
interface Segment extends TextRange {
  source: Span | undefined;
  /** An elision marker stands between this segment and the one before it (they are not neighbours in the source). */
  elided: boolean;
}

/** An item cut into citable units. `blocks.join('')` is the item's text exactly (or the placeholder note). */
export interface CitableItem {
  ref: number;
  item: PackItem;
  citation: Citation;
  granularity: Granularity;
  /** The text of each block, in order. */
  blocks: string[];
  /** The core of each block (the unit itself, without the whitespace or marker after it) in the item's text. */
  units: TextRange[];
  /** False when the item shows no source text (a pin pointer, an empty chunk): its one block is a note. */
  citable: boolean;
  segments: readonly Segment[];
}

const NON_BLANK = /\S/u;

/** The granularity an item's locator implies: cues for transcripts (time), lines for code (lines), else sentences. */
function defaultGranularity(locator: Locator | undefined): Granularity {
  if (locator?.time !== undefined) return 'cue';
  if (locator?.lines !== undefined) return 'line';
  return 'sentence';
}

/**
 * The segments of a selected item's text: kept sentence k is `spans[k]` long, and what stands between two of them
 * is either their source gap (whitespace, as long as the gap between their spans) or the elision marker. Read
 * with a memo over (sentence, offset), since a sentence may itself start with "… " and only the lengths decide.
 */
function selectedSegments(text: string, spans: readonly Span[]): Segment[] | undefined {
  const failed = new Set<string>();
  const walk = (k: number, at: number): Segment[] | undefined => {
    const key = `${k}:${at}`;
    if (failed.has(key)) return undefined;
    const span = spans[k] as Span;
    const length = span.end - span.start;
    const tryFrom = (start: number, elided: boolean): Segment[] | undefined => {
      const end = start + length;
      if (end > text.length) return undefined;
      const segment: Segment = { start, end, source: { start: span.start, end: span.end }, elided };
      if (k === spans.length - 1) return end === text.length ? [segment] : undefined;
      const rest = walk(k + 1, end);
      return rest === undefined ? undefined : [segment, ...rest];
    };
    let found: Segment[] | undefined;
    if (k === 0) found = tryFrom(0, false);
    else {
      const previous = spans[k - 1] as Span;
      const gap = span.start - previous.end;
      if (gap >= 0 && !NON_BLANK.test(text.slice(at, at + gap))) found = tryFrom(at + gap, false);
      if (found === undefined && text.startsWith(ELISION, at)) found = tryFrom(at + ELISION.length, true);
    }
    if (found === undefined) failed.add(key);
    return found;
  };
  return spans.length === 0 ? undefined : walk(0, 0);
}

function segmentsOf(text: string, citation: Citation): Segment[] {
  if (citation.spans !== undefined && citation.spans.length > 0) {
    const selected = selectedSegments(text, citation.spans);
    if (selected !== undefined) return selected;
  }
  // Without selection the text is the chunk's text or a prefix of it: offsets shift by the chunk's start.
  const span = citation.span;
  const source =
    span !== undefined && span.end - span.start >= text.length ? { start: span.start, end: span.start + text.length } : undefined;
  return [{ start: 0, end: text.length, source, elided: false }];
}

/** The range without whitespace at either end; null when nothing else is in it. */
function trim(text: string, range: TextRange): TextRange | null {
  let { start, end } = range;
  while (start < end && !NON_BLANK.test(text[start] as string)) start += 1;
  while (end > start && !NON_BLANK.test(text[end - 1] as string)) end -= 1;
  return end > start ? { start, end } : null;
}

/** Lines of `range` that hold something other than whitespace: the whole line (indentation kept), no line break. */
function lines(text: string, range: TextRange): TextRange[] {
  const out: TextRange[] = [];
  let start = range.start;
  while (start < range.end) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 || newline >= range.end ? range.end : newline;
    const lineEnd = end > start && text[end - 1] === '\r' ? end - 1 : end;
    if (NON_BLANK.test(text.slice(start, lineEnd))) out.push({ start, end: lineEnd });
    start = end + 1;
  }
  return out;
}

/** Units of one segment (a run of source text with no elision inside). */
function unitsOfSegment(text: string, segment: TextRange, granularity: Granularity): TextRange[] {
  if (granularity === 'line' || granularity === 'cue') return lines(text, segment);
  if (granularity === 'sentence') {
    return splitSentences(text.slice(segment.start, segment.end)).map((r) => ({
      start: segment.start + r.start,
      end: segment.start + r.end,
    }));
  }
  const whole = trim(text, segment);
  return whole === null ? [] : [whole];
}

function unitsOf(text: string, segments: readonly Segment[], granularity: Granularity): TextRange[] {
  if (segments.length === 1) return unitsOfSegment(text, segments[0] as Segment, granularity);
  if (granularity === 'sentence') {
    // Selected sentences are the units sentence selection recorded (a cut inside one is its prefix).
    return segments.map((segment) => trim(text, segment)).filter((r): r is TextRange => r !== null);
  }
  // Neighbouring sentences join into runs; a run ends at an elision marker (for lines: also at a line break).
  const runs: TextRange[] = [];
  segments.forEach((segment, index) => {
    const last = runs[runs.length - 1];
    const joins =
      index > 0 &&
      !segment.elided &&
      (granularity === 'item' || !text.slice((segments[index - 1] as Segment).end, segment.start).includes('\n'));
    if (last !== undefined && joins) last.end = segment.end;
    else runs.push({ start: segment.start, end: segment.end });
  });
  if (granularity === 'item')
    return runs.length === 0 ? [] : [{ start: (runs[0] as TextRange).start, end: (runs[runs.length - 1] as TextRange).end }];
  return runs;
}

/** The note that stands in for an item with no source text (a provider's text block may not be empty). */
function placeholderNote(item: PackItem): string {
  return item.pointer
    ? `[${item.ref}] pinned; not shown in full (${item.tokens} tokens did not fit the budget)`
    : `[${item.ref}] (no text)`;
}

/** Cuts an item into units at `granularity` (the locator's unit when absent). */
export function citableItem(item: PackItem, citation: Citation, granularity?: Granularity): CitableItem {
  const chosen = granularity ?? defaultGranularity(citation.locator);
  const text = item.text;
  const segments = segmentsOf(text, citation);
  const units = item.pointer ? [] : unitsOf(text, segments, chosen);
  if (units.length === 0) {
    return { ref: item.ref, item, citation, granularity: chosen, blocks: [placeholderNote(item)], units: [], citable: false, segments };
  }
  // Block k runs from its unit's start to the next unit's start: what lies between (whitespace, an elision
  // marker) goes with the unit before it, and the text's leading and trailing whitespace with the first and last.
  const blocks = units.map((unit, k) =>
    text.slice(k === 0 ? 0 : unit.start, k === units.length - 1 ? text.length : (units[k + 1] as TextRange).start),
  );
  return { ref: item.ref, item, citation, granularity: chosen, blocks, units, citable: true, segments };
}

/**
 * The exact source ranges of `range` of the item's text: each piece of it inside a segment, mapped to the
 * source; pieces of neighbouring segments merge into one range (the gap between them is the source's own).
 * Empty when the citation has no span (the offsets in the source are unknown).
 */
export function sourceRanges(citable: CitableItem, range: TextRange): Span[] {
  const out: Span[] = [];
  let previous: Segment | undefined;
  for (const segment of citable.segments) {
    const start = Math.max(range.start, segment.start);
    const end = Math.min(range.end, segment.end);
    if (segment.source === undefined || end <= start) {
      previous = undefined;
      continue;
    }
    const mapped = { start: segment.source.start + (start - segment.start), end: segment.source.start + (end - segment.start) };
    const last = out[out.length - 1];
    if (last !== undefined && previous !== undefined && !segment.elided && last.end === previous.source!.end && start === segment.start)
      last.end = mapped.end;
    else out.push(mapped);
    previous = segment;
  }
  return out;
}

/**
 * The locator narrowed to `range` of the item's text where the pack allows it: lines counted from the chunk's
 * first line when the item's text is a prefix of the chunk (without selection the elided text's line breaks
 * are unknown); page and time stay the chunk's (the pack records no time per cue).
 */
export function narrowedLocator(citable: CitableItem, range: TextRange): Locator | undefined {
  const locator = citable.citation.locator;
  if (locator === undefined) return undefined;
  const narrowed: Locator = { ...locator };
  const only = citable.segments.length === 1 ? citable.segments[0] : undefined;
  const prefix =
    only !== undefined &&
    (citable.citation.spans === undefined || (only.source !== undefined && only.source.start === citable.citation.span?.start));
  if (locator.lines !== undefined && prefix) {
    const breaksBefore = (offset: number) => citable.item.text.slice(0, offset).split('\n').length - 1;
    const first = locator.lines[0] + breaksBefore(range.start);
    const last = locator.lines[0] + breaksBefore(Math.max(range.start, range.end - 1));
    narrowed.lines = [first, Math.min(Math.max(first, last), Math.max(first, locator.lines[1]))];
  }
  return narrowed;
}
