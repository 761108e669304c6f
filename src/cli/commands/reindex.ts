import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import { CURRENT_INDEXED_TEXT } from '../../store/indexed-text.js';
import { stderr, stdout } from '../io.js';
import { embeddingsFrom, embeddingsOptions, storeOption, type EmbeddingsFlags } from '../options.js';
import { existingStoreFile, qdrantTarget, updateStore } from '../stores.js';
import { count } from '../terminal.js';

interface ReindexFlags extends EmbeddingsFlags {
  store: string;
  quiet?: boolean;
}

/**
 * Indexes an embedded store again with the current indexed-text recipe (`MemoryHybridStore.reindex` under the
 * file's lock): chunks, texts and citations stay; BM25 vectors are made again, and embeddings for chunks that had
 * them (so the model that made them must be given). A Qdrant collection is re-indexed into a new collection behind
 * its alias instead (`ingest --reindex --alias`).
 */
async function reindexStore(flags: ReindexFlags): Promise<string> {
  if (qdrantTarget(flags.store) !== null) {
    throw new LitmPackError(
      'unsupported',
      `reindex works on an embedded store file; a Qdrant collection is re-indexed into a new collection behind its alias: litm-pack ingest PATH... --store ${flags.store} --reindex --alias NAME`,
    );
  }
  const file = await existingStoreFile(flags.store);
  const embeddings = embeddingsFrom(flags);
  const bar =
    flags.quiet !== true && stderr().isTTY
      ? new SingleBar({ format: 'reindex [{bar}] {value}/{total} chunks', stream: stderr() }, Presets.shades_classic)
      : null;
  try {
    const { from, chunks } = await updateStore(
      file,
      async (store) => {
        const recipe = store.indexedText;
        if (recipe === CURRENT_INDEXED_TEXT) return { from: recipe, chunks: null };
        const done = await store.reindex({
          onProgress: (indexed, total) => {
            if (bar === null) return;
            if (indexed === 0 || bar.getTotal() !== total) bar.start(total, indexed);
            else bar.update(indexed);
          },
        });
        return { from: recipe, chunks: done.chunks };
      },
      { embeddings },
    );
    if (chunks === null) return `${flags.store} is indexed with "${CURRENT_INDEXED_TEXT}" already: nothing to do.`;
    return `Re-indexed ${count(chunks, 'chunk')} of ${flags.store} from "${from}" to "${CURRENT_INDEXED_TEXT}".`;
  } finally {
    bar?.stop();
  }
}

export function registerReindex(program: Command): void {
  embeddingsOptions(
    storeOption(
      program
        .command('reindex')
        .description(
          `index an embedded store again with the current indexed-text recipe ("${CURRENT_INDEXED_TEXT}": title and headings in front of each chunk's text); citations stay as they are`,
        )
        .option('--quiet', 'no progress bar'),
    ),
  ).action(async (flags: ReindexFlags) => {
    stdout().write(`${await reindexStore(flags)}\n`);
  });
}
