// What the inspector accepts: a pack as `litm-pack/pack@1` defines it, read leniently where leniency costs
// nothing. Unknown fields are kept (and shown), enums are read as strings (a drop reason or a role added
// later still renders), and fields older packs lack (`degraded`, `pointer`, `briefing`) take their defaults.
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { CitationSchema, CoverageSchema, PACK_SCHEMA_ID, PackItemSchema } from '../core/schemas.js';

const count = () => z.number().int().nonnegative();

export const InspectablePackSchema = z.looseObject({
  schema: z.literal(PACK_SCHEMA_ID, { message: `not a litm-pack pack (schema must be "${PACK_SCHEMA_ID}")` }),
  kind: z.string(),
  query: z.string(),
  format: z.string(),
  /** Packs written before headers had styles were rendered in full. */
  header: z.string().default('full'),
  context: z.string(),
  items: z.array(PackItemSchema.extend({ role: z.string(), pointer: z.boolean().default(false) }).loose()),
  citations: z.array(CitationSchema.loose()),
  // Packs written before a coverage field existed still load: the field shows as not recorded.
  coverage: CoverageSchema.extend({
    confidence: z.string(),
    denseAvailable: CoverageSchema.shape.denseAvailable.nullable().default(null),
    newestIndexedAt: CoverageSchema.shape.newestIndexedAt.default(null),
  }).loose(),
  budget: z.looseObject({ maxTokens: z.number().int().positive(), usedTokens: count(), encoding: z.string() }),
  caveats: z.string().nullable().default(null),
  briefing: z
    .looseObject({
      entity: z.string().nullable(),
      contradictions: z.array(z.string()),
      gaps: z.array(z.string()),
      missingPins: z.array(z.string()),
    })
    .nullable()
    .default(null),
  truncated: z.boolean(),
  dropped: z.array(z.looseObject({ id: z.string(), reason: z.string(), duplicateOf: z.string().optional() })),
  degraded: z.array(z.looseObject({ stage: z.string(), code: z.string() })).default([]),
  packHash: z.string(),
});
export type InspectablePack = z.output<typeof InspectablePackSchema>;
export type InspectableItem = InspectablePack['items'][number];

/** The fields of a pack (and of its coverage) that the schema names; anything else is shown generically. */
export const KNOWN_PACK_FIELDS: ReadonlySet<string> = new Set(Object.keys(InspectablePackSchema.shape));
export const KNOWN_COVERAGE_FIELDS: ReadonlySet<string> = new Set(Object.keys(InspectablePackSchema.shape.coverage.shape));

/** Validates one pack for the inspector; `what` names it in the error (`pack`, `run A line 3`). */
export function parseInspectablePack(value: unknown, what = 'pack'): InspectablePack {
  return parseOrThrow(InspectablePackSchema, value, what);
}

/**
 * Reads a stored run: a JSON array of packs, or JSON lines with one pack per line (blank lines skipped).
 * Returns the raw values and where each was; each is validated when it is rendered.
 */
export interface StoredPack {
  /** Where the pack is in its file: `line 3` (JSON lines) or `entry 3` (a JSON array). */
  where: string;
  value: unknown;
}

export function readPackRun(text: string, what: string): StoredPack[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new LitmPackError('invalid_input', `${what}: not valid JSON (${(error as Error).message})`, { cause: error });
    }
    if (!Array.isArray(parsed)) throw new LitmPackError('invalid_input', `${what}: expected a JSON array of packs`);
    return (parsed as unknown[]).map((value, index) => ({ where: `entry ${index + 1}`, value }));
  }
  const out: StoredPack[] = [];
  text.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    try {
      out.push({ where: `line ${index + 1}`, value: JSON.parse(raw) as unknown });
    } catch (error) {
      throw new LitmPackError('invalid_input', `${what} line ${index + 1}: not valid JSON (${(error as Error).message})`, {
        cause: error,
        details: { line: index + 1 },
      });
    }
  });
  return out;
}
