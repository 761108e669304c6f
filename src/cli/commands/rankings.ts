import { Option, type Command } from 'commander';
import { SEARCH_MODES, type SearchMode } from '../../retrieve/schemas.js';
import { LitmPackError } from '../../base/errors.js';
import type { RankedChunk, Rankings } from '../../retrieve/types.js';
import { integer, jsonFilter, list, storeOption } from '../options.js';
import { openStore } from '../stores.js';

function printRankings(rankings: Rankings): void {
  const cell = (entry: RankedChunk | undefined) => (entry === undefined ? '' : `${entry.id} ${entry.score.toPrecision(4)}`);
  const arms: [string, RankedChunk[] | null][] = [
    ['fused', rankings.fused],
    ['dense', rankings.dense],
    ['lexical', rankings.lexical],
  ];
  const shown = arms.filter(([, arm]) => arm !== null) as [string, RankedChunk[]][];
  const depth = Math.max(0, ...shown.map(([, arm]) => arm.length));
  const rows = [['#', ...shown.map(([name]) => name)]];
  for (let i = 0; i < depth; i += 1) rows.push([String(i + 1), ...shown.map(([, arm]) => cell(arm[i]))]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  process.stdout.write(`mode ${rankings.mode}${rankings.dense === null ? ' (no dense arm)' : ''}\n`);
  for (const row of rows) process.stdout.write(`${row.map((v, c) => v.padEnd(widths[c]!)).join('  ').trimEnd()}\n`);
}

export function registerRankings(program: Command): void {
  storeOption(program.command('rankings').description("each arm's raw ranking (dense, lexical) beside the fused one, for tuning fusion").argument('<query>'))
    .addOption(new Option('--mode <mode>', 'search mode').choices(SEARCH_MODES).default('hybrid'))
    .option('--k <n>', 'depth of each ranking', integer('k'), 20)
    .option('--principals <list>', 'comma-separated principals; only chunks they may read are ranked', list)
    .option('--filter <json>', 'Qdrant-style payload filter (JSON)', jsonFilter)
    .option('--json', 'print the rankings as JSON')
    .action(async (query: string, flags: { store: string; mode: SearchMode; k: number; principals?: string[]; filter?: object; json?: boolean }) => {
      const store = await openStore(flags.store);
      if (typeof store.rankings !== 'function') throw new LitmPackError('unsupported', 'This store cannot report rankings');
      const rankings = await store.rankings({
        text: query,
        mode: flags.mode,
        limit: flags.k,
        ...(flags.principals === undefined ? {} : { principals: flags.principals }),
        ...(flags.filter === undefined ? {} : { filter: flags.filter }),
      });
      if (flags.json) process.stdout.write(`${JSON.stringify(rankings)}\n`);
      else printRankings(rankings);
    });
}
