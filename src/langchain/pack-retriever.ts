import { CallbackManager, parseCallbackConfigArg, type CallbackManagerForRetrieverRun } from '@langchain/core/callbacks/manager';
import type { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { ensureConfig, type RunnableConfig } from '@langchain/core/runnables';
import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import type { Candidate, Pack } from '../core/schemas.js';
import { assembleBundle } from '../pipeline/bundle.js';
import { packToDocuments } from './documents.js';
import {
  type LitmDocumentMetadata,
  RETRIEVER_ALIASES,
  briefingRequest,
  bundleRequest,
  caveatsToAppend,
  parseQuery,
  type ParsedRetrieverOptions,
} from '../adapters/packing.js';
import { briefingAsChildRun, childRunHooks } from './tracing.js';

/** The documents of one retrieval and the pack they come from (`documents[i]` ↔ `pack.items[i]`). */
export interface RetrievalWithCitations<M extends LitmDocumentMetadata = LitmDocumentMetadata> {
  documents: Document<M>[];
  pack: Pack;
}

// LangChain's own retriever fields: passed to BaseRetriever, and known to the option check so that a
// misspelt one ("tag") is answered with the field it probably meant.
const LANGCHAIN_FIELDS = ['callbacks', 'tags', 'metadata', 'verbose'] as const;
const langchainShape = Object.fromEntries(LANGCHAIN_FIELDS.map((key) => [key, z.unknown().optional()]));

/**
 * Validates a retriever's fields strictly with `schema` (ours plus LangChain's own) and splits them:
 * LangChain's go to `BaseRetriever`, ours are returned parsed.
 */
export function parseRetrieverFields<S extends z.ZodObject>(
  schema: S,
  fields: unknown,
  what: string,
): { base: BaseRetrieverInput; own: z.output<S> } {
  const parsed = parseOrThrow(schema.extend(langchainShape), fields, what, { aliases: RETRIEVER_ALIASES }) as Record<string, unknown>;
  const base: Record<string, unknown> = {};
  const own: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if ((LANGCHAIN_FIELDS as readonly string[]).includes(key)) {
      if (value !== undefined) base[key] = value;
    } else {
      own[key] = value;
    }
  }
  return { base, own: own as z.output<S> };
}

/**
 * Shared body of `BundleRetriever` and `BriefingPackRetriever`: search (child run `LitmSearch`), pack
 * (child run `LitmPack`, which also dispatches the `litm_pack_summary` event), then documents in context order.
 * Holds only the parsed options: every call builds its own candidates, pack and documents.
 *
 * Not serialisable: `lc_serializable` stays false and `toJSON()` gives LangChain's `not_implemented` stub,
 * because the retriever holds a live store (an open index or client) that no JSON can rebuild.
 */
export abstract class PackRetriever<M extends LitmDocumentMetadata = LitmDocumentMetadata> extends BaseRetriever<M> {
  lc_namespace = ['litm_pack', 'retrievers'];

  protected abstract readonly packOptions: ParsedRetrieverOptions;

  override async _getRelevantDocuments(query: string, runManager?: CallbackManagerForRetrieverRun): Promise<Document<M>[]> {
    return (await this.retrieveAndPack(query, runManager)).documents;
  }

  /**
   * Like `invoke`, and also returns the pack (citations, coverage, budget, dropped). Traced as the same
   * retriever run as `invoke`.
   */
  async retrieveWithCitations(query: string, config?: RunnableConfig): Promise<RetrievalWithCitations<M>> {
    // Mirrors BaseRetriever.invoke, which returns only the documents.
    const parsedConfig = ensureConfig(parseCallbackConfigArg(config));
    const callbackManager = CallbackManager.configure(
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
  ): Promise<RetrievalWithCitations<M>> {
    const options = this.packOptions;
    let pack: Pack;
    let candidates: Candidate[];
    if (options.kind === 'briefing') {
      // One path for every surface: pins, clusters, scope, tiers, rerank and sentence selection are assembleBriefing's.
      ({ pack, candidates } = await briefingAsChildRun(briefingRequest(options, query, signal), runManager?.getChild('litm_briefing')));
    } else {
      ({ pack, candidates } = await assembleBundle({
        ...bundleRequest(options, parseQuery(query), signal),
        hooks: childRunHooks({ search: runManager?.getChild('litm_search'), pack: runManager?.getChild('litm_pack') }),
      }));
    }
    const includeCaveats = options.kind === 'briefing' && options.includeCaveats;
    const documents = packToDocuments(
      pack,
      candidates,
      (index) => ({ metadata: candidates[index]?.metadata, id: candidates[index]?.id }),
      caveatsToAppend(pack, includeCaveats),
    );
    // Bundles never append the caveats document, so their documents are all items (M = LitmItemMetadata).
    return { documents: documents as Document<M>[], pack };
  }
}
