// An empty pack because of access, told to the store's owner. The CLI reads anonymously unless told otherwise
// (documents without an ACL only), so a store ingested with --acl gives an empty pack, exit 0, with nothing to
// say why. The CLI is the store's owner on its own machine, so it may look past the ACL to say so; the HTTP API
// and MCP never do (a caller there must not learn that restricted text exists).
import type { Pack } from '../core/schemas.js';
import type { ServiceContext } from '../service/service.js';
import { warn } from './io.js';

/** The note for a pack that is empty for these principals while the store has matches others may read; else null. */
async function accessNote(pack: Pack, context: ServiceContext, query: string | undefined): Promise<string | null> {
  // Only when the store gave these principals nothing at all (a pool that was found and then cut is another story).
  if (pack.items.length > 0 || pack.dropped.length > 0 || context.principals === 'all' || query === undefined || query.trim() === '')
    return null;
  // One lexical probe of the full view: any chunk of these words is one the principals cannot read.
  const hidden = await context.store.search({ text: query, mode: 'lexical', limit: 1, principals: 'all' });
  if (hidden.length === 0) return null;
  const who = context.principals.length === 0 ? 'anonymously (documents without an ACL only)' : `as ${context.principals.join(', ')}`;
  return `the pack is empty: it was read ${who}, and the chunks that match have an ACL. Give --principals LIST (the readers their ACL names) or --all-principals (every chunk: the store owner's view).`;
}

/** Prints the note of `accessNote` on stderr, if any (the pack on stdout is unchanged). */
export async function noteEmptyForAccess(pack: Pack, context: ServiceContext, query: string | undefined): Promise<void> {
  const note = await accessNote(pack, context, query);
  if (note !== null) warn(`note: ${note}`);
}
