import { Option, type Command } from 'commander';
import { parseOrThrow } from '../../base/errors.js';
import { packBriefing, packBundle, toCanonicalJson } from '../../core/pack.js';
import type { Candidate, Pack } from '../../core/schemas.js';
import { preparePacking, refineCandidates, type PackInputs } from '../../pipeline/retrieve.js';
import { HttpReranker } from '../../refine/rerank.js';
import { RerankStageSchema, compressStage, type ParsedRerankStage } from '../../refine/stages.js';
import { readStdin, readUserFile } from '../io.js';
import { list, packOptions, type PackFlags } from '../options.js';
import { parseCandidates } from '../read-candidates.js';

/** The reranker the flags name, if any (`litm-pack serve` and `mcp` pass their --rerank-url as `rerank`). */
export function rerankStage(flags: Pick<PackFlags, 'rerank' | 'rerankProtocol' | 'rerankModel' | 'rerankTopN' | 'rerankTimeout'>): ParsedRerankStage | undefined {
  if (flags.rerank === undefined) return undefined;
  const apiKey = process.env.LITM_RERANK_API_KEY;
  const reranker = new HttpReranker({
    url: flags.rerank,
    ...(flags.rerankProtocol === undefined ? {} : { protocol: flags.rerankProtocol }),
    ...(flags.rerankModel === undefined ? {} : { model: flags.rerankModel }),
    ...(apiKey ? { apiKey } : {}),
  });
  return parseOrThrow(
    RerankStageSchema,
    { reranker, ...(flags.rerankTopN === undefined ? {} : { topN: flags.rerankTopN }), ...(flags.rerankTimeout === undefined ? {} : { timeoutMs: flags.rerankTimeout }) },
    'rerank flags',
  );
}

/** Packs candidates with the CLI's flags (bundle or briefing). */
export function packWith(
  flags: PackFlags,
  query: string,
  candidates: Parameters<typeof packBundle>[0]['candidates'],
  inputs?: PackInputs,
): Pack {
  const common = {
    query,
    candidates,
    maxTokens: flags.budget,
    format: flags.format,
    encoding: flags.encoding,
    maxPerSource: flags.maxPerSource,
    minScore: flags.minScore,
    degraded: inputs?.degraded ?? [],
    ...(inputs?.compress === undefined ? {} : { compress: inputs.compress }),
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
      const candidates = parseCandidates(input) as Candidate[];
      const refined = await refineCandidates(flags.query, candidates, { rerank: rerankStage(flags) });
      const inputs = await preparePacking(flags.query, refined, compressStage(flags.compress, undefined, 'compress flag'));
      const pack = packWith(flags, flags.query, refined.candidates, inputs);
      process.stdout.write(flags.output === 'context' ? `${pack.context}\n` : `${toCanonicalJson(pack)}\n`);
    });
}
