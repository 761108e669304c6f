// The greedy fill (rule 2): candidates taken in order, cheapest checks first, cut at a sentence boundary
// when they do not fit whole; then the exact fit (rule 1), which counts the assembled context and shortens or
// drops the last item taken until it fits.
import { escapeBody } from '../render/escape.js';
import { Deduper } from './dedupe.js';
import { ELLIPSIS_TOKENS, SEPARATOR_TOKENS, type Meter } from './meter.js';
import type { ItemRole } from '../render/formats.js';
import type { ParsedPackOptions, Candidate, Dropped } from './schemas.js';
import type { Selection } from './sentences.js';
import { characterCutPoints, cutPoints } from './text.js';

export interface Entry {
  candidate: Candidate;
  sourceId: string;
  pinned: boolean;
  /** With sentence selection: the candidate's selected sentences (`candidate.text` is then their text). */
  selection?: Selection;
  /** The selection was narrowed to fit the budget (the item shows as cut). */
  narrowed?: boolean;
}

export interface Kept {
  entry: Entry;
  body: string;
  bodyTokens: number;
  truncated: boolean;
  pointer: { tokens: number } | undefined;
  cost: number;
  normalised: string;
  shingles: Uint32Array | undefined;
}

export interface FillSettings {
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
 *
 * Each search is a binary search over the cut points, and every probe is an exact count, cut short in two
 * ways that give the same answers: a prefix of more than `budget` × the longest token's characters cannot
 * fit and is not counted, and a count stops as soon as it passes `budget`. A probe therefore costs what the
 * budget holds, not what the text holds, and a long text without spaces (whose every character is a cut
 * point) is searched in time linear in the budget for each probe.
 */
function cutToFit(text: string, budget: number, meter: Meter): { body: string; tokens: number } | null {
  const longest = budget * meter.maxTokenChars;
  const measure = (end: number) => {
    const body = text.slice(0, end).trimEnd();
    const tokens = body.length > longest ? Infinity : meter.countUpTo(escapeBody(meter.format, body), budget);
    return { body, tokens };
  };
  const search = (count: number, pointAt: (index: number) => number) => {
    let lo = 0;
    let hi = count - 1;
    let found: { body: string; tokens: number } | null = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const attempt = measure(pointAt(mid));
      if (attempt.tokens <= budget && attempt.body.length > 0) {
        found = attempt;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
  const inArray = (points: number[]) => search(points.length, (index) => points[index] as number);
  return inArray(cutPoints(text, 'sentence')) ?? inArray(cutPoints(text, 'word')) ?? search(...characterCutPoints(text, 1));
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
    const tokens = meter.countUpTo(escapeBody(meter.format, body), budget);
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

/** How many of the best unpinned entries that reach the budget keep room for their shortest cut when set aside. */
const PROTECTED_RANKS = 3;

/** An entry that did not fit whole, set aside until every later entry has been tried whole. */
interface SetAside {
  entry: Entry;
  /** Its position in the fill's order: a cut item takes its place among the kept ones. */
  position: number;
  /** Its rendered header, when the whole pass rendered it. */
  header: string | undefined;
  /** Room it holds for its shortest cut (one of the best three), else 0. */
  hold: number;
  /** One of the best three set aside before it that it copies (its duplicate check comes first). */
  copyOf?: SetAside | undefined;
}

/**
 * The fill (rule 2), in the given order (relevance; a briefing's pins and precedence first). Whole entries are
 * taken while they fit; an entry that does not fit whole is set aside and later entries are tried whole; then
 * the set-aside entries are cut into what is left, best first, while enough is left for a cut. Each of the
 * three best unpinned entries that is set aside holds room for its shortest cut (`minTruncatedTokens`) until it
 * is cut, so lower entries never take its place. A pinned entry, and one whose sentences were selected (the
 * selection already planned the budget), is cut (or made a pointer) where it stands.
 *
 * Why: cutting the first entry that does not fit uses up the budget on a prefix, where later whole entries (often
 * other sources) would have fitted beside it; HotpotQA's both-gold rates measure the difference (bench/packing.ts
 * --fill). Checks run cheapest first: min score, source cap, budget (with a lower bound before any exact count),
 * then duplicates against what is already kept, then the cut.
 */
export function fill(entries: readonly Entry[], settings: FillSettings, meter: Meter, reserved: number) {
  /** In the fill's order (the last one is the lowest priority: the exact fit shortens or drops it first). */
  const kept: Kept[] = [];
  const positions: number[] = [];
  const dropped: Dropped[] = [];
  const perSource = new Map<string, number>();
  const deduper = new Deduper<Kept>(settings);
  /** The best three set aside, for the copies of them that follow (see `copyOfAside`). */
  const asideDeduper = new Deduper<SetAside>(settings);
  /** Kept whole on the strength of a hint (recounted if a later hint proves wrong). */
  const hinted = new Set<Kept>();
  const setAside: SetAside[] = [];
  let used = reserved;
  /** Room held for the shortest cuts of the best three set aside (header, separator, ellipsis, minTruncatedTokens each). */
  let holding = 0;
  /** Unpinned entries that reached the budget so far (kept, set aside or dropped for budget). */
  let ranked = 0;

  const keep = (
    item: Omit<Kept, 'entry' | 'normalised' | 'shingles'>,
    entry: Entry,
    position: number,
    verdict: Extract<ReturnType<Deduper<Kept>['check']>, { kind: 'new' }>,
    fromHint: boolean,
  ) => {
    const keptItem: Kept = { ...item, entry, normalised: verdict.normalised, shingles: verdict.shingles };
    let at = kept.length;
    while (at > 0 && positions[at - 1]! > position) at -= 1;
    kept.splice(at, 0, keptItem);
    positions.splice(at, 0, position);
    deduper.keep(verdict, keptItem);
    if (fromHint && !item.truncated && item.pointer === undefined) hinted.add(keptItem);
    perSource.set(entry.sourceId, (perSource.get(entry.sourceId) ?? 0) + 1);
    used += item.cost;
  };

  for (const [position, entry] of entries.entries()) {
    const { candidate, pinned } = entry;
    if (!pinned && settings.minScore !== undefined && candidate.score < settings.minScore) {
      dropped.push({ id: candidate.id, reason: 'below-min-score' });
      continue;
    }
    if (!pinned && settings.maxPerSource !== undefined && (perSource.get(entry.sourceId) ?? 0) >= settings.maxPerSource) {
      dropped.push({ id: candidate.id, reason: 'source-cap' });
      continue;
    }
    let remaining = settings.maxTokens - used - holding;
    const escaped = meter.escaped(candidate.text);
    const hint = meter.hint(candidate, escaped);
    // Once too little is left for any cut, a body that cannot fit even under an empty header is dropped before
    // its header is rendered and counted: most of a pool comes after the budget is spent. The same verdict as
    // the checks below reach (a header counts at least 0 tokens, and a bound past a larger room is past the
    // smaller one), found without the header.
    if (!(pinned && settings.pointersForPins) && remaining - SEPARATOR_TOKENS - ELLIPSIS_TOKENS < settings.minTruncatedTokens) {
      const widest = remaining - SEPARATOR_TOKENS;
      if ((hint ?? meter.bodyLowerBound(escaped, widest)) > widest) {
        if (!pinned) ranked += 1;
        dropped.push({ id: candidate.id, reason: 'budget' });
        continue;
      }
    }
    // Past the best three, an entry whose body cannot fit whole even under an empty header is set aside at once:
    // its header, cut and duplicate check wait for the end, where most of a pool set aside is dropped unread.
    if (
      !pinned &&
      entry.selection === undefined &&
      ranked >= PROTECTED_RANKS &&
      (hint ?? meter.bodyLowerBound(escaped, remaining)) > remaining - SEPARATOR_TOKENS
    ) {
      ranked += 1;
      setAside.push({ entry, position, header: undefined, hold: 0 });
      continue;
    }
    const header = meter.headerText(candidate);
    const headerBound = meter.headerBound(header);

    let bodyTokens: number | undefined;
    let headerTokens: number | undefined;
    let fromHint = false;
    const room = remaining - headerBound - SEPARATOR_TOKENS;
    if ((hint ?? meter.bodyLowerBound(escaped, room)) <= room) {
      headerTokens = meter.headerTokens(header);
      // Only whether the body fits is asked: the count may stop once it passes the room left.
      const bodyRoom = remaining - headerTokens - SEPARATOR_TOKENS;
      let whole = hint ?? meter.bodyCountUpTo(escaped, bodyRoom);
      if (hint !== undefined && headerTokens + hint + SEPARATOR_TOKENS <= remaining && !meter.hintHolds(hint, escaped)) {
        whole = meter.bodyCountUpTo(escaped, bodyRoom);
        // What was kept on earlier hints is recounted too.
        for (const [index, item] of kept.entries()) {
          if (!hinted.has(item)) continue;
          const exact = meter.count(meter.escaped(item.body));
          used += exact - item.bodyTokens;
          kept[index] = { ...item, bodyTokens: exact, cost: item.cost + exact - item.bodyTokens };
        }
        hinted.clear();
        remaining = settings.maxTokens - used - holding;
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
      if (!pinned) ranked += 1;
      dropped.push({ id: candidate.id, reason: 'budget' });
      continue;
    }

    // Duplicates are judged against kept items only: a copy of something that did not fit is not redundant.
    const verdict = deduper.check(candidate.text);
    if (verdict.kind !== 'new') {
      dropped.push({ duplicateOf: verdict.of.entry.candidate.id, id: candidate.id, reason: verdict.kind });
      continue;
    }

    // Among the best unpinned entries that reach the budget (kept, set aside or dropped for it; not duplicates).
    // A copy of one of the best set aside is not one of them: it is dropped as a duplicate when that one is
    // cut, so holding room for it would let lower entries take the place of the next best.
    const settingAside = !(bodyTokens !== undefined && headerTokens !== undefined) && !pinned && entry.selection === undefined;
    const asideVerdict = settingAside && ranked < PROTECTED_RANKS ? asideDeduper.check(candidate.text) : undefined;
    const copyOfAside = asideVerdict !== undefined && asideVerdict.kind !== 'new';
    const protectedRank = !pinned && ranked < PROTECTED_RANKS && !copyOfAside;
    if (!pinned && !copyOfAside) ranked += 1;
    if (bodyTokens !== undefined && headerTokens !== undefined) {
      keep(
        { body: candidate.text, bodyTokens, truncated: false, pointer: undefined, cost: headerTokens + bodyTokens + SEPARATOR_TOKENS },
        entry,
        position,
        verdict,
        fromHint,
      );
      continue;
    }
    if (!pinned && entry.selection === undefined) {
      // Later whole entries first. Each of the best three set aside holds room for its shortest cut, so later
      // entries cannot take its place.
      const hold = protectedRank
        ? (headerTokens ?? meter.headerTokens(header)) + SEPARATOR_TOKENS + ELLIPSIS_TOKENS + settings.minTruncatedTokens
        : 0;
      holding += hold;
      const aside: SetAside = { entry, position, header, hold, copyOf: copyOfAside ? asideVerdict.of : undefined };
      if (protectedRank && asideVerdict?.kind === 'new') asideDeduper.keep(asideVerdict, aside);
      setAside.push(aside);
      continue;
    }
    let item: Omit<Kept, 'entry' | 'normalised' | 'shingles'> | undefined;
    if (canCut) item = cutItem(entry, header, remaining, settings, meter, headerTokens);
    if (item === undefined && pinned && settings.pointersForPins) {
      const pointer = { tokens: hint ?? meter.count(escaped) };
      const cost = meter.headerTokens(meter.headerText(candidate, pointer)) + SEPARATOR_TOKENS;
      if (cost <= remaining) item = { body: '', bodyTokens: 0, truncated: true, pointer, cost };
    }
    if (item === undefined) {
      dropped.push({ id: candidate.id, reason: 'budget' });
      continue;
    }
    keep(item, entry, position, verdict, false);
  }

  // Then the set-aside entries, best first, cut into what is left while a cut fits; checked again against what
  // was kept since they were set aside (a later copy kept whole, a source now at its cap).
  // The room held for the best three stays held for those not cut yet.
  for (const { entry, position, header, hold, copyOf } of setAside) {
    const { candidate } = entry;
    holding -= hold;
    if (settings.maxPerSource !== undefined && (perSource.get(entry.sourceId) ?? 0) >= settings.maxPerSource) {
      dropped.push({ id: candidate.id, reason: 'source-cap' });
      continue;
    }
    // A copy of one of the best is judged a duplicate first (of that one, once it is kept), as it would be whole.
    const early = copyOf === undefined ? undefined : deduper.check(candidate.text);
    if (early !== undefined && early.kind !== 'new') {
      dropped.push({ duplicateOf: early.of.entry.candidate.id, id: candidate.id, reason: early.kind });
      continue;
    }
    const remaining = settings.maxTokens - used - holding;
    // Too little left for any cut (most of a pool once the budget is spent): dropped before any reading.
    if (remaining - SEPARATOR_TOKENS - ELLIPSIS_TOKENS < settings.minTruncatedTokens) {
      dropped.push({ id: candidate.id, reason: 'budget' });
      continue;
    }
    const verdict = early ?? deduper.check(candidate.text);
    if (verdict.kind !== 'new') {
      dropped.push({ duplicateOf: verdict.of.entry.candidate.id, id: candidate.id, reason: verdict.kind });
      continue;
    }
    const item = cutItem(entry, header ?? meter.headerText(candidate), remaining, settings, meter);
    if (item === undefined) {
      dropped.push({ id: candidate.id, reason: 'budget' });
      continue;
    }
    keep(item, entry, position, verdict, false);
  }
  return { kept, dropped };
}

/** `entry` cut to fit `remaining` with its header, separator and ellipsis; undefined when no cut fits. */
function cutItem(
  entry: Entry,
  header: string,
  remaining: number,
  settings: FillSettings,
  meter: Meter,
  knownHeaderTokens?: number,
): Omit<Kept, 'entry' | 'normalised' | 'shingles'> | undefined {
  const headerTokens = knownHeaderTokens ?? meter.headerTokens(header);
  const budget = remaining - headerTokens - SEPARATOR_TOKENS - ELLIPSIS_TOKENS;
  const cut = budget >= settings.minTruncatedTokens ? cutEntry(entry, budget, meter) : null;
  if (cut === null) return undefined;
  return {
    body: cut.body,
    bodyTokens: cut.tokens,
    truncated: true,
    pointer: undefined,
    cost: headerTokens + cut.tokens + SEPARATOR_TOKENS + ELLIPSIS_TOKENS,
  };
}

export interface Layout {
  ordered: Array<{ kept: Kept; role: ItemRole }>;
  context: string;
  caveats: string | null;
}

/**
 * Lays out what is kept (`withFixed`: with the text a kind adds whatever is kept, a briefing's caveats).
 * With nothing kept and no fixed text the context must be empty.
 */
type LayoutFn = (kept: readonly Kept[], dropped: readonly Dropped[], withFixed: boolean) => Layout;

/**
 * Assembles the context, counts it exactly, and while it is over budget shortens or removes the
 * lowest-priority kept item (the last one the greedy fill took). When nothing is kept and the fixed text
 * alone is over budget, the context is laid out without it: empty, and within any budget.
 */
export function fitExactly(
  kept: Kept[],
  dropped: Dropped[],
  meter: Meter,
  settings: FillSettings,
  layout: LayoutFn,
): { layout: Layout; usedTokens: number } {
  for (;;) {
    const current = layout(kept, dropped, true);
    const usedTokens = meter.countContext(current.context);
    if (usedTokens <= settings.maxTokens) return { layout: current, usedTokens };
    const victim = kept[kept.length - 1];
    if (victim === undefined) {
      const bare = layout([], dropped, false);
      return { layout: bare, usedTokens: meter.countContext(bare.context) };
    }
    const over = usedTokens - settings.maxTokens;
    const target = victim.bodyTokens - over - 2;
    const shorter = victim.pointer === undefined && target >= settings.minTruncatedTokens ? cutEntry(victim.entry, target, meter) : null;
    if (shorter !== null && shorter.tokens < victim.bodyTokens) {
      kept[kept.length - 1] = { ...victim, body: shorter.body, bodyTokens: shorter.tokens, truncated: true };
    } else {
      kept.pop();
      dropped.push({ id: victim.entry.candidate.id, reason: 'budget' });
    }
  }
}

export function settingsFrom(options: ParsedPackOptions, pointersForPins: boolean): FillSettings {
  return {
    maxTokens: options.maxTokens,
    minTruncatedTokens: options.minTruncatedTokens,
    maxPerSource: options.maxPerSource,
    minScore: options.minScore,
    nearThreshold: options.dedupe === false || options.dedupe.nearDuplicateThreshold >= 1 ? null : options.dedupe.nearDuplicateThreshold,
    containmentThreshold: options.dedupe === false || options.dedupe.containmentThreshold >= 1 ? null : options.dedupe.containmentThreshold,
    shingleSize: options.dedupe === false ? 5 : options.dedupe.shingleSize,
    pointersForPins,
  };
}
