import { stderr, stdout } from '../io.js';
import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import { count } from '../terminal.js';
import { DEFAULT_STORE, integer } from '../options.js';
import { qdrantTarget, storeFile } from '../stores.js';

interface CopyFlags {
  from: string;
  to: string;
  batchSize?: number;
  quiet?: boolean;
}

export function registerCopy(program: Command): void {
  program
    .command('copy')
    .description(
      'copy an embedded store into a Qdrant collection: chunks, payloads, token counts, ACLs and vectors as stored (no re-reading, no re-embedding); safe to run again',
    )
    .option('--from <store>', 'the store folder (or its store.json)', DEFAULT_STORE)
    .requiredOption('--to <qdrant>', 'the collection, qdrant://host:port/collection (QDRANT_API_KEY for the key)')
    .option('--batch-size <n>', 'chunks per request', integer('--batch-size', { min: 1, max: 10_000 }))
    .option('--quiet', 'no progress bar')
    .action(async (flags: CopyFlags) => {
      const to = qdrantTarget(flags.to, '--to');
      if (to === null)
        throw new LitmPackError('invalid_input', `--to must be a Qdrant collection, e.g. qdrant://localhost:6333/docs; got "${flags.to}"`);
      const from = await storeFile(flags.from);
      const { copyToQdrant } = await import('../../qdrant/index.js');
      const bar =
        flags.quiet !== true && stderr().isTTY
          ? new SingleBar({ format: '{phase} [{bar}] {value}/{total}', stream: stderr() }, Presets.shades_classic)
          : null;
      let phase = '';
      try {
        const result = await copyToQdrant({
          from,
          to,
          ...(flags.batchSize === undefined ? {} : { batchSize: flags.batchSize }),
          onProgress: (progress) => {
            if (bar === null) return;
            const label = progress.phase === 'copy' ? 'copy chunks' : 'check sources';
            if (label !== phase) {
              if (phase !== '') bar.stop();
              phase = label;
              bar.start(progress.total, progress.done, { phase });
            } else {
              bar.update(progress.done, { phase });
            }
          },
        });
        bar?.stop();
        stdout().write(
          `Copied ${count(result.chunks, 'chunk')} of ${count(result.sources, 'source')} from ${from} to ${flags.to}: ` +
            `${result.written} written, ${result.unchanged} already there, ${result.removed} no longer in the store removed.\n`,
        );
      } finally {
        bar?.stop();
      }
    });
}
