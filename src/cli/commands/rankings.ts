import { stdout } from '../io.js';
import type { Command } from 'commander';
import type { RankedChunk, Rankings } from '../../store/types.js';
import { SEARCH_MODES } from '../../store/schemas.js';
import { DEFAULT_LIMITS } from '../../service/limits.js';
import { requestSchemas } from '../../service/requests.js';
import { serveRankings } from '../../service/service.js';
import {
  embeddingsFrom,
  embeddingsOptions,
  jsonFilter,
  list,
  numeric,
  principalsFrom,
  serviceRequest,
  storeOption,
  type RetrieveFlags,
} from '../options.js';
import { openStore } from '../stores.js';
import { columns, visibleLine } from '../terminal.js';

const schemas = requestSchemas(DEFAULT_LIMITS);

function printRankings(rankings: Rankings): void {
  const cell = (entry: RankedChunk | undefined) => (entry === undefined ? '' : `${visibleLine(entry.id)} ${entry.score.toPrecision(4)}`);
  const arms: [string, RankedChunk[] | null][] = [
    ['fused', rankings.fused],
    ['dense', rankings.dense],
    ['lexical', rankings.lexical],
  ];
  const shown = arms.filter(([, arm]) => arm !== null) as [string, RankedChunk[]][];
  const depth = Math.max(0, ...shown.map(([, arm]) => arm.length));
  const rows = [['#', ...shown.map(([name]) => name)]];
  for (let i = 0; i < depth; i += 1) rows.push([String(i + 1), ...shown.map(([, arm]) => cell(arm[i]))]);
  stdout().write(`mode ${rankings.mode}${rankings.dense === null ? ' (no dense arm)' : ''}\n`);
  for (const line of columns(rows)) stdout().write(`${line}\n`);
}

export function registerRankings(program: Command): void {
  embeddingsOptions(
    storeOption(
      program
        .command('rankings')
        .description("each arm's raw ranking (dense, lexical) beside the fused one, for tuning fusion")
        .argument('<query>'),
    ),
  )
    .option('--mode <mode>', `search mode: ${SEARCH_MODES.join(', ')} (default hybrid)`)
    .option('--k <n>', `depth of each ranking (default ${DEFAULT_LIMITS.defaultRankingsDepth}, at most ${DEFAULT_LIMITS.maxRankingsDepth})`)
    .option('--principals <list>', 'comma-separated principals; only chunks they may read are ranked (default: anonymous)', list)
    .option('--all-principals', 'rank every chunk, whatever its ACL')
    .option('--filter <json>', 'Qdrant-style payload filter (JSON)', jsonFilter)
    .option('--json', 'print the rankings as JSON')
    .action(
      async (
        query: string,
        flags: Pick<RetrieveFlags, 'store' | 'mode' | 'principals' | 'allPrincipals' | 'filter' | 'json' | 'embeddings' | 'embedModel'> & {
          k?: string;
        },
      ) => {
        const request = serviceRequest(schemas.rankings, { query, mode: flags.mode, filter: flags.filter, k: numeric(flags.k) });
        // The query is embedded as bundle embeds it, so the dense arm runs (hybrid and --mode dense need it).
        const embeddings = embeddingsFrom(flags);
        const store = await openStore(flags.store, embeddings === undefined ? {} : { embeddings });
        const rankings = await serveRankings(request, { store, principals: principalsFrom(flags) });
        if (flags.json) stdout().write(`${JSON.stringify(rankings)}\n`);
        else printRankings(rankings);
      },
    );
}
