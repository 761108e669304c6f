import { InvalidArgumentError, Option, type Command } from 'commander';
import { assembleBriefing } from '../../pipeline/briefing.js';
import { printPack } from '../io.js';
import { embeddingsFrom, integer, list, packOptions, retrieveOptions, type RetrieveFlags } from '../options.js';
import { openStore } from '../stores.js';
import { compressStage } from '../../refine/stages.js';
import { rerankStage } from './pack.js';

interface BriefingFlags extends RetrieveFlags {
  prompt?: string;
  clusters?: string[];
  scope: 'prefer' | 'strict';
  tierWeights?: Record<string, number>;
  maxPins?: number;
  maxClusters?: number;
  maxClusterSources?: number;
}

/** `insight=1.2,segment=1` → `{ insight: 1.2, segment: 1 }`. */
function tierWeights(value: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of list(value)) {
    const [kind, weight] = part.split('=');
    const parsed = Number(weight);
    if (!kind || weight === undefined || weight.trim() === '' || !Number.isFinite(parsed) || parsed < 0) {
      throw new InvalidArgumentError('tier-weights must look like insight=1.2,segment=1 (kind=non-negative number)');
    }
    out[kind.trim()] = parsed;
  }
  return out;
}

export function registerBriefing(program: Command): void {
  retrieveOptions(
    packOptions(program.command('briefing').description('print a briefing from pins, clusters and/or a prompt (grounding, evidence, caveats)'), {
      budget: 2000,
    }),
  )
    .option('--prompt <text>', 'the task the briefing is for (optional with pins or clusters)')
    .option('--pins <list>', 'comma-separated source ids, chunk ids or ingested paths to put first, verbatim', list)
    .option('--clusters <list>', 'comma-separated clusters to draw a fair share of the budget from', list)
    .addOption(new Option('--scope <mode>', 'prefer: prompt results from anywhere; strict: only from the pins and clusters').choices(['prefer', 'strict']).default('prefer'))
    .option('--tier-weights <list>', 'score multipliers by kind, e.g. insight=1.2,segment=1', tierWeights)
    .option('--max-pins <n>', 'at most n pins (default 25)', integer('max-pins'))
    .option('--max-clusters <n>', 'at most n clusters (default 10)', integer('max-clusters'))
    .option('--max-cluster-sources <n>', 'at most n member sources read per cluster (default 200)', integer('max-cluster-sources'))
    .action(async (flags: BriefingFlags) => {
      // The shared retrieval flags: --embeddings for dense search (and MMR), cluster centroids and sentence
      // vectors, --idf-corpus for the store.
      const embeddings = embeddingsFrom(flags);
      const compress = compressStage(flags.compress, embeddings, 'compress flag');
      const rerank = rerankStage(flags);
      const { pack } = await assembleBriefing({
        store: await openStore(flags.store, { embeddings, idfCorpus: flags.idfCorpus }),
        ...(embeddings === undefined ? {} : { embeddings }),
        ...(flags.prompt === undefined ? {} : { prompt: flags.prompt }),
        pins: flags.pins ?? [],
        clusters: flags.clusters ?? [],
        scopeMode: flags.scope,
        mode: flags.mode,
        limit: flags.limit,
        ...(flags.filter === undefined ? {} : { filter: flags.filter }),
        ...(flags.principals === undefined ? {} : { principals: flags.principals }),
        ...(flags.diversity === undefined ? {} : { diversity: flags.diversity }),
        ...(compress === undefined ? {} : { compress }),
        ...(rerank === undefined ? {} : { rerank }),
        ...(flags.tierWeights === undefined ? {} : { tierWeights: flags.tierWeights }),
        ...(flags.maxPins === undefined ? {} : { maxPins: flags.maxPins }),
        ...(flags.maxClusters === undefined ? {} : { maxClusters: flags.maxClusters }),
        ...(flags.maxClusterSources === undefined ? {} : { maxClusterSources: flags.maxClusterSources }),
        maxTokens: flags.budget,
        format: flags.format,
        encoding: flags.encoding,
        ...(flags.maxPerSource === undefined ? {} : { maxPerSource: flags.maxPerSource }),
        ...(flags.minScore === undefined ? {} : { minScore: flags.minScore }),
      });
      printPack(pack, flags.json === true);
    });
}
