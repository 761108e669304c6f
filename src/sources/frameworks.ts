/**
 * Framework documents in: LangChain `Document`s and LlamaIndex `Document`s / nodes as ingest documents, for
 * corpora already loaded by those frameworks' readers. Read by shape (`pageContent` + `metadata`; `text` or
 * `getContent()` + `metadata` + `id_`), so neither framework is imported. Documents of one source (a PDF
 * loaded as one document per page, a file split into pieces) become one ingest document, their texts joined
 * by blank lines, each a region with the locator its metadata gives: LangChain's `loc.pageNumber` and
 * `loc.lines.from`/`to`, a `page` / `page_label` / `page_number` number, LlamaIndex's `start_char_idx`... are
 * read where they match; the rest of the metadata is kept.
 */
import { LitmPackError } from '../base/errors.js';
import { PAGE_LABEL } from '../core/schemas.js';
import type { IngestDocument, Region } from '../store/schemas.js';

/** A LangChain `Document` (or anything of its shape). */
export interface LangChainDocumentLike {
  pageContent: string;
  metadata?: Record<string, unknown>;
  id?: string;
}

/** A LlamaIndex `Document`/`TextNode` (or anything of its shape). */
export interface LlamaIndexNodeLike {
  id_?: string;
  text?: string;
  getContent?: (...args: never[]) => string;
  metadata?: Record<string, unknown>;
  sourceNode?: { nodeId?: string } | undefined;
}

interface Piece {
  sourceId: string;
  text: string;
  metadata: Record<string, unknown>;
  page?: number;
  line?: number;
  /** The printed page label, when it differs from the page number. */
  label?: string;
}

const object = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

function positive(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^[1-9]\d{0,8}$/u.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? n : undefined;
}

/**
 * The printed page label a reader wrote beside the physical page (Python LangChain's and LlamaIndex's PDF readers
 * write `page_label` from the PDF's page labels: "iv", "A-3"), when it says something the page number does not.
 */
function printedLabel(value: unknown, page: number | undefined): string | undefined {
  const label = typeof value === 'number' && Number.isInteger(value) ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  if (label === undefined || page === undefined || label === String(page) || !PAGE_LABEL.test(label)) return undefined;
  return label;
}

const string = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

/** The keys read into fields and locators (left out of the kept metadata). */
const READ_KEYS = new Set([
  'source',
  'loc',
  'page',
  'page_label',
  'page_number',
  'title',
  'url',
  'version',
  'timestamp',
  'file_path',
  'file_name',
]);

/** One ingest document per source, in the order sources first appear; pieces of a source in input order. */
function group(pieces: readonly Piece[]): IngestDocument[] {
  const bySource = new Map<string, Piece[]>();
  for (const piece of pieces) {
    const list = bySource.get(piece.sourceId) ?? [];
    list.push(piece);
    bySource.set(piece.sourceId, list);
  }
  const documents: IngestDocument[] = [];
  for (const [sourceId, list] of bySource) {
    let text = '';
    const regions: Region[] = [];
    for (const piece of list) {
      if (piece.text.trim() === '') continue;
      if (text !== '') text += '\n\n';
      const start = text.length;
      text += piece.text;
      const region: Region = { start, end: text.length };
      if (piece.page !== undefined) region.page = piece.page;
      if (piece.line !== undefined) region.line = piece.line;
      if (piece.label !== undefined && piece.page !== undefined) region.pageLabel = piece.label;
      regions.push(region);
    }
    const first = list[0]!.metadata;
    const doc: IngestDocument = { id: sourceId, text, regions };
    const title = string(first.title) ?? string(first.file_name);
    if (title !== undefined) doc.title = title;
    const url = string(first.url);
    if (url !== undefined) doc.url = url;
    const version = string(first.version);
    if (version !== undefined) doc.version = version;
    const kept = Object.fromEntries(Object.entries(first).filter(([key, value]) => !READ_KEYS.has(key) && value !== undefined));
    if (Object.keys(kept).length > 0) doc.metadata = JSON.parse(JSON.stringify(kept)) as IngestDocument['metadata'];
    documents.push(doc);
  }
  return documents;
}

/**
 * LangChain documents as ingest documents: the source id is `metadata.source` (else the document's `id`,
 * else `options.sourceId`), pages from `loc.pageNumber` or `page` (0-based `page`, as LangChain's PDF loaders
 * write it, is read as page + 1 when `options.zeroBasedPage`), lines from `loc.lines`.
 *
 * @example
 * const docs = await new PDFLoader('manual.pdf').load();
 * await store.addDocuments(fromLangChainDocuments(docs));   // one source, a region per page
 */
export function fromLangChainDocuments(
  docs: readonly LangChainDocumentLike[],
  options: { sourceId?: string; zeroBasedPage?: boolean } = {},
): IngestDocument[] {
  const pieces = docs.map((doc, index): Piece => {
    if (typeof doc?.pageContent !== 'string')
      throw new LitmPackError('invalid_input', `fromLangChainDocuments: document ${index} has no pageContent string`);
    const metadata = object(doc.metadata) ?? {};
    const sourceId = string(metadata.source) ?? string(doc.id) ?? options.sourceId;
    if (sourceId === undefined)
      throw new LitmPackError('invalid_input', `fromLangChainDocuments: document ${index} has no metadata.source; give options.sourceId`);
    const loc = object(metadata.loc);
    const rawPage = metadata.page;
    const page =
      positive(loc?.pageNumber) ??
      (options.zeroBasedPage === true && typeof rawPage === 'number' && Number.isInteger(rawPage) && rawPage >= 0
        ? rawPage + 1
        : positive(rawPage)) ??
      positive(metadata.page_number) ??
      positive(metadata.page_label);
    const line = positive(object(loc?.lines)?.from);
    const piece: Piece = { sourceId, text: doc.pageContent, metadata };
    if (page !== undefined) piece.page = page;
    const label = printedLabel(metadata.page_label, page);
    if (label !== undefined) piece.label = label;
    if (line !== undefined) piece.line = line;
    return piece;
  });
  return group(pieces);
}

/**
 * LlamaIndex documents or nodes as ingest documents: the source id is the node's source document
 * (`sourceNode.nodeId`), else `metadata.file_path` or `metadata.source`, else its `id_`; pages from
 * `page_label` / `page_number` / `page`.
 */
export function fromLlamaIndexDocuments(nodes: readonly LlamaIndexNodeLike[]): IngestDocument[] {
  const pieces = nodes.map((node, index): Piece => {
    const text = typeof node?.text === 'string' ? node.text : typeof node?.getContent === 'function' ? node.getContent() : undefined;
    if (typeof text !== 'string') throw new LitmPackError('invalid_input', `fromLlamaIndexDocuments: node ${index} has no text`);
    const metadata = object(node.metadata) ?? {};
    const sourceId = string(node.sourceNode?.nodeId) ?? string(metadata.file_path) ?? string(metadata.source) ?? string(node.id_);
    if (sourceId === undefined)
      throw new LitmPackError('invalid_input', `fromLlamaIndexDocuments: node ${index} has no id_, source node or file_path`);
    const page = positive(metadata.page_number) ?? positive(metadata.page) ?? positive(metadata.page_label);
    const piece: Piece = { sourceId, text, metadata };
    if (page !== undefined) piece.page = page;
    const label = printedLabel(metadata.page_label, page);
    if (label !== undefined) piece.label = label;
    return piece;
  });
  return group(pieces);
}
