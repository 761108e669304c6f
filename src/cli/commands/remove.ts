import { stdout } from '../io.js';
import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import type { DeleteSourcesResult, Store } from '../../store/types.js';
import { storeOption } from '../options.js';
import { existingStoreFile, openQdrant, updateStore } from '../stores.js';
import { count, visibleLine } from '../terminal.js';

/** Removes sources from a store: a Qdrant collection directly, the embedded store under its file's lock. */
async function removeSources(spec: string, sourceIds: string[]): Promise<DeleteSourcesResult> {
  const remove = async (store: Store) => {
    if (typeof store.deleteSources !== 'function') throw new LitmPackError('unsupported', 'This store cannot delete sources');
    return store.deleteSources(sourceIds);
  };
  const qdrant = await openQdrant(spec);
  if (qdrant !== null) return remove(qdrant);
  // The store must exist: removing from nothing is a mistake in the path, not an empty store to create.
  return updateStore(await existingStoreFile(spec), remove);
}

export function registerRemove(program: Command): void {
  storeOption(
    program
      .command('remove')
      .description('delete sources (every chunk of them) from the store')
      .argument('<sources...>', 'source ids as ingested (e.g. docs/policy.md)'),
  ).action(async (sources: string[], flags: { store: string }) => {
    const result = await removeSources(flags.store, sources);
    const unique = new Set(sources).size;
    stdout().write(
      visibleLine(
        `Removed ${result.sources} of ${count(unique, 'source')} (${count(result.chunks, 'chunk')}) from ${flags.store}` +
          `${result.sources < unique ? `; ${unique - result.sources} not in the store` : ''}.`,
      ) + '\n',
    );
  });
}
