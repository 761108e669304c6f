/**
 * Every source id a store holds, for the store's owner (pruning, watching): the one place the three ways a store
 * may list them are tried, in order of cost: its index of sources (`listSources`, paged), the embedded store's
 * `sources()`, or a bounded scan of `getChunks` (refused past `GET_CHUNKS_MAX_LIMIT` chunks: a partial list
 * would prune sources that are still there).
 */
import { LitmPackError } from '../base/errors.js';
import { GET_CHUNKS_MAX_LIMIT } from './schemas.js';
import type { Store } from './types.js';

/** Sources asked for per page of `listSources`. */
const PAGE = 1000;

export async function storeSourceIds(store: Store, what: string, signal?: AbortSignal): Promise<string[]> {
  if (typeof store.listSources === 'function') {
    const ids: string[] = [];
    for (let after: string | undefined; ;) {
      const page = await store.listSources({ principals: 'all', limit: PAGE, ...(after === undefined ? {} : { after }), signal });
      for (const source of page.sources) ids.push(source.sourceId);
      if (page.next === undefined) return ids;
      after = page.next;
    }
  }
  const listing = store as Store & { sources?: () => readonly { sourceId: string }[] };
  if (typeof listing.sources === 'function') return listing.sources().map((source) => source.sourceId);
  if (typeof store.getChunks !== 'function') {
    throw new LitmPackError(
      'unsupported',
      `This store cannot list its sources, which ${what} needs (it has neither listSources nor getChunks)`,
    );
  }
  // The store's owner lists every source, whatever its ACL.
  const chunks = await store.getChunks({ filter: { must: [] }, principals: 'all', limit: GET_CHUNKS_MAX_LIMIT, signal });
  if (chunks.length >= GET_CHUNKS_MAX_LIMIT) {
    throw new LitmPackError(
      'too_large',
      `The store holds more than ${GET_CHUNKS_MAX_LIMIT} chunks, too many to list for ${what}; remove sources by name instead`,
    );
  }
  return [...new Set(chunks.map((chunk) => chunk.sourceId))];
}
