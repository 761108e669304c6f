import type { BaseRetrieverInput } from '@langchain/core/retrievers';
import {
  BundleRetrieverOptionsSchema,
  type BundleRetrieverOptions,
  type ParsedRetrieverOptions,
  type LitmItemMetadata,
} from '../adapters/packing.js';
import { PackRetriever, parseRetrieverFields } from './pack-retriever.js';

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
 * Bad options throw `LitmPackError` (`invalid_input`) here, not at the first call; `k`/`topK` are answered
 * with `limit` (the candidate pool: the token budget decides how many documents come back).
 */
export class BundleRetriever extends PackRetriever<LitmItemMetadata> {
  static override lc_name(): string {
    return 'BundleRetriever';
  }

  protected readonly packOptions: ParsedRetrieverOptions;

  constructor(fields: BundleRetrieverFields) {
    const { base, own } = parseRetrieverFields(BundleRetrieverOptionsSchema, fields, 'BundleRetriever options');
    super(base);
    this.packOptions = { kind: 'bundle', ...own };
  }
}
