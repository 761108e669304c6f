import type { DocumentInterface } from '@langchain/core/documents';
import { BaseStringPromptTemplate } from '@langchain/core/prompts';
import type { RunnableConfig } from '@langchain/core/runnables';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { FormatSchema, HeaderSchema, LocatorSchema, MAX_BUDGET_TOKENS, type PackFormat } from '../core/schemas.js';
import { renderBlock, renderBriefingContext, renderBundleContext } from '../render/render.js';
import { documentsToCandidates } from './litm-compressor.js';
import { PACKER_ALIASES, PackerOptionsSchema, parseQuery, type LitmMetadata } from '../adapters/packing.js';
import { packPrepared } from '../pipeline/bundle.js';

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
  /** Documents of packs made before headers had styles were rendered in full. */
  header: HeaderSchema.default('full'),
  packHash: z.string(),
});
const CitationFieldsSchema = z.object({
  sourceId: z.string(),
  chunkId: z.string(),
  title: z.string().optional(),
  url: z.string().optional(),
  version: z.string().optional(),
  section: z.array(z.string()).optional(),
  locator: LocatorSchema.optional(),
});

type Ours = {
  doc: DocumentInterface;
  litm: Pick<LitmMetadata, 'ref' | 'role' | 'tokens' | 'truncated' | 'pointer' | 'kind' | 'format' | 'header'>;
  citation: z.infer<typeof CitationFieldsSchema> | undefined;
};

/** One document of ours with its metadata read back; null when it is not one. */
function readOurs(doc: DocumentInterface): (Ours & { packHash: string }) | null {
  const litm = LitmMetadataSchema.safeParse(doc.metadata?.litm);
  if (!litm.success) return null;
  if (litm.data.role === 'caveats') return { doc, litm: litm.data, citation: undefined, packHash: litm.data.packHash };
  const citation = CitationFieldsSchema.safeParse(doc.metadata?.citation);
  if (!citation.success || litm.data.ref === null) return null;
  return { doc, litm: litm.data, citation: citation.data, packHash: litm.data.packHash };
}

/** Documents that all come from one pack of ours, with their metadata read back; null otherwise. */
function fromOnePack(documents: readonly DocumentInterface[]): Ours[] | null {
  if (documents.length === 0) return null;
  const ours: Ours[] = [];
  let packHash: string | undefined;
  for (const doc of documents) {
    const one = readOurs(doc);
    if (one === null) return null;
    packHash ??= one.packHash;
    if (one.packHash !== packHash) return null;
    ours.push(one);
  }
  return ours;
}

/** An item's block exactly as the pack's context shows it (the caveats document is its own block). */
function renderOne({ doc, litm, citation }: Ours, format: PackFormat): string {
  if (litm.role === 'caveats' || citation === undefined || litm.ref === null) return doc.pageContent;
  // Every provenance field the citation keeps, whichever of them the renderer shows.
  const candidate = {
    id: citation.chunkId,
    sourceId: citation.sourceId,
    title: citation.title,
    url: citation.url,
    version: citation.version,
    section: citation.section,
    locator: citation.locator,
  };
  return renderBlock(
    format,
    {
      ref: litm.ref,
      candidate,
      body: doc.pageContent,
      truncated: litm.truncated && !litm.pointer,
      pointer: litm.pointer ? { tokens: litm.tokens ?? 0 } : undefined,
    },
    litm.header,
  );
}

function renderOurs(ours: readonly Ours[], format: PackFormat): string {
  const blocks: { role: 'grounding' | 'evidence'; block: string }[] = [];
  let caveats: string | null = null;
  for (const one of ours) {
    if (one.litm.role === 'caveats') caveats = one.doc.pageContent;
    else blocks.push({ role: one.litm.role, block: renderOne(one, format) });
  }
  if (ours[0]?.litm.kind === 'bundle')
    return renderBundleContext(
      format,
      blocks.map((b) => b.block),
    );
  const zone = (role: 'grounding' | 'evidence') => ({ role, blocks: blocks.filter((b) => b.role === role).map((b) => b.block) });
  return renderBriefingContext(format, [zone('grounding'), zone('evidence')], caveats);
}

// Keys of LangChain's RunnableConfig. A function piped into a chain (`retriever.pipe(fn)`) is called with the
// run's config as its second argument; none of these keys is a formatting option, so such an object is
// recognised as a run config and not read as options.
const RUN_CONFIG_KEYS = [
  'callbacks',
  'tags',
  'metadata',
  'runName',
  'runId',
  'configurable',
  'recursionLimit',
  'maxConcurrency',
  'timeout',
  'signal',
];

function isRunConfig(value: unknown): value is RunnableConfig {
  return typeof value === 'object' && value !== null && RUN_CONFIG_KEYS.some((key) => key in value);
}

/** The formatting options in `formatDocumentsAsContext`'s second argument: none when it is a run config. */
function formattingOptions(options: FormatDocumentsOptions | RunnableConfig): FormatDocumentsOptions {
  if (!isRunConfig(options)) return options;
  const mixed = Object.keys(options).filter((key) => key in FormatOptionsSchema.shape);
  if (mixed.length > 0) {
    throw new LitmPackError(
      'invalid_input',
      `formatDocumentsAsContext got a LangChain run config with formatting options (${mixed.join(', ')}); pass the options alone: (docs) => formatDocumentsAsContext(docs, { ${mixed[0]}: ... })`,
    );
  }
  return {};
}

/**
 * Formats documents for a prompt exactly as a pack's context renders them.
 * - Documents from one of our retrievers or `LitmCompressor` (one pack, with `metadata.litm` and
 *   `metadata.citation`) are rendered again as they are, in the order given, with their refs: the result
 *   equals `pack.context` when they are passed unchanged. Their pack's format and header are used; asking
 *   for others throws (`unsupported`), as the caveats block cannot be re-rendered.
 * - Any other documents are packed as a bundle with `options` (see `LitmCompressor`) and `pack.context`
 *   is returned. `maxTokens` defaults to the largest budget.
 *
 * Pipeable as it is: in `retriever.pipe(formatDocumentsAsContext)` LangChain passes its run config as the
 * second argument, which is recognised (by its keys) and ignored; pass options with
 * `retriever.pipe((docs) => formatDocumentsAsContext(docs, { format: 'xml' }))`.
 *
 * @example
 * ```typescript
 * const chain = RunnableMap.from({ context: retriever.pipe(formatDocumentsAsContext), question: new RunnablePassthrough() })
 *   .pipe(prompt).pipe(model);
 * ```
 */
export function formatDocumentsAsContext(
  documents: readonly DocumentInterface[],
  options: FormatDocumentsOptions | RunnableConfig = {},
): string {
  const given = formattingOptions(options);
  const { query, ...packer } = parseOrThrow(FormatOptionsSchema, given, 'formatDocumentsAsContext options', {
    aliases: PACKER_ALIASES,
  });
  const ours = fromOnePack(documents);
  if (ours !== null) {
    const format = ours[0]?.litm.format ?? packer.format;
    if (given.format !== undefined && given.format !== format) {
      throw new LitmPackError(
        'unsupported',
        `These documents were packed as ${format}; formatting them as ${given.format} is not supported (pack them again with format: '${given.format}')`,
      );
    }
    const header = ours[0]?.litm.header ?? packer.header;
    if (given.header !== undefined && given.header !== header) {
      throw new LitmPackError(
        'unsupported',
        `These documents were packed with header ${header}; formatting them with header ${given.header} is not supported (pack them again with header: '${given.header}')`,
      );
    }
    return renderOurs(ours, format);
  }
  if (documents.length === 0) return '';
  return packPrepared('bundle', query === undefined ? 'context' : parseQuery(query), documentsToCandidates(documents), packer).context;
}

/**
 * A document prompt for LangChain's `createStuffDocumentsChain` (and anything else that formats one
 * document at a time with a prompt template): each document becomes its block exactly as the pack's
 * context shows it, `[n]` marker and provenance line included, escaped as the pack escapes it. Joined with
 * the chain's default separator ("\n\n"), a markdown or text bundle gives `pack.context` byte for byte
 * (xml adds no `<documents>` wrapper, briefings no zone headings; the caveats document is its own block).
 * Documents must come from a litm-pack retriever or `LitmCompressor`; others throw `invalid_input`.
 *
 * @example
 * ```typescript
 * const chain = await createStuffDocumentsChain({ llm, prompt, documentPrompt: new LitmDocumentPrompt() });
 * await chain.invoke({ context: await retriever.invoke(question), question });
 * ```
 */
export class LitmDocumentPrompt extends BaseStringPromptTemplate<LitmDocumentPromptInput> {
  // Holds no state worth saving; LangChain's serialisation would name its own namespace otherwise.
  override lc_serializable = false;
  override lc_namespace = ['litm_pack', 'prompts'];

  static override lc_name(): string {
    return 'LitmDocumentPrompt';
  }

  constructor() {
    super({ inputVariables: ['page_content', 'litm'] });
  }

  _getPromptType(): string {
    return 'litm_document';
  }

  format(values: LitmDocumentPromptInput): Promise<string> {
    const { page_content: pageContent, ...metadata } = values;
    const one = readOurs({ pageContent: String(pageContent ?? ''), metadata });
    if (one === null) {
      return Promise.reject(
        new LitmPackError(
          'invalid_input',
          'LitmDocumentPrompt formats documents from a litm-pack retriever or LitmCompressor (with metadata.litm and metadata.citation); pass other documents through LitmCompressor first',
        ),
      );
    }
    return Promise.resolve(renderOne(one, one.litm.format));
  }

  partial(): Promise<never> {
    return Promise.reject(new LitmPackError('unsupported', 'LitmDocumentPrompt has no variables to fill in advance'));
  }
}

/** What a document prompt receives: the document's metadata and its text as `page_content`. */
export type LitmDocumentPromptInput = Record<string, unknown> & { page_content: string };
