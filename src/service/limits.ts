import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { PIPELINE_DEFAULTS, PIPELINE_LIMITS } from '../pipeline/defaults.js';

const count = (min: number) => z.number().int().min(min);

/**
 * Defaults and limits of the requests the service accepts (the HTTP API, the MCP tools and the CLI): the
 * pipeline's table (pipeline/defaults.ts) unless a server configures its own. Every limit answers a bad
 * request with `invalid_input` naming it; nothing over a limit is silently cut.
 */
export const ServiceLimitsSchema = z
  .strictObject({
    /** Bundle budget when the request gives none, and the largest one accepted. */
    bundleDefaultBudget: count(1).default(PIPELINE_DEFAULTS.bundleBudget),
    bundleMaxBudget: count(1).max(PIPELINE_LIMITS.maxBudget).default(PIPELINE_LIMITS.maxBudget),
    /** Briefing budget when the request gives none, and the largest one accepted. */
    briefingDefaultBudget: count(1).default(PIPELINE_DEFAULTS.briefingBudget),
    briefingMaxBudget: count(1).max(PIPELINE_LIMITS.maxBudget).default(PIPELINE_LIMITS.maxBudget),
    /** Packing candidates the caller sends (evaluation harnesses): default and largest budget. */
    packDefaultBudget: count(1).default(PIPELINE_DEFAULTS.packBudget),
    packMaxBudget: count(1).max(PIPELINE_LIMITS.maxBudget).default(PIPELINE_LIMITS.maxBudget),
    /** Characters of a query or prompt. */
    maxQueryChars: count(1).default(PIPELINE_LIMITS.maxQueryChars),
    maxPins: count(0).default(PIPELINE_LIMITS.maxPins),
    maxClusters: count(0).default(PIPELINE_LIMITS.maxClusters),
    /** Readable member sources one cluster may have. */
    maxClusterSources: count(1).default(PIPELINE_LIMITS.maxClusterSources),
    /** Candidate pool retrieved before packing (`limit`): default and largest. */
    defaultPool: count(1).default(PIPELINE_DEFAULTS.pool),
    maxPool: count(1).max(PIPELINE_LIMITS.maxPool).default(PIPELINE_LIMITS.maxPool),
    /** Candidates one pack request may carry. */
    maxCandidates: count(1).default(PIPELINE_LIMITS.maxCandidates),
    /** Depth of the debug rankings (`k`): default and largest. */
    defaultRankingsDepth: count(1).default(PIPELINE_DEFAULTS.rankingsDepth),
    maxRankingsDepth: count(1).max(10_000).default(PIPELINE_LIMITS.maxRankingsDepth),
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
