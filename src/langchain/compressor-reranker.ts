import { Document, type DocumentInterface } from '@langchain/core/documents';
import type { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import { LitmPackError } from '../base/errors.js';
import type { Reranker, RerankOptions, RerankResult } from '../refine/rerank.js';

/** Where the adapter marks each document's position, so it is found again whatever the compressor returns. */
const INDEX_KEY = 'litmRerankIndex';

/**
 * A `Reranker` from a LangChain document compressor that scores documents in `metadata.relevanceScore`
 * (`CohereRerank` from `@langchain/cohere`, and compressors built like it). Documents the compressor does not
 * return (its `topN`) are not packed.
 *
 * @example
 * ```typescript
 * const reranker = new CompressorReranker(new CohereRerank({ model: 'rerank-v3.5', topN: 50 }));
 * const retriever = new BundleRetriever({ store, maxTokens: 2000, rerank: { reranker } });
 * ```
 */
export class CompressorReranker implements Reranker {
  constructor(readonly compressor: Pick<BaseDocumentCompressor, 'compressDocuments'>) {}

  async rerank(query: string, texts: readonly string[], _options: RerankOptions = {}): Promise<RerankResult[]> {
    const documents: DocumentInterface[] = texts.map(
      (text, index) => new Document({ pageContent: text, metadata: { [INDEX_KEY]: index } }),
    );
    const returned: DocumentInterface[] = await this.compressor.compressDocuments(documents, query);
    return returned.map((doc) => {
      const found = documents.indexOf(doc);
      const index: unknown = found >= 0 ? found : doc.metadata?.[INDEX_KEY];
      const score: unknown = doc.metadata?.relevanceScore;
      if (typeof index !== 'number' || typeof score !== 'number' || !Number.isFinite(score)) {
        throw new LitmPackError(
          'bad_response',
          'The document compressor returned a document without a numeric metadata.relevanceScore (or one it was not given)',
        );
      }
      return { index, score };
    });
  }
}
