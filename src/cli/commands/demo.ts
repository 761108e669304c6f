import type { Command } from 'commander';
import { fileURLToPath } from 'node:url';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import { printPack } from '../io.js';
import { packOptions, type PackFlags } from '../options.js';
import { retrieveAndPackFrom } from './bundle.js';
import { addWithProgress, readForIngest } from './ingest.js';

const DEMO_QUESTION = 'Why should the best passage go first and the second best last in a long context?';

export function registerDemo(program: Command): void {
  packOptions(program.command('demo').description('ingest the bundled example corpus into an in-memory store and print a bundle'), { budget: 700 })
    .option('--question <text>', 'the question to pack for', DEMO_QUESTION)
    .action(async (flags: PackFlags & { question: string }) => {
      const corpus = fileURLToPath(new URL('../../../examples/corpus/', import.meta.url));
      // The store lives in memory only: nothing is written, so an interrupted demo leaves nothing behind.
      const store = new MemoryHybridStore();
      const { docs } = await readForIngest([corpus], { base: corpus });
      const counts = await addWithProgress(store, docs, true);
      process.stdout.write(`Ingested ${docs.length} files into a store in memory: ${counts}.\n\nQuestion: ${flags.question}\n\n`);
      printPack(await retrieveAndPackFrom(store, flags.question, { ...flags, kind: 'bundle', store: '', mode: 'hybrid', limit: 20 }), false);
    });
}
