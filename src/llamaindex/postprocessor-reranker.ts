import type { BaseNodePostprocessor } from '@llamaindex/core/postprocessor';
import { TextNode, type NodeWithScore } from '@llamaindex/core/schema';
import { LitmPackError } from '../base/errors.js';
import type { Reranker, RerankOptions, RerankResult } from '../refine/rerank.js';

/**
 * A `Reranker` from a LlamaIndex reranking node postprocessor: one that returns nodes with their new
 * `score` (`CohereRerank` from `@llamaindex/cohere`, and postprocessors built like it). Nodes it does not
 * return (its `topN`) are not packed.
 *
 * @example
 * ```typescript
 * const reranker = new PostprocessorReranker(new CohereRerank({ apiKey, topN: 50 }));
 * const retriever = new BundleRetriever({ store, maxTokens: 2000, rerank: { reranker } });
 * ```
 */
export class PostprocessorReranker implements Reranker {
  constructor(readonly postprocessor: BaseNodePostprocessor) {}

  async rerank(query: string, texts: readonly string[], _options: RerankOptions = {}): Promise<RerankResult[]> {
    const nodes: NodeWithScore[] = texts.map((text, index) => ({ node: new TextNode({ id_: `litm-rerank:${index}`, text }) }));
    const position = new Map(nodes.map((n, index) => [n.node.id_, index] as const));
    const returned = await this.postprocessor.postprocessNodes(nodes, query);
    return returned.map(({ node, score }) => {
      const index = position.get(node.id_);
      if (index === undefined || typeof score !== 'number' || !Number.isFinite(score)) {
        throw new LitmPackError('bad_response', 'The node postprocessor returned a node without a numeric score (or one it was not given)');
      }
      return { index, score };
    });
  }
}
