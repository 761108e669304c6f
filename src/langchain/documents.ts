import { Document } from '@langchain/core/documents';
import type { Candidate, Pack } from '../core/schemas.js';
import {
  caveatsLitm,
  itemMetadata,
  packedEntries,
  type LitmCaveatsMetadata,
  type LitmDocumentMetadata,
  type LitmItemMetadata,
} from '../adapters/packing.js';

/** What the input at an index contributes to its document: its own metadata and id. */
type OwnFields = (index: number) => { metadata: Record<string, unknown> | undefined; id: string | undefined };

/**
 * Builds documents in context order: `pageContent` is the item text, `metadata.citation` its citation,
 * `metadata.litm` its place in the pack. `caveats`, when given, becomes a final document with
 * `metadata.litm.role === 'caveats'` and no citation.
 */
export function packToDocuments(pack: Pack, candidates: readonly Candidate[], own: OwnFields, caveats: null): Document<LitmItemMetadata>[];
export function packToDocuments(
  pack: Pack,
  candidates: readonly Candidate[],
  own: OwnFields,
  caveats: string | null,
): Document<LitmDocumentMetadata>[];
export function packToDocuments(
  pack: Pack,
  candidates: readonly Candidate[],
  own: OwnFields,
  caveats: string | null,
): Document<LitmDocumentMetadata>[] {
  const documents: Document<LitmDocumentMetadata>[] = packedEntries(pack, candidates).map((entry) => {
    const fields = own(entry.sourceIndex);
    return new Document<LitmItemMetadata>({
      pageContent: entry.item.text,
      metadata: itemMetadata(entry, fields.metadata),
      ...(fields.id === undefined ? {} : { id: fields.id }),
    });
  });
  if (caveats !== null) {
    documents.push(new Document<LitmCaveatsMetadata>({ pageContent: caveats, metadata: { litm: caveatsLitm(pack) } }));
  }
  return documents;
}
