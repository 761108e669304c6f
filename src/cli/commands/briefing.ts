import type { Command } from 'commander';
import { resolveLimits } from '../../service/limits.js';
import { requestSchemas } from '../../service/requests.js';
import { serveBriefing } from '../../service/service.js';
import { noteEmptyForAccess } from '../access-note.js';
import { printPack } from '../io.js';
import {
  integer,
  list,
  numeric,
  packOptions,
  packingParameters,
  retrievalParameters,
  retrieveOptions,
  serviceContext,
  serviceRequest,
  type RetrieveFlags,
} from '../options.js';

interface BriefingFlags extends RetrieveFlags {
  prompt?: string;
  pins?: string[];
  clusters?: string[];
  scope?: string;
  tierWeights?: Record<string, number | string | undefined>;
  maxPins?: number;
  maxClusters?: number;
  maxClusterSources?: number;
}

/** `insight=1.2,segment=1` → `{ insight: 1.2, segment: 1 }` (the service checks the weights). */
function tierWeights(value: string): Record<string, number | string | undefined> {
  const out: Record<string, number | string | undefined> = {};
  for (const part of list(value)) {
    const [kind, weight] = part.split('=');
    out[(kind ?? '').trim()] = numeric(weight);
  }
  return out;
}

export function registerBriefing(program: Command): void {
  retrieveOptions(
    packOptions(
      program.command('briefing').description('print a briefing from pins, clusters and/or a prompt (grounding, evidence, caveats)'),
      'briefing',
    ),
  )
    .option('--prompt <text>', 'the task the briefing is for (optional with pins or clusters)')
    .option('--pins <list>', 'comma-separated source ids, chunk ids or ingested paths to put first, verbatim', list)
    .option('--clusters <list>', 'comma-separated clusters to draw a fair share of the budget from', list)
    .option('--scope <mode>', 'prefer: prompt results from anywhere; strict: only from the pins and clusters (default prefer)')
    .option('--tier-weights <list>', 'score multipliers by kind, e.g. insight=1.2,segment=1', tierWeights)
    .option('--max-pins <n>', 'at most n pins (default 25)', integer('--max-pins', { min: 1 }))
    .option('--max-clusters <n>', 'at most n clusters (default 10)', integer('--max-clusters', { min: 1 }))
    .option(
      '--max-cluster-sources <n>',
      'at most n member sources read per cluster (default 200)',
      integer('--max-cluster-sources', { min: 1 }),
    )
    .action(async (flags: BriefingFlags) => {
      const limits = resolveLimits({
        ...(flags.maxPins === undefined ? {} : { maxPins: flags.maxPins }),
        ...(flags.maxClusters === undefined ? {} : { maxClusters: flags.maxClusters }),
        ...(flags.maxClusterSources === undefined ? {} : { maxClusterSources: flags.maxClusterSources }),
      });
      const request = serviceRequest(requestSchemas(limits).briefing, {
        prompt: flags.prompt,
        pins: flags.pins,
        clusters: flags.clusters,
        scope_mode: flags.scope,
        tier_weights: flags.tierWeights,
        ...retrievalParameters(flags),
        ...packingParameters(flags),
      });
      const context = await serviceContext(flags);
      const pack = await serveBriefing(request, context, limits);
      await noteEmptyForAccess(pack, context, flags.prompt);
      printPack(pack, flags.json === true);
    });
}
