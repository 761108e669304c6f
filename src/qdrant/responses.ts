import { z } from 'zod';
import { LitmPackError, describeIssues } from '../base/errors.js';
import type { QdrantCallContext } from './errors.js';

/**
 * What Qdrant's answers must look like (its OpenAPI response models, the fields the store reads), checked at
 * the client boundary whichever client made the call. Objects are loose: a newer server may add fields.
 * An answer that does not fit is a `bad_response` fault naming the field, never a `TypeError` later on or a
 * candidate that `packBundle` would blame on the caller.
 */

/** `ExtendedPointId`: an unsigned integer or a UUID string. */
const PointIdSchema = z.union([z.string().min(1), z.number().int().nonnegative()]);
const PayloadSchema = z.record(z.string(), z.unknown()).nullish();

const ScoredPointSchema = z.looseObject({
  id: PointIdSchema,
  // zod's number refuses NaN and ±Infinity, and the strings "NaN" or "0.5".
  score: z.number(),
  payload: PayloadSchema,
  version: z.number().int().optional(),
  vector: z.unknown().optional(),
});
export type ScoredPointResponse = z.output<typeof ScoredPointSchema>;

export const QueryResponseSchema = z.looseObject({ points: z.array(ScoredPointSchema) });
export type QueryResponse = z.output<typeof QueryResponseSchema>;

/** `points/query/batch` answers one `QueryResponse` per search, in order. */
export function queryBatchResponseSchema(searches: number) {
  return z.array(QueryResponseSchema).length(searches, `expected one answer per search (${searches})`);
}

const RecordSchema = z.looseObject({
  id: PointIdSchema,
  payload: PayloadSchema,
  vector: z.unknown().optional(),
});

export const ScrollResultSchema = z.looseObject({
  points: z.array(RecordSchema),
  next_page_offset: PointIdSchema.nullish(),
});
export type ScrollResult = z.output<typeof ScrollResultSchema>;

export const CountResultSchema = z.looseObject({ count: z.number().int().nonnegative() });

export const FacetResponseSchema = z.looseObject({
  hits: z.array(z.looseObject({ value: z.union([z.string(), z.number().int(), z.boolean()]), count: z.number().int().nonnegative() })),
});

export const UpdateResultSchema = z.looseObject({
  operation_id: z.number().int().nonnegative().nullish(),
  status: z.enum(['acknowledged', 'completed', 'wait_timeout']),
});

export const BooleanResultSchema = z.boolean();

export const CollectionExistenceSchema = z.looseObject({ exists: z.boolean() });

export const CollectionsResponseSchema = z.looseObject({ collections: z.array(z.looseObject({ name: z.string() })) });

export const AliasesResponseSchema = z.looseObject({
  aliases: z.array(z.looseObject({ alias_name: z.string(), collection_name: z.string() })),
});

export const ShardKeysResponseSchema = z.looseObject({
  shard_keys: z.array(z.looseObject({ key: z.union([z.string(), z.number().int().nonnegative()]) })).nullish(),
});

const PositiveInt = z.number().int().positive();

/** The parts of `CollectionInfo` the store reads (vectors are checked in `checkCollection`). */
export const CollectionInfoSchema = z.looseObject({
  points_count: z.number().int().nonnegative().nullish(),
  config: z.looseObject({
    params: z.looseObject({
      vectors: z.unknown().optional(),
      sparse_vectors: z.record(z.string(), z.looseObject({ modifier: z.string().nullish() }).nullable()).nullish(),
      shard_number: PositiveInt.nullish(),
      replication_factor: PositiveInt.nullish(),
      write_consistency_factor: PositiveInt.nullish(),
      sharding_method: z.enum(['auto', 'custom']).nullish(),
    }),
    metadata: z.record(z.string(), z.unknown()).nullish(),
  }),
  payload_schema: z.record(z.string(), z.looseObject({ data_type: z.string(), params: z.unknown().optional() })).optional(),
});
export type CollectionInfoResponse = z.output<typeof CollectionInfoSchema>;

/**
 * Parses one answer or throws `bad_response` naming the operation, the collection and every field that does
 * not fit (e.g. `points.0.score: Invalid input: expected number, received string`).
 */
export function parseQdrantResponse<T extends z.ZodType>(schema: T, value: unknown, context: QdrantCallContext): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { issues } = result.error;
  return badResponse(
    context,
    `answered something Qdrant's API does not allow: ${describeIssues(issues)}`,
    { fields: issues.map((issue) => (issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)')) },
    { issues, cause: result.error },
  );
}

/** Throws the `bad_response` fault for an answer that breaks Qdrant's contract. */
export function badResponse(
  context: QdrantCallContext,
  what: string,
  details: Record<string, unknown> = {},
  extra: { issues?: readonly z.core.$ZodIssue[]; cause?: unknown } = {},
): never {
  throw new LitmPackError(
    'bad_response',
    `Qdrant ${context.operation} on collection "${context.collection}" ${what}. ` +
      'Check that the url points at Qdrant itself (not a proxy that rewrites answers) and that its version is supported.',
    {
      ...(extra.issues === undefined ? {} : { issues: extra.issues }),
      ...(extra.cause === undefined ? {} : { cause: extra.cause }),
      details: { operation: context.operation, collection: context.collection, ...details },
    },
  );
}
