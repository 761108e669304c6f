import type { Command } from 'commander';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { LitmPackError } from '../../base/errors.js';
import { readPackRun } from '../../inspect/schema.js';
import { renderGoldenSetReport } from '../../inspect/golden-report.js';
import { renderPackReport } from '../../inspect/pack-report.js';
import { readStdin, readUserFile, stdout } from '../io.js';

interface InspectFlags {
  output?: string;
  golden?: boolean;
}

const readInput = (file: string) => (file === '-' ? readStdin() : readUserFile(file));

/** One pack (a JSON object), or a run of packs (JSON lines, a JSON array, or `--golden`). */
function isSinglePack(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

export function registerInspect(program: Command): void {
  program
    .command('inspect')
    .description('write an HTML report of a pack, or an overview of a golden set (JSON lines of packs), optionally against a second run')
    .argument('<file>', 'a pack (canonical JSON), or a run of packs (JSON lines or a JSON array); "-" for stdin')
    .argument('[second]', 'a second run to compare with the first (golden sets)')
    .option('-o, --output <file>', 'write the report to this file (default: stdout)')
    .option('--golden', 'read FILE as a run of packs even when it holds a single pack')
    .addHelpText(
      'after',
      '\nExamples:\n  litm-pack bundle "refunds" --json > pack.json && litm-pack inspect pack.json -o pack.html\n  litm-pack inspect run-before.jsonl run-after.jsonl -o golden.html',
    )
    .action(async (file: string, second: string | undefined, flags: InspectFlags) => {
      if (file === '-' && second === '-') throw new LitmPackError('invalid_input', 'Only one of the two runs can come from stdin');
      const text = await readInput(file);
      let report: string;
      if (second === undefined && flags.golden !== true && isSinglePack(text)) {
        report = renderPackReport(JSON.parse(text) as unknown);
      } else {
        const labelA = file === '-' ? 'stdin' : basename(file);
        const runA = readPackRun(text, labelA);
        if (second === undefined) {
          report = renderGoldenSetReport(runA, undefined, { labels: [labelA] });
        } else {
          const labelB = second === '-' ? 'stdin' : basename(second);
          const runB = readPackRun(await readInput(second), labelB);
          // two files with the same name (run1/golden.jsonl, run2/golden.jsonl) still need two labels
          const labels: [string, string] = labelA === labelB ? [file, second] : [labelA, labelB];
          report = renderGoldenSetReport(runA, runB, { labels });
        }
      }
      if (flags.output === undefined) {
        stdout().write(report);
        return;
      }
      try {
        await writeFile(flags.output, report, 'utf8');
      } catch (error) {
        throw new LitmPackError(
          'io_error',
          `Cannot write ${flags.output}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          { cause: error },
        );
      }
      stdout().write(`Wrote ${flags.output} (${Buffer.byteLength(report)} bytes)\n`);
    });
}
