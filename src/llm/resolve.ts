/**
 * Claude's citations mapped back to the pack: a response's text blocks, each with its citations resolved to
 * the sidecar entry of the item it cites, narrowed to the cited units' exact source ranges, and checked.
 *
 * A citation is `verified` when it names an item of the pack, its block (or character) range lies inside that
 * item, and its `cited_text` is the text of that range (the API documents it as the cited blocks joined; runs of
 * whitespace are compared as one space, since that is all a transport may change). Anything else (an index out
 * of range, a forged `cited_text`, another tool's citation) is reported with `verified: false` and a `problem`,
 * never thrown: what a model writes is not the caller's input to fix.
 */
import { z } from 'zod';
import { invalidInput, parseOrThrow } from '../base/errors.js';
import type { Locator, Span } from '../core/schemas.js';
import { citableItems, resultSource, type CitablePack } from './anthropic.js';
import { GRANULARITIES, narrowedLocator, sourceRanges, type CitableItem, type TextRange } from './units.js';

/** One citation of the model's, resolved. `ref` and the sidecar fields are null when it names no item of the pack. */
export interface ResolvedCitation {
  /** The citation's type as the model gave it (`search_result_location`, `content_block_location`, `char_location`, `marker`, …). */
  type: string;
  ref: number | null;
  chunkId: string | null;
  sourceId: string | null;
  version?: string;
  textSha256: string | null;
  /** From the first cited unit's start to the last one's end in the source (text elided between them included). */
  span?: Span;
  /** The exact source range of each cited unit (`source.slice(start, end)` gives it back); empty when unknown. */
  spans: Span[];
  /** The citation's locator, its lines narrowed to the cited units where the pack allows it. */
  locator?: Locator;
  /** What the model says it cites. */
  citedText: string;
  /** The cited range of the item's text (offsets into `items[ref - 1].text`). */
  itemRange?: TextRange;
  verified: boolean;
  /** Why it is not verified. */
  problem?: string;
}

/** A text block of the response with its citations resolved. */
export interface ResolvedTextBlock {
  text: string;
  citations: ResolvedCitation[];
}

export const ResolveOptionsSchema = z.strictObject({
  /** The granularity the blocks were made with (it decides what a block index means). */
  granularity: z.enum(GRANULARITIES, { message: `granularity must be one of ${GRANULARITIES.join(', ')}` }).optional(),
  /** How many `search_result` blocks of the request come before this pack's (the API counts them across the whole request). */
  searchResultOffset: z.number().int().nonnegative().default(0),
  /** How many `document` blocks of the request come before this pack's. */
  documentOffset: z.number().int().nonnegative().default(0),
});
export type ResolveOptions = z.input<typeof ResolveOptionsSchema>;

const int = z.number().int();
const SearchResultLocation = z.looseObject({
  type: z.literal('search_result_location'),
  cited_text: z.string(),
  search_result_index: int,
  start_block_index: int,
  end_block_index: int,
  source: z.string(),
});
const ContentBlockLocation = z.looseObject({
  type: z.literal('content_block_location'),
  cited_text: z.string(),
  document_index: int,
  start_block_index: int,
  end_block_index: int,
});
const CharLocation = z.looseObject({
  type: z.literal('char_location'),
  cited_text: z.string(),
  document_index: int,
  start_char_index: int,
  end_char_index: int,
});

const sameText = (a: string, b: string) => a === b || a.replace(/\s+/gu, ' ').trim() === b.replace(/\s+/gu, ' ').trim();

function unresolved(type: string, citedText: string, problem: string): ResolvedCitation {
  return { type, ref: null, chunkId: null, sourceId: null, textSha256: null, spans: [], citedText, verified: false, problem };
}

/** The sidecar entry's fields for a citation of `citable`, narrowed to `range` when given. */
function resolvedFor(
  type: string,
  citable: CitableItem,
  citedText: string,
  range: TextRange | undefined,
  problem: string | undefined,
): ResolvedCitation {
  const { citation } = citable;
  const out: ResolvedCitation = {
    type,
    ref: citation.ref,
    chunkId: citation.chunkId,
    sourceId: citation.sourceId,
    textSha256: citation.textSha256,
    spans: [],
    citedText,
    verified: problem === undefined,
  };
  if (citation.version !== undefined) out.version = citation.version;
  if (range !== undefined) {
    out.itemRange = range;
    out.spans = sourceRanges(citable, range);
    const first = out.spans[0];
    const last = out.spans[out.spans.length - 1];
    if (first !== undefined && last !== undefined) out.span = { start: first.start, end: last.end };
    const locator = narrowedLocator(citable, range);
    if (locator !== undefined) out.locator = locator;
  } else {
    if (citation.span !== undefined) out.span = citation.span;
    if (citation.locator !== undefined) out.locator = citation.locator;
  }
  if (problem !== undefined) out.problem = problem;
  return out;
}

/** A block-range citation (`search_result_location`, `content_block_location`) of item `index`. */
function byBlocks(
  items: readonly CitableItem[],
  type: string,
  index: number,
  what: string,
  start: number,
  end: number,
  citedText: string,
  source: string | undefined,
): ResolvedCitation {
  const citable = items[index];
  if (citable === undefined) return unresolved(type, citedText, `${what} ${index} names no item of this pack (it has ${items.length})`);
  if (!citable.citable)
    return resolvedFor(
      type,
      citable,
      citedText,
      undefined,
      `item ${citable.ref} shows no source text (${citable.item.pointer ? 'a pin pointer' : 'empty'})`,
    );
  if (start < 0 || end <= start || end > citable.blocks.length) {
    return resolvedFor(
      type,
      citable,
      citedText,
      undefined,
      `blocks ${start}..${end} are not a range of item ${citable.ref}'s ${citable.blocks.length} blocks`,
    );
  }
  const range = { start: (citable.units[start] as TextRange).start, end: (citable.units[end - 1] as TextRange).end };
  let problem: string | undefined;
  if (source !== undefined && source !== resultSource(citable.citation))
    problem = `source ${JSON.stringify(source)} is not item ${citable.ref}'s`;
  else if (!sameText(citedText, citable.blocks.slice(start, end).join('')))
    problem = `cited_text is not the text of blocks ${start}..${end} of item ${citable.ref}`;
  return resolvedFor(type, citable, citedText, range, problem);
}

/** A character-range citation of a plain-text document (offsets in code units, or in code points if those match). */
function byChars(items: readonly CitableItem[], index: number, start: number, end: number, citedText: string): ResolvedCitation {
  const type = 'char_location';
  const citable = items[index];
  if (citable === undefined)
    return unresolved(type, citedText, `document_index ${index} names no item of this pack (it has ${items.length})`);
  if (!citable.citable) return resolvedFor(type, citable, citedText, undefined, `item ${citable.ref} shows no source text`);
  const text = citable.item.text;
  const byUnits = start >= 0 && end > start && end <= text.length ? { start, end } : undefined;
  let range = byUnits !== undefined && sameText(citedText, text.slice(byUnits.start, byUnits.end)) ? byUnits : undefined;
  if (range === undefined) {
    const points = Array.from(text);
    if (start >= 0 && end > start && end <= points.length) {
      const from = points.slice(0, start).join('').length;
      const candidate = { start: from, end: from + points.slice(start, end).join('').length };
      if (sameText(citedText, text.slice(candidate.start, candidate.end))) range = candidate;
    }
  }
  if (range === undefined) {
    const problem =
      byUnits === undefined
        ? `characters ${start}..${end} are not a range of item ${citable.ref}'s text`
        : `cited_text is not the text of characters ${start}..${end} of item ${citable.ref}`;
    return resolvedFor(type, citable, citedText, undefined, problem);
  }
  // Whitespace at the ends of a cited range is no part of what it cites.
  while (range.start < range.end && /\s/u.test(text[range.start] as string)) range.start += 1;
  while (range.end > range.start && /\s/u.test(text[range.end - 1] as string)) range.end -= 1;
  return resolvedFor(type, citable, citedText, range, undefined);
}

function resolveOne(items: readonly CitableItem[], citation: unknown, options: z.output<typeof ResolveOptionsSchema>): ResolvedCitation {
  const type =
    typeof citation === 'object' && citation !== null && typeof (citation as { type?: unknown }).type === 'string'
      ? (citation as { type: string }).type
      : 'unknown';
  const cited =
    typeof (citation as { cited_text?: unknown } | null)?.cited_text === 'string' ? (citation as { cited_text: string }).cited_text : '';
  const search = SearchResultLocation.safeParse(citation);
  if (search.success) {
    const c = search.data;
    return byBlocks(
      items,
      type,
      c.search_result_index - options.searchResultOffset,
      'search_result_index',
      c.start_block_index,
      c.end_block_index,
      c.cited_text,
      c.source,
    );
  }
  const block = ContentBlockLocation.safeParse(citation);
  if (block.success) {
    const c = block.data;
    return byBlocks(
      items,
      type,
      c.document_index - options.documentOffset,
      'document_index',
      c.start_block_index,
      c.end_block_index,
      c.cited_text,
      undefined,
    );
  }
  const chars = CharLocation.safeParse(citation);
  if (chars.success) {
    const c = chars.data;
    return byChars(items, c.document_index - options.documentOffset, c.start_char_index, c.end_char_index, c.cited_text);
  }
  const known = ['search_result_location', 'content_block_location', 'char_location'].includes(type);
  return unresolved(
    type,
    cited,
    known ? `a ${type} citation without the fields the API documents` : `a ${type} citation, not one of this pack's blocks`,
  );
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The content array of a response, or of a message holding one. */
export function responseContent(content: unknown): unknown[] {
  if (Array.isArray(content)) return content;
  if (isRecord(content) && Array.isArray(content.content)) return content.content;
  throw invalidInput('Expected a Messages API response content array (response.content) or a message with a content array', ['content']);
}

/**
 * Resolves the citations of a Messages API response's `content` (or of the response itself) against the pack
 * whose blocks the request carried: per text block, its text and its citations resolved (see
 * `ResolvedCitation`). Other blocks (tool use, thinking) are skipped. Pass the `granularity` the blocks were
 * made with, and `searchResultOffset`/`documentOffset` when other search results or documents came first.
 */
export function resolveAnthropicCitations(pack: CitablePack, content: unknown, options: ResolveOptions = {}): ResolvedTextBlock[] {
  const parsed = parseOrThrow(ResolveOptionsSchema, options, 'resolve options');
  const { items } = citableItems(pack, parsed.granularity === undefined ? {} : { granularity: parsed.granularity });
  return responseContent(content)
    .filter((block): block is Record<string, unknown> => isRecord(block) && block.type === 'text' && typeof block.text === 'string')
    .map((block) => ({
      text: block.text as string,
      citations: (Array.isArray(block.citations) ? block.citations : []).map((citation) => resolveOne(items, citation, parsed)),
    }));
}

/** True when some text block of the content carries citations (an answer to search results or documents). */
export function hasAnthropicCitations(content: unknown): boolean {
  const blocks = Array.isArray(content) ? content : isRecord(content) && Array.isArray(content.content) ? content.content : [];
  return blocks.some((block) => isRecord(block) && block.type === 'text' && Array.isArray(block.citations) && block.citations.length > 0);
}
