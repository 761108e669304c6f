/**
 * The one table of defaults and limits. Every door reads it: the library's `assembleBundle` and
 * `assembleBriefing`, both frameworks' retrievers, compressor and postprocessor, the service's request schemas
 * (and so the HTTP API, the MCP tools and the CLI, whose `--help` prints these values). A server may configure
 * its own limits over these (`ServiceLimits`); nothing else writes a default of its own.
 */
import { MAX_BUDGET_TOKENS } from '../core/schemas.js';

export const PIPELINE_DEFAULTS = Object.freeze({
  /** Token budget of a bundle when none is given. */
  bundleBudget: 2000,
  /** Token budget of a briefing when none is given. */
  briefingBudget: 6000,
  /** Token budget of a pack of caller-given candidates (`pack`, `POST /api/pack`) when none is given. */
  packBudget: 4000,
  /** Candidate pool retrieved before packing (`limit`). */
  pool: 50,
  /** Depth of each arm's ranking in `rankings` (`k`). */
  rankingsDepth: 50,
});

export const PIPELINE_LIMITS = Object.freeze({
  /**
   * The one largest token budget, for every door and kind: a library call (`packBundle`, `assembleBundle`,
   * the retrievers), and the service's bundle, briefing and pack requests (so the CLI, the HTTP API and the MCP
   * tools). The packer's schema declares it (core cannot import this table); a server may configure a lower one.
   */
  maxBudget: MAX_BUDGET_TOKENS,
  /** Largest candidate pool one search may retrieve before packing. */
  maxPool: 1000,
  /** Largest `k` of `rankings`. */
  maxRankingsDepth: 1000,
  /** Pins of one briefing. */
  maxPins: 25,
  /** Clusters of one briefing. */
  maxClusters: 10,
  /** Readable member sources one cluster may have. */
  maxClusterSources: 200,
  /** Characters of a query or prompt the service accepts. */
  maxQueryChars: 4096,
  /** Candidates one pack request may carry. */
  maxCandidates: 10_000,
});
