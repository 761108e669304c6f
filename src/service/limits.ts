import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { MAX_BUDGET_TOKENS } from '../core/schemas.js';

const count = (min: number) => z.number().int().min(min);

/**
 * Defaults and limits of the requests the HTTP API and the MCP tools accept. Every limit answers a bad
 * request with `invalid_input` naming it; nothing over a limit is silently cut.
 */
export const ServiceLimitsSchema = z
  .strictObject({
    /** Bundle budget when the request gives none, and the largest one accepted. */
    bundleDefaultBudget: count(1).default(2000),
    bundleMaxBudget: count(1).max(MAX_BUDGET_TOKENS).default(24_000),
    /** Briefing budget when the request gives none, and the largest one accepted. */
    briefingDefaultBudget: count(1).default(6000),
    briefingMaxBudget: count(1).max(MAX_BUDGET_TOKENS).default(24_000),
    /** Packing candidates the caller sends (evaluation harnesses): default and largest budget. */
    packDefaultBudget: count(1).default(4000),
    packMaxBudget: count(1).max(MAX_BUDGET_TOKENS).default(MAX_BUDGET_TOKENS),
    /** Characters of a query or prompt. */
    maxQueryChars: count(1).default(4096),
    maxPins: count(0).default(25),
    maxClusters: count(0).default(10),
    /** Candidate pool retrieved before packing (`limit`): default and largest. */
    defaultPool: count(1).default(50),
    maxPool: count(1).max(10_000).default(1000),
    /** Candidates one pack request may carry. */
    maxCandidates: count(1).default(10_000),
    /** Depth of the debug rankings (`k`): default and largest. */
    defaultRankingsDepth: count(1).default(50),
    maxRankingsDepth: count(1).max(10_000).default(1000),
  })
  .superRefine((limits, context) => {
    for (const kind of ['bundle', 'briefing', 'pack'] as const) {
      if (limits[`${kind}DefaultBudget`] > limits[`${kind}MaxBudget`]) {
        context.addIssue({ code: 'custom', path: [`${kind}DefaultBudget`], message: `${kind}DefaultBudget must be at most ${kind}MaxBudget` });
      }
    }
    if (limits.defaultPool > limits.maxPool) context.addIssue({ code: 'custom', path: ['defaultPool'], message: 'defaultPool must be at most maxPool' });
    if (limits.defaultRankingsDepth > limits.maxRankingsDepth) {
      context.addIssue({ code: 'custom', path: ['defaultRankingsDepth'], message: 'defaultRankingsDepth must be at most maxRankingsDepth' });
    }
  });

export type ServiceLimits = z.output<typeof ServiceLimitsSchema>;
export type ServiceLimitsInput = z.input<typeof ServiceLimitsSchema>;

export const DEFAULT_LIMITS: ServiceLimits = Object.freeze(ServiceLimitsSchema.parse({}));

/** The limits a server or MCP server runs with: the defaults, with what the caller configured over them. */
export function resolveLimits(limits: ServiceLimitsInput | undefined): ServiceLimits {
  return limits === undefined ? DEFAULT_LIMITS : parseOrThrow(ServiceLimitsSchema, limits, 'service limits');
}
