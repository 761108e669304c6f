/**
 * Framework-neutral glue shared by the LangChain and LlamaIndex adapters: option schemas (the pipeline's own
 * settings, so a retriever has the same defaults and limits as every other door) and the mapping from a pack
 * back to per-item metadata. The retrievers call `assembleBundle` / `assembleBriefing`, the compressor and the
 * postprocessor `packCandidates`. Imports no framework, so the LlamaIndex adapter can use it without loading
 * `@langchain/core`.
 */
import { StoreSchema } from '../store/types.js';
import { sha256Hex } from '../base/canonical.js';
import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { renderBlock } from '../render/render.js';
import { compareCandidates } from '../core/finish.js';
import {
  LocatorSchema,
  OrderSchema,
  type Candidate,
  type Citation,
  type Degraded,
  type ItemRole,
  type Locator,
  type Pack,
  type PackItem,
} from '../core/schemas.js';
import { BriefingSettingsShape, type BriefingRequest } from '../pipeline/briefing.js';
import { BundleSettingsShape, QuerySchema, packerShape, type BundleRequest } from '../pipeline/bundle.js';
import { PIPELINE_DEFAULTS } from '../pipeline/defaults.js';
import { LIMIT_ALIASES } from '../store/schemas.js';

/**
 * Other libraries' names for how many results to return. A retriever's `limit` is the candidate pool searched
 * before packing, not the number of documents returned (the token budget decides that), so these are
 * rejected with a message naming `limit` rather than silently taken for it.
 */
export const RETRIEVER_ALIASES = LIMIT_ALIASES;

/** The same names on what packs documents it is given (compressor, postprocessor): the budget decides. */
export const PACKER_ALIASES: Readonly<Record<string, string>> = {
  k: 'maxTokens',
  topK: 'maxTokens',
  top_k: 'maxTokens',
  topN: 'maxTokens',
};

export const BundleRetrieverOptionsSchema = z.strictObject({ store: StoreSchema, ...BundleSettingsShape });
export type BundleRetrieverOptions = z.input<typeof BundleRetrieverOptionsSchema>;
type ParsedBundleRetrieverOptions = z.output<typeof BundleRetrieverOptionsSchema>;

/** Briefings run through `assembleBriefing` (pins fetched directly, clusters, scope, tiers). */
export const BriefingRetrieverOptionsSchema = z.strictObject({
  store: StoreSchema,
  ...BriefingSettingsShape,
  /** Append the caveats block as a final document/node (role `caveats`). */
  includeCaveats: z.boolean().default(true),
});
export type BriefingRetrieverOptions = z.input<typeof BriefingRetrieverOptionsSchema>;
type ParsedBriefingRetrieverOptions = z.output<typeof BriefingRetrieverOptionsSchema>;

/** Options for packing documents/nodes that are already retrieved (compressor, postprocessor): a bundle's budget by default. */
export const PackerOptionsSchema = z.strictObject({ ...packerShape(PIPELINE_DEFAULTS.bundleBudget), order: OrderSchema.default('litm') });
export type PackerOptions = z.input<typeof PackerOptionsSchema>;
export type ParsedPackerOptions = z.output<typeof PackerOptionsSchema>;

export type ParsedRetrieverOptions =
  ({ kind: 'bundle' } & ParsedBundleRetrieverOptions) | ({ kind: 'briefing' } & ParsedBriefingRetrieverOptions);

/** Validates a query before any I/O, so a bad query never costs a search. */
export function parseQuery(query: unknown): string {
  return parseOrThrow(QuerySchema, query, 'query');
}

/** The `assembleBundle` request of a bundle retriever for `query`. */
export function bundleRequest(options: ParsedBundleRetrieverOptions, query: string, signal?: AbortSignal): BundleRequest {
  const { kind: _kind, ...settings } = options as ParsedBundleRetrieverOptions & { kind?: string };
  return { ...settings, query, ...(signal === undefined ? {} : { signal }) };
}

/**
 * The `assembleBriefing` request of a briefing retriever for `query`: a blank query is "no prompt", so a
 * retriever configured with pins or clusters works with `invoke('')`.
 */
export function briefingRequest(options: ParsedBriefingRetrieverOptions, query: string, signal?: AbortSignal): BriefingRequest {
  const { includeCaveats: _includeCaveats, kind: _kind, ...settings } = options as ParsedBriefingRetrieverOptions & { kind?: string };
  return { ...settings, prompt: query, ...(signal === undefined ? {} : { signal }) };
}

// ---------------------------------------------------------------------------------------------
// Pack → per-item metadata

/** What every document/node an adapter returns carries under `metadata.litm`. */
export interface LitmMetadata {
  /** `[ref]` in the context (1-based); null for the caveats block. */
  ref: number | null;
  /** Relevance rank among kept items (1 = best); null for the caveats block. */
  rank: number | null;
  role: ItemRole | 'caveats';
  /** 0-based index in the returned documents/nodes (context order). */
  position: number;
  /** The item's score (the candidate's fused score); null for the caveats block. */
  score: number | null;
  /** The item's token count as the pack reports it; null for the caveats block. */
  tokens: number | null;
  /** The text is a prefix of the chunk (the context shows it with an ellipsis). */
  truncated: boolean;
  /** A pinned item that did not fit: the context shows a one-line pointer instead of the text. */
  pointer: boolean;
  /** The pack this came from: enough to render it again exactly (`formatDocumentsAsContext`). */
  kind: Pack['kind'];
  format: Pack['format'];
  header: Pack['header'];
  packHash: string;
  /** Optional stages that failed and were bypassed for this pack (`pack.degraded`); empty when none. */
  degraded: Degraded[];
}

/** Metadata of an item's document or node: the input's own metadata (plus a `source` default), `citation`, `litm`. */
export type LitmItemMetadata = Record<string, unknown> & { litm: LitmMetadata; citation: Citation };

/** Metadata of a briefing's final caveats document or node: `litm.role === 'caveats'` and no citation. */
export type LitmCaveatsMetadata = Record<string, unknown> & { litm: LitmMetadata; citation?: undefined };

/** Metadata of anything an adapter returns: an item's (with `citation`) or the briefing caveats' (without). */
export type LitmDocumentMetadata = LitmItemMetadata | LitmCaveatsMetadata;

/** One packed item with everything an adapter needs to build a document or node. */
interface PackedEntry {
  item: PackItem;
  citation: Citation;
  litm: LitmMetadata;
  /** Index of the input (candidate, document, node) the item came from. */
  sourceIndex: number;
}

/** The citation fields that identify the input a kept item came from (its text hash and provenance). */
function citesInput(citation: Citation, input: Candidate): boolean {
  return (
    citation.chunkId === input.id &&
    citation.sourceId === (input.sourceId ?? input.id) &&
    citation.textSha256 === sha256Hex(input.text) &&
    citation.version === input.version &&
    citation.title === input.title &&
    citation.url === input.url &&
    JSON.stringify(citation.section) === JSON.stringify(input.section) &&
    JSON.stringify(citation.span) === JSON.stringify(input.span)
  );
}

/**
 * Maps pack items back to the position of the input each came from. Inputs may share an id (the packer then
 * keeps one of them), so an id alone cannot say which: among the inputs with the item's id, the one its
 * citation describes (same text hash and provenance) is taken; inputs the citation cannot tell apart are
 * ordered as the packer orders them (`compareCandidates`), then by position.
 */
export function packedEntries(pack: Pack, inputs: readonly Candidate[]): PackedEntry[] {
  const positionsById = new Map<string, number[]>();
  inputs.forEach((input, index) => {
    const positions = positionsById.get(input.id);
    if (positions === undefined) positionsById.set(input.id, [index]);
    else positions.push(index);
  });
  return pack.items.map((item, position) => {
    const citation = pack.citations[position];
    const positions = positionsById.get(item.id) ?? [];
    const described =
      citation === undefined || positions.length === 1
        ? positions
        : positions.filter((index) => citesInput(citation, inputs[index] as Candidate));
    // Should the citation ever describe an input differently from how it was given, the packer's order decides.
    const matching = described.length > 0 ? described : positions;
    const sourceIndex = matching.reduce<number | undefined>((best, index) => {
      if (best === undefined) return index;
      const order = compareCandidates(inputs[index] as Candidate, inputs[best] as Candidate);
      return order < 0 || (order === 0 && index < best) ? index : best;
    }, undefined);
    if (citation === undefined || sourceIndex === undefined) {
      // The packer's contract (citations[i] belongs to items[i]; every item comes from an input) is broken.
      throw new Error(`litm-pack: pack item ${item.ref} (${item.id}) has no matching citation or input`);
    }
    return {
      item,
      citation: structuredClone(citation),
      litm: {
        ref: item.ref,
        rank: item.rank,
        role: item.role,
        position,
        score: item.score,
        tokens: item.tokens,
        truncated: item.truncated,
        pointer: item.pointer,
        kind: pack.kind,
        format: pack.format,
        header: pack.header,
        packHash: pack.packHash,
        degraded: structuredClone(pack.degraded),
      },
      sourceIndex,
    };
  });
}

/**
 * An item's block exactly as `pack.context` shows it: `[ref]`, provenance, the escaped (possibly cut) text.
 * `candidate` is the input the item came from (`inputs[entry.sourceIndex]`).
 */
export function blockOf(entry: PackedEntry, candidate: Candidate): string {
  const { item, litm } = entry;
  return renderBlock(
    litm.format,
    {
      ref: item.ref,
      candidate,
      body: item.text,
      truncated: item.truncated && !item.pointer,
      pointer: item.pointer ? { tokens: item.tokens } : undefined,
    },
    litm.header,
  );
}

/** `metadata.litm` of the briefing's caveats document/node, which follows the items. */
export function caveatsLitm(pack: Pack): LitmMetadata {
  return {
    ref: null,
    rank: null,
    role: 'caveats',
    position: pack.items.length,
    score: null,
    tokens: null,
    truncated: false,
    pointer: false,
    kind: pack.kind,
    format: pack.format,
    header: pack.header,
    packHash: pack.packHash,
    degraded: structuredClone(pack.degraded),
  };
}

/** The caveats block to append, or null when there is none (bundles) or the caller turned it off. */
export function caveatsToAppend(pack: Pack, includeCaveats: boolean): string | null {
  if (!includeCaveats || pack.caveats === null || pack.caveats.length === 0) return null;
  return pack.caveats;
}

/**
 * Metadata for an item's document/node: a `source` default (LangChain's convention), then the input's own
 * metadata (never clobbered), then our two keys.
 */
export function itemMetadata(entry: PackedEntry, ownMetadata: Record<string, unknown> | undefined): LitmItemMetadata {
  const { citation: _oldCitation, litm: _oldLitm, ...own } = ownMetadata ?? {};
  return { source: entry.citation.sourceId, ...own, citation: entry.citation, litm: entry.litm };
}

/** A short, JSON-friendly account of a pack for traces. */
export interface PackSummary {
  kind: Pack['kind'];
  packHash: string;
  itemCount: number;
  budget: Pack['budget'];
  coverage: Pack['coverage'];
  truncated: boolean;
  dropped: { total: number; byReason: Record<string, number> };
}

export function summarizePack(pack: Pack): PackSummary {
  const byReason: Record<string, number> = {};
  for (const dropped of pack.dropped) byReason[dropped.reason] = (byReason[dropped.reason] ?? 0) + 1;
  return {
    kind: pack.kind,
    packHash: pack.packHash,
    itemCount: pack.items.length,
    budget: { ...pack.budget },
    coverage: structuredClone(pack.coverage),
    truncated: pack.truncated,
    dropped: { total: pack.dropped.length, byReason },
  };
}

// ---------------------------------------------------------------------------------------------
// Framework objects → candidates

/** What the compressor/postprocessor read from a framework document or node. */
export interface ForeignChunk {
  text: string;
  /** The framework's own id field (`Document.id`, `node.id_`), used when metadata has no id. */
  id?: string | undefined;
  /** A score the framework carries outside metadata (`NodeWithScore.score`). */
  score?: number | undefined;
  metadata: Record<string, unknown>;
  /** A source id the framework carries outside metadata (LlamaIndex's SOURCE relationship). */
  sourceId?: string | undefined;
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const nonEmptyString = (value: unknown): string | undefined => {
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
};

function objectOrUndefined(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The score an input carries: `score`, else `relevanceScore`, else the score one of our adapters gave it. */
function incomingScore(chunk: ForeignChunk): number | undefined {
  const { metadata } = chunk;
  for (const value of [chunk.score, metadata.score, metadata.relevanceScore, objectOrUndefined(metadata.litm)?.score]) {
    if (isFiniteNumber(value)) return value;
  }
  return undefined;
}

export function contentId(text: string): string {
  return `sha256:${sha256Hex(text).slice(0, 32)}`;
}

/**
 * Turns documents/nodes into candidates.
 * - id: `metadata.id` ?? the framework id ?? the citation's chunk id ?? a hash of the text.
 * - sourceId: `metadata.source` ?? `metadata.sourceId` ?? the framework's source ?? the citation's.
 * - score: `score` ?? `metadata.score` ?? `metadata.relevanceScore` ?? `metadata.litm.score`. When any input
 *   has none, real and made-up scores cannot be compared, so every input gets a synthetic score from its
 *   incoming order instead (retrievers return best first): (n − i) / n, i.e. 1, …, 1/n.
 * Typed fields (version, title, url, section) are taken from metadata, then from a citation of ours, only
 * when they have the right type; everything else stays in `metadata`.
 */
export function chunksToCandidates(chunks: readonly ForeignChunk[]): Candidate[] {
  const scores = chunks.map(incomingScore);
  const allScored = scores.every((score) => score !== undefined);
  const n = chunks.length;
  return chunks.map((chunk, index) => {
    const { metadata } = chunk;
    const citation = objectOrUndefined(metadata.citation);
    const field = (name: string): string | undefined =>
      typeof metadata[name] === 'string' ? metadata[name] : (citation?.[name] as string | undefined);
    const candidate: Candidate = {
      id: nonEmptyString(metadata.id) ?? nonEmptyString(chunk.id) ?? nonEmptyString(citation?.chunkId) ?? contentId(chunk.text),
      text: chunk.text,
      score: allScored ? (scores[index] as number) : (n - index) / n,
      metadata,
    };
    const sourceId =
      nonEmptyString(metadata.source) ??
      nonEmptyString(metadata.sourceId) ??
      nonEmptyString(chunk.sourceId) ??
      nonEmptyString(citation?.sourceId);
    if (sourceId !== undefined) candidate.sourceId = sourceId;
    for (const name of ['version', 'title', 'url'] as const) {
      const value = field(name);
      if (typeof value === 'string') candidate[name] = value;
    }
    const section = metadata.section ?? citation?.section;
    if (Array.isArray(section) && section.every((part) => typeof part === 'string')) candidate.section = section;
    const locator = locatorFromMetadata(metadata, citation);
    if (locator !== undefined) candidate.locator = locator;
    return candidate;
  });
}

/** A locator of ours in framework metadata (`locator`, or the one in a citation this package wrote); else none. */
function locatorFromMetadata(metadata: Record<string, unknown>, citation?: Record<string, unknown>): Locator | undefined {
  const own = LocatorSchema.safeParse(metadata.locator ?? citation?.locator);
  return own.success && Object.keys(own.data).length > 0 ? own.data : undefined;
}
