/**
 * The LangChain.js pipeline a user would build for hybrid retrieval, used as the benchmarks' baseline:
 * `EnsembleRetriever` (weighted RRF, c = 60, equal weights) over `BM25Retriever` and a `MemoryVectorStore`
 * retriever with the same cached embeddings as our store.
 *
 * This file sits in bench/baselines/ so that `@langchain/community` resolves from bench/baselines/node_modules
 * (installed by bench/setup-baselines.sh); @langchain/core and @langchain/classic resolve from the root.
 */
import { EnsembleRetriever } from '@langchain/classic/retrievers/ensemble';
import { MemoryVectorStore } from '@langchain/classic/vectorstores/memory';
import { Document } from '@langchain/core/documents';
import { Embeddings } from '@langchain/core/embeddings';
import type { BaseRetriever } from '@langchain/core/retrievers';
import type { EmbeddingsLike } from '../../src/store/embeddings.js';

export { Document };

/** The part of @langchain/community's `BM25Retriever` used here. */
interface BM25RetrieverClass {
  fromDocuments(documents: Document[], options: { k: number }): BaseRetriever;
}

/**
 * Loads `BM25Retriever` from bench/baselines/node_modules. The specifier is not a literal so that typechecking
 * the repository does not need the baseline packages installed (CI typechecks without them).
 */
async function loadBM25Retriever(): Promise<BM25RetrieverClass> {
  const specifier = '@langchain/community/retrievers/bm25';
  try {
    const module = (await import(specifier)) as { BM25Retriever: BM25RetrieverClass };
    return module.BM25Retriever;
  } catch (error) {
    throw new Error(`${specifier} is not installed in bench/baselines: run bash bench/setup-baselines.sh`, { cause: error });
  }
}

/** Wraps any `EmbeddingsLike` as a LangChain `Embeddings` object. */
export class LangChainEmbeddings extends Embeddings {
  constructor(private readonly inner: EmbeddingsLike) {
    super({});
  }
  embedQuery(text: string): Promise<number[]> {
    return this.inner.embedQuery(text);
  }
  embedDocuments(texts: string[]): Promise<number[][]> {
    return this.inner.embedDocuments(texts);
  }
}

export interface LangChainBaseline {
  bm25: BaseRetriever;
  dense: BaseRetriever;
  ensemble: EnsembleRetriever;
  vectorStore: MemoryVectorStore;
}

export interface LangChainBaselineOptions {
  docs: { id: string; text: string; metadata?: Record<string, unknown> }[];
  embeddings: EmbeddingsLike;
  /** Results per arm (the ensemble returns the union, up to 2k). */
  k: number;
}

/** Builds the baseline the way LangChain's docs show it: fromDocuments on both arms, then an ensemble. */
export async function buildLangChainBaseline(options: LangChainBaselineOptions): Promise<LangChainBaseline> {
  const documents = options.docs.map((d) => new Document({ id: d.id, pageContent: d.text, metadata: { id: d.id, ...d.metadata } }));
  const BM25Retriever = await loadBM25Retriever();
  const bm25 = BM25Retriever.fromDocuments(documents, { k: options.k });
  const vectorStore = await MemoryVectorStore.fromDocuments(documents, new LangChainEmbeddings(options.embeddings));
  const dense = vectorStore.asRetriever({ k: options.k });
  const ensemble = new EnsembleRetriever({ retrievers: [bm25, dense], weights: [0.5, 0.5], c: 60 });
  return { bm25, dense, ensemble, vectorStore };
}

/**
 * LangChain Python's `LongContextReorder` rule (`_litm_reordering` in langchain_community.document_transformers),
 * reimplemented here because LangChain.js ships no such transformer. Input: most relevant first. It reverses the
 * list and alternately prepends/appends, so the most relevant item lands first when the count is odd and LAST when
 * it is even.
 */
export function langchainPythonLongContextReorder<T>(documents: T[]): T[] {
  const reversed = [...documents].reverse();
  const result: T[] = [];
  reversed.forEach((value, i) => {
    if (i % 2 === 1) result.push(value);
    else result.unshift(value);
  });
  return result;
}
