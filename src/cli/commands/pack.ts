import { Option, type Command } from 'commander';
import { packBriefing, packBundle, toCanonicalJson } from '../../core/pack.js';
import type { Degraded, Pack } from '../../core/schemas.js';
import { readStdin, readUserFile } from '../io.js';
import { list, packOptions, type PackFlags } from '../options.js';
import { parseCandidates } from '../read-candidates.js';

/** Packs candidates with the CLI's flags (bundle or briefing). */
export function packWith(
  flags: PackFlags,
  query: string,
  candidates: Parameters<typeof packBundle>[0]['candidates'],
  degraded: Degraded[] = [],
): Pack {
  const common = {
    query,
    candidates,
    maxTokens: flags.budget,
    format: flags.format,
    encoding: flags.encoding,
    maxPerSource: flags.maxPerSource,
    minScore: flags.minScore,
    degraded,
  };
  return flags.kind === 'briefing' ? packBriefing({ ...common, pins: flags.pins ?? [] }) : packBundle(common);
}

export function registerPack(program: Command): void {
  packOptions(
    program
      .command('pack')
      .description('pack candidates (JSON array or JSON lines, from FILE or stdin) and print the canonical JSON')
      .argument('[file]', 'candidates file; stdin when absent')
      .requiredOption('--query <text>', 'the query the pack answers'),
    { budget: 4000 },
  )
    .addOption(new Option('--kind <kind>', 'pack kind').choices(['bundle', 'briefing']).default('bundle'))
    .option('--pins <list>', 'briefing: comma-separated source or chunk ids to put first', list)
    .addOption(new Option('--output <what>', 'what to print').choices(['json', 'context']).default('json'))
    .action(async (file: string | undefined, flags: PackFlags & { query: string; output: 'json' | 'context' }) => {
      const input = file === undefined || file === '-' ? await readStdin() : await readUserFile(file);
      const pack = packWith(flags, flags.query, parseCandidates(input));
      process.stdout.write(flags.output === 'context' ? `${pack.context}\n` : `${toCanonicalJson(pack)}\n`);
    });
}
