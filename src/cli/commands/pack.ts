import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import { packJson } from '../../core/finish.js';
import { DEFAULT_LIMITS } from '../../service/limits.js';
import { requestSchemas } from '../../service/requests.js';
import { emptyContextHint } from '../../service/hints.js';
import { servePack } from '../../service/service.js';
import { readStdin, readUserFile, stderr, stdout } from '../io.js';
import { list, packOptions, packingParameters, rerankStage, serviceRequest, type PackFlags } from '../options.js';
import { parseCandidates } from '../read-candidates.js';

const schemas = requestSchemas(DEFAULT_LIMITS);

export function registerPack(program: Command): void {
  packOptions(
    program
      .command('pack')
      .description('pack candidates (JSON array or JSON lines, from FILE or stdin) and print the canonical JSON')
      .argument('[file]', 'candidates file; stdin when absent')
      .requiredOption('--query <text>', 'the query the pack answers'),
    'pack',
  )
    .option('--kind <kind>', 'pack kind: bundle or briefing (default bundle)')
    .option('--pins <list>', 'briefing: comma-separated source or chunk ids to put first', list)
    .option('--output <what>', 'what to print: json or context (default json)')
    .action(async (file: string | undefined, flags: PackFlags & { query: string; kind?: string; pins?: string[]; output?: string }) => {
      const output = flags.output ?? 'json';
      if (output !== 'json' && output !== 'context') throw new LitmPackError('invalid_input', '--output must be one of json, context');
      const rerank = rerankStage(flags);
      const input = file === undefined || file === '-' ? await readStdin() : await readUserFile(file);
      const candidates = parseCandidates(input);
      const request = serviceRequest(schemas.pack, {
        query: flags.query,
        candidates,
        kind: flags.kind,
        pins: flags.pins,
        ...packingParameters(flags),
        ...(rerank === undefined ? {} : { rerank: true }),
      });
      const pack = await servePack(request, rerank === undefined ? {} : { rerank });
      const hint = emptyContextHint(pack);
      if (hint !== null) stderr().write(`litm-pack: note: ${hint}\n`);
      stdout().write(output === 'context' ? `${pack.context}\n` : `${packJson(pack)}\n`);
    });
}
