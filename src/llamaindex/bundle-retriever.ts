import { parseOrThrow } from '../base/errors.js';
import {
  RETRIEVER_ALIASES,
  BundleRetrieverOptionsSchema,
  type BundleRetrieverOptions,
  type ParsedRetrieverOptions,
} from '../adapters/packing.js';
import { PackRetriever } from './pack-retriever.js';

/**
 * A LlamaIndex retriever over a litm-pack `Store` that returns a token-budgeted, deduplicated bundle in
 * Lost-in-the-Middle order: `NodeWithScore[]` (TextNodes with `metadata.citation` and `metadata.litm`,
 * score = item score) in context order.
 *
 * @example
 * ```typescript
 * const engine = new RetrieverQueryEngine(new BundleRetriever({ store, maxTokens: 2000 }));
 * const response = await engine.query({ query: 'How are refunds handled?' });
 * ```
 */
export class BundleRetriever extends PackRetriever {
  protected readonly packOptions: ParsedRetrieverOptions;

  constructor(options: BundleRetrieverOptions) {
    const parsed = parseOrThrow(BundleRetrieverOptionsSchema, options, 'BundleRetriever options', { aliases: RETRIEVER_ALIASES });
    super();
    this.packOptions = { kind: 'bundle', ...parsed };
  }
}
