import {
  MetadataMode,
  NodeRelationship,
  TextNode,
  type BaseNode,
  type Metadata,
  type NodeWithScore,
  type RelatedNodeType,
  type TextNodeParams,
} from '@llamaindex/core/schema';
import type { Candidate, Pack } from '../core/schemas.js';
import {
  blockOf,
  caveatsLitm,
  chunksToCandidates,
  itemMetadata,
  packedEntries,
  type ForeignChunk,
  type LitmDocumentMetadata,
} from '../adapters/packing.js';

// Our two metadata keys hold objects for programs, not prose for the model or the embedder: keep them
// out of `getContent(MetadataMode.LLM | EMBED)`, which LlamaIndex prepends to the text by default.
const LITM_KEYS = ['citation', 'litm'];

type Relationships = Partial<Record<NodeRelationship, RelatedNodeType<Metadata>>>;

/** What the input at an index contributes to its node. */
type OwnNodeFields = (index: number) => {
  /** The input's node id; the item id when absent. */
  id: string | undefined;
  metadata: Metadata | undefined;
  relationships: Relationships | undefined;
  excludedLlmMetadataKeys: string[];
  excludedEmbedMetadataKeys: string[];
};

const withLitmKeys = (keys: readonly string[]) => [...new Set([...keys, ...LITM_KEYS])];

/**
 * A packed node. What the model reads of it (`getContent(MetadataMode.LLM)`, which LlamaIndex's response
 * synthesizers use) is its block exactly as `pack.context` shows it: the `[n]` marker, the provenance line and
 * the escaped text, and no metadata lines, so the prompt holds the budgeted context and the model can cite
 * `[n]`. Every other mode is LlamaIndex's own (`NONE`: the text; `EMBED`/`ALL`: metadata lines and the text).
 * `clone()` and JSON give a plain `TextNode`.
 */
export class PackedTextNode<T extends Metadata = Metadata> extends TextNode<T> {
  readonly #llmContent: string;

  constructor(init: TextNodeParams<T>, llmContent: string) {
    super(init);
    this.#llmContent = llmContent;
  }

  override getContent(metadataMode: MetadataMode = MetadataMode.NONE): string {
    return metadataMode === MetadataMode.LLM ? this.#llmContent : super.getContent(metadataMode);
  }
}

/**
 * Builds nodes in context order: a new `TextNode` per item (text = item text, score = item score,
 * `metadata.citation`, `metadata.litm`), then the caveats node when given. Input nodes are never modified.
 */
export function packToNodes(
  pack: Pack,
  candidates: readonly Candidate[],
  own: OwnNodeFields,
  caveats: string | null,
): NodeWithScore<LitmDocumentMetadata>[] {
  const nodes: NodeWithScore[] = packedEntries(pack, candidates).map((entry) => {
    const fields = own(entry.sourceIndex);
    const node = new PackedTextNode(
      {
        id_: fields.id ?? entry.item.id,
        text: entry.item.text,
        metadata: itemMetadata(entry, fields.metadata),
        relationships: fields.relationships ?? {
          [NodeRelationship.SOURCE]: { nodeId: entry.citation.sourceId, metadata: {} },
        },
        excludedLlmMetadataKeys: withLitmKeys(fields.excludedLlmMetadataKeys),
        excludedEmbedMetadataKeys: withLitmKeys(fields.excludedEmbedMetadataKeys),
      },
      blockOf(entry, candidates[entry.sourceIndex] as Candidate),
    );
    return { node, score: entry.item.score };
  });
  if (caveats !== null) {
    const node = new PackedTextNode(
      {
        id_: `litm-caveats:${pack.packHash}`,
        text: caveats,
        metadata: { litm: caveatsLitm(pack) },
        excludedLlmMetadataKeys: [...LITM_KEYS],
        excludedEmbedMetadataKeys: [...LITM_KEYS],
      },
      caveats,
    );
    nodes.push({ node });
  }
  // Built from untyped LlamaIndex parts; their metadata is what itemMetadata and caveatsLitm make.
  return nodes as NodeWithScore<LitmDocumentMetadata>[];
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
