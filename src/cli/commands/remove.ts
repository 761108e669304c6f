import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import { GET_CHUNKS_MAX_LIMIT } from '../../retrieve/store-requests.js';
import type { DeleteSourcesResult, Store } from '../../retrieve/types.js';
import { storeOption } from '../options.js';
import { existingStoreFile, openQdrant, updateStore } from '../stores.js';
import { count } from './ingest.js';
import { visibleLine } from '../terminal.js';

/** Removes sources from a store: a Qdrant collection directly, the embedded store under its file's lock. */
export async function removeSources(spec: string, sourceIds: string[]): Promise<DeleteSourcesResult> {
  const remove = async (store: Store) => {
    if (typeof store.deleteSources !== 'function') throw new LitmPackError('unsupported', 'This store cannot delete sources');
    return store.deleteSources(sourceIds);
  };
  const qdrant = await openQdrant(spec);
  if (qdrant !== null) return remove(qdrant);
  // The store must exist: removing from nothing is a mistake in the path, not an empty store to create.
  return updateStore(await existingStoreFile(spec), remove);
}

/** Every source id in the store (the embedded store lists them; others are read through getChunks). */
export async function listSourceIds(store: Store): Promise<string[]> {
  if (store instanceof MemoryHybridStore) return store.sources().map((s) => s.sourceId);
  if (typeof store.getChunks !== 'function') throw new LitmPackError('unsupported', 'This store cannot list its sources');
  // The store's owner lists every source, whatever its ACL.
  const chunks = await store.getChunks({ filter: { must: [] }, principals: 'all', limit: GET_CHUNKS_MAX_LIMIT });
  if (chunks.length >= GET_CHUNKS_MAX_LIMIT) {
    throw new LitmPackError('too_large', `The store holds more than ${GET_CHUNKS_MAX_LIMIT} chunks; remove sources by name instead`);
  }
  return [...new Set(chunks.map((c) => c.sourceId))];
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
    process.stdout.write(
      visibleLine(`Removed ${result.sources} of ${count(unique, 'source')} (${count(result.chunks, 'chunk')}) from ${flags.store}` +
        `${result.sources < unique ? `; ${unique - result.sources} not in the store` : ''}.`,
      ) + '\n',
    );
  });
}
