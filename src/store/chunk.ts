import { sha256Hex } from '../base/canonical.js';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { isCandidateIndexedAt } from '../core/candidates.js';
import { type Candidate } from '../core/schemas.js';
import { RUN_HEAD_CHARS, countUpTo, getTokenizer, maxTokenChars, runLimit, splitsAt } from '../tokenize/tiktoken.js';
import { ENCODINGS, type Tokenizer } from '../tokenize/types.js';
import { regionRanges, type RegionPiece } from './regions.js';
import { IngestDocumentSchema, type ChunkRecord, type IngestDocument } from './schemas.js';

export const DEFAULT_CHUNK_TOKENS = 256;

// ---------------------------------------------------------------------------------------------
// Ingest input validation (both stores validate a whole batch before touching anything)

/** Validates a batch of documents to ingest; a source id may appear once per batch. */
export function parseIngestDocuments(docs: unknown): IngestDocument[] {
  const parsed = parseOrThrow(z.array(IngestDocumentSchema), docs, 'documents');
  const seen = new Set<string>();
  for (const [index, doc] of parsed.entries()) {
    if (seen.has(doc.id)) {
      throw new LitmPackError('invalid_input', `Invalid documents: id "${doc.id}" appears more than once in one batch`, {
        details: { index },
      });
    }
    seen.add(doc.id);
  }
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Chunking

export interface ChunkOptions {
  /** Upper bound on a chunk's tokens (default 256). */
  maxTokens?: number;
  /**
   * Counts tokens for the bound. Default: the larger of the o200k_base and cl100k_base counts, so chunks
   * respect the bound under either shipped encoding.
   */
  tokenizer?: Tokenizer;
  /** ISO 8601 time written as each chunk's `indexedAt`. */
  indexedAt: string;
}

interface Range {
  start: number;
  end: number;
}

interface Unit extends Range {
  section: string[];
  /** Units with the same key share a section (merging never crosses a heading). */
  sectionKey: number;
}

/** Line terminators other than LF (a line holding one is not a heading: `.` in a pattern stops at them). */
const OTHER_LINE_BREAK = /[\r\u2028\u2029]/;

/**
 * An ATX heading's level and title, as the pattern `^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`
 * reads the line (the title is its second group, trimmed), or null. Written out because the pattern
 * backtracks in time quadratic in a run of spaces or tabs inside the line; a test checks the two agree.
 */
export function parseHeading(line: string): { level: number; title: string } | null {
  let i = 0;
  while (i < 3 && line.charCodeAt(i) === 0x20) i += 1;
  let level = 0;
  while (line.charCodeAt(i + level) === 0x23) level += 1;
  if (level < 1 || level > 6) return null;
  let at = i + level;
  if (at === line.length) return { level, title: '' };
  if (!isSpaceOrTab(line.charCodeAt(at)) || OTHER_LINE_BREAK.test(line)) return null;
  while (isSpaceOrTab(line.charCodeAt(at))) at += 1;
  // The title is the shortest start of the rest after which only spaces and tabs are left, or spaces and
  // tabs, then a closing run of '#', then spaces and tabs.
  let end = line.length;
  while (end > at && isSpaceOrTab(line.charCodeAt(end - 1))) end -= 1;
  let hashes = end;
  while (hashes > at && line.charCodeAt(hashes - 1) === 0x23) hashes -= 1;
  let gap = hashes;
  while (gap > at && isSpaceOrTab(line.charCodeAt(gap - 1))) gap -= 1;
  const titleEnd = hashes < end && gap < hashes ? gap : end;
  return { level, title: line.slice(at, titleEnd).trim() };
}

function isSpaceOrTab(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// A sentence ends after terminal punctuation (and closing quotes/brackets) followed by whitespace, or at a
// line break; the next sentence starts after the whitespace.
const SENTENCE_CUT = /[.!?…。！？]["'”’)\]]*\s+|\n\s*/gu;
const WORD_CUT = /\s+/gu;

/**
 * Splits a markdown or plain-text document into chunks: headings become the `section` path, paragraphs
 * (and fenced code blocks) are the units, small paragraphs of one section are merged up to `maxTokens`,
 * over-long ones are split at sentence, then word, then character boundaries. Every chunk's text is the
 * verbatim slice `doc.text.slice(span.start, span.end)`, without surrounding whitespace.
 *
 * Chunk ids come from content, not position: `sourceId#` + 16 hex of sha256(sourceId, text, n) where n
 * counts earlier chunks of the same document with the same text. Re-ingesting the same version yields the
 * same ids; and when a new version only inserts or edits some paragraphs, the untouched chunks keep their
 * ids (and their `indexedAt` and embeddings) instead of every later chunk shifting as ordinals would.
 */
export function chunkDocument(doc: IngestDocument, options: ChunkOptions): ChunkRecord[] {
  const maxTokens = options.maxTokens ?? DEFAULT_CHUNK_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new LitmPackError('invalid_input', `maxTokens must be a positive integer, got ${maxTokens}`);
  }
  const text = doc.text;
  const counter = new RangeCounter(text, maxTokens, options.tokenizer);
  const fits = (range: Range, bytes?: number) => counter.fits(range, bytes);

  // A loader's regions (pages, definitions, cues) have their own pass (regions.ts); markdown has this one.
  const ranges: RegionPiece[] =
    doc.regions === undefined ? [] : regionRanges(text, doc.regions, fits, (range) => splitRange(text, range, fits));
  const units = doc.regions === undefined ? parseUnits(text) : [];
  let i = 0;
  while (i < units.length) {
    const first = units[i]!;
    // A unit that may not fit is split at once: the split counts its sentences one after another (a range grown
    // by a sentence adds that sentence's count, see RangeCounter), so a unit that fits comes out whole, counted
    // once, where counting it whole first and then its sentences again would count most units twice. A unit
    // that fits is one piece either way, and a unit that does not is split alike: the chunks are the same.
    const pieces = counter.splitsFirst(first) ? splitRange(text, first, fits) : null;
    // Split in pieces, it does not fit: a prefix ending at a sentence cut did not, and where every cut is one at
    // which counts add up (`splitsAt`), the whole counts at least as much. Elsewhere the whole is counted to know.
    const whole = pieces !== null && pieces.length > 1 ? !sentenceCutsAdd(text, first) && fits(first) : fits(first);
    if (!whole) {
      for (const piece of pieces ?? splitRange(text, first, fits)) ranges.push({ range: piece, section: first.section });
      i += 1;
      continue;
    }
    let end = first.end;
    let j = i + 1;
    while (j < units.length) {
      const next = units[j]!;
      if (next.sectionKey !== first.sectionKey || !fits({ start: first.start, end: next.end })) break;
      end = next.end;
      j += 1;
    }
    ranges.push({ range: { start: first.start, end }, section: first.section });
    i = j;
  }

  const occurrences = new Map<string, number>();
  // `kind` may also come from a string `metadata.kind` (how documents tiered themselves before `kind` existed).
  const kind = doc.kind ?? (typeof doc.metadata?.kind === 'string' ? doc.metadata.kind : undefined);
  const clusters = doc.clusters === undefined ? [] : [...new Set(doc.clusters)];
  return ranges.map(({ range, section, locator }) => {
    const chunkText = text.slice(range.start, range.end);
    const textSha256 = sha256Hex(chunkText);
    const occurrence = occurrences.get(textSha256) ?? 0;
    occurrences.set(textSha256, occurrence + 1);
    const record: ChunkRecord = {
      id: chunkId(doc.id, chunkText, occurrence),
      sourceId: doc.id,
      section: [...section],
      span: { start: range.start, end: range.end },
      text: chunkText,
      textSha256,
      indexedAt: options.indexedAt,
      tokens: counter.tokens(range),
    };
    if (doc.version !== undefined) record.version = doc.version;
    if (doc.title !== undefined) record.title = doc.title;
    if (doc.url !== undefined) record.url = doc.url;
    if (doc.timestamp !== undefined) record.timestamp = doc.timestamp;
    if (kind !== undefined) record.kind = kind;
    if (clusters.length > 0) record.clusters = [...clusters];
    if (doc.acl !== undefined) record.acl = [...doc.acl];
    if (doc.metadata !== undefined) record.metadata = structuredClone(doc.metadata);
    if (locator !== undefined) record.locator = structuredClone(locator);
    if (doc.parentId !== undefined) record.parentId = doc.parentId;
    return record;
  });
}

/** The deterministic chunk key (see `chunkDocument`). */
export function chunkId(sourceId: string, text: string, occurrence: number): string {
  const digest = sha256Hex(`${sourceId}\u0000${text}\u0000${occurrence}`);
  return `${sourceId}#${digest.slice(0, 16)}`;
}

export { sha256Hex };

/** Token counts for every shipped encoding, keyed by encoding name. */
export function countTokens(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const encoding of ENCODINGS) out[encoding] = getTokenizer(encoding).count(text);
  return out;
}

/**
 * Token counts for one document's chunking. The bound and the stored counts both come from here, so a range
 * is counted at most once per encoding: the count that admitted a chunk is the count stored with it. A range
 * with no more UTF-8 bytes than the bound fits without counting (every token of a shipped encoding is at
 * least one byte), and one with more characters than the bound times the longest token cannot fit; other
 * ranges are counted only until the count passes the bound, so a check costs what a chunk holds, whatever
 * the range.
 */
class RangeCounter {
  readonly #text: string;
  readonly #maxTokens: number;
  readonly #tokenizer: Tokenizer | undefined;
  /**
   * `start:end` → counts per shipped encoding, in `ENCODINGS` order (missing until counted). A count above
   * the bound may be a bound itself (counting stopped there); `tokens` counts such a range again in full.
   */
  readonly #counts = new Map<string, number[]>();
  /** A range of more characters (or UTF-8 bytes) than this has more than `maxTokens` tokens in some shipped encoding. */
  readonly #longestFit: number;

  constructor(text: string, maxTokens: number, tokenizer: Tokenizer | undefined) {
    this.#text = text;
    this.#maxTokens = maxTokens;
    this.#tokenizer = tokenizer;
    this.#longestFit = tokenizer ? Infinity : maxTokens * Math.min(...ENCODINGS.map((encoding) => maxTokenChars(getTokenizer(encoding))));
  }

  /**
   * Whether a unit is better split before it is counted: it may not fit (it has more UTF-8 bytes than the bound)
   * and the shipped encodings count it. Splitting first relies on a prefix at a sentence cut never having more
   * tokens than the whole, which they keep (their pre-tokeniser splits at those cuts); a caller's tokenizer need
   * not, so its units are counted whole first, as before.
   */
  splitsFirst(range: Range): boolean {
    return this.#tokenizer === undefined && !utf8BytesAtMost(this.#text, range, this.#maxTokens);
  }

  /**
   * Whether the range has at most `maxTokens` tokens: under the given tokenizer, else under every shipped
   * encoding. `bytes`, when the caller knows it, is the range's UTF-8 length.
   */
  fits(range: Range, bytes?: number): boolean {
    const max = this.#maxTokens;
    if (this.#tokenizer) return countUpTo(this.#tokenizer, this.#text.slice(range.start, range.end), max) <= max;
    if (bytes !== undefined ? bytes <= max : utf8BytesAtMost(this.#text, range, max)) return true;
    if ((bytes ?? range.end - range.start) > this.#longestFit) return false;
    if (range.end - range.start >= this.#runLimit(range.start)) return false;
    for (let e = 0; e < ENCODINGS.length; e += 1) {
      if (this.#count(range, e, max) > max) return false;
    }
    return true;
  }

  /** Exact counts for every shipped encoding, keyed by encoding name. */
  tokens(range: Range): Record<string, number> {
    const out: Record<string, number> = {};
    ENCODINGS.forEach((encoding, e) => {
      out[encoding] = this.#count(range, e, Infinity);
    });
    return out;
  }

  /** The count of the range, or, when it passes `limit`, possibly just a number above `limit`. */
  #count(range: Range, encoding: number, limit: number): number {
    const key = `${range.start}:${range.end}`;
    let counts = this.#counts.get(key);
    if (counts === undefined) {
      counts = [];
      this.#counts.set(key, counts);
    }
    let count = counts[encoding];
    // A count past the bound may have stopped early: it stands for "too many", not for the count.
    if (count === undefined || (count > this.#maxTokens && limit > this.#maxTokens)) {
      const tokenizer = getTokenizer(ENCODINGS[encoding]!);
      // A range grown from the last one counted (a chunk taking one more word or paragraph) adds the count
      // of what it took, when the two counts add up (see `splitsAt`).
      const last = this.#last[encoding];
      if (
        last !== undefined &&
        last.start === range.start &&
        last.end < range.end &&
        last.count <= limit &&
        splitsAt(this.#text, last.end)
      ) {
        count = last.count + countUpTo(tokenizer, this.#text.slice(last.end, range.end), limit - last.count);
      } else {
        count = countUpTo(tokenizer, this.#text.slice(range.start, range.end), limit);
      }
      counts[encoding] = count;
      if (count <= limit) this.#last[encoding] = { start: range.start, end: range.end, count };
    }
    return count;
  }

  /**
   * A length from which every range starting at `start` has too many tokens (a long run without spaces
   * there: then a chunk's search counts no range much longer than the chunk), else Infinity. Kept for the
   * last start asked about: the searches ask about one start at a time.
   */
  #runLimit(start: number): number {
    if (this.#limitAt?.start !== start) {
      let limit = Infinity;
      for (const encoding of ENCODINGS) {
        // The first encoding's limit is most often already the least there can be (one head's length).
        if (limit <= RUN_HEAD_CHARS) break;
        limit = Math.min(limit, runLimit(getTokenizer(encoding), this.#text, start, this.#maxTokens));
      }
      this.#limitAt = { start, limit };
    }
    return this.#limitAt.limit;
  }

  #limitAt: { start: number; limit: number } | undefined;

  /** Per encoding, the last range counted exactly. */
  readonly #last: ({ start: number; end: number; count: number } | undefined)[] = [];
}

/** True when the range's UTF-8 encoding has at most `limit` bytes (stops reading once it has more). */
function utf8BytesAtMost(text: string, range: Range, limit: number): boolean {
  if (range.end - range.start > limit) return false;
  let bytes = 0;
  for (let i = range.start; i < range.end; i += 1) {
    const code = text.charCodeAt(i);
    // At least the UTF-8 length: a surrogate pair is 4 bytes and a lone surrogate 3 (U+FFFD).
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    if (bytes > limit) return false;
  }
  return true;
}

/** Paragraphs and fenced code blocks with their heading path, trimmed; headings themselves are not units. */
function parseUnits(text: string): Unit[] {
  const units: Unit[] = [];
  const stack: (string | undefined)[] = [];
  let section: string[] = [];
  let sectionKey = 0;
  let open = null as Range | null;
  let fence: { char: string; length: number } | null = null;

  const flush = () => {
    if (open) {
      const trimmed = trimRange(text, open);
      if (trimmed.end > trimmed.start) units.push({ ...trimmed, section, sectionKey });
    }
    open = null;
  };

  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    if (fence) {
      open = { start: open?.start ?? lineStart, end: lineEnd };
      const close = FENCE.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length && line.trim() === close[1]) {
        fence = null;
        flush();
      }
    } else if (line.trim().length === 0) {
      flush();
    } else {
      const heading = parseHeading(line.replace(/\r$/, ''));
      const fenceOpen = FENCE.exec(line);
      if (heading) {
        flush();
        const { level } = heading;
        stack.length = level;
        stack[level - 1] = heading.title;
        section = stack.filter((title): title is string => title !== undefined && title !== '');
        sectionKey += 1;
      } else if (fenceOpen) {
        flush();
        fence = { char: fenceOpen[1]![0]!, length: fenceOpen[1]!.length };
        open = { start: lineStart, end: lineEnd };
      } else {
        open = { start: open?.start ?? lineStart, end: lineEnd };
      }
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  flush();
  return units;
}

/**
 * Splits a range that does not fit into pieces that do: at sentence cuts, then word cuts, then code points.
 * A piece exceeds the bound only when it is a single code point.
 */
function splitRange(text: string, range: Range, fits: (r: Range, bytes?: number) => boolean): Range[] {
  const bySentence = (r: Range) => packAtCuts(text, r, cutsIn(text, r, SENTENCE_CUT), fits, byWord);
  const byWord = (r: Range) => packAtCuts(text, r, cutsIn(text, r, WORD_CUT), fits, byCodePoint);
  const byCodePoint = (r: Range) => splitCodePoints(text, r, fits);
  return bySentence(range);
}

/** Whether token counts add up at every sentence cut of `range` (at the end of the text before each cut). */
function sentenceCutsAdd(text: string, range: Range): boolean {
  for (const cut of cutsIn(text, range, SENTENCE_CUT)) {
    let end = cut;
    while (end > range.start && /\s/u.test(text[end - 1] ?? '')) end -= 1;
    if (!splitsAt(text, end)) return false;
  }
  return true;
}

/** Positions inside `range` where a new segment starts (the end of each separator match). */
function cutsIn(text: string, range: Range, pattern: RegExp): number[] {
  const cuts: number[] = [];
  const slice = text.slice(range.start, range.end);
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(slice)) !== null) {
    if (match[0].length === 0) {
      pattern.lastIndex += 1;
      continue;
    }
    const cut = range.start + match.index + match[0].length;
    if (cut > range.start && cut < range.end) cuts.push(cut);
  }
  return cuts;
}

/** Greedy packing of the segments between cuts; a segment that cannot fit alone goes to `oversize`. */
function packAtCuts(text: string, range: Range, cuts: number[], fits: (r: Range) => boolean, oversize: (r: Range) => Range[]): Range[] {
  const bounds = [range.start, ...cuts, range.end];
  const segments: Range[] = [];
  for (let i = 0; i + 1 < bounds.length; i += 1) {
    const segment = trimRange(text, { start: bounds[i]!, end: bounds[i + 1]! });
    if (segment.end > segment.start) segments.push(segment);
  }
  if (segments.length <= 1) {
    return segments.length === 1 && !fits(segments[0]!) ? oversize(segments[0]!) : segments;
  }
  const out: Range[] = [];
  let i = 0;
  while (i < segments.length) {
    let first = segments[i]!;
    if (!fits(first)) {
      // Split the oversized segment; its last piece may still take the following segments.
      const pieces = oversize(first);
      const last = pieces.pop();
      out.push(...pieces);
      if (last === undefined) {
        i += 1;
        continue;
      }
      first = last;
    }
    let end = first.end;
    let j = i + 1;
    while (j < segments.length && fits({ start: first.start, end: segments[j]!.end })) {
      end = segments[j]!.end;
      j += 1;
    }
    out.push({ start: first.start, end });
    i = j;
  }
  return out;
}

/**
 * Last resort for a run with no whitespace: the longest fitting prefixes, never splitting a surrogate pair.
 * Each is found by a binary search over the code points left; ranges too long to fit are known by their
 * UTF-8 length (summed once), so the search counts only near what fits, and counting stops past the bound.
 */
function splitCodePoints(text: string, range: Range, fits: (r: Range, bytes?: number) => boolean): Range[] {
  const boundaries: number[] = [];
  // bytesTo[k]: UTF-8 bytes from range.start to boundaries[k] (a lone surrogate is 3, as U+FFFD).
  const bytesTo: number[] = [];
  let bytes = 0;
  for (let i = range.start; i < range.end;) {
    const code = text.codePointAt(i)!;
    i += code > 0xffff ? 2 : 1;
    // A pair the range's end splits leaves a lone surrogate: 3 bytes.
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code > 0xffff && i <= range.end ? 4 : 3;
    boundaries.push(Math.min(i, range.end));
    bytesTo.push(bytes);
  }
  const out: Range[] = [];
  let start = range.start;
  let startBytes = 0;
  let from = 0;
  while (from < boundaries.length) {
    // Binary search the farthest boundary that fits; `lo` always fits or is the single first code point.
    let lo = from;
    let hi = boundaries.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits({ start, end: boundaries[mid]! }, bytesTo[mid]! - startBytes)) lo = mid;
      else hi = mid - 1;
    }
    const piece = trimRange(text, { start, end: boundaries[lo]! });
    if (piece.end > piece.start) out.push(piece);
    start = boundaries[lo]!;
    startBytes = bytesTo[lo]!;
    from = lo + 1;
  }
  return out;
}

function trimRange(text: string, range: Range): Range {
  let { start, end } = range;
  while (start < end && /\s/u.test(text[start]!)) start += 1;
  while (end > start && /\s/u.test(text[end - 1]!)) end -= 1;
  return { start, end };
}

// ---------------------------------------------------------------------------------------------

/**
 * Turns a stored chunk into a packing candidate: `tokens` is the record's per-encoding map (so packing
 * needs no re-tokenising), `kind`, `timestamp` and metadata pass through; the ACL never leaves the store.
 */
export function chunkToCandidate(record: ChunkRecord, score: number, similarity?: number): Candidate {
  const candidate: Candidate = {
    id: record.id,
    text: record.text,
    score,
    sourceId: record.sourceId,
    span: { start: record.span.start, end: record.span.end },
    tokens: { ...record.tokens },
  };
  // Records written by other tools may carry a non-ISO indexedAt; the candidate takes only a valid one.
  if (isCandidateIndexedAt(record.indexedAt)) candidate.indexedAt = record.indexedAt;
  if (record.version !== undefined) candidate.version = record.version;
  if (record.title !== undefined) candidate.title = record.title;
  if (record.url !== undefined) candidate.url = record.url;
  if (record.section.length > 0) candidate.section = [...record.section];
  if (similarity !== undefined) candidate.similarity = similarity;
  if (record.kind !== undefined) candidate.kind = record.kind;
  if (record.timestamp !== undefined) candidate.timestamp = record.timestamp;
  if (record.metadata !== undefined) candidate.metadata = structuredClone(record.metadata);
  if (record.locator !== undefined) candidate.locator = structuredClone(record.locator);
  if (record.parentId !== undefined) candidate.parentId = record.parentId;
  return candidate;
}

// ---------------------------------------------------------------------------------------------
