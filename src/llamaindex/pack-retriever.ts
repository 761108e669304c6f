import { randomUUID } from 'node:crypto';
import { Settings } from '@llamaindex/core/global';
import type { QueryBundle } from '@llamaindex/core/query-engine';
import { BaseRetriever } from '@llamaindex/core/retriever';
import type { NodeWithScore } from '@llamaindex/core/schema';
import { extractText } from '@llamaindex/core/utils';
import type { Candidate, Pack } from '../core/schemas.js';
import { assembleBriefing } from '../pipeline/briefing.js';
import {
  briefingRequest,
  bundleRequest,
  caveatsToAppend,
  parseQuery,
  type LitmDocumentMetadata,
  type ParsedRetrieverOptions,
} from '../adapters/packing.js';
import { assembleBundle } from '../pipeline/bundle.js';
import { packToNodes } from './nodes.js';

/** The nodes of one retrieval and the pack they come from (`nodes[i]` ↔ `pack.items[i]`). */
export interface NodesWithCitations<M extends LitmDocumentMetadata = LitmDocumentMetadata> {
  nodes: NodeWithScore<M>[];
  pack: Pack;
}

/**
 * Shared body of the LlamaIndex `BundleRetriever` and `BriefingPackRetriever`: search, pack, nodes in
 * context order. Holds only the parsed options: every call builds its own candidates, pack and nodes.
 */
export abstract class PackRetriever extends BaseRetriever {
  protected abstract readonly packOptions: ParsedRetrieverOptions;

  async _retrieve(params: QueryBundle): Promise<NodeWithScore[]> {
    return (await this.retrieveAndPack(extractText(params.query))).nodes;
  }

  /**
   * Like `retrieve`, and also returns the pack. Dispatches the same `retrieve-start`/`retrieve-end`
   * events as `retrieve`.
   */
  async retrieveWithCitations(query: string, options: { signal?: AbortSignal } = {}): Promise<NodesWithCitations> {
    // Mirrors BaseRetriever.retrieve, which returns only the nodes.
    const callbacks = Settings.callbackManager;
    const id = randomUUID();
    const queryBundle = { query };
    callbacks.dispatchEvent('retrieve-start', { id, query: queryBundle });
    const result = await this.retrieveAndPack(query, options.signal);
    callbacks.dispatchEvent('retrieve-end', { id, query: queryBundle, nodes: result.nodes });
    return result;
  }

  private async retrieveAndPack(query: string, signal?: AbortSignal): Promise<NodesWithCitations> {
    const options = this.packOptions;
    let pack: Pack;
    let candidates: Candidate[];
    if (options.kind === 'briefing') {
      // One path for every surface: pins, clusters, scope, tiers, rerank and sentence selection are assembleBriefing's.
      ({ pack, candidates } = await assembleBriefing(briefingRequest(options, query, signal)));
    } else {
      ({ pack, candidates } = await assembleBundle(bundleRequest(options, parseQuery(query), signal)));
    }
    const includeCaveats = options.kind === 'briefing' && options.includeCaveats;
    const nodes = packToNodes(
      pack,
      candidates,
      (index) => ({
        id: undefined,
        metadata: candidates[index]?.metadata,
        relationships: undefined,
        excludedLlmMetadataKeys: [],
        excludedEmbedMetadataKeys: [],
      }),
      caveatsToAppend(pack, includeCaveats),
    );
    return { nodes, pack };
  }
}
