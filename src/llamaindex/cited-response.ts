import { MetadataMode, type NodeWithScore } from '@llamaindex/core/schema';
import { invalidInput } from '../base/errors.js';
import type { Citation, PackItem } from '../core/schemas.js';
import type { CitablePack } from '../llm/anthropic.js';
import { resolveAnswer, type CitedAnswer } from '../llm/answer.js';
import { hasAnthropicCitations, type ResolveOptions } from '../llm/resolve.js';
import type { LitmMetadata } from '../adapters/packing.js';

/** What a LlamaIndex `EngineResponse` (a query engine's answer) carries that this reads. */
export interface ResponseLike {
  message: { content: unknown };
  sourceNodes?: NodeWithScore[] | undefined;
  raw?: object | null;
}

export interface ResolveResponseOptions extends ResolveOptions {
  /** The pack the context came from; absent: rebuilt from the response's source nodes (`metadata.citation`, `metadata.litm`). */
  pack?: CitablePack;
}

/**
 * The items and citations the packed nodes carry (the retrievers' and the postprocessor's), in context order.
 * A node without `metadata.citation` (the caveats node, a node from elsewhere) is no item.
 */
export function citablePackFromNodes(nodes: readonly NodeWithScore[], query = ''): CitablePack {
  const entries = nodes.flatMap(({ node }) => {
    const metadata = node.metadata as { citation?: Citation; litm?: LitmMetadata };
    const { citation, litm } = metadata;
    if (citation === undefined || litm === undefined || litm.ref === null || litm.rank === null) return [];
    const item: PackItem = {
      ref: litm.ref,
      id: citation.chunkId,
      sourceId: citation.sourceId,
      role: litm.role === 'caveats' ? 'evidence' : litm.role,
      rank: litm.rank,
      score: litm.score ?? 0,
      text: node.getContent(MetadataMode.NONE),
      tokens: litm.tokens ?? 0,
      truncated: litm.truncated,
      pointer: litm.pointer,
    };
    return [{ item, citation, litm }];
  });
  entries.sort((a, b) => a.item.ref - b.item.ref);
  const first = entries[0]?.litm;
  if (entries.some((entry, index) => entry.item.ref !== index + 1 || entry.litm.packHash !== first?.packHash)) {
    throw invalidInput('The source nodes are not the items of one pack (refs 1..n from one packHash): pass the pack as options.pack', [
      'sourceNodes',
    ]);
  }
  return {
    query,
    format: first?.format ?? 'markdown',
    items: entries.map((e) => e.item),
    citations: entries.map((e) => e.citation),
    packHash: first?.packHash ?? '0'.repeat(64),
  };
}

/**
 * Resolves a LlamaIndex query engine's response against its pack: an Anthropic answer with citations (the
 * `raw` response, when the LLM kept it) is resolved block by block, any other answer is read for `[n]` markers
 * and quotes. The pack is `options.pack` or the one the source nodes carry.
 *
 * @example
 * ```typescript
 * const engine = index.asQueryEngine({ nodePostprocessors: [new LitmPostprocessor({ maxTokens: 2000 })] });
 * const response = await engine.query({ query: `${instructions}\n\nHow are refunds paid?` });
 * const { verified, check } = resolveResponseCitations(response);
 * ```
 */
export function resolveResponseCitations(response: ResponseLike, options: ResolveResponseOptions = {}): CitedAnswer {
  if (typeof response !== 'object' || response === null || typeof response.message !== 'object' || response.message === null) {
    throw invalidInput('Expected a LlamaIndex response (an EngineResponse with message and sourceNodes)', ['response']);
  }
  const { pack: given, ...resolveOptions } = options;
  const pack = given ?? citablePackFromNodes(response.sourceNodes ?? []);
  const raw = response.raw;
  const content = raw !== null && raw !== undefined && Array.isArray((raw as { content?: unknown }).content) ? raw : undefined;
  const answer = content !== undefined && hasAnthropicCitations(content) ? content : messageText(response.message.content);
  return resolveAnswer(pack, answer, resolveOptions);
}

/** A LlamaIndex message's text: a string, or its text parts joined. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter(
        (part): part is { type: 'text'; text: string } =>
          typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text',
      )
      .map((part) => part.text)
      .join('');
  }
  return '';
}
