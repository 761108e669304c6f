// Ranking candidates (rule 7's total order), and the pack a fill ends in: items with refs and ranks,
// a citation per item (rule 3's spans under selection), coverage, dropped and degraded in a fixed order,
// and the hash of the canonical JSON.
import { BoundedCache } from '../base/bounded-cache.js';
import { canonicalCopyParts, canonicalStringify, sha256Hex } from '../base/canonical.js';
import type { BlockInput } from '../render/render.js';
import { computeCoverage } from './coverage.js';
import { packHashOf } from './pack.js';
import type { Entry, Kept, Layout } from './fill.js';
import type { Meter } from './meter.js';
import {
  PACK_SCHEMA_ID,
  type Candidate,
  type Citation,
  type Coverage,
  type Degraded,
  type Dropped,
  type Pack,
  type PackItem,
  type ParsedPackOptions,
  type Span,
} from './schemas.js';

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
export function rankCandidates(candidates: readonly Candidate[], pins: readonly string[]): { ranked: Entry[]; dropped: Dropped[] } {
  const best = new Map<string, Candidate>();
  const dropped: Dropped[] = [];
  for (const candidate of candidates) {
    const previous = best.get(candidate.id);
    if (previous === undefined) {
      best.set(candidate.id, candidate);
      continue;
    }
    if (compareCandidates(candidate, previous) < 0) best.set(candidate.id, candidate);
    dropped.push({ duplicateOf: candidate.id, id: candidate.id, reason: 'duplicate' });
  }
  const pinSet = new Set(pins);
  const ranked = [...best.values()].sort(compareCandidates).map((candidate) => {
    const sourceId = candidate.sourceId ?? candidate.id;
    return { candidate, sourceId, pinned: pinSet.has(candidate.id) || pinSet.has(sourceId) };
  });
  return { ranked, dropped };
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

/** One entry per stage and code, in a fixed order (rule 7: the same input gives the same bytes). */
export function sortDegraded(degraded: readonly Degraded[]): Degraded[] {
  const key = (d: Degraded) => `${d.stage}\u0000${d.code}`;
  const unique = new Map(degraded.map((d) => [key(d), { code: d.code, stage: d.stage }] as const));
  return [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

export function blockFor(kept: Kept, ref: number): BlockInput {
  return {
    ref,
    candidate: kept.entry.candidate,
    body: kept.body,
    truncated: (kept.truncated || kept.entry.narrowed === true) && kept.pointer === undefined,
    pointer: kept.pointer,
  };
}

/**
 * Hashes of retrieved texts, remembered across packs (the same chunks are cited query after query, and a text
 * read again from the embedded store is the same string): up to 8 million characters of texts.
 */
const textHashes = new BoundedCache<string, string>(8_000_000, (text) => text.length);
const textSha256Of = (text: string): string => textHashes.get(text) ?? textHashes.set(text, sha256Hex(text));

function citationFor(kept: Kept, ref: number, withSpans: boolean): Citation {
  const { candidate, selection } = kept.entry;
  const citation: Citation = {
    chunkId: candidate.id,
    keptTextSha256: withSpans ? sha256Hex(kept.body) : undefined,
    locator:
      candidate.locator === undefined
        ? undefined
        : { label: candidate.locator.label, lines: candidate.locator.lines, page: candidate.locator.page, time: candidate.locator.time },
    parentId: candidate.parentId,
    ref,
    section: candidate.section,
    sourceId: candidate.sourceId ?? candidate.id,
    span: candidate.span === undefined ? undefined : { end: candidate.span.end, start: candidate.span.start },
    spans: withSpans ? keptSpans(kept) : undefined,
    // The full original chunk, also under selection: the version-pinned hash of what was retrieved.
    textSha256: textSha256Of(selection?.source ?? candidate.text),
    title: candidate.title,
    url: candidate.url,
    version: candidate.version,
  };
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
  return ranges.map((range) => ({ end: offset + range.end, start: offset + range.start }));
}

export function finish(
  kind: Pack['kind'],
  options: ParsedPackOptions,
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
  // Every object of a pack is built with its keys in code-unit order: canonical JSON then writes it in one
  // JSON.stringify (see canonicalStringify), and the pack returned is the same either way.
  const items: PackItem[] = ordered.map(({ kept, role }, index) => ({
    id: kept.entry.candidate.id,
    pointer: kept.pointer !== undefined,
    rank: ranks.get(kept.entry.candidate.id) as number,
    ref: index + 1,
    role,
    score: kept.entry.candidate.score,
    sourceId: kept.entry.sourceId,
    text: kept.body,
    tokens: kept.pointer !== undefined ? kept.pointer.tokens : kept.bodyTokens,
    truncated: kept.truncated || kept.entry.narrowed === true,
  }));
  const citations = ordered.map(({ kept }, index) => citationFor(kept, index + 1, options.compress !== undefined));
  const coverage: Coverage = computeCoverage(
    ordered.map((o) => o.kept.entry.candidate),
    options.coverage,
    options.candidates,
  );
  const sortedDropped = sortDropped(dropped);
  const body: Omit<Pack, 'packHash'> = {
    briefing,
    budget: { encoding: meter.tokenizer.name, maxTokens: options.maxTokens, usedTokens: result.usedTokens },
    caveats,
    citations,
    context,
    coverage,
    degraded: sortDegraded(options.degraded),
    dropped: sortedDropped,
    format: options.format,
    header: options.header,
    items,
    kind,
    pool: options.pool === undefined ? undefined : { candidates: options.pool.candidates, limit: options.pool.limit },
    query: options.query,
    schema: PACK_SCHEMA_ID,
    truncated: items.some((i) => i.truncated) || sortedDropped.some((d) => d.reason === 'budget'),
  };
  // The returned object is a canonical copy (what a JSON round trip would give: no undefined members, nothing
  // shared with the candidates but immutable strings), so it holds exactly what the hash covers; the copy
  // serialises to the string that is hashed.
  const { value, parts, withMember } = canonicalCopyParts(body, 'packHash');
  const clean = value as unknown as Omit<Pack, 'packHash'>;
  // Index times are not hashed (see packHashOf); without one the parts already written are the hashed bytes.
  const packHash = clean.coverage.newestIndexedAt === null ? sha256Hex(parts) : packHashOf(clean);
  const pack: Pack = { ...clean, packHash };
  packJsons.set(pack, withMember(JSON.stringify(packHash)));
  return pack;
}

/** Each pack's canonical JSON as `finish` wrote it (see `packJson`). */
const packJsons = new WeakMap<Pack, string>();

/**
 * A pack's canonical JSON, as `toCanonicalJson` writes it: for a pack as packing returned it, the string written
 * while it was hashed (not serialised again). Only for code that never changes a pack after packing (the server,
 * the MCP tools, the CLI); `toCanonicalJson`, which callers may apply to packs they changed, always serialises.
 */
export function packJson(pack: Pack): string {
  return packJsons.get(pack) ?? canonicalStringify(pack);
}
