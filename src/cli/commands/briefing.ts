import type { Command } from 'commander';
import { printPack } from '../io.js';
import { list, packOptions, retrieveOptions, type RetrieveFlags } from '../options.js';
import { retrieveAndPack } from './bundle.js';

export function registerBriefing(program: Command): void {
  retrieveOptions(packOptions(program.command('briefing').description('retrieve and print a briefing (grounding, evidence, caveats)'), { budget: 2000 }))
    .requiredOption('--prompt <text>', 'what the briefing is for')
    .option('--pins <list>', 'comma-separated source or chunk ids to put first', list)
    .action(async (flags: RetrieveFlags & { prompt: string }) => {
      printPack(await retrieveAndPack(flags.prompt, { ...flags, kind: 'briefing' }), flags.json === true);
    });
}
