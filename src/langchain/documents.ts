import { Document } from '@langchain/core/documents';
import type { Candidate, Citation, Pack } from '../core/schemas.js';
import { caveatsLitm, itemMetadata, packedEntries, type LitmMetadata } from '../adapters/packing.js';

/**
 * Metadata of every document the retrievers and the compressor return: the input's own metadata
 * (plus a `source` default), `litm` and, for items, `citation` (absent on the briefing's caveats document).
 */
export type LitmDocumentMetadata = Record<string, unknown> & { litm: LitmMetadata; citation?: Citation };

/** What the input at an index contributes to its document: its own metadata and id. */
export type OwnFields = (index: number) => { metadata: Record<string, unknown> | undefined; id: string | undefined };

/**
 * Builds documents in context order: `pageContent` is the item text, `metadata.citation` its citation,
 * `metadata.litm` its place in the pack. `caveats`, when given, becomes a final document with
 * `metadata.litm.role === 'caveats'` and no citation.
 */
export function packToDocuments(
  pack: Pack,
  candidates: readonly Candidate[],
  own: OwnFields,
  caveats: string | null,
): Document<LitmDocumentMetadata>[] {
  const documents = packedEntries(pack, candidates).map((entry) => {
    const fields = own(entry.sourceIndex);
    return new Document<LitmDocumentMetadata>({
      pageContent: entry.item.text,
      metadata: itemMetadata(entry, fields.metadata),
      ...(fields.id === undefined ? {} : { id: fields.id }),
    });
  });
  if (caveats !== null) {
    documents.push(new Document<LitmDocumentMetadata>({ pageContent: caveats, metadata: { litm: caveatsLitm(pack) } }));
  }
  return documents;
}
