// packBriefing: pins first, then precedence, then the rest by (tier-weighted) score; zones (grounding,
// evidence) and a closing caveats block of computed facts.
import { parsePackOptions } from './candidates.js';
import { oneLine, quoteField } from '../render/escape.js';
import { renderBlock, renderBriefingContext, renderCaveats, type ZonedBlocks } from '../render/render.js';
import { allocateSentences, selectEntries } from './allocate.js';
import { meterFor } from './bundle.js';
import { computeCoverage } from './coverage.js';
import { fitExactly, settingsFrom, type Entry, type Kept, type Layout } from './fill.js';
import { fillPreferringAttachments } from './parents.js';
import { blockFor, compareCandidates, finish, rankCandidates, sortDegraded } from './finish.js';
import {
  BriefingOptionsSchema,
  type BriefingOptions,
  type Candidate,
  type Coverage,
  type Dropped,
  type Pack,
  type ParsedBriefingOptions,
} from './schemas.js';

function formatNumber(value: number): string {
  return String(Number(value.toFixed(4)));
}

/** The caveats block's lines: counted facts about the pack, never generated prose. */
function caveatLines(
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
      `${countOf('duplicate') + countOf('near-duplicate') + countOf('attachment-preferred')} duplicates removed; ` +
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
  const options = parsePackOptions(BriefingOptionsSchema, input, 'packBriefing options');
  const meter = meterFor(options);
  const settings = settingsFrom(options, true);
  const { ranked: rankedWhole, dropped: merged } = rankCandidates(options.candidates, options.pins);
  const ranked = selectEntries(rankedWhole, options);

  // Pins first, in the order given (a source pin brings its chunks in document order); then the
  // candidates given precedence, in their order; then everything else by (tier-weighted) score.
  const pinOrder = new Map(options.pins.map((pin, index) => [pin, index] as const));
  const pinIndex = (entry: Entry) => Math.min(pinOrder.get(entry.candidate.id) ?? Infinity, pinOrder.get(entry.sourceId) ?? Infinity);
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
  const missingPins = options.pins.filter((pin) => !ranked.some((e) => e.candidate.id === pin || e.sourceId === pin));

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
    const blocks = ordered.map((o, index) => renderBlock(options.format, blockFor(o.kept, index + 1), options.header));
    const zoned: ZonedBlocks[] = [
      { role: 'grounding', blocks: blocks.slice(0, zones.grounding.length) },
      { role: 'evidence', blocks: blocks.slice(zones.grounding.length) },
    ];
    const keptCandidates = ordered.map((o) => o.kept.entry.candidate);
    const caveats = withCaveats
      ? renderCaveats(
          options.format,
          caveatLines(
            computeCoverage(keptCandidates, options.coverage, options.candidates),
            keptCandidates,
            droppedNow,
            options,
            missingPins,
          ),
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
  // A caveats block that alone would not fit, measured as it is rendered (in xml inside <briefing>), is
  // left out from the start rather than crowding out items.
  const includeCaveats = meter.count(renderBriefingContext(options.format, [], probeCaveats)) < options.maxTokens;
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
  const planned =
    options.compress === undefined ? order : allocateSentences(order, meter, options.maxTokens - reserved, options.compress.spread);
  const filled = fillPreferringAttachments(planned, settings, meter, reserved);
  const allDropped = [...merged, ...filled.dropped];
  const final = fitExactly(filled.kept, allDropped, meter, settings, (k, d, withFixed) => layout(k, d, includeCaveats && withFixed));
  return finish('briefing', options, meter, final, allDropped, slots);
}
