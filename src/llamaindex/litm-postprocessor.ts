import type { MessageContent } from '@llamaindex/core/llms';
import type { BaseNodePostprocessor } from '@llamaindex/core/postprocessor';
import type { NodeWithScore } from '@llamaindex/core/schema';
import { extractText } from '@llamaindex/core/utils';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import type { Pack } from '../core/schemas.js';
import {
  PACKER_ALIASES,
  PackerOptionsSchema,
  parseQuery,
  type LitmItemMetadata,
  type PackerOptions,
  type ParsedPackerOptions,
} from '../adapters/packing.js';
import { packCandidates } from '../pipeline/bundle.js';
import { nodesToCandidates, ownNodeFields, packToNodes } from './nodes.js';

export type LitmPostprocessorOptions = PackerOptions;

/**
 * A node postprocessor for any LlamaIndex query engine: dedupes, fits the token budget, puts the nodes in
 * Lost-in-the-Middle order and attaches `metadata.citation` / `metadata.litm`. Returns new nodes; the
 * input nodes are not modified.
 *
 * Ids: `metadata.id` ?? `node.id_`; sources: `metadata.source` ?? `metadata.sourceId` ?? the node's SOURCE
 * relationship; scores: `NodeWithScore.score` ?? `metadata.score` ?? `metadata.relevanceScore`. When any
 * node has no score, all get synthetic descending scores from their incoming order (1, …, 1/n), and the
 * returned nodes carry those.
 *
 * @example
 * ```typescript
 * const engine = new RetrieverQueryEngine(index.asRetriever({ similarityTopK: 20 }), undefined, [
 *   new LitmPostprocessor({ maxTokens: 1500 }),
 * ]);
 * ```
 */
export class LitmPostprocessor implements BaseNodePostprocessor {
  private readonly options: ParsedPackerOptions;

  constructor(options: LitmPostprocessorOptions) {
    this.options = parseOrThrow(PackerOptionsSchema, options, 'LitmPostprocessor options', { aliases: PACKER_ALIASES });
  }

  async postprocessNodes(nodes: NodeWithScore[], query?: MessageContent): Promise<NodeWithScore[]> {
    return (await this.postprocessWithCitations(nodes, query)).nodes;
  }

  /** Like `postprocessNodes`, and also returns the pack (`nodes[i]` ↔ `pack.items[i]`). */
  async postprocessWithCitations(
    nodes: readonly NodeWithScore[],
    query?: MessageContent,
  ): Promise<{ nodes: NodeWithScore<LitmItemMetadata>[]; pack: Pack }> {
    if (query === undefined) {
      throw new LitmPackError(
        'invalid_input',
        'LitmPostprocessor needs the query to pack nodes; pass it as the second argument of postprocessNodes',
      );
    }
    const text = parseQuery(extractText(query));
    const candidates = nodesToCandidates(nodes);
    const pack = await packCandidates({ ...this.options, query: text, candidates });
    const packed = packToNodes(pack, candidates, (index) => ownNodeFields(nodes[index]?.node), null);
    // Without a caveats block every node is an item (with its citation).
    return { nodes: packed as NodeWithScore<LitmItemMetadata>[], pack };
  }
}
