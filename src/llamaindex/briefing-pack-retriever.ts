import { parseOrThrow } from '../base/errors.js';
import {
  RETRIEVER_ALIASES,
  BriefingRetrieverOptionsSchema,
  type BriefingRetrieverOptions,
  type ParsedRetrieverOptions,
} from '../adapters/packing.js';
import { PackRetriever } from './pack-retriever.js';

/**
 * A LlamaIndex retriever over a litm-pack `Store` that returns a session briefing through `assembleBriefing`
 * (pins fetched directly, clusters, scope, tiers, and with a prompt `compress`, `rerank` and `diversity`):
 * grounding first, evidence in the middle, and a final caveats node (`metadata.litm.role === 'caveats'`, no citation, no score) unless
 * `includeCaveats: false`.
 *
 * @example
 * ```typescript
 * const retriever = new BriefingPackRetriever({ store, maxTokens: 3000, pins: ['handbook.md'], clusters: ['billing'] });
 * const nodes = await retriever.retrieve('What do we know about ACME?');
 * // Pins and clusters alone, no prompt: a blank query.
 * const briefing = await retriever.retrieve('');
 * ```
 */
export class BriefingPackRetriever extends PackRetriever {
  protected readonly packOptions: ParsedRetrieverOptions;

  constructor(options: BriefingRetrieverOptions) {
    const parsed = parseOrThrow(BriefingRetrieverOptionsSchema, options, 'BriefingPackRetriever options', { aliases: RETRIEVER_ALIASES });
    super();
    this.packOptions = { kind: 'briefing', ...parsed };
  }
}
