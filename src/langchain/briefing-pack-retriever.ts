import type { BaseRetrieverInput } from '@langchain/core/retrievers';
import {
  BriefingRetrieverOptionsSchema,
  type BriefingRetrieverOptions,
  type ParsedRetrieverOptions,
  type LitmDocumentMetadata,
} from '../adapters/packing.js';
import { PackRetriever, parseRetrieverFields } from './pack-retriever.js';

export type BriefingPackRetrieverFields = BriefingRetrieverOptions & BaseRetrieverInput;

/**
 * Returns a session briefing from a litm-pack `Store` through `assembleBriefing` (pins fetched directly,
 * clusters, scope, tiers, and with a prompt `compress`, `rerank` and `diversity`): grounding (pins, then the strongest items)
 * first, evidence in the middle, and a final caveats document (`metadata.litm.role === 'caveats'`, no
 * citation) with the computed coverage facts, unless `includeCaveats: false`.
 *
 * @example
 * ```typescript
 * const retriever = new BriefingPackRetriever({ store, maxTokens: 3000, pins: ['handbook.md'], clusters: ['billing'] });
 * const docs = await retriever.invoke('What do we know about ACME?');
 * // Pins and clusters alone, no prompt: a blank query.
 * const briefing = await retriever.invoke('');
 * ```
 */
export class BriefingPackRetriever extends PackRetriever<LitmDocumentMetadata> {
  static override lc_name(): string {
    return 'BriefingPackRetriever';
  }

  protected readonly packOptions: ParsedRetrieverOptions;

  constructor(fields: BriefingPackRetrieverFields) {
    const { base, own } = parseRetrieverFields(BriefingRetrieverOptionsSchema, fields, 'BriefingPackRetriever options');
    super(base);
    this.packOptions = { kind: 'briefing', ...own };
  }
}
