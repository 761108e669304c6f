import type { Callbacks } from '@langchain/core/callbacks/manager';
import type { Document, DocumentInterface } from '@langchain/core/documents';
import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import { parseOrThrow } from '../base/errors.js';
import type { Pack } from '../core/schemas.js';
import { packToDocuments } from './documents.js';
import {
  type LitmItemMetadata,
  PACKER_ALIASES,
  PackerOptionsSchema,
  chunksToCandidates,
  parseQuery,
  type PackerOptions,
  type ParsedPackerOptions,
} from '../adapters/packing.js';
import { packCandidates } from '../pipeline/bundle.js';
import { childRunHooks } from './tracing.js';

export type LitmCompressorOptions = PackerOptions;

/** Documents from any source as packer input: text plus the framework's own id. */
export function documentsToCandidates(documents: readonly DocumentInterface[]) {
  return chunksToCandidates(documents.map((doc) => ({ text: doc.pageContent, id: doc.id, metadata: { ...(doc.metadata ?? {}) } })));
}

/**
 * Turns any retriever's documents into a pack: deduplicated, fitted to the token budget, in
 * Lost-in-the-Middle order, each with `metadata.citation` and `metadata.litm`. Input documents are
 * not modified.
 *
 * Ids, sources and scores are read from metadata (see `chunksToCandidates`): id = `metadata.id` ??
 * `doc.id` ?? a hash of the text; source = `metadata.source` ?? `metadata.sourceId`; score =
 * `metadata.score` ?? `metadata.relevanceScore`. When any document has no score, all of them get synthetic
 * descending scores from their incoming order (1, …, 1/n), so the retriever's order is the rank order.
 *
 * @example
 * ```typescript
 * const retriever = new ContextualCompressionRetriever({
 *   baseCompressor: new LitmCompressor({ maxTokens: 1500 }),
 *   baseRetriever: vectorStore.asRetriever(20),
 * });
 * ```
 * Not serialisable: LangChain's `BaseDocumentCompressor` is not a `Serializable` (no `toJSON`/`load`), and
 * the options may hold a tokenizer object that JSON cannot carry.
 */
export class LitmCompressor extends BaseDocumentCompressor {
  private readonly options: ParsedPackerOptions;

  constructor(options: LitmCompressorOptions) {
    super();
    this.options = parseOrThrow(PackerOptionsSchema, options, 'LitmCompressor options', { aliases: PACKER_ALIASES });
  }

  async compressDocuments(documents: DocumentInterface[], query: string, callbacks?: Callbacks): Promise<Document<LitmItemMetadata>[]> {
    return (await this.compressWithCitations(documents, query, callbacks)).documents;
  }

  /** Like `compressDocuments`, and also returns the pack (`documents[i]` ↔ `pack.items[i]`). */
  async compressWithCitations(
    documents: readonly DocumentInterface[],
    query: string,
    callbacks?: Callbacks,
  ): Promise<{ documents: Document<LitmItemMetadata>[]; pack: Pack }> {
    const text = parseQuery(query);
    const candidates = documentsToCandidates(documents);
    const pack = await packCandidates({
      ...this.options,
      query: text,
      candidates,
      hooks: { pack: childRunHooks({ pack: callbacks }).pack },
    });
    const packed = packToDocuments(pack, candidates, (index) => ({ metadata: documents[index]?.metadata, id: documents[index]?.id }), null);
    return { documents: packed, pack };
  }
}
