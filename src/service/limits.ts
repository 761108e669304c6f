import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { PIPELINE_DEFAULTS, PIPELINE_LIMITS } from '../pipeline/defaults.js';

const count = (min: number) => z.number().int().min(min);

/**
 * Defaults of the agent surfaces (MCP, HTTP, the citation ledger), beside the pipeline's table: what a door
 * answers when a request names no value, and the bounds that keep one request's answer, or one caller's
 * housekeeping, from costing the server more than its share.
 */
export const SURFACE_DEFAULTS = Object.freeze({
  /** maildb's `get_rag_context(query, max_tokens=4000, limit=20, ...)`. */
  ragBudget: 4000,
  ragPool: 20,
  /** 1 MiB of text per resource read; 4 MiB for all the reads of one request. */
  maxResourceReadBytes: 1024 * 1024,
  maxRequestReadBytes: 4 * 1024 * 1024,
  maxBatchMessages: 20,
  resourcesPageSize: 100,
  stalePage: 50,
  maxStalePage: 500,
  maxStaleCheck: 10_000,
  /** An error answer quotes at most this many characters of a message, and at most this many issues. */
  maxErrorChars: 1000,
  maxErrorIssues: 20,
  /** Chunks one page of a resource read takes from the store at most (the page is then cut to its bytes). */
  resourcePageChunks: 2048,
  /** Source ids one `resources/list` call looks at per source it answers, before it answers a shorter page. */
  listScanFactor: 20,
  /** The longest resource URI an error's data repeats (a longer one only as the message's excerpt). */
  maxToldUriChars: 2048,
  /** A JSON-RPC id longer than this is refused: every answer repeats the id of its request. */
  maxJsonRpcIdChars: 256,
});

/**
 * Calls per window (`windowMs`). Work (a REST call, an MCP tool call, resource read or list) is counted per
 * caller (an API key's id, else a client address) and for all callers together: keyed callers share `global`,
 * and when the server has keys, anonymous callers share `anonymousGlobal` of their own, so anonymous traffic
 * never spends a valid key's budget. MCP housekeeping (`initialize`, `notifications/*`, `ping`,
 * `server/discover`) is counted apart, against limits far above any client's need, so a session's own
 * messages never cost it a tool call and a flood of them is still bounded.
 */
export const RATE_LIMIT_DEFAULTS = Object.freeze({
  perClient: 30,
  global: 200,
  anonymousGlobal: 100,
  housekeepingPerClient: 300,
  housekeepingGlobal: 3000,
  windowMs: 1000,
});

/**
 * The citation ledger's files: one appended to until it reaches `maxFileBytes`, then set aside under a name of
 * its own; the newest `keepFiles` set-aside files are kept, older ones removed.
 */
export const LEDGER_DEFAULTS = Object.freeze({
  fileName: 'citations.ledger.jsonl',
  maxFileBytes: 64 * 1024 * 1024,
  keepFiles: 4,
  /** Packs remembered per served citation (the newest); the count of all of them is kept. */
  packsPerCitation: 20,
});

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
    /** `get_rag_context`'s budget (`max_tokens`) and pool (`limit`) when the call gives none: maildb's contract. */
    ragDefaultBudget: count(1).default(SURFACE_DEFAULTS.ragBudget),
    ragDefaultPool: count(1).default(SURFACE_DEFAULTS.ragPool),
    /** Bytes of text one `resources/read` answers: a longer source is read a page of chunks at a time. */
    maxResourceReadBytes: count(1024).default(SURFACE_DEFAULTS.maxResourceReadBytes),
    /** Bytes of resource text all the reads of one request answer together (a JSON-RPC batch of reads). */
    maxRequestReadBytes: count(1024).default(SURFACE_DEFAULTS.maxRequestReadBytes),
    /** JSON-RPC messages one POST to /mcp may carry (a batch); a longer batch is refused whole. */
    maxBatchMessages: count(1).default(SURFACE_DEFAULTS.maxBatchMessages),
    /** Sources per page of `resources/list`. */
    resourcesPageSize: count(1).max(10_000).default(SURFACE_DEFAULTS.resourcesPageSize),
    /** Stale citations per page of the stale feed (`limit`): default and largest. */
    defaultStalePage: count(1).default(SURFACE_DEFAULTS.stalePage),
    maxStalePage: count(1).max(10_000).default(SURFACE_DEFAULTS.maxStalePage),
    /** Distinct served citations one check of the stale feed verifies (the newest first); the rest are counted, not checked. */
    maxStaleCheck: count(1).default(SURFACE_DEFAULTS.maxStaleCheck),
  })
  .superRefine((limits, context) => {
    for (const kind of ['bundle', 'briefing', 'pack'] as const) {
      if (limits[`${kind}DefaultBudget`] > limits[`${kind}MaxBudget`]) {
        context.addIssue({
          code: 'custom',
          path: [`${kind}DefaultBudget`],
          message: `${kind}DefaultBudget must be at most ${kind}MaxBudget`,
        });
      }
    }
    if (limits.defaultPool > limits.maxPool)
      context.addIssue({ code: 'custom', path: ['defaultPool'], message: 'defaultPool must be at most maxPool' });
    if (limits.ragDefaultBudget > limits.bundleMaxBudget) {
      context.addIssue({ code: 'custom', path: ['ragDefaultBudget'], message: 'ragDefaultBudget must be at most bundleMaxBudget' });
    }
    if (limits.ragDefaultPool > limits.maxPool)
      context.addIssue({ code: 'custom', path: ['ragDefaultPool'], message: 'ragDefaultPool must be at most maxPool' });
    if (limits.defaultStalePage > limits.maxStalePage)
      context.addIssue({ code: 'custom', path: ['defaultStalePage'], message: 'defaultStalePage must be at most maxStalePage' });
    if (limits.maxResourceReadBytes > limits.maxRequestReadBytes) {
      context.addIssue({
        code: 'custom',
        path: ['maxResourceReadBytes'],
        message: 'maxResourceReadBytes must be at most maxRequestReadBytes',
      });
    }
    if (limits.defaultRankingsDepth > limits.maxRankingsDepth) {
      context.addIssue({
        code: 'custom',
        path: ['defaultRankingsDepth'],
        message: 'defaultRankingsDepth must be at most maxRankingsDepth',
      });
    }
  });

export type ServiceLimits = z.output<typeof ServiceLimitsSchema>;
export type ServiceLimitsInput = z.input<typeof ServiceLimitsSchema>;

export const DEFAULT_LIMITS: ServiceLimits = Object.freeze(ServiceLimitsSchema.parse({}));

/** The limits a server or MCP server runs with: the defaults, with what the caller configured over them. */
export function resolveLimits(limits: ServiceLimitsInput | undefined): ServiceLimits {
  return limits === undefined ? DEFAULT_LIMITS : parseOrThrow(ServiceLimitsSchema, limits, 'service limits');
}
