import type { BaseRetrieverInput } from '@langchain/core/retrievers';
import { parseOrThrow } from '../core/errors.js';
import { BundleRetrieverOptionsSchema, type BundleRetrieverOptions, type ParsedRetrieverOptions } from '../adapters/packing.js';
import { PackRetriever, splitRetrieverFields } from './pack-retriever.js';

export type BundleRetrieverFields = BundleRetrieverOptions & BaseRetrieverInput;

/**
 * Retrieves from a litm-pack `Store` and returns a token-budgeted, deduplicated bundle in
 * Lost-in-the-Middle order (best first, second best last). Each document carries `metadata.citation`
 * and `metadata.litm` (`{ ref, rank, role, position, score }`).
 *
 * @example
 * ```typescript
 * const retriever = new BundleRetriever({ store, maxTokens: 2000 });
 * const docs = await retriever.invoke('How are refunds handled?');
 * const { documents, pack } = await retriever.retrieveWithCitations('How are refunds handled?');
 * ```
 * Bad options throw `LitmPackError` (`invalid_input`) here, not at the first call.
 */
export class BundleRetriever extends PackRetriever {
  static override lc_name(): string {
    return 'BundleRetriever';
  }

  protected readonly packOptions: ParsedRetrieverOptions;

  constructor(fields: BundleRetrieverFields) {
    const { base, own } = splitRetrieverFields(fields);
    const parsed = parseOrThrow(BundleRetrieverOptionsSchema, own, 'BundleRetriever options');
    super(base);
    this.packOptions = { kind: 'bundle', ...parsed };
  }
}
