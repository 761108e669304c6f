import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LitmPackError } from '../../base/errors.js';
import { count } from '../ingest-files.js';
import { DEFAULT_STORE, integer } from '../options.js';
import { STORE_FILE } from '../stores.js';

interface CopyFlags {
  from: string;
  to: string;
  batchSize?: number;
  quiet?: boolean;
}

/** `qdrant://host:port/collection` (`qdrants://` for TLS), as `--store` takes it; the key from QDRANT_API_KEY. */
function qdrantTarget(spec: string): { url: string; collection: string; apiKey?: string } {
  const match = /^qdrant(s?):\/\/([^/]+)\/([^/?#]+)\/?$/.exec(spec);
  if (!match) throw new LitmPackError('invalid_input', `--to must be a Qdrant collection, e.g. qdrant://localhost:6333/docs; got "${spec}"`);
  const apiKey = process.env.QDRANT_API_KEY;
  return { url: `${match[1] === 's' ? 'https' : 'http'}://${match[2]}`, collection: decodeURIComponent(match[3]!), ...(apiKey ? { apiKey } : {}) };
}

/** The store file of `--from`: a store folder (its store.json) or the file itself. */
async function storeFile(from: string): Promise<string> {
  const isFolder = await stat(from).then((info) => info.isDirectory(), () => false);
  return isFolder ? join(from, STORE_FILE) : from;
}

export function registerCopy(program: Command): void {
  program
    .command('copy')
    .description('copy an embedded store into a Qdrant collection: chunks, payloads, token counts, ACLs and vectors as stored (no re-reading, no re-embedding); safe to run again')
    .option('--from <store>', 'the store folder (or its store.json)', DEFAULT_STORE)
    .requiredOption('--to <qdrant>', 'the collection, qdrant://host:port/collection (QDRANT_API_KEY for the key)')
    .option('--batch-size <n>', 'chunks per request', integer('--batch-size', { min: 1, max: 10_000 }))
    .option('--quiet', 'no progress bar')
    .action(async (flags: CopyFlags) => {
      const to = qdrantTarget(flags.to);
      const from = await storeFile(flags.from);
      const { copyToQdrant } = await import('../../qdrant/index.js');
      const bar = flags.quiet !== true && process.stderr.isTTY ? new SingleBar({ format: '{phase} [{bar}] {value}/{total}', stream: process.stderr }, Presets.shades_classic) : null;
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
        process.stdout.write(
          `Copied ${count(result.chunks, 'chunk')} of ${count(result.sources, 'source')} from ${from} to ${flags.to}: ` +
            `${result.written} written, ${result.unchanged} already there, ${result.removed} no longer in the store removed.\n`,
        );
      } finally {
        bar?.stop();
      }
    });
}
