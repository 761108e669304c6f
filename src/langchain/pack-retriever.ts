import {
  CallbackManager,
  parseCallbackConfigArg,
  type CallbackManagerForRetrieverRun,
} from '@langchain/core/callbacks/manager';
import type { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { ensureConfig, type RunnableConfig } from '@langchain/core/runnables';
import type { Candidate, Pack } from '../core/schemas.js';
import { packToDocuments, type LitmDocumentMetadata } from './documents.js';
import {
  briefingRequest,
  buildSearchRequest,
  caveatsToAppend,
  packForRetriever,
  parseQuery,
  type ParsedRetrieverOptions,
} from '../adapters/packing.js';
import { briefingAsChildRun, packAsChildRun, searchAsChildRun } from './tracing.js';

/** The documents of one retrieval and the pack they come from (`documents[i]` ↔ `pack.items[i]`). */
export interface RetrievalWithCitations {
  documents: Document<LitmDocumentMetadata>[];
  pack: Pack;
}

/** Splits LangChain's own retriever fields from ours (ours are validated strictly, theirs passed on). */
export function splitRetrieverFields(fields: unknown): { base: BaseRetrieverInput; own: unknown } {
  if (typeof fields !== 'object' || fields === null) return { base: {}, own: fields };
  const { callbacks, tags, metadata, verbose, ...own } = fields as BaseRetrieverInput & Record<string, unknown>;
  const base: BaseRetrieverInput = {};
  if (callbacks !== undefined) base.callbacks = callbacks;
  if (tags !== undefined) base.tags = tags;
  if (metadata !== undefined) base.metadata = metadata;
  if (verbose !== undefined) base.verbose = verbose;
  return { base, own };
}

/**
 * Shared body of `BundleRetriever` and `BriefingPackRetriever`: search (child run `LitmSearch`), pack
 * (child run `LitmPack`, which also dispatches the `litm_pack_summary` event), then documents in context order.
 * Holds only the parsed options: every call builds its own candidates, pack and documents.
 */
export abstract class PackRetriever extends BaseRetriever<LitmDocumentMetadata> {
  lc_namespace = ['litm_pack', 'retrievers'];

  protected abstract readonly packOptions: ParsedRetrieverOptions;

  override async _getRelevantDocuments(
    query: string,
    runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document<LitmDocumentMetadata>[]> {
    return (await this.retrieveAndPack(query, runManager)).documents;
  }

  /**
   * Like `invoke`, and also returns the pack (citations, coverage, budget, dropped). Traced as the same
   * retriever run as `invoke`.
   */
  async retrieveWithCitations(query: string, config?: RunnableConfig): Promise<RetrievalWithCitations> {
    // Mirrors BaseRetriever.invoke, which returns only the documents.
    const parsedConfig = ensureConfig(parseCallbackConfigArg(config));
    const callbackManager = await CallbackManager.configure(
      parsedConfig.callbacks,
      this.callbacks,
      parsedConfig.tags,
      this.tags,
      parsedConfig.metadata,
      this.metadata,
      { verbose: this.verbose },
    );
    const runManager = await callbackManager?.handleRetrieverStart(
      this.toJSON(),
      query,
      parsedConfig.runId,
      undefined,
      undefined,
      undefined,
      parsedConfig.runName,
    );
    try {
      const result = await this.retrieveAndPack(query, runManager, config?.signal);
      await runManager?.handleRetrieverEnd(result.documents);
      return result;
    } catch (error) {
      await runManager?.handleRetrieverError(error);
      throw error;
    }
  }

  private async retrieveAndPack(
    query: string,
    runManager: CallbackManagerForRetrieverRun | undefined,
    signal?: AbortSignal,
  ): Promise<RetrievalWithCitations> {
    const options = this.packOptions;
    let pack: Pack;
    let candidates: Candidate[];
    if (options.kind === 'briefing') {
      // One path for every surface: pins, clusters, scope and tiers are assembleBriefing's.
      ({ pack, candidates } = await briefingAsChildRun(briefingRequest(options, query, signal), runManager?.getChild('litm_briefing')));
    } else {
      const text = parseQuery(query);
      const request = buildSearchRequest(options, text);
      if (signal !== undefined) request.signal = signal;
      candidates = await searchAsChildRun(options.store, request, runManager?.getChild('litm_search'));
      pack = await packAsChildRun(text, candidates, (q, c) => packForRetriever(options, q, c), runManager?.getChild('litm_pack'));
    }
    const includeCaveats = options.kind === 'briefing' && options.includeCaveats;
    const documents = packToDocuments(
      pack,
      candidates,
      (index) => ({ metadata: candidates[index]?.metadata, id: candidates[index]?.id }),
      caveatsToAppend(pack, includeCaveats),
    );
    return { documents, pack };
  }
}
