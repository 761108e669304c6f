import {
  MetadataMode,
  NodeRelationship,
  TextNode,
  type BaseNode,
  type Metadata,
  type NodeWithScore,
  type RelatedNodeType,
} from '@llamaindex/core/schema';
import type { Candidate, Pack } from '../core/schemas.js';
import {
  caveatsLitm,
  chunksToCandidates,
  itemMetadata,
  packedEntries,
  type ForeignChunk,
} from '../adapters/packing.js';

// Our two metadata keys hold objects for programs, not prose for the model or the embedder: keep them
// out of `getContent(MetadataMode.LLM | EMBED)`, which LlamaIndex prepends to the text by default.
const LITM_KEYS = ['citation', 'litm'];

type Relationships = Partial<Record<NodeRelationship, RelatedNodeType<Metadata>>>;

/** What the input at an index contributes to its node. */
export type OwnNodeFields = (index: number) => {
  /** The input's node id; the item id when absent. */
  id: string | undefined;
  metadata: Metadata | undefined;
  relationships: Relationships | undefined;
  excludedLlmMetadataKeys: string[];
  excludedEmbedMetadataKeys: string[];
};

const withLitmKeys = (keys: readonly string[]) => [...new Set([...keys, ...LITM_KEYS])];

/**
 * Builds nodes in context order: a new `TextNode` per item (text = item text, score = item score,
 * `metadata.citation`, `metadata.litm`), then the caveats node when given. Input nodes are never modified.
 */
export function packToNodes(
  pack: Pack,
  candidates: readonly Candidate[],
  own: OwnNodeFields,
  caveats: string | null,
): NodeWithScore[] {
  const nodes: NodeWithScore[] = packedEntries(pack, candidates).map((entry) => {
    const fields = own(entry.sourceIndex);
    const node = new TextNode({
      id_: fields.id ?? entry.item.id,
      text: entry.item.text,
      metadata: itemMetadata(entry, fields.metadata),
      relationships: fields.relationships ?? {
        [NodeRelationship.SOURCE]: { nodeId: entry.citation.sourceId, metadata: {} },
      },
      excludedLlmMetadataKeys: withLitmKeys(fields.excludedLlmMetadataKeys),
      excludedEmbedMetadataKeys: withLitmKeys(fields.excludedEmbedMetadataKeys),
    });
    return { node, score: entry.item.score };
  });
  if (caveats !== null) {
    const node = new TextNode({
      id_: `litm-caveats:${pack.packHash}`,
      text: caveats,
      metadata: { litm: caveatsLitm(pack) },
      excludedLlmMetadataKeys: [...LITM_KEYS],
      excludedEmbedMetadataKeys: [...LITM_KEYS],
    });
    nodes.push({ node });
  }
  return nodes;
}

/** Nodes from any retriever as packer input (see `chunksToCandidates` for the fallbacks). */
export function nodesToCandidates(nodes: readonly NodeWithScore[]): Candidate[] {
  return chunksToCandidates(
    nodes.map(({ node, score }): ForeignChunk => ({
      text: node.getContent(MetadataMode.NONE),
      id: node.id_,
      score,
      metadata: { ...node.metadata },
      sourceId: node.sourceNode?.nodeId,
    })),
  );
}

/** The node fields a packed node keeps from its input node. */
export function ownNodeFields(node: BaseNode | undefined): ReturnType<OwnNodeFields> {
  return {
    id: node?.id_,
    metadata: node?.metadata,
    relationships: node === undefined ? undefined : { ...node.relationships },
    excludedLlmMetadataKeys: node?.excludedLlmMetadataKeys ?? [],
    excludedEmbedMetadataKeys: node?.excludedEmbedMetadataKeys ?? [],
  };
}
