import { canonicalStringify, sha256Hex } from '../base/canonical.js';
import { computeCoverage } from './coverage.js';
import { parseOrThrow } from '../base/errors.js';
import { orderForLongContext } from './layout.js';
import {
  BriefingOptionsSchema,
  BundleOptionsSchema,
  PACK_SCHEMA_ID,
  type BriefingOptions,
  type BundleOptions,
  type Candidate,
  type Citation,
  type Coverage,
  type Degraded,
  type Dropped,
  type ItemRole,
  type Pack,
  type PackFormat,
  type PackItem,
  type ParsedBriefingOptions,
  type ParsedBundleOptions,
  type Span,
} from './schemas.js';
import { Deduper } from './dedupe.js';
import { characterCutPoints, cutPoints } from './text.js';
import {
  escapeBody,
  oneLine,
  quoteField,
  renderBlock,
  renderBriefingContext,
  renderBundleContext,
  renderCaveats,
  type BlockInput,
  type ZonedBlocks,
} from '../render/render.js';
import { selectSentences, type Selection } from './sentences.js';
import { countBySegments, getTokenizer } from '../tokenize/tiktoken.js';
import type { Tokenizer } from '../tokenize/types.js';
import { BoundedCache, cacheFor } from '../base/bounded-cache.js';

// Budget bookkeeping during the greedy fill uses per-block estimates (BPE counts are not additive);
// the assembled context is then counted exactly and trimmed until it fits, so estimates only affect
// how tightly the budget is used, never whether it holds.
const SEPARATOR_TOKENS = 1;
const ELLIPSIS_TOKENS = 1;
/** " … " between two kept sentences that are not neighbours. */
const ELISION_TOKENS = 2;
/** Refs are not known until layout; headers are estimated with a two-digit ref. */
const PLACEHOLDER_REF = 99;

interface Entry {
  candidate: Candidate;
  sourceId: string;
  pinned: boolean;
  /** With sentence selection: the candidate's selected sentences (`candidate.text` is then their text). */
  selection?: Selection;
  /** The selection was narrowed to fit the budget (the item shows as cut). */
  narrowed?: boolean;
}

interface Kept {
  entry: Entry;
  body: string;
  bodyTokens: number;
  truncated: boolean;
  pointer: { tokens: number } | undefined;
  cost: number;
  normalised: string;
  shingles: Uint32Array | undefined;
}

/** Score descending, then id ascending in code-unit order: a total order that needs no locale. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  // Same id and score (duplicates with different payloads): any fixed rule will do, as long as it does
  // not depend on input order.
  const x = canonicalStringify(a);
  const y = canonicalStringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Merges candidates sharing an id (best kept) and sorts the rest by relevance. */
function rankCandidates(candidates: readonly Candidate[], pins: readonly string[]): { ranked: Entry[]; dropped: Dropped[] } {
  const best = new Map<string, Candidate>();
  const dropped: Dropped[] = [];
  for (const candidate of candidates) {
    const previous = best.get(candidate.id);
    if (previous === undefined) {
      best.set(candidate.id, candidate);
      continue;
    }
    if (compareCandidates(candidate, previous) < 0) best.set(candidate.id, candidate);
    dropped.push({ id: candidate.id, reason: 'duplicate', duplicateOf: candidate.id });
  }
  const pinSet = new Set(pins);
  const ranked = [...best.values()].sort(compareCandidates).map((candidate) => {
    const sourceId = candidate.sourceId ?? candidate.id;
    return { candidate, sourceId, pinned: pinSet.has(candidate.id) || pinSet.has(sourceId) };
  });
  return { ranked, dropped };
}

/**
 * Escaped candidate texts, remembered across packs per format. Escaping reads a candidate's whole text, and
 * a pack escapes every candidate it considers, most of which do not fit; the same chunks come back query after
 * query, usually as the very same strings, whose lookup costs no reading. Bounded by the characters held.
 */
const ESCAPE_CACHE_CHARS = 8_000_000;
const escapeCaches = new Map<PackFormat, BoundedCache<string, string>>();

/** Header counts per tokenizer: up to 50,000 headers of at most 4,000 characters each. */
const HEADER_CACHE_LIMIT = 50_000;
const HEADER_CACHE_CHARS = 4_000;
const headerCounts = new WeakMap<Tokenizer, BoundedCache<string, number>>();

/** Whole piece counts of escaped candidate texts per tokenizer, bounded by the characters of the texts held. */
const BODY_BOUND_CACHE_CHARS = 8_000_000;
const bodyBounds = new WeakMap<Tokenizer, BoundedCache<string, number>>();

function escapedBody(format: PackFormat, text: string): string {
  const cache = cacheFor(escapeCaches, format, () => new BoundedCache<string, string>(ESCAPE_CACHE_CHARS, (key, escaped) => key.length + (escaped === key ? 0 : escaped.length)));
  return cache.get(text) ?? cache.set(text, escapeBody(format, text));
}

/** Token accounting for one pack: exact counts where they matter, cheap bounds where they do not. */
class Meter {
  /** Exact token counts of rendered headers, shared by the packs of a process (headers repeat across packs). */
  readonly #headerCache: BoundedCache<string, number>;

  constructor(
    readonly tokenizer: Tokenizer,
    readonly format: PackFormat,
  ) {
    this.#headerCache = cacheFor(headerCounts, tokenizer, () => new BoundedCache<string, number>(HEADER_CACHE_LIMIT));
  }

  count(text: string): number {
    return this.tokenizer.count(text);
  }

  /** `escapeBody(format, text)`. */
  escaped(text: string): string {
    return escapedBody(this.format, text);
  }

  /**
   * Exact count of an assembled context. Contexts are recounted after every change during the exact fit, and
   * most of their lines are unchanged, so line segments' counts are remembered for the pack.
   */
  countContext(context: string): number {
    return countBySegments(this.tokenizer, context, this.#segments);
  }

  readonly #segments = new Map<string, number>();

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

  /** The rendered block without its body: marker, provenance and (xml) closing tags. */
  headerText(candidate: Candidate, pointer?: { tokens: number }): string {
    return renderBlock(this.format, { ref: PLACEHOLDER_REF, candidate, body: '', truncated: false, pointer });
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

interface FillSettings {
  maxTokens: number;
  minTruncatedTokens: number;
  maxPerSource: number | undefined;
  minScore: number | undefined;
  nearThreshold: number | null;
  containmentThreshold: number | null;
  shingleSize: number;
  /** Briefing: pinned entries that do not fit become one-line pointers. */
  pointersForPins: boolean;
}

/**
 * The longest prefix of `text`, cut at a sentence end (else a word end, else between characters), whose
 * escaped form has at most `budget` tokens. Null when not even the shortest cut fits.
 */
function cutToFit(text: string, budget: number, meter: Meter): { body: string; tokens: number } | null {
  const measure = (end: number) => {
    const body = text.slice(0, end).trimEnd();
    return { body, tokens: meter.count(escapeBody(meter.format, body)) };
  };
  const search = (points: number[]) => {
    let lo = 0;
    let hi = points.length - 1;
    let found: { body: string; tokens: number } | null = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const attempt = measure(points[mid] as number);
      if (attempt.tokens <= budget && attempt.body.length > 0) {
        found = attempt;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
  return (
    search(cutPoints(text, 'sentence')) ??
    search(cutPoints(text, 'word')) ??
    search(characterCutPoints(text, 1))
  );
}

/**
 * `cutToFit` for an entry: a selected candidate gives up its least important sentences first (the most
 * important that fit are kept, in source order); only when not even its best sentence fits is that one cut.
 */
function cutEntry(entry: Entry, budget: number, meter: Meter): { body: string; tokens: number } | null {
  const { selection } = entry;
  if (selection === undefined) return cutToFit(entry.candidate.text, budget, meter);
  let lo = 1;
  let hi = selection.size;
  let found: { body: string; tokens: number } | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const body = selection.textOfBest(mid);
    const tokens = meter.count(escapeBody(meter.format, body));
    if (tokens <= budget) {
      found = { body, tokens };
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found !== null) return found;
  const first = selection.first;
  const prefix = cutToFit(selection.source.slice(first.start, first.end), budget, meter);
  if (prefix !== null) selection.registerPrefix(prefix.body);
  return prefix;
}

/**
 * Greedy fill in the given order. Checks run cheapest first: min score, source cap, budget (with a lower
 * bound before any exact count), then duplicates against what is already kept, then the cut.
 */
function fill(entries: readonly Entry[], settings: FillSettings, meter: Meter, reserved: number) {
  const kept: Kept[] = [];
  const dropped: Dropped[] = [];
  const perSource = new Map<string, number>();
  const deduper = new Deduper<Kept>(settings);
  /** Kept whole on the strength of a hint (recounted if a later hint proves wrong). */
  const hinted = new Set<Kept>();
  let used = reserved;

  for (const entry of entries) {
    const { candidate, pinned } = entry;
    if (!pinned && settings.minScore !== undefined && candidate.score < settings.minScore) {
      dropped.push({ id: candidate.id, reason: 'below-min-score' });
      continue;
    }
    if (!pinned && settings.maxPerSource !== undefined && (perSource.get(entry.sourceId) ?? 0) >= settings.maxPerSource) {
      dropped.push({ id: candidate.id, reason: 'source-cap' });
      continue;
    }
    let remaining = settings.maxTokens - used;
    const escaped = meter.escaped(candidate.text);
    const hint = meter.hint(candidate, escaped);
    const header = meter.headerText(candidate);
    const headerBound = meter.headerBound(header);

    let bodyTokens: number | undefined;
    let headerTokens: number | undefined;
    let fromHint = false;
    const room = remaining - headerBound - SEPARATOR_TOKENS;
    if ((hint ?? meter.bodyLowerBound(escaped, room)) <= room) {
      headerTokens = meter.headerTokens(header);
      let whole = hint ?? meter.count(escaped);
      if (hint !== undefined && headerTokens + hint + SEPARATOR_TOKENS <= remaining && !meter.hintHolds(hint, escaped)) {
        whole = meter.count(escaped);
        // What was kept on earlier hints is recounted too.
        for (const [index, item] of kept.entries()) {
          if (!hinted.has(item)) continue;
          const exact = meter.count(meter.escaped(item.body));
          used += exact - item.bodyTokens;
          kept[index] = { ...item, bodyTokens: exact, cost: item.cost + exact - item.bodyTokens };
        }
        hinted.clear();
        remaining = settings.maxTokens - used;
      }
      if (headerTokens + whole + SEPARATOR_TOKENS <= remaining) bodyTokens = whole;
      fromHint = hint !== undefined && meter.hintsTrusted;
    }
    let canCut = remaining - headerBound - SEPARATOR_TOKENS - ELLIPSIS_TOKENS >= settings.minTruncatedTokens;
    if (bodyTokens === undefined && canCut) {
      headerTokens ??= meter.headerTokens(header);
      canCut = remaining - headerTokens - SEPARATOR_TOKENS - ELLIPSIS_TOKENS >= settings.minTruncatedTokens;
    }
    if (bodyTokens === undefined && !canCut && !(pinned && settings.pointersForPins)) {
      dropped.push({ id: candidate.id, reason: 'budget' });
      continue;
    }

    // Duplicates are judged against kept items only: a copy of something that did not fit is not redundant.
    const verdict = deduper.check(candidate.text);
    if (verdict.kind !== 'new') {
      dropped.push({ id: candidate.id, reason: verdict.kind, duplicateOf: verdict.of.entry.candidate.id });
      continue;
    }
    const { normalised, shingles } = verdict;

    let item: Omit<Kept, 'entry' | 'normalised' | 'shingles'> | undefined;
    if (bodyTokens !== undefined && headerTokens !== undefined) {
      item = { body: candidate.text, bodyTokens, truncated: false, pointer: undefined, cost: headerTokens + bodyTokens + SEPARATOR_TOKENS };
    } else if (canCut) {
      headerTokens ??= meter.headerTokens(header);
      const budget = remaining - headerTokens - SEPARATOR_TOKENS - ELLIPSIS_TOKENS;
      const cut = budget >= settings.minTruncatedTokens ? cutEntry(entry, budget, meter) : null;
      if (cut !== null) {
        item = {
          body: cut.body,
          bodyTokens: cut.tokens,
          truncated: true,
          pointer: undefined,
          cost: headerTokens + cut.tokens + SEPARATOR_TOKENS + ELLIPSIS_TOKENS,
        };
      }
    }
    if (item === undefined && pinned && settings.pointersForPins) {
      const pointer = { tokens: hint ?? meter.count(escaped) };
      const cost = meter.headerTokens(meter.headerText(candidate, pointer)) + SEPARATOR_TOKENS;
      if (cost <= remaining) item = { body: '', bodyTokens: 0, truncated: true, pointer, cost };
    }
    if (item === undefined) {
      dropped.push({ id: candidate.id, reason: 'budget' });
      continue;
    }
    const keptItem: Kept = { ...item, entry, normalised, shingles };
    kept.push(keptItem);
    deduper.keep(verdict, keptItem);
    if (fromHint && !item.truncated && item.pointer === undefined) hinted.add(keptItem);
    perSource.set(entry.sourceId, (perSource.get(entry.sourceId) ?? 0) + 1);
    used += item.cost;
  }
  return { kept, dropped };
}

interface Layout {
  ordered: Array<{ kept: Kept; role: ItemRole }>;
  context: string;
  caveats: string | null;
}

function sortDropped(dropped: Dropped[]): Dropped[] {
  // Keys built once per entry, not once per comparison.
  const keyed = dropped.map((d) => ({ d, key: `${d.id}\u0000${d.reason}\u0000${d.duplicateOf ?? ''}` }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  keyed.forEach(({ d }, i) => {
    dropped[i] = d;
  });
  return dropped;
}

/**
 * Assembles the context, counts it exactly, and while it is over budget shortens or removes the
 * lowest-priority kept item (the last one the greedy fill took).
 */
function fitExactly(
  kept: Kept[],
  dropped: Dropped[],
  meter: Meter,
  settings: FillSettings,
  layout: (kept: readonly Kept[], dropped: readonly Dropped[]) => Layout,
): { layout: Layout; usedTokens: number } {
  for (;;) {
    const current = layout(kept, dropped);
    const usedTokens = meter.countContext(current.context);
    if (usedTokens <= settings.maxTokens) return { layout: current, usedTokens };
    const victim = kept[kept.length - 1];
    if (victim === undefined) {
      // Nothing left but fixed text (a briefing's caveats) and it does not fit: the layout drops it.
      const bare = layout([], dropped);
      return { layout: bare, usedTokens: meter.countContext(bare.context) };
    }
    const over = usedTokens - settings.maxTokens;
    const target = victim.bodyTokens - over - 2;
    const shorter =
      victim.pointer === undefined && target >= settings.minTruncatedTokens
        ? cutEntry(victim.entry, target, meter)
        : null;
    if (shorter !== null && shorter.tokens < victim.bodyTokens) {
      kept[kept.length - 1] = { ...victim, body: shorter.body, bodyTokens: shorter.tokens, truncated: true };
    } else {
      kept.pop();
      dropped.push({ id: victim.entry.candidate.id, reason: 'budget' });
    }
  }
}

/** One entry per stage and code, in a fixed order (rule 7: the same input gives the same bytes). */
function sortDegraded(degraded: readonly Degraded[]): Degraded[] {
  const key = (d: Degraded) => `${d.stage}\u0000${d.code}`;
  const unique = new Map(degraded.map((d) => [key(d), { stage: d.stage, code: d.code }] as const));
  return [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

function blockFor(kept: Kept, ref: number): BlockInput {
  return {
    ref,
    candidate: kept.entry.candidate,
    body: kept.body,
    truncated: (kept.truncated || kept.entry.narrowed === true) && kept.pointer === undefined,
    pointer: kept.pointer,
  };
}

function citationFor(kept: Kept, ref: number, withSpans: boolean): Citation {
  const { candidate, selection } = kept.entry;
  const citation: Citation = {
    ref,
    sourceId: candidate.sourceId ?? candidate.id,
    chunkId: candidate.id,
    version: candidate.version,
    title: candidate.title,
    url: candidate.url,
    section: candidate.section,
    span: candidate.span,
    // The full original chunk, also under selection: the version-pinned hash of what was retrieved.
    textSha256: sha256Hex(selection?.source ?? candidate.text),
  };
  if (withSpans) {
    citation.spans = keptSpans(kept);
    citation.keptTextSha256 = sha256Hex(kept.body);
  }
  return citation;
}

/**
 * The exact source range of each sentence (or sentence prefix) an item shows, offset by the chunk's own
 * span when it has one: `source.slice(start, end)` gives each one back. An item that is a prefix of its
 * text (a pin, or text with one sentence) shows one range.
 */
function keptSpans(kept: Kept): Span[] {
  if (kept.pointer !== undefined || kept.body === '') return [];
  const offset = kept.entry.candidate.span?.start ?? 0;
  const { selection } = kept.entry;
  const ranges = selection === undefined ? [{ start: 0, end: kept.body.length }] : selection.rangesOf(kept.body);
  if (ranges === undefined) throw new Error(`litm-pack: no sentence ranges for the text of item ${kept.entry.candidate.id}`);
  return ranges.map((range) => ({ start: offset + range.start, end: offset + range.end }));
}

// Token counts of sentences and selected texts, remembered across packs (the same chunks come back query
// after query; whole chunks carry their counts from ingest, sentences cannot). Keyed by tokenizer and format,
// then by the text itself (not a concatenated key: the sentence strings come from the selector's analysis
// cache, so the lookup reuses their hash); a pure function of the key, so remembering it changes nothing but
// the time.
const SENTENCE_TOKENS_LIMIT = 100_000;
const sentenceTokenCaches = new WeakMap<Tokenizer, Map<PackFormat, BoundedCache<string, number>>>();

function sentenceTokens(meter: Meter, text: string): number {
  const byFormat = cacheFor(sentenceTokenCaches, meter.tokenizer, () => new Map<PackFormat, BoundedCache<string, number>>());
  const cache = cacheFor(byFormat, meter.format, () => new BoundedCache<string, number>(SENTENCE_TOKENS_LIMIT));
  return cache.get(text) ?? cache.set(text, meter.count(escapeBody(meter.format, text)));
}

/**
 * Under selection the budget is shared out sentence by sentence before the fill: the most valuable next
 * sentence of any candidate is taken while the (estimated) budget lasts, where value is the sentence's
 * relevance plus `spread` for a candidate's first sentence. `spread` 1 gives every candidate its best sentence
 * before any gets a second (many sources, one sentence each); 0 follows relevance alone. Each selection is
 * narrowed to its share; the fill then runs as usual (it counts exactly, and cuts or drops what does not fit).
 */
function allocateSentences(entries: Entry[], meter: Meter, available: number, spread: number): Entry[] {
  // Headers and sentence counts are measured when a candidate's turn comes: at a tight budget most never get one.
  const plans = entries.map((entry) => {
    const selection = entry.selection;
    if (selection === undefined) return null;
    const texts = selection.byPriority;
    let header: number | undefined;
    return {
      size: texts.length,
      cost: (position: number) => sentenceTokens(meter, texts[position] as string),
      header: () => (header ??= meter.headerTokens(meter.headerText(entry.candidate))),
      relevance: selection.relevance,
      count: 0,
      blocked: false,
    };
  });
  let remaining = available;
  // Candidates without a selection (pins, blank text) are taken whole or cut by the fill, before their turn.
  entries.forEach((entry, index) => {
    if (plans[index] !== null) return;
    const whole = meter.headerTokens(meter.headerText(entry.candidate)) + meter.count(escapeBody(meter.format, entry.candidate.text));
    remaining -= Math.min(whole + SEPARATOR_TOKENS, Math.max(0, remaining));
  });
  // Greedy by value: a sentence's relevance, plus `spread` for a candidate's first sentence; ties go to the
  // better-ranked candidate (entries come in fill order).
  for (;;) {
    let best = -1;
    let bestValue = -Infinity;
    plans.forEach((plan, index) => {
      if (plan === null || plan.blocked || plan.count >= plan.size) return;
      const value = (plan.relevance[plan.count] as number) + (plan.count === 0 ? spread : 0);
      if (value > bestValue) {
        bestValue = value;
        best = index;
      }
    });
    const plan = plans[best];
    if (plan === undefined || plan === null) break;
    const sentence = plan.cost(plan.count);
    // The header is measured only when the sentence alone leaves room for it.
    const cost = plan.count > 0 ? sentence + ELISION_TOKENS : sentence + SEPARATOR_TOKENS > remaining ? Infinity : sentence + plan.header() + SEPARATOR_TOKENS;
    if (cost > remaining) {
      // A candidate whose next sentence does not fit takes no more: its later sentences would read out of order.
      plan.blocked = true;
      continue;
    }
    plan.count += 1;
    remaining -= cost;
  }
  return entries.map((entry, index) => {
    const plan = plans[index];
    if (plan === null || plan === undefined || entry.selection === undefined) return entry;
    // A candidate that got no sentence keeps its whole selection; the fill will most likely drop it on a bound.
    if (plan.count === 0) return entry;
    const selection = entry.selection.narrowed(plan.count);
    const candidate: Candidate = { ...entry.candidate, text: selection.text };
    // The exact count the fill would compute, remembered (a hint applies only where escaping changes nothing).
    if (escapeBody(meter.format, selection.text) === selection.text) {
      candidate.tokens = { [meter.tokenizer.name]: sentenceTokens(meter, selection.text) };
    }
    return { ...entry, candidate, selection, narrowed: selection !== entry.selection };
  });
}

/** With `compress`, candidates show their selected sentences (pins stay whole); otherwise entries as they are. */
function selectEntries(entries: Entry[], options: ParsedBundleOptions): Entry[] {
  const { compress } = options;
  if (compress === undefined) return entries;
  const selections = selectSentences(
    options.query,
    entries.map((e) => e.candidate.text),
    compress,
    entries.map((e) => e.pinned),
  );
  return entries.map((entry, index) => {
    const selection = selections[index];
    if (selection === null || selection === undefined) return entry;
    // The token hint counts the whole text; the selected text is counted afresh.
    const { tokens: _hint, ...candidate } = entry.candidate;
    return { ...entry, candidate: { ...candidate, text: selection.text }, selection };
  });
}

function finish(
  kind: Pack['kind'],
  options: ParsedBundleOptions,
  meter: Meter,
  result: { layout: Layout; usedTokens: number },
  dropped: Dropped[],
  briefing: Pack['briefing'],
): Pack {
  const { ordered, context, caveats } = result.layout;
  const ranks = new Map(
    [...ordered]
      .map((o) => o.kept.entry.candidate)
      .sort(compareCandidates)
      .map((candidate, index) => [candidate.id, index + 1] as const),
  );
  const items: PackItem[] = ordered.map(({ kept, role }, index) => ({
    ref: index + 1,
    id: kept.entry.candidate.id,
    sourceId: kept.entry.sourceId,
    role,
    rank: ranks.get(kept.entry.candidate.id) as number,
    score: kept.entry.candidate.score,
    text: kept.body,
    tokens: kept.pointer !== undefined ? kept.pointer.tokens : kept.bodyTokens,
    truncated: kept.truncated || kept.entry.narrowed === true,
    pointer: kept.pointer !== undefined,
  }));
  const citations = ordered.map(({ kept }, index) => citationFor(kept, index + 1, options.compress !== undefined));
  const coverage: Coverage = computeCoverage(
    ordered.map((o) => o.kept.entry.candidate),
    options.coverage,
    options.candidates,
  );
  const sortedDropped = sortDropped(dropped);
  const body: Omit<Pack, 'packHash'> = {
    schema: PACK_SCHEMA_ID,
    kind,
    query: options.query,
    format: options.format,
    context,
    items,
    citations,
    coverage,
    budget: { maxTokens: options.maxTokens, usedTokens: result.usedTokens, encoding: meter.tokenizer.name },
    caveats,
    briefing,
    truncated: items.some((i) => i.truncated) || sortedDropped.some((d) => d.reason === 'budget'),
    dropped: sortedDropped,
    degraded: sortDegraded(options.degraded),
  };
  // Round-trip through canonical JSON so the returned object holds exactly what the hash covers
  // (no undefined members). The parsed copy serialises to the same string, so that string is hashed.
  const json = canonicalStringify(body);
  const clean = JSON.parse(json) as Omit<Pack, 'packHash'>;
  return { ...clean, packHash: sha256Hex(json) };
}

function settingsFrom(options: ParsedBundleOptions, pointersForPins: boolean): FillSettings {
  return {
    maxTokens: options.maxTokens,
    minTruncatedTokens: options.minTruncatedTokens,
    maxPerSource: options.maxPerSource,
    minScore: options.minScore,
    nearThreshold: options.dedupe === false || options.dedupe.nearDuplicateThreshold >= 1 ? null : options.dedupe.nearDuplicateThreshold,
    containmentThreshold:
      options.dedupe === false || options.dedupe.containmentThreshold >= 1 ? null : options.dedupe.containmentThreshold,
    shingleSize: options.dedupe === false ? 5 : options.dedupe.shingleSize,
    pointersForPins,
  };
}

function meterFor(options: ParsedBundleOptions): Meter {
  return new Meter(options.tokenizer ?? getTokenizer(options.encoding), options.format);
}

/**
 * Packs candidates into a bundle: deduplicated, fitted to `maxTokens` exactly, in Lost-in-the-Middle
 * order (best first, second best last), with a citation per item.
 *
 * @example
 * const pack = packBundle({ query: 'how do refunds work?', candidates, maxTokens: 2000 });
 * pack.context;   // "[1] Refund policy (source: policy.md)\n..."
 * pack.citations; // [{ ref: 1, sourceId: 'policy.md', chunkId: '...', textSha256: '...' }, ...]
 */
export function packBundle(input: BundleOptions): Pack {
  const options = parseOrThrow(BundleOptionsSchema, input, 'packBundle options');
  const meter = meterFor(options);
  const settings = settingsFrom(options, false);
  const { ranked: rankedWhole, dropped: merged } = rankCandidates(options.candidates, []);
  const frame = meter.count(renderBundleContext(options.format, ['']));
  const ranked = options.compress === undefined ? rankedWhole : allocateSentences(selectEntries(rankedWhole, options), meter, options.maxTokens - frame, options.compress.spread);
  const { kept, dropped } = fill(ranked, settings, meter, frame);
  const allDropped = [...merged, ...dropped];
  const layout = (keptNow: readonly Kept[]): Layout => {
    const ordered = orderForLongContext(keptNow).map((k) => ({ kept: k, role: 'evidence' as const }));
    const blocks = ordered.map((o, index) => renderBlock(options.format, blockFor(o.kept, index + 1)));
    return { ordered, context: renderBundleContext(options.format, blocks), caveats: null };
  };
  const result = fitExactly(kept, allDropped, meter, settings, layout);
  return finish('bundle', options, meter, result, allDropped, null);
}

function formatNumber(value: number): string {
  return String(Number(value.toFixed(4)));
}

/** The caveats block's lines: counted facts about the pack, never generated prose. */
export function caveatLines(
  coverage: Coverage,
  kept: readonly Candidate[],
  dropped: readonly Dropped[],
  options: ParsedBriefingOptions,
  missingPins: readonly string[],
): string[] {
  const lines: string[] = [];
  if (options.entity !== null) lines.push(`Entity: ${options.entity}`);
  const similarity = coverage.topSimilarity === -1 ? 'no similarity scores' : `top similarity ${formatNumber(coverage.topSimilarity)}`;
  lines.push(
    `Coverage: ${coverage.itemCount} items from ${coverage.distinctSourceCount} sources; confidence ${coverage.confidence} (${similarity}).`,
  );
  if (kept.length > 0) {
    const scores = kept.map((c) => c.score);
    lines.push(
      `Scores: min ${formatNumber(Math.min(...scores))}, p50 ${formatNumber(coverage.scoreP50 ?? 0)}, max ${formatNumber(Math.max(...scores))}.`,
    );
  }
  lines.push(
    coverage.dateRange === null
      ? 'Evidence dates: none recorded.'
      : `Evidence dates: ${coverage.dateRange.from} to ${coverage.dateRange.to}.`,
  );
  const countOf = (reason: Dropped['reason']) => dropped.filter((d) => d.reason === reason).length;
  lines.push(
    `Not included: ${countOf('budget')} relevant items did not fit the budget; ` +
      `${countOf('duplicate') + countOf('near-duplicate')} duplicates removed; ` +
      `${countOf('source-cap')} over the per-source cap; ${countOf('below-min-score')} below the minimum score.`,
  );
  const kinds = new Map<string, number>();
  for (const candidate of kept) kinds.set(candidate.kind ?? 'no kind', (kinds.get(candidate.kind ?? 'no kind') ?? 0) + 1);
  if ([...kinds.keys()].some((kind) => kind !== 'no kind')) {
    const counts = [...kinds].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([kind, n]) => `${n} ${kind}`);
    lines.push(`Kinds: ${counts.join(', ')}.`);
  }
  for (const gap of options.gaps) lines.push(`Gap: ${gap}`);
  for (const contradiction of options.contradictions) lines.push(`Contradiction: ${contradiction}`);
  // Quoted when needed, so that one pin cannot read as two.
  if (missingPins.length > 0) lines.push(`Pinned but not found: ${missingPins.map((pin) => quoteField(oneLine(pin))).join(', ')}.`);
  for (const d of sortDegraded(options.degraded)) lines.push(`Degraded: the ${d.stage} stage failed (${d.code}) and was bypassed.`);
  return lines;
}

/**
 * Packs candidates into a briefing: a `grounding` zone (pins first, then the strongest insights/items),
 * an `evidence` zone, and a closing caveats block of computed facts (coverage, score distribution, date
 * range, what did not fit). Pins that do not fit verbatim are cut, then shown as a one-line pointer.
 */
export function packBriefing(input: BriefingOptions): Pack {
  const options = parseOrThrow(BriefingOptionsSchema, input, 'packBriefing options');
  const meter = meterFor(options);
  const settings = settingsFrom(options, true);
  const { ranked: rankedWhole, dropped: merged } = rankCandidates(options.candidates, options.pins);
  const ranked = selectEntries(rankedWhole, options);

  // Pins first, in the order given (a source pin brings its chunks in document order); then the
  // candidates given precedence, in their order; then everything else by (tier-weighted) score.
  const pinOrder = new Map(options.pins.map((pin, index) => [pin, index] as const));
  const pinIndex = (entry: Entry) =>
    Math.min(pinOrder.get(entry.candidate.id) ?? Infinity, pinOrder.get(entry.sourceId) ?? Infinity);
  const spanStart = (entry: Entry) => entry.candidate.span?.start ?? 0;
  const pinnedEntries = ranked
    .filter((e) => e.pinned)
    .sort((a, b) => pinIndex(a) - pinIndex(b) || spanStart(a) - spanStart(b) || (a.candidate.id < b.candidate.id ? -1 : 1));
  const weight = (candidate: Candidate) => options.tierWeights?.[candidate.kind ?? ''] ?? 1;
  const byWeightedScore = (a: Candidate, b: Candidate) => {
    if (options.tierWeights === undefined) return compareCandidates(a, b);
    const x = a.score * weight(a);
    const y = b.score * weight(b);
    return x !== y ? y - x : compareCandidates(a, b);
  };
  const precedence = new Map(options.precedence.map((id, index) => [id, index] as const));
  const first = ranked.filter((e) => !e.pinned && precedence.has(e.candidate.id));
  first.sort((a, b) => precedence.get(a.candidate.id)! - precedence.get(b.candidate.id)!);
  const rest = ranked.filter((e) => !e.pinned && !precedence.has(e.candidate.id)).sort((a, b) => byWeightedScore(a.candidate, b.candidate));
  const order = [...pinnedEntries, ...first, ...rest];
  const missingPins = options.pins.filter(
    (pin) => !ranked.some((e) => e.candidate.id === pin || e.sourceId === pin),
  );

  const slots = { entity: options.entity, contradictions: options.contradictions, gaps: options.gaps, missingPins };
  const zonesFor = (keptNow: readonly Kept[]) => {
    const pinned = keptNow.filter((k) => k.entry.pinned);
    const rest = keptNow.filter((k) => !k.entry.pinned).sort((a, b) => byWeightedScore(a.entry.candidate, b.entry.candidate));
    const insights = rest.filter((k) => k.entry.candidate.kind === 'insight');
    const lead = [...insights, ...rest.filter((k) => k.entry.candidate.kind !== 'insight')].slice(0, options.groundingCount);
    const leadSet = new Set(lead);
    return { grounding: [...pinned, ...lead], evidence: rest.filter((k) => !leadSet.has(k)) };
  };
  const layout = (keptNow: readonly Kept[], droppedNow: readonly Dropped[], withCaveats = true): Layout => {
    const zones = zonesFor(keptNow);
    const ordered = [
      ...zones.grounding.map((k) => ({ kept: k, role: 'grounding' as const })),
      ...zones.evidence.map((k) => ({ kept: k, role: 'evidence' as const })),
    ];
    const blocks = ordered.map((o, index) => renderBlock(options.format, blockFor(o.kept, index + 1)));
    const zoned: ZonedBlocks[] = [
      { role: 'grounding', blocks: blocks.slice(0, zones.grounding.length) },
      { role: 'evidence', blocks: blocks.slice(zones.grounding.length) },
    ];
    const keptCandidates = ordered.map((o) => o.kept.entry.candidate);
    const caveats = withCaveats
      ? renderCaveats(
          options.format,
          caveatLines(computeCoverage(keptCandidates, options.coverage, options.candidates), keptCandidates, droppedNow, options, missingPins),
        )
      : null;
    return { ordered, context: renderBriefingContext(options.format, zoned, caveats), caveats };
  };

  // Reserve room for the zone frames and a caveats block whose counts have as many digits as they can.
  const worst = options.candidates.length;
  const worstDropped: Dropped[] = [...Array(Math.min(worst, 10_000)).keys()].map((i) => ({ id: String(i), reason: 'budget' }));
  const probeCaveats = renderCaveats(
    options.format,
    caveatLines(
      {
        itemCount: worst,
        distinctSourceCount: worst,
        topSimilarity: -0.12345,
        confidence: 'partial',
        scoreP50: -0.12345,
        dateRange: null,
        denseAvailable: true,
        newestIndexedAt: null,
      },
      options.candidates,
      worstDropped,
      options,
      missingPins,
    ),
  );
  // A caveats block that alone would not fit is left out from the start rather than crowding out items.
  const includeCaveats = meter.count(probeCaveats) < options.maxTokens;
  const frame = meter.count(
    renderBriefingContext(
      options.format,
      [
        { role: 'grounding', blocks: [''] },
        { role: 'evidence', blocks: [''] },
      ],
      includeCaveats ? probeCaveats : null,
    ),
  );
  const reserved = frame + (includeCaveats ? 8 : 0);
  const planned = options.compress === undefined ? order : allocateSentences(order, meter, options.maxTokens - reserved, options.compress.spread);
  const filled = fill(planned, settings, meter, reserved);
  const allDropped = [...merged, ...filled.dropped];
  const final = fitExactly(filled.kept, allDropped, meter, settings, (k, d) => layout(k, d, includeCaveats));
  return finish('briefing', options, meter, final, allDropped, slots);
}

/** The pack as canonical JSON: sorted keys, no whitespace; the same pack always gives the same bytes. */
export function toCanonicalJson(pack: Pack): string {
  return canonicalStringify(pack);
}
