/**
 * How many chunks a file's documents make at least, and cutting them to a bound. A chunk never spans two regions
 * (pages, definitions, sections) unless both merge, nor two markdown sections, so a file of a million one-line
 * sections makes a million chunks whatever the chunk size: the count is bounded per file (`maxChunksPerFile`),
 * before anything is chunked, and what lies past the bound is left out with a warning.
 */
import { parseHeading } from '../store/chunk.js';
import type { IngestDocument, Region } from '../store/schemas.js';

const FENCE = /^ {0,3}(?:`{3,}|~{3,})/u;

/** Whether `text` has a non-space character in [start, end). */
function hasText(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i += 1) {
    const code = text.charCodeAt(i);
    if (code > 0x20 && !/\s/u.test(text[i]!)) return true;
  }
  return false;
}

/**
 * Offsets where each chunk-separating piece of `doc` starts, in text order: each region with text (a run of
 * neighbouring regions that merge and share a section counts once), or each markdown section (a heading outside
 * code fences). The number of pieces is the least number of chunks the document makes.
 */
function pieceStarts(doc: IngestDocument): number[] {
  const starts: number[] = [];
  if (doc.regions !== undefined) {
    let previous: Region | undefined;
    for (const region of doc.regions) {
      if (!hasText(doc.text, region.start, region.end)) continue;
      const joins = previous?.merge === true && region.merge === true && sameSection(previous, region);
      if (!joins) starts.push(region.start);
      previous = region;
    }
    return starts;
  }
  starts.push(0);
  let fenced = false;
  for (let at = 0; at <= doc.text.length;) {
    const newline = doc.text.indexOf('\n', at);
    const end = newline === -1 ? doc.text.length : newline;
    const line = doc.text.slice(at, end);
    if (FENCE.test(line)) fenced = !fenced;
    else if (!fenced && at > 0 && parseHeading(line.replace(/\r$/u, '')) !== null) starts.push(at);
    if (newline === -1) break;
    at = newline + 1;
  }
  return starts;
}

function sameSection(a: Region, b: Region): boolean {
  const x = a.section ?? [];
  const y = b.section ?? [];
  return x.length === y.length && x.every((title, i) => title === y[i]);
}

/**
 * The documents of one file cut to at most `max` chunk-separating pieces in all: documents past the bound are left
 * out, and the one that crosses it keeps its first pieces (its regions, or its text up to the section that crosses).
 * Returns the documents and a warning when something was left out.
 */
export function capChunks(docs: readonly IngestDocument[], max: number): { documents: IngestDocument[]; warning?: string } {
  let left = max;
  const out: IngestDocument[] = [];
  let total = 0;
  let cut = false;
  for (const doc of docs) {
    const starts = pieceStarts(doc);
    total += starts.length;
    if (cut) continue;
    if (starts.length <= left) {
      out.push(doc);
      left -= starts.length;
      continue;
    }
    cut = true;
    if (left === 0) continue;
    const end = starts[left]!;
    // Regions do not overlap, so those before the first piece left out end before it.
    if (doc.regions !== undefined) out.push({ ...doc, regions: doc.regions.filter((region) => region.start < end) });
    else out.push({ ...doc, text: doc.text.slice(0, end) });
    left = 0;
  }
  if (!cut) return { documents: out };
  return {
    documents: out,
    warning: `read the first ${max} of at least ${total} chunks' worth of sections, pages or definitions (maxChunksPerFile)`,
  };
}
