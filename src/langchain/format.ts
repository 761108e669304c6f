import type { DocumentInterface } from '@langchain/core/documents';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../core/errors.js';
import { FormatSchema, MAX_BUDGET_TOKENS, type PackFormat } from '../core/schemas.js';
import { renderBlock, renderBriefingContext, renderBundleContext } from '../render/render.js';
import { documentsToCandidates } from './litm-compressor.js';
import { PackerOptionsSchema, packAsBundle, parseQuery, type LitmMetadata } from '../adapters/packing.js';

const FormatOptionsSchema = PackerOptionsSchema.extend({
  /** Documents already budgeted by a retriever need no further budget, so the default is the largest. */
  maxTokens: PackerOptionsSchema.shape.maxTokens.default(MAX_BUDGET_TOKENS),
  /** Used only when documents are packed afresh; the rendered context does not show it. */
  query: z.string().optional(),
});
export type FormatDocumentsOptions = z.input<typeof FormatOptionsSchema>;

const LitmMetadataSchema = z.object({
  ref: z.number().int().positive().nullable(),
  role: z.enum(['grounding', 'evidence', 'caveats']),
  tokens: z.number().int().nonnegative().nullable(),
  truncated: z.boolean(),
  pointer: z.boolean(),
  kind: z.enum(['bundle', 'briefing']),
  format: FormatSchema,
  packHash: z.string(),
});
const CitationFieldsSchema = z.object({
  sourceId: z.string(),
  chunkId: z.string(),
  title: z.string().optional(),
  version: z.string().optional(),
  section: z.array(z.string()).optional(),
});

type Ours = { doc: DocumentInterface; litm: Pick<LitmMetadata, 'ref' | 'role' | 'tokens' | 'truncated' | 'pointer' | 'kind' | 'format'>; citation: z.infer<typeof CitationFieldsSchema> | undefined };

/** Documents that all come from one pack of ours, with their metadata read back; null otherwise. */
function fromOnePack(documents: readonly DocumentInterface[]): Ours[] | null {
  if (documents.length === 0) return null;
  const ours: Ours[] = [];
  let packHash: string | undefined;
  for (const doc of documents) {
    const litm = LitmMetadataSchema.safeParse(doc.metadata?.litm);
    if (!litm.success) return null;
    packHash ??= litm.data.packHash;
    if (litm.data.packHash !== packHash) return null;
    if (litm.data.role === 'caveats') {
      ours.push({ doc, litm: litm.data, citation: undefined });
      continue;
    }
    const citation = CitationFieldsSchema.safeParse(doc.metadata?.citation);
    if (!citation.success || litm.data.ref === null) return null;
    ours.push({ doc, litm: litm.data, citation: citation.data });
  }
  return ours;
}

function renderOurs(ours: readonly Ours[], format: PackFormat): string {
  const blocks: { role: 'grounding' | 'evidence'; block: string }[] = [];
  let caveats: string | null = null;
  for (const { doc, litm, citation } of ours) {
    if (litm.role === 'caveats' || citation === undefined || litm.ref === null) {
      caveats = doc.pageContent;
      continue;
    }
    const block = renderBlock(format, {
      ref: litm.ref,
      candidate: {
        id: citation.chunkId,
        sourceId: citation.sourceId,
        title: citation.title,
        version: citation.version,
        section: citation.section,
      },
      body: doc.pageContent,
      truncated: litm.truncated && !litm.pointer,
      pointer: litm.pointer ? { tokens: litm.tokens ?? 0 } : undefined,
    });
    blocks.push({ role: litm.role, block });
  }
  if (ours[0]?.litm.kind === 'bundle') return renderBundleContext(format, blocks.map((b) => b.block));
  const zone = (role: 'grounding' | 'evidence') => ({ role, blocks: blocks.filter((b) => b.role === role).map((b) => b.block) });
  return renderBriefingContext(format, [zone('grounding'), zone('evidence')], caveats);
}

/**
 * Formats documents for a prompt exactly as a pack's context renders them.
 * - Documents from one of our retrievers or `LitmCompressor` (one pack, with `metadata.litm` and
 *   `metadata.citation`) are rendered again as they are, in the order given, with their refs: the result
 *   equals `pack.context` when they are passed unchanged. Their pack's format is used; asking for another
 *   one throws (`unsupported`), as the caveats block cannot be re-rendered.
 * - Any other documents are packed as a bundle with `options` (see `LitmCompressor`) and `pack.context`
 *   is returned. `maxTokens` defaults to the largest budget.
 *
 * @example
 * ```typescript
 * const chain = retriever.pipe((docs) => formatDocumentsAsContext(docs)).pipe(...);
 * ```
 */
export function formatDocumentsAsContext(documents: readonly DocumentInterface[], options: FormatDocumentsOptions = {}): string {
  const { query, ...packer } = parseOrThrow(FormatOptionsSchema, options, 'formatDocumentsAsContext options');
  const ours = fromOnePack(documents);
  if (ours !== null) {
    const format = ours[0]?.litm.format ?? packer.format;
    if (options.format !== undefined && options.format !== format) {
      throw new LitmPackError(
        'unsupported',
        `These documents were packed as ${format}; formatting them as ${options.format} is not supported (pack them again with format: '${options.format}')`,
      );
    }
    return renderOurs(ours, format);
  }
  if (documents.length === 0) return '';
  return packAsBundle(packer, query === undefined ? 'context' : parseQuery(query), documentsToCandidates(documents)).context;
}
