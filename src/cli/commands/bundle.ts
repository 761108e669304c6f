import { Option, type Command } from 'commander';
import { invalidInput } from '../../base/errors.js';
import { toAnthropicSearchResults } from '../../llm/anthropic.js';
import { GRANULARITIES, type Granularity } from '../../llm/units.js';
import type { Store } from '../../store/types.js';
import { DEFAULT_LIMITS } from '../../service/limits.js';
import { requestSchemas } from '../../service/requests.js';
import { serveBundle } from '../../service/service.js';
import { noteEmptyForAccess } from '../access-note.js';
import { printPack, stdout } from '../io.js';
import {
  packOptions,
  packingParameters,
  retrievalParameters,
  retrieveOptions,
  serviceContext,
  serviceRequest,
  type RetrieveFlags,
} from '../options.js';

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

/** What `--as` prints: the pack (context and citations, or `--json`), or Anthropic `search_result` blocks. */
const AS = ['pack', 'anthropic'] as const;

export function registerBundle(program: Command): void {
  retrieveOptions(
    packOptions(program.command('bundle').description('retrieve and print a LITM bundle with citations').argument('<query>'), 'bundle'),
  )
    .addOption(
      new Option(
        '--as <shape>',
        'print the pack, or anthropic: a JSON array of Messages API search_result blocks (one per item, citations on)',
      ).choices(AS),
    )
    .addOption(
      new Option(
        '--granularity <unit>',
        "with --as anthropic: one text block per sentence, line, cue or item (default: the locator's unit)",
      ).choices(GRANULARITIES),
    )
    .action(async (query: string, flags: RetrieveFlags & { as?: (typeof AS)[number]; granularity?: Granularity }) => {
      const anthropic = flags.as === 'anthropic';
      // Checked before the store is opened: a bad flag never costs a load.
      if (anthropic && flags.json === true)
        throw invalidInput('--json does not go with --as anthropic (which prints JSON already)', ['json']);
      if (!anthropic && flags.granularity !== undefined) throw invalidInput('--granularity needs --as anthropic', ['granularity']);
      const pack = await bundleFromFlags(query, flags);
      if (!anthropic) {
        printPack(pack, flags.json === true);
        return;
      }
      const results = toAnthropicSearchResults(pack, flags.granularity === undefined ? {} : { granularity: flags.granularity });
      stdout().write(`${JSON.stringify(results, null, 2)}\n`);
    });
}
