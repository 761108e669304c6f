import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import { GET_CHUNKS_MAX_LIMIT } from '../../retrieve/store-requests.js';
import type { DeleteSourcesResult, Store } from '../../retrieve/types.js';
import { storeOption } from '../options.js';
import { openStore, storeFile } from '../stores.js';
import { count } from './ingest.js';
import { visibleLine } from '../terminal.js';

/** Removes sources from a store and, for the embedded store, saves it. */
export async function removeSources(store: Store, spec: string, sourceIds: string[]): Promise<DeleteSourcesResult> {
  if (typeof store.deleteSources !== 'function') {
    throw new LitmPackError('unsupported', 'This store cannot delete sources');
  }
  const result = await store.deleteSources(sourceIds);
  if (store instanceof MemoryHybridStore && result.sources > 0) await store.save(await storeFile(spec));
  return result;
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
    const store = await openStore(flags.store);
    const result = await removeSources(store, flags.store, sources);
    const unique = new Set(sources).size;
    process.stdout.write(
      visibleLine(`Removed ${result.sources} of ${count(unique, 'source')} (${count(result.chunks, 'chunk')}) from ${flags.store}` +
        `${result.sources < unique ? `; ${unique - result.sources} not in the store` : ''}.`,
      ) + '\n',
    );
  });
}
