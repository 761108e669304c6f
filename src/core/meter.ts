// Token accounting for one pack: exact counts where they matter (headers, the assembled context), cheap
// lower bounds where they do not, and the memos that survive across packs (escaped bodies, header counts,
// piece counts, sentence counts), each bounded.
import { BoundedCache, cacheFor } from '../base/bounded-cache.js';
import { escapeBody } from '../render/escape.js';
import { renderBlock } from '../render/render.js';
import type { HeaderStyle, PackFormat } from '../render/formats.js';
import { countBySegments, countUpTo, maxTokenChars } from '../tokenize/tiktoken.js';
import type { Tokenizer } from '../tokenize/types.js';
import type { Candidate } from './schemas.js';

// Budget bookkeeping during the greedy fill uses per-block estimates (BPE counts are not additive);
// the assembled context is then counted exactly and trimmed until it fits, so estimates only affect
// how tightly the budget is used, never whether it holds.
export const SEPARATOR_TOKENS = 1;
export const ELLIPSIS_TOKENS = 1;
/** " … " between two kept sentences that are not neighbours. */
export const ELISION_TOKENS = 2;
/** Refs are not known until layout; headers are estimated with a two-digit ref. */
const PLACEHOLDER_REF = 99;

/**
 * Escaped candidate texts, remembered across packs per format. Escaping reads a candidate's whole text, and
 * a pack escapes every candidate it considers, most of which do not fit; the same chunks come back query after
 * query, usually as the very same strings, whose lookup costs no reading. Bounded by the characters held.
 */
const ESCAPE_CACHE_CHARS = 16_000_000;
const escapeCaches = new Map<PackFormat, BoundedCache<string, string>>();

/** Header counts per tokenizer: up to 50,000 headers of at most 4,000 characters each. */
const HEADER_CACHE_LIMIT = 50_000;
const HEADER_CACHE_CHARS = 4_000;
const headerCounts = new WeakMap<Tokenizer, BoundedCache<string, number>>();

/**
 * Counts of context segments (a block's header line, its body's lines) per tokenizer, across packs: a context is
 * recounted after every change of the exact fit, and the same blocks come back query after query, so most
 * segments are counted once per process instead of once per pack. Bounded by the characters held.
 */
const SEGMENT_CACHE_CHARS = 16_000_000;
const segmentCounts = new WeakMap<Tokenizer, BoundedCache<string, number>>();

/** Whole piece counts of escaped candidate texts per tokenizer, bounded by the characters of the texts held. */
const BODY_BOUND_CACHE_CHARS = 16_000_000;
const bodyBounds = new WeakMap<Tokenizer, BoundedCache<string, number>>();

/**
 * Counts of escaped candidate texts per tokenizer, across packs: the exact count, or (negative) that the count is
 * more than a number, when a count stopped there. The fill tries every candidate whole while the budget is open,
 * and without token hints each try counts the text up to the room left; the same chunks come back query after
 * query. Bounded by the characters of the texts held.
 */
const BODY_COUNT_CACHE_CHARS = 16_000_000;
const bodyCounts = new WeakMap<Tokenizer, BoundedCache<string, number>>();

function escapedBody(format: PackFormat, text: string): string {
  const cache = cacheFor(
    escapeCaches,
    format,
    () => new BoundedCache<string, string>(ESCAPE_CACHE_CHARS, (key, escaped) => key.length + (escaped === key ? 0 : escaped.length)),
  );
  return cache.get(text) ?? cache.set(text, escapeBody(format, text));
}

/** Token accounting for one pack: exact counts where they matter, cheap bounds where they do not. */
export class Meter {
  /** Exact token counts of rendered headers, shared by the packs of a process (headers repeat across packs). */
  readonly #headerCache: BoundedCache<string, number>;

  constructor(
    readonly tokenizer: Tokenizer,
    readonly format: PackFormat,
    readonly header: HeaderStyle,
  ) {
    this.#headerCache = cacheFor(headerCounts, tokenizer, () => new BoundedCache<string, number>(HEADER_CACHE_LIMIT));
  }

  count(text: string): number {
    return this.tokenizer.count(text);
  }

  /** `count(text)` when at most `limit`, else some number above `limit` (found without counting all of a long text). */
  countUpTo(text: string, limit: number): number {
    return countUpTo(this.tokenizer, text, limit);
  }

  /** The most characters one token spans (Infinity when the tokenizer does not say): a longer text than `limit` times this cannot fit in `limit`. */
  get maxTokenChars(): number {
    return maxTokenChars(this.tokenizer);
  }

  /** `escapeBody(format, text)`. */
  escaped(text: string): string {
    return escapedBody(this.format, text);
  }

  /**
   * Exact count of an assembled context. Contexts are recounted after every change during the exact fit, and
   * most of their lines are unchanged, so line segments' counts are remembered (across packs: see `segmentCounts`).
   */
  countContext(context: string): number {
    const segments = cacheFor(
      segmentCounts,
      this.tokenizer,
      () => new BoundedCache<string, number>(SEGMENT_CACHE_CHARS, (key) => key.length),
    );
    return countBySegments(this.tokenizer, context, segments);
  }

  /** A lower bound on `count(text)`; the tokenizer may stop early once it is above `limit`. */
  lowerBound(text: string, limit = Infinity): number {
    return this.tokenizer.lowerBound ? this.tokenizer.lowerBound(text, limit) : 0;
  }

  /**
   * `lowerBound` of an escaped candidate text, its whole piece count remembered across packs (a tighter bound
   * than an early stop gives, and the same chunks come back query after query).
   */
  bodyLowerBound(escaped: string, limit = Infinity): number {
    if (!this.tokenizer.lowerBound) return 0;
    const cache = cacheFor(bodyBounds, this.tokenizer, () => new BoundedCache<string, number>(BODY_BOUND_CACHE_CHARS, (key) => key.length));
    const known = cache.get(escaped);
    if (known !== undefined) return known;
    const bound = this.tokenizer.lowerBound(escaped, limit);
    // Only a whole count (the scan reached the end) is remembered.
    return bound <= limit ? cache.set(escaped, bound) : bound;
  }

  /**
   * `countUpTo(escaped, limit)` of an escaped candidate text, remembered across packs: an exact count, or what a
   * count that stopped past some limit showed (more than that number), answers every later limit it decides.
   */
  bodyCountUpTo(escaped: string, limit: number): number {
    const cache = cacheFor(bodyCounts, this.tokenizer, () => new BoundedCache<string, number>(BODY_COUNT_CACHE_CHARS, (key) => key.length));
    const known = cache.get(escaped);
    if (known !== undefined && (known >= 0 || -known > limit)) return known >= 0 ? known : -known;
    const tokens = this.countUpTo(escaped, limit);
    if (tokens <= limit) cache.set(escaped, tokens);
    else if (known === undefined || tokens > -known) cache.set(escaped, -tokens);
    return tokens;
  }

  /** The rendered block without its body: marker, provenance and (xml) closing tags. */
  headerText(candidate: Candidate, pointer?: { tokens: number }): string {
    return renderBlock(this.format, { ref: PLACEHOLDER_REF, candidate, body: '', truncated: false, pointer }, this.header);
  }

  headerTokens(header: string): number {
    let tokens = this.#headerCache.get(header);
    if (tokens === undefined) {
      tokens = this.count(header);
      if (header.length <= HEADER_CACHE_CHARS) this.#headerCache.set(header, tokens);
    }
    return tokens;
  }

  /** A lower bound on a header's count: its exact count when a pack has counted it before. */
  headerBound(header: string): number {
    return this.#headerCache.get(header) ?? this.lowerBound(header);
  }

  /** The candidate's token hint for this tokenizer, when it applies to the rendered body and hints are trusted. */
  hint(candidate: Candidate, escaped: string): number | undefined {
    if (this.#distrustHints || candidate.tokens === undefined || escaped !== candidate.text) return undefined;
    if (typeof candidate.tokens === 'number') return candidate.tokens;
    return candidate.tokens[this.tokenizer.name];
  }

  /**
   * False, and hints are no longer trusted for the rest of this pack, when `hint` is provably wrong: below the
   * lower bound of the text's count. One wrong hint means the caller's counts cannot be relied on; trusting the
   * rest would fill the pack with items that do not fit, which the exact fit must then remove one recount at a time.
   */
  hintHolds(hint: number, escaped: string): boolean {
    if (this.bodyLowerBound(escaped, hint) <= hint) return true;
    this.#distrustHints = true;
    return false;
  }

  get hintsTrusted(): boolean {
    return !this.#distrustHints;
  }

  #distrustHints = false;
}

// Token counts of sentences and selected texts, remembered across packs (the same chunks come back query
// after query; whole chunks carry their counts from ingest, sentences cannot). Keyed by tokenizer and format,
// then by the text itself (not a concatenated key: the sentence strings come from the selector's analysis
// cache, so the lookup reuses their hash); a pure function of the key, so remembering it changes nothing but
// the time.
const SENTENCE_TOKENS_LIMIT = 100_000;
const sentenceTokenCaches = new WeakMap<Tokenizer, Map<PackFormat, BoundedCache<string, number>>>();

/** The count of a sentence's escaped text; past `limit`, some number above `limit` (then not remembered). */
export function sentenceTokens(meter: Meter, text: string, limit = Infinity): number {
  const byFormat = cacheFor(sentenceTokenCaches, meter.tokenizer, () => new Map<PackFormat, BoundedCache<string, number>>());
  // Up to 100,000 sentences of up to 100 characters; a longer one weighs by its length (a sentence can be a
  // whole long run), so the texts held stay under 10 million characters.
  const cache = cacheFor(
    byFormat,
    meter.format,
    () => new BoundedCache<string, number>(SENTENCE_TOKENS_LIMIT, (key) => Math.max(1, key.length / 100)),
  );
  const known = cache.get(text);
  if (known !== undefined) return known;
  const tokens = meter.countUpTo(escapeBody(meter.format, text), limit);
  return tokens <= limit ? cache.set(text, tokens) : tokens;
}
