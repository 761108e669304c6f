/**
 * Regenerates BENCHMARKS.md's generated sections.
 *
 *   npx tsx bench/report.ts          # environment section only (machine, versions)
 *   npx tsx bench/report.ts --run    # also runs every benchmark with --write, one after another
 *
 * Each benchmark script writes its own section when given --write; text outside the generated markers
 * (the reading of the results) is kept as it is.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { environmentMarkdown, writeSection } from './lib/report.js';
import { REPO_ROOT } from './lib/paths.js';
import { progress } from './lib/timing.js';

const { values: args } = parseArgs({ options: { run: { type: 'boolean', default: false }, qdrant: { type: 'boolean', default: false } } });

const RUNS: string[][] = [['bench/retrieval.ts'], ['bench/retrieval.ts', '--synthetic'], ['bench/packing.ts'], ['bench/speed.ts']];

if (args.run) {
  for (const run of RUNS) {
    const argv = [...run, '--write', ...(args.qdrant && !run.includes('--synthetic') && run[0] !== 'bench/packing.ts' ? ['--qdrant'] : [])];
    progress(`running ${argv.join(' ')}`);
    const started = Date.now();
    const result = spawnSync('npx', ['tsx', ...argv], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (result.status !== 0) throw new Error(`${argv.join(' ')} failed with status ${result.status}`);
    progress(`  done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
}
writeSection('environment', environmentMarkdown());
progress('BENCHMARKS.md: environment section written');
