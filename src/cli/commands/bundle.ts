import type { Command } from 'commander';
import type { Store } from '../../store/types.js';
import { DEFAULT_LIMITS } from '../../service/limits.js';
import { requestSchemas } from '../../service/requests.js';
import { serveBundle } from '../../service/service.js';
import { noteEmptyForAccess } from '../access-note.js';
import { printPack } from '../io.js';
import { packOptions, packingParameters, retrievalParameters, retrieveOptions, serviceContext, serviceRequest, type RetrieveFlags } from '../options.js';

const schemas = requestSchemas(DEFAULT_LIMITS);

/** The service's bundle for `query` with the flags' parameters (from `store` when given, else the flags' store). */
export async function bundleFromFlags(query: string, flags: RetrieveFlags, store?: Store) {
  // Parsed before the store is opened: a bad flag never costs a load.
  const request = serviceRequest(schemas.bundle, { query, ...retrievalParameters(flags), ...packingParameters(flags) });
  const context = await serviceContext(flags, store);
  const pack = await serveBundle(request, context);
  await noteEmptyForAccess(pack, context, query);
  return pack;
}

export function registerBundle(program: Command): void {
  retrieveOptions(packOptions(program.command('bundle').description('retrieve and print a LITM bundle with citations').argument('<query>'), 'bundle')).action(
    async (query: string, flags: RetrieveFlags) => {
      printPack(await bundleFromFlags(query, flags), flags.json === true);
    },
  );
}
