/**
 * Validation and ordering both stores share for the reads that take no query (`getChunks`), deletion by
 * source (`deleteSources`) and raw rankings (`rankings`), so the two implementations cannot drift apart.
 */
import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { compareScored, type ScoredId } from './fusion.js';
import { AbortSignalSchema } from '../base/abort.js';
import { GetChunksRequestSchema, type ChunkRecord, type GetChunksRequest, type ParsedGetChunksRequest } from './schemas.js';
import type { RankedChunk } from './types.js';

export function parseGetChunksRequest(request: GetChunksRequest): ParsedGetChunksRequest {
  return parseOrThrow(GetChunksRequestSchema, request, 'getChunks request');
}

export const DeleteSourcesSchema = z.array(z.string().min(1, 'source ids must be non-empty strings'), {
  message: 'sourceIds must be an array of source ids',
});

const DeleteSourcesOptionsSchema = z.strictObject({ signal: AbortSignalSchema.optional() });

export function parseDeleteSources(sourceIds: unknown, options: unknown): { sourceIds: string[]; signal?: AbortSignal } {
  const ids = parseOrThrow(DeleteSourcesSchema, sourceIds, 'deleteSources source ids');
  const parsed = parseOrThrow(DeleteSourcesOptionsSchema, options ?? {}, 'deleteSources options');
  return parsed.signal === undefined ? { sourceIds: [...new Set(ids)] } : { sourceIds: [...new Set(ids)], signal: parsed.signal };
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * `getChunks` order: sources in the order of `sourceIds` when given (first mention counts), else by source
 * id in code-unit order; within a source by `span.start`, then chunk id. Then the first `limit`.
 */
export function orderChunks(records: readonly ChunkRecord[], sourceIds: readonly string[] | undefined, limit: number): ChunkRecord[] {
  const sourceRank = new Map<string, number>();
  sourceIds?.forEach((id) => {
    if (!sourceRank.has(id)) sourceRank.set(id, sourceRank.size);
  });
  const bySource = (a: ChunkRecord, b: ChunkRecord) => {
    if (a.sourceId === b.sourceId) return 0;
    if (sourceIds === undefined) return byCodeUnits(a.sourceId, b.sourceId);
    // A chunk of a source not named in sourceIds cannot pass the sourceIds condition; ranked last if it did.
    return (sourceRank.get(a.sourceId) ?? Infinity) - (sourceRank.get(b.sourceId) ?? Infinity) || byCodeUnits(a.sourceId, b.sourceId);
  };
  return [...records].sort((a, b) => bySource(a, b) || a.span.start - b.span.start || byCodeUnits(a.id, b.id)).slice(0, limit);
}

/** A scored arm as `rankings` reports it: sorted score desc then id, 1-based positions, at most `limit`. */
export function toRankedChunks(scored: readonly ScoredId[], limit: number, sourceIdOf: (chunkId: string) => string): RankedChunk[] {
  return [...scored]
    .sort(compareScored)
    .slice(0, limit)
    .map(({ id, score }, index) => ({ id, sourceId: sourceIdOf(id), score, position: index + 1 }));
}

/**
 * How many candidates MMR chooses from (Qdrant's `candidates_limit`): the hybrid prefetch size, so more than
 * `limit` (both stores use it).
 */
export function diversityCandidates(limit: number, configured?: number): number {
  return Math.max(limit + 1, hybridPrefetchLimit(limit, configured));
}

/** The prefetch size each arm of a hybrid query gets (both stores send the same). */
export function hybridPrefetchLimit(limit: number, configured?: number): number {
  return Math.max(limit, configured ?? Math.max(limit * 4, 50));
}
