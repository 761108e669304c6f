import type { Command } from 'commander';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printPack } from '../io.js';
import { packOptions, type PackFlags } from '../options.js';
import { retrieveAndPack } from './bundle.js';
import { ingest } from './ingest.js';

const DEMO_QUESTION = 'Why should the best passage go first and the second best last in a long context?';

export function registerDemo(program: Command): void {
  packOptions(program.command('demo').description('ingest the bundled example corpus into a temporary store and print a bundle'), { budget: 700 })
    .option('--question <text>', 'the question to pack for', DEMO_QUESTION)
    .action(async (flags: PackFlags & { question: string }) => {
      const corpus = fileURLToPath(new URL('../../../examples/corpus/', import.meta.url));
      const dir = await mkdtemp(join(tmpdir(), 'litm-demo-'));
      try {
        const cwd = process.cwd();
        process.chdir(corpus);
        try {
          process.stdout.write(`${await ingest(['.'], dir, true)}\n\nQuestion: ${flags.question}\n\n`);
        } finally {
          process.chdir(cwd);
        }
        printPack(await retrieveAndPack(flags.question, { ...flags, kind: 'bundle', store: dir, mode: 'hybrid', limit: 20 }), false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
}
