// The region-aware pass of chunking: documents whose loader gave `regions` (pages, definitions, cues, HTML
// sections) are chunked inside each region, never across two (but between neighbouring regions that both
// merge), and every chunk gets its region's section and a locator. The token bound and the splitting of an
// over-long unit are chunk.ts's own, passed in, so both passes bound chunks the same way.
import type { Locator } from '../core/schemas.js';
import type { Region } from './schemas.js';

interface Range {
  start: number;
  end: number;
}

/** One chunk's range with what the record takes from its regions. */
export interface RegionPiece {
  range: Range;
  section: string[];
  locator?: Locator;
}

interface Unit extends Range {
  region: number;
}

const BLANK_LINE = /\n[ \t\r\f\v]*\n/gu;

function trim(text: string, range: Range): Range {
  let { start, end } = range;
  while (start < end && /\s/u.test(text[start]!)) start += 1;
  while (end > start && /\s/u.test(text[end - 1]!)) end -= 1;
  return { start, end };
}

/** The units of one region: the region itself (`whole`), or its paragraphs (text between blank lines). */
function unitsOf(text: string, region: Region, index: number): Unit[] {
  const out: Unit[] = [];
  const push = (range: Range) => {
    const trimmed = trim(text, range);
    if (trimmed.end > trimmed.start) out.push({ ...trimmed, region: index });
  };
  if (region.unit === 'whole') {
    push(region);
    return out;
  }
  const slice = text.slice(region.start, region.end);
  let from = 0;
  BLANK_LINE.lastIndex = 0;
  for (let match = BLANK_LINE.exec(slice); match !== null; match = BLANK_LINE.exec(slice)) {
    push({ start: region.start + from, end: region.start + match.index });
    from = match.index + match[0].length;
  }
  push({ start: region.start + from, end: region.end });
  return out;
}

/** Offsets of the line starts of `text`, for line numbers by binary search. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return starts;
}

/** 0-based line of `offset` (the number of line starts at or before it, less one). */
export function lineOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Chunk ranges for a document with regions. Units of one region merge while they fit; units of neighbouring
 * regions merge only when both regions `merge` and share their section. A unit that does not fit alone is
 * split by `split` (sentence, word, then code point cuts) and its pieces stay in its region.
 */
export function regionRanges(
  text: string,
  regions: readonly Region[],
  fits: (range: Range) => boolean,
  split: (range: Range) => Range[],
): RegionPiece[] {
  const units = regions.flatMap((region, index) => unitsOf(text, region, index));
  const starts = regions.some((region) => region.line !== undefined) ? lineStarts(text) : [];
  const joinable = (a: number, b: number) => {
    if (a === b) return true;
    const first = regions[a]!;
    const second = regions[b]!;
    return (
      b === a + 1 &&
      first.merge === true &&
      second.merge === true &&
      sameSection(first.section, second.section) &&
      first.page === second.page
    );
  };
  const pieces: RegionPiece[] = [];
  const emit = (range: Range, first: number, last: number) => pieces.push(pieceOf(regions, starts, range, first, last));
  let i = 0;
  while (i < units.length) {
    const first = units[i]!;
    if (!fits(first)) {
      const parts = regions[first.region]!.parts;
      if (parts !== undefined && parts.length > 0) pieces.push(...regionRanges(text, parts, fits, split));
      else for (const piece of split(first)) emit(piece, first.region, first.region);
      i += 1;
      continue;
    }
    let end = first.end;
    let last = first.region;
    let j = i + 1;
    while (j < units.length) {
      const next = units[j]!;
      if (!joinable(last, next.region) || !fits({ start: first.start, end: next.end })) break;
      end = next.end;
      last = next.region;
      j += 1;
    }
    emit({ start: first.start, end }, first.region, last);
    i = j;
  }
  return pieces;
}

function sameSection(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((part, index) => part === y[index]);
}

function pieceOf(regions: readonly Region[], starts: readonly number[], range: Range, first: number, last: number): RegionPiece {
  const a = regions[first]!;
  const b = regions[last]!;
  const locator: Locator = {};
  if (a.page !== undefined) locator.page = a.page;
  if (a.pageLabel !== undefined) locator.label = a.pageLabel;
  if (a.line !== undefined && b.line !== undefined) {
    const from = a.line + lineOf(starts, range.start) - lineOf(starts, a.start);
    // The range is trimmed, so its last character is text, never the line break after it.
    const to = b.line + lineOf(starts, Math.max(range.start, range.end - 1)) - lineOf(starts, b.start);
    locator.lines = [from, Math.max(from, to)];
  }
  if (a.time !== undefined && b.time !== undefined) locator.time = [a.time[0], Math.max(a.time[0], b.time[1])];
  const piece: RegionPiece = { range, section: [...(a.section ?? [])] };
  if (Object.keys(locator).length > 0) piece.locator = locator;
  return piece;
}
