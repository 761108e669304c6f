/**
 * The provider-neutral path: any model (OpenAI, Gemini, a local one) is asked to cite the context's `[n]`
 * blocks and to quote what it relies on (`citationInstructions`), and its answer is checked against the pack
 * (`checkAnswerCitations`): which refs exist, whether each quote occurs in the item it cites, which sentences
 * cite nothing. `resolveAnswer` gives either kind of answer (Claude's cited blocks or `[n]` text) one shape.
 */
import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { splitSentences } from '../core/split.js';
import { citableItems, CitablePackSchema, type CitablePack } from './anthropic.js';
import {
  hasAnthropicCitations,
  resolveAnthropicCitations,
  responseContent,
  type ResolvedCitation,
  type ResolvedTextBlock,
  type ResolveOptions,
} from './resolve.js';
import { narrowedLocator, sourceRanges, type CitableItem, type TextRange } from './units.js';

export interface AnswerRef {
  ref: number;
  /** The pack has an item with this ref. */
  known: boolean;
}

export interface AnswerQuote {
  /** The quoted text as the answer has it (without the quote marks). */
  text: string;
  /** The ref it is attached to (the first `[n]` after it in its sentence); null when none follows it. */
  ref: number | null;
  /** It occurs in the cited item's text (any item's when `ref` is null), whitespace, quote marks and case aside; "…" in a quote skips text. */
  found: boolean;
}

export interface AnswerCheck {
  /** Every ref the answer cites, once each, in order of first mention. */
  refs: AnswerRef[];
  /** Cited refs the pack has no item for. */
  unknownRefs: number[];
  quotes: AnswerQuote[];
  /** Sentences of the answer with no `[n]` in or right after them (sentences without a letter or digit aside). */
  uncitedSentences: string[];
  /** No unknown ref, every quote found, every sentence cited. */
  ok: boolean;
}

interface Marker {
  start: number;
  end: number;
  refs: number[];
}

/** `[3]`, `[1, 4]`, `[2][5]` (two markers), `[2-4]`; not `[1](url)` (a link) or `[^1]` (a footnote). */
const MARKER = /\[(\d{1,4}(?:\s*[-–,;]\s*\d{1,4})*)\](?!\()/gu;
/** Double-quoted spans: straight, curly, low-high and guillemets. */
const QUOTE = /"([^"\n]+)"|“([^”\n]+)”|„([^“”\n]+)[“”]|«([^»\n]+)»/gu;
const ELLIPSIS = /\s*(?:\.\.\.|…)\s*/u;
const MAX_RANGE = 50;

function markersOf(answer: string): Marker[] {
  const markers: Marker[] = [];
  for (const match of answer.matchAll(MARKER)) {
    const refs: number[] = [];
    for (const part of (match[1] as string).split(/\s*[,;]\s*/u)) {
      const range = /^(\d+)\s*[-–]\s*(\d+)$/u.exec(part);
      if (range === null) refs.push(Number(part));
      else {
        const [from, to] = [Number(range[1]), Number(range[2])];
        // A backwards or huge range is not a citation list; its two ends are.
        if (to >= from && to - from <= MAX_RANGE) for (let n = from; n <= to; n += 1) refs.push(n);
        else refs.push(from, to);
      }
    }
    markers.push({ start: match.index, end: match.index + match[0].length, refs });
  }
  return markers;
}

/**
 * Text normalised for finding quotes, with the offset in the original of each code unit: whitespace runs become
 * one space, curly and low quote marks straight ones, letters lower case (where that keeps one character one).
 */
function normalizeForQuotes(text: string): { text: string; map: number[] } {
  let out = '';
  const map: number[] = [];
  let offset = 0;
  let space = false;
  for (const char of text) {
    const at = offset;
    offset += char.length;
    if (/\s/u.test(char)) {
      if (!space && out.length > 0) {
        out += ' ';
        map.push(at);
      }
      space = true;
      continue;
    }
    space = false;
    let mapped = char;
    if ('“”„‟″«»'.includes(char)) mapped = '"';
    else if ('‘’‚‛′'.includes(char)) mapped = "'";
    else {
      const lower = char.toLowerCase();
      if (lower.length === char.length) mapped = lower;
    }
    out += mapped;
    for (let i = 0; i < mapped.length; i += 1) map.push(at);
  }
  if (out.endsWith(' ')) {
    out = out.slice(0, -1);
    map.pop();
  }
  return { text: out, map };
}

/** Where the quote occurs in `text` (its parts around "…" in order), as a range of `text`; null when it does not. */
function findQuote(text: string, quote: string): TextRange | null {
  const parts = quote
    .split(ELLIPSIS)
    .map((part) => normalizeForQuotes(part).text)
    .filter((part) => part.length > 0);
  if (parts.length === 0) return null;
  const haystack = normalizeForQuotes(text);
  let from = 0;
  let first = -1;
  let lastEnd = -1;
  for (const part of parts) {
    const at = haystack.text.indexOf(part, from);
    if (at === -1) return null;
    if (first === -1) first = at;
    lastEnd = at + part.length;
    from = lastEnd;
  }
  const start = haystack.map[first] as number;
  const lastChar = haystack.map[lastEnd - 1] as number;
  return { start, end: lastChar + (text.codePointAt(lastChar)! > 0xffff ? 2 : 1) };
}

interface Found {
  check: AnswerCheck;
  /** Per marker, per ref: the quote attached and where it was found. */
  cited: { ref: number; known: boolean; quote: string | null; range: TextRange | null }[];
}

function check(pack: CitablePack, answer: string): Found {
  const byRef = new Map(pack.items.map((item) => [item.ref, item] as const));
  const markers = markersOf(answer);
  // Sentences are split on a copy with quoted text masked (same offsets): a quote's own "…" or full stop ends no sentence.
  const masked = answer.replace(QUOTE, (match) => match.slice(0, 1) + 'x'.repeat(match.length - 2) + match.slice(-1));
  const sentences = splitSentences(masked);
  const sentenceOf = (offset: number) => sentences.findIndex((s, i) => offset >= s.start && offset < (sentences[i + 1]?.start ?? Infinity));
  // A marker right after a full stop ("… apply. [2]") opens the next piece of text but cites the sentence before it.
  const citedSentence = (marker: Marker) => {
    const index = sentenceOf(marker.start);
    const sentence = sentences[index];
    if (index > 0 && sentence !== undefined && /^[\s[\]\d,;\-–]*$/u.test(answer.slice(sentence.start, marker.start))) return index - 1;
    return index;
  };
  const citedIndices = new Set(markers.map(citedSentence));

  const quotes: AnswerQuote[] = [];
  const attached = new Map<Marker, { text: string; range: TextRange | null; ref: number | null }[]>();
  for (const match of answer.matchAll(QUOTE)) {
    const text = (match[1] ?? match[2] ?? match[3] ?? match[4] ?? '').trim();
    if (text === '') continue;
    const end = match.index + match[0].length;
    const marker =
      markers.find(
        (m) =>
          m.start >= end && sentenceOf(m.start) === sentenceOf(end - 1) && /^[\s.,;:!?)\]'’]*$/u.test(answer.slice(end, m.start)) === true,
      ) ?? markers.find((m) => m.start >= end && sentenceOf(m.start) === sentenceOf(end - 1));
    if (marker === undefined) {
      const found = pack.items.some((item) => findQuote(item.text, text) !== null);
      quotes.push({ text, ref: null, found });
      continue;
    }
    // Of a marker naming several refs, the quote belongs to the first whose item has it.
    let hit: { ref: number; range: TextRange } | undefined;
    for (const ref of marker.refs) {
      const item = byRef.get(ref);
      const range = item === undefined ? null : findQuote(item.text, text);
      if (range !== null) {
        hit = { ref, range };
        break;
      }
    }
    const ref = hit?.ref ?? marker.refs[0]!;
    quotes.push({ text, ref, found: hit !== undefined });
    attached.set(marker, [...(attached.get(marker) ?? []), { text, range: hit?.range ?? null, ref }]);
  }

  const refs: AnswerRef[] = [];
  const seen = new Set<number>();
  const cited: Found['cited'] = [];
  for (const marker of markers) {
    const withQuotes = attached.get(marker) ?? [];
    for (const ref of marker.refs) {
      if (!seen.has(ref)) {
        seen.add(ref);
        refs.push({ ref, known: byRef.has(ref) });
      }
      const quote = withQuotes.find((q) => q.ref === ref);
      cited.push({ ref, known: byRef.has(ref), quote: quote?.text ?? null, range: quote?.range ?? null });
    }
  }
  const unknownRefs = refs.filter((r) => !r.known).map((r) => r.ref);
  const uncitedSentences = sentences
    .filter((sentence, i) => /[\p{L}\p{N}]/u.test(answer.slice(sentence.start, sentence.end).replace(MARKER, '')) && !citedIndices.has(i))
    // Without the markers of the sentence before it that open it.
    .map((s) => answer.slice(s.start, s.end).replace(/^(?:\[[\d\s,;\-–]+\]\s*)+/u, ''));
  const ok = unknownRefs.length === 0 && quotes.every((q) => q.found) && uncitedSentences.length === 0;
  return { check: { refs, unknownRefs, quotes, uncitedSentences, ok }, cited };
}

/**
 * Checks an answer that cites the context's blocks as `[n]` and quotes its sources in double quotes
 * (`"exact words" [2]`): which refs it cites and whether the pack has them, whether each quote occurs in the
 * item it is attached to, and which sentences cite nothing. Pure; works for any model's text.
 */
export function checkAnswerCitations(pack: CitablePack, answerText: string): AnswerCheck {
  return check(parseOrThrow(CitablePackSchema, pack, 'pack'), parseOrThrow(AnswerTextSchema, answerText, 'answer')).check;
}

const AnswerTextSchema = z.string({ message: 'the answer must be a string' });

/**
 * A preamble that asks the model for the answer format `checkAnswerCitations` reads: cite the context's
 * numbered blocks as `[n]` after each sentence, quote the exact words relied on, cite nothing else, and say so
 * when the context does not answer. Put it before the context (system prompt or first user text).
 */
export function citationInstructions(pack: CitablePack): string {
  const parsed = parseOrThrow(CitablePackSchema, pack, 'pack');
  const count = parsed.items.length;
  if (count === 0)
    return 'No sources were found for this question. Say that the provided context does not answer it; do not answer from memory.';
  const numbers = count === 1 ? '[1]' : `[1] to [${count}]`;
  const where = parsed.format === 'xml' ? `each <document index="n"> block is source [n]` : `each block starts with its number [n]`;
  return [
    `Answer from the numbered sources below only (${numbers}; ${where}).`,
    'After every sentence that uses a source, cite it with its number in square brackets, for example [2], or [1, 3] for several.',
    'When you rely on specific wording, quote the exact words from the source in double quotes right before its number, for example: "the exact words" [2].',
    `Cite only the numbers ${numbers}; never invent a source or a quote.`,
    'If the sources do not answer the question, say so instead of answering from memory.',
  ].join('\n');
}

/** One answer with its citations resolved, whichever way the model cited. */
export interface CitedAnswer {
  /** The answer's text (Claude's text blocks joined). */
  text: string;
  /** `anthropic`: Claude's citations of search results or documents; `markers`: `[n]` markers in the text. */
  via: 'anthropic' | 'markers';
  /** Per text block, its citations (`markers`: one block, one citation per ref of each marker). */
  blocks: ResolvedTextBlock[];
  /** The `[n]` check (`markers` only). */
  check: AnswerCheck | null;
  /** Some citation, and every citation verified (`markers`: also no unknown ref and no uncited sentence). */
  verified: boolean;
}

function markerCitation(items: readonly CitableItem[], cited: Found['cited'][number]): ResolvedCitation {
  const citable = items[cited.ref - 1];
  const type = 'marker';
  if (citable === undefined || citable.item.ref !== cited.ref) {
    return {
      type,
      ref: null,
      chunkId: null,
      sourceId: null,
      textSha256: null,
      spans: [],
      citedText: cited.quote ?? '',
      verified: false,
      problem: `[${cited.ref}] names no item of this pack (it has ${items.length})`,
    };
  }
  const { citation, item } = citable;
  const range =
    cited.range ?? (citable.citable ? { start: citable.units[0]!.start, end: citable.units[citable.units.length - 1]!.end } : undefined);
  const out: ResolvedCitation = {
    type,
    ref: cited.ref,
    chunkId: citation.chunkId,
    sourceId: citation.sourceId,
    textSha256: citation.textSha256,
    spans: [],
    citedText: cited.quote ?? '',
    verified: true,
  };
  if (citation.version !== undefined) out.version = citation.version;
  if (range !== undefined) {
    out.itemRange = range;
    out.spans = sourceRanges(citable, range);
    if (out.spans.length > 0) out.span = { start: out.spans[0]!.start, end: out.spans[out.spans.length - 1]!.end };
    const locator = narrowedLocator(citable, range);
    if (locator !== undefined) out.locator = locator;
  }
  if (!citable.citable) {
    out.verified = false;
    out.problem = `item ${item.ref} shows no source text`;
  } else if (cited.quote !== null && cited.range === null) {
    out.verified = false;
    out.problem = `the quote is not in item ${item.ref}'s text`;
  }
  return out;
}

/**
 * Resolves a model's answer against the pack, whichever way it cites: a Messages API response (or its
 * `content`) whose text blocks carry citations is resolved with `resolveAnthropicCitations`; any other answer
 * (a string, or content without citations) is read for `[n]` markers and quotes (`checkAnswerCitations`), each
 * ref of each marker becoming one citation (type `marker`) narrowed to its quote when it has one.
 */
export function resolveAnswer(pack: CitablePack, answer: unknown, options: ResolveOptions = {}): CitedAnswer {
  if (typeof answer !== 'string' && hasAnthropicCitations(answer)) {
    const blocks = resolveAnthropicCitations(pack, answer, options);
    const all = blocks.flatMap((b) => b.citations);
    return {
      text: blocks.map((b) => b.text).join(''),
      via: 'anthropic',
      blocks,
      check: null,
      verified: all.length > 0 && all.every((c) => c.verified),
    };
  }
  const text =
    typeof answer === 'string'
      ? answer
      : typeof (answer as { content?: unknown } | null)?.content === 'string'
        ? (answer as { content: string }).content
        : responseContent(answer)
            .filter(
              (b): b is { type: 'text'; text: string } =>
                typeof b === 'object' &&
                b !== null &&
                (b as { type?: unknown }).type === 'text' &&
                typeof (b as { text?: unknown }).text === 'string',
            )
            .map((b) => b.text)
            .join('');
  const { pack: parsed, items } = citableItems(pack, options.granularity === undefined ? {} : { granularity: options.granularity });
  const found = check(parsed, text);
  const citations = found.cited.map((cited) => markerCitation(items, cited));
  return {
    text,
    via: 'markers',
    blocks: [{ text, citations }],
    check: found.check,
    verified: citations.length > 0 && citations.every((c) => c.verified) && found.check.ok,
  };
}
