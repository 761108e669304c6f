/**
 * Validation and ordering of `getChunks`, `deleteSources` and `rankings` as the Store interface defines
 * them (the memory store implements the same semantics).
 */
import { z } from 'zod';
import { parseOrThrow } from '../core/errors.js';
import { compareScored, type ScoredId } from '../retrieve/fusion.js';
import type { ChunkRecord, GetChunksRequest, RankedChunk } from '../retrieve/types.js';

export const GET_CHUNKS_DEFAULT_LIMIT = 10_000;
export const GET_CHUNKS_MAX_LIMIT = 100_000;

const abortSignalSchema = z.custom<AbortSignal>((value) => value instanceof AbortSignal, {
  message: 'signal must be an AbortSignal',
});

const GetChunksRequestSchema = z
  .strictObject({
    sourceIds: z.array(z.string().min(1, 'source ids must be non-empty strings')).optional(),
    ids: z.array(z.string().min(1, 'chunk ids must be non-empty strings')).optional(),
    filter: z.unknown().optional(),
    principals: z.array(z.string()).optional(),
    limit: z.number().int().min(1).max(GET_CHUNKS_MAX_LIMIT).default(GET_CHUNKS_DEFAULT_LIMIT),
    signal: abortSignalSchema.optional(),
  })
  .refine((request) => request.sourceIds !== undefined || request.ids !== undefined || request.filter !== undefined, {
    message: 'give at least one of sourceIds, ids or filter',
  });
export type ParsedGetChunksRequest = z.output<typeof GetChunksRequestSchema>;

export function parseGetChunksRequest(request: GetChunksRequest): ParsedGetChunksRequest {
  return parseOrThrow(GetChunksRequestSchema, request, 'getChunks request');
}

const DeleteSourcesSchema = z.array(z.string().min(1, 'source ids must be non-empty strings'), {
  message: 'sourceIds must be an array of source ids',
});
const DeleteSourcesOptionsSchema = z.strictObject({ signal: abortSignalSchema.optional() });

export function parseDeleteSources(sourceIds: unknown, options: unknown): { sourceIds: string[]; signal?: AbortSignal } {
  const ids = parseOrThrow(DeleteSourcesSchema, sourceIds, 'deleteSources source ids');
  const parsed = parseOrThrow(DeleteSourcesOptionsSchema, options ?? {}, 'deleteSources options');
  return parsed.signal === undefined ? { sourceIds: [...new Set(ids)] } : { sourceIds: [...new Set(ids)], signal: parsed.signal };
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Sources in the order of `sourceIds` (else by id), then by `span.start`, then chunk id; the first `limit`. */
export function orderChunks(records: readonly ChunkRecord[], sourceIds: readonly string[] | undefined, limit: number): ChunkRecord[] {
  const sourceRank = new Map<string, number>();
  sourceIds?.forEach((id) => {
    if (!sourceRank.has(id)) sourceRank.set(id, sourceRank.size);
  });
  const bySource = (a: ChunkRecord, b: ChunkRecord) => {
    if (a.sourceId === b.sourceId) return 0;
    if (sourceIds === undefined) return byCodeUnits(a.sourceId, b.sourceId);
    return (sourceRank.get(a.sourceId) ?? Infinity) - (sourceRank.get(b.sourceId) ?? Infinity) || byCodeUnits(a.sourceId, b.sourceId);
  };
  return [...records].sort((a, b) => bySource(a, b) || a.span.start - b.span.start || byCodeUnits(a.id, b.id)).slice(0, limit);
}

/** An arm as `rankings` reports it: score desc then id, 1-based positions, at most `limit`. */
export function toRankedChunks(scored: readonly ScoredId[], limit: number, sourceIdOf: (chunkId: string) => string): RankedChunk[] {
  return [...scored]
    .sort(compareScored)
    .slice(0, limit)
    .map(({ id, score }, index) => ({ id, sourceId: sourceIdOf(id), score, position: index + 1 }));
}
