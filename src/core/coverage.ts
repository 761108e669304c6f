import { timestampMillis, type Candidate, type Confidence, type Coverage, type CoverageThresholds } from './schemas.js';

function confidenceFor(topSimilarity: number | null, itemCount: number, thresholds: CoverageThresholds): Confidence {
  if (topSimilarity === null) return 'unknown';
  if (topSimilarity >= thresholds.strong && itemCount >= thresholds.strongMinItems) return 'strong';
  if (topSimilarity >= thresholds.partial) return 'partial';
  return 'weak';
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Coverage of what was kept: the signal a caller uses to decide whether to trust the pack. `pool` (all
 * candidates, default `kept`) tells whether the dense arm answered: it did when any candidate carries a
 * dense similarity.
 */
export function computeCoverage(kept: readonly Candidate[], thresholds: CoverageThresholds, pool: readonly Candidate[] = kept): Coverage {
  let top: number | null = null;
  for (const candidate of kept) {
    if (candidate.similarity !== undefined && (top === null || candidate.similarity > top)) top = candidate.similarity;
  }
  let from: { at: number; text: string } | null = null;
  let to: { at: number; text: string } | null = null;
  for (const candidate of kept) {
    if (candidate.timestamp === undefined) continue;
    const at = timestampMillis(candidate.timestamp);
    if (Number.isNaN(at)) continue;
    // ties on the instant fall back to the string so the choice never depends on input order
    if (from === null || at < from.at || (at === from.at && candidate.timestamp < from.text)) from = { at, text: candidate.timestamp };
    if (to === null || at > to.at || (at === to.at && candidate.timestamp > to.text)) to = { at, text: candidate.timestamp };
  }
  let newest: { at: number; text: string } | null = null;
  for (const candidate of kept) {
    if (candidate.indexedAt === undefined) continue;
    const at = timestampMillis(candidate.indexedAt);
    if (Number.isNaN(at)) continue;
    if (newest === null || at > newest.at || (at === newest.at && candidate.indexedAt > newest.text))
      newest = { at, text: candidate.indexedAt };
  }
  return {
    confidence: confidenceFor(top, kept.length, thresholds),
    dateRange: from !== null && to !== null ? { from: from.text, to: to.text } : null,
    denseAvailable: pool.some((c) => c.similarity !== undefined) || top !== null,
    distinctSourceCount: new Set(kept.map((c) => c.sourceId ?? c.id)).size,
    itemCount: kept.length,
    newestIndexedAt: newest?.text ?? null,
    scoreP50: median(kept.map((c) => c.score)),
    topSimilarity: top ?? -1,
  };
}
