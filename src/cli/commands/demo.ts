import type { Command } from 'commander';
import { join } from 'node:path';
import { LitmPackError } from '../../base/errors.js';
import type { Pack } from '../../core/schemas.js';
import { MemoryHybridStore } from '../../memory/memory-hybrid-store.js';
import { packageRoot } from '../../service/version.js';
import { printPack, stdout } from '../io.js';
import { packOptions, type RetrieveFlags } from '../options.js';
import { bundleFromFlags } from './bundle.js';
import { addedLine, applyWithProgress, readForIngest } from './ingest.js';

const DEMO_QUESTION = 'Why should the best passage go first and the second best last in a long context?';
/** The demo's own request: a budget that shows a whole bundle on one screen, from a pool of the corpus's best 20. */
const DEMO_BUDGET = '700';
const DEMO_POOL = '20';

export function registerDemo(program: Command): void {
  packOptions(program.command('demo').description('ingest the bundled example corpus into an in-memory store and print a bundle'), 'bundle')
    .option('--question <text>', 'the question to pack for', DEMO_QUESTION)
    .action(async (flags: RetrieveFlags & { question: string }) => {
      // Found from the package root, not from this module's URL: the built CLI is bundled, so where this code
      // lands under dist/ is the bundler's choice.
      const root = packageRoot();
      if (root === null)
        throw new LitmPackError(
          'invalid_input',
          'The example corpus of the demo was not found (no litm-pack package.json above the running code): run the demo from an installed litm-pack (npx litm-pack demo) or from a built checkout (npm run build).',
        );
      const corpus = join(root, 'examples', 'corpus');
      // The store lives in memory only: nothing is written, so an interrupted demo leaves nothing behind.
      const store = new MemoryHybridStore();
      const read = await readForIngest([corpus], { base: corpus });
      const { added } = await applyWithProgress(store, read, { quiet: true });
      stdout().write(
        `Ingested ${read.documents.length} files into a store in memory: ${addedLine(added)}.\n\nQuestion: ${flags.question}\n\n`,
      );
      const pack = await bundleFromFlags(flags.question, { ...flags, budget: flags.budget ?? DEMO_BUDGET, limit: DEMO_POOL }, store);
      printPack(pack, false);
      stdout().write(`\n${howToRead(pack)}\n`);
    });
}

/**
 * What a first reader of the demo needs to read its pack: which relevance rank sits at which position (the pack
 * puts the best first and the second best last), and why the confidence is `unknown` when it is.
 */
function howToRead(pack: Pack): string {
  const byRef = [...pack.items].sort((a, b) => a.ref - b.ref);
  const width = String(Math.max(byRef.length, 1)).length + 2;
  const cell = (text: string) => text.padStart(width);
  const lines = [
    'How to read it:',
    `  position ${byRef.map((item) => cell(`[${item.ref}]`)).join(' ')}`,
    `  rank     ${byRef.map((item) => cell(String(item.rank))).join(' ')}`,
    '  The best passage (rank 1) goes first and the second best last; the rest alternate inwards, weakest in the',
    '  middle, where models attend least ("Lost in the Middle").',
  ];
  if (pack.coverage.confidence === 'unknown' && !pack.coverage.denseAvailable) {
    lines.push(
      '  Confidence unknown: this store has no embeddings, so the search ran on BM25 (words) alone and no passage has a',
      '  dense similarity to calibrate against; it says nothing about how good the passages are. With embeddings',
      '  (litm-pack ingest and bundle with --embeddings URL --embed-model NAME) it is strong, partial or weak.',
    );
  }
  return lines.join('\n');
}
