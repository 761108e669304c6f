/**
 * A pack as the Anthropic Messages API's own citation input: one `search_result` content block per item (top
 * level in a user message, or inside a `tool_result`), or one custom-content `document` per item. Each item's
 * text is cut into one text block per sentence, line or caption cue, so Claude's citations
 * (`search_result_location` / `content_block_location`, which cite whole blocks) point at sentences.
 *
 * The shapes are the documented ones (Messages API reference: `SearchResultBlockParam`, `DocumentBlockParam`
 * with a `content` source), written out here rather than imported so the package needs no Anthropic SDK.
 * Rules kept: `results[i]` is `items[i]` (ref `i + 1`); citations are on for every result (the API answers 400
 * when a request mixes results with citations on and off); the blocks of an item joined give its text exactly.
 * The ellipsis the context shows after a cut item is not part of its text and is left out; an elision marker
 * between two selected sentences ends the block before it. A briefing's caveats block cites nothing and is
 * left out (it is `pack.caveats`: send it as a plain text block if the model should read it).
 */
import { z } from 'zod';
import { invalidInput, parseOrThrow } from '../base/errors.js';
import { PackSchema, type Citation } from '../core/schemas.js';
import { oneLine } from '../render/escape.js';
import { locatorParts } from '../render/locator.js';
import { citableItem, GRANULARITIES, type CitableItem, type Granularity } from './units.js';

/** A text block of a search result's or a document's content. (Type aliases, not interfaces: LangChain's content blocks are index-signature types, which only aliases satisfy.) */
export type AnthropicTextBlockParam = {
  type: 'text';
  text: string;
};

/** Anthropic's `search_result` content block. */
export type AnthropicSearchResultBlock = {
  type: 'search_result';
  source: string;
  title: string;
  content: AnthropicTextBlockParam[];
  citations: { enabled: true };
};

/** Anthropic's `document` content block with a plain-text source (Claude cites it by characters: `char_location`). */
export type AnthropicTextDocumentBlock = {
  type: 'document';
  source: { type: 'text'; media_type: 'text/plain'; data: string };
  title: string;
  context?: string;
  citations: { enabled: true };
};

/** Anthropic's `document` content block with a custom-content source. */
export type AnthropicContentDocumentBlock = {
  type: 'document';
  source: { type: 'content'; content: AnthropicTextBlockParam[] };
  title: string;
  /** Provenance the model may read but not cite (source, version, section, locator). */
  context?: string;
  citations: { enabled: true };
};

export const AnthropicBlocksOptionsSchema = z.strictObject({
  /** One text block per `sentence`, `line`, caption `cue` or whole `item`; absent: each item's locator decides (cues for transcripts, lines for code, else sentences). */
  granularity: z.enum(GRANULARITIES, { message: `granularity must be one of ${GRANULARITIES.join(', ')}` }).optional(),
});
export type AnthropicBlocksOptions = z.input<typeof AnthropicBlocksOptionsSchema>;

export const AnthropicDocumentsOptionsSchema = AnthropicBlocksOptionsSchema.extend({
  /** `content` (default): one text block per unit, cited by blocks; `text`: the item's text as a plain-text document, cited by characters. */
  form: z.enum(['content', 'text'], { message: "form must be 'content' or 'text'" }).default('content'),
});
export type AnthropicDocumentsOptions = z.input<typeof AnthropicDocumentsOptionsSchema>;

/**
 * The URI a result names when its citation has no URL: the chunk as the MCP server's resources address it
 * (`litm://sources/{sourceId}?chunk=…`), with the version, so two versions of a source never share one.
 */
export function litmSourceUri(citation: Pick<Citation, 'sourceId' | 'chunkId' | 'version'>): string {
  const query = new URLSearchParams({ chunk: citation.chunkId });
  if (citation.version !== undefined) query.set('version', citation.version);
  return `litm://sources/${encodeURIComponent(citation.sourceId)}?${query.toString()}`;
}

/** What a result's `source` is: the citation's URL, else its `litm://` URI. */
export function resultSource(citation: Citation): string {
  return citation.url !== undefined && citation.url.trim() !== '' ? citation.url : litmSourceUri(citation);
}

/** The name the context's compact header shows (title, or the source), with the locator: `Guide (lines 40–58)`. */
export function resultTitle(citation: Citation): string {
  const title = citation.title !== undefined && oneLine(citation.title) !== '' ? oneLine(citation.title) : oneLine(citation.sourceId);
  const where = locatorParts(citation.locator);
  return where.length === 0 ? title : `${title} (${where.join(', ')})`;
}

/**
 * What these functions read of a pack: its items and citations (and query, format, hash). A whole `Pack` is
 * one; so is what a framework's documents or nodes carry (`metadata.citation`, `metadata.litm`) put back together.
 */
export const CitablePackSchema = PackSchema.pick({ query: true, format: true, items: true, citations: true, packHash: true });
export type CitablePack = z.infer<typeof CitablePackSchema>;

/** Parses the pack and options once; the items cut into units. */
export function citableItems(
  pack: unknown,
  options: unknown = {},
): { pack: CitablePack; items: CitableItem[]; granularity: Granularity | undefined } {
  const parsed = parseOrThrow(CitablePackSchema, pack, 'pack');
  const { granularity } = parseOrThrow(AnthropicBlocksOptionsSchema, options, 'Anthropic block options');
  if (parsed.citations.length !== parsed.items.length) throw invalidInput('pack.citations must hold one citation per item', ['citations']);
  const items = parsed.items.map((item, index) => citableItem(item, parsed.citations[index] as Citation, granularity));
  return { pack: parsed, items, granularity };
}

const textBlocks = (citable: CitableItem): AnthropicTextBlockParam[] => citable.blocks.map((text) => ({ type: 'text', text }));

/**
 * One `search_result` block per item in context order (`results[i]` is `items[i]`, ref `i + 1`): `source` is the
 * citation's URL or its `litm://` URI, `title` the header's name and locator, one text block per unit, citations
 * on. Put them all in one request (top level or in `tool_result` content), with no other search results that
 * have citations off. A pin pointer (an item showing no text) becomes one note block: a citation of it is never
 * verified.
 *
 * @example
 * const results = toAnthropicSearchResults(pack);
 * await anthropic.messages.create({ model, max_tokens: 1024,
 *   messages: [{ role: 'user', content: [...results, { type: 'text', text: pack.query }] }] });
 */
export function toAnthropicSearchResults(pack: CitablePack, options: AnthropicBlocksOptions = {}): AnthropicSearchResultBlock[] {
  return citableItems(pack, options).items.map((citable) => ({
    type: 'search_result',
    source: resultSource(citable.citation),
    title: resultTitle(citable.citation),
    content: textBlocks(citable),
    citations: { enabled: true },
  }));
}

/** The provenance line a document carries as `context` (read by the model, never cited). */
function documentContext(citation: Citation): string {
  const parts = [`ref ${citation.ref}`, `source: ${oneLine(citation.sourceId)}`];
  if (citation.version !== undefined) parts.push(`version: ${oneLine(citation.version)}`);
  if (citation.section !== undefined && citation.section.length > 0) parts.push(`section: ${citation.section.map(oneLine).join(' > ')}`);
  parts.push(...locatorParts(citation.locator));
  return parts.join(', ');
}

/**
 * One `document` block per item in context order (`documents[i]` is `items[i]`), for models or gateways that
 * take documents but not search results. `form: 'content'` (default) gives custom-content documents with the
 * same text blocks as the search results, cited as `content_block_location`; `form: 'text'` gives plain-text
 * documents (the item's text), which Claude cuts into sentences itself and cites as `char_location`.
 * `resolveAnthropicCitations` maps both back.
 */
export function toAnthropicDocuments(
  pack: CitablePack,
  options: AnthropicDocumentsOptions = {},
): (AnthropicContentDocumentBlock | AnthropicTextDocumentBlock)[] {
  const { form, granularity } = parseOrThrow(AnthropicDocumentsOptionsSchema, options, 'Anthropic document options');
  return citableItems(pack, granularity === undefined ? {} : { granularity }).items.map((citable) => {
    const common = {
      title: resultTitle(citable.citation),
      context: documentContext(citable.citation),
      citations: { enabled: true as const },
    };
    if (form === 'text') {
      const data = citable.citable ? citable.item.text : (citable.blocks[0] as string);
      return { type: 'document', source: { type: 'text', media_type: 'text/plain', data }, ...common };
    }
    return { type: 'document', source: { type: 'content', content: textBlocks(citable) }, ...common };
  });
}

// ---------------------------------------------------------------------------------------------
// Requests: what the API would refuse, caught before the call

const looseObject = z.looseObject({});
const RequestSchema = z.looseObject({
  messages: z.array(z.looseObject({ content: z.union([z.string(), z.array(looseObject)]) }), {
    message: 'request.messages must be an array of messages',
  }),
  output_config: z.looseObject({ format: z.looseObject({ type: z.string() }).nullish() }).nullish(),
  output_format: z.looseObject({ type: z.string() }).nullish(),
});

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every `search_result` and `document` block of a request in API order (messages, then blocks, `tool_result` content inside). */
function citableBlocks(
  messages: readonly { content: string | Record<string, unknown>[] }[],
): { kind: 'search_result' | 'document'; block: Record<string, unknown>; where: string }[] {
  const found: { kind: 'search_result' | 'document'; block: Record<string, unknown>; where: string }[] = [];
  messages.forEach((message, m) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block, b) => {
      const visit = (candidate: unknown, where: string) => {
        if (!isObject(candidate)) return;
        if (candidate.type === 'search_result' || candidate.type === 'document')
          found.push({ kind: candidate.type, block: candidate, where });
      };
      if (block.type === 'tool_result' && Array.isArray(block.content))
        block.content.forEach((inner, i) => visit(inner, `messages[${m}].content[${b}].content[${i}]`));
      else visit(block, `messages[${m}].content[${b}]`);
    });
  });
  return found;
}

const citationsOn = (block: Record<string, unknown>) => isObject(block.citations) && block.citations.enabled === true;

/**
 * Throws `invalid_input` for a Messages API request the API would answer with 400 because of its citation
 * inputs: search results with citations on mixed with search results with citations off (on for all or for
 * none), or citations on together with JSON-schema structured output (`output_config.format`). Returns how
 * many search results and documents the request holds with citations on.
 */
export function assertAnthropicRequest(request: unknown): { searchResults: number; documents: number } {
  const parsed = parseOrThrow(RequestSchema, request, 'Anthropic request');
  const blocks = citableBlocks(parsed.messages);
  const results = blocks.filter((b) => b.kind === 'search_result');
  const on = results.filter((b) => citationsOn(b.block));
  if (on.length > 0 && on.length < results.length) {
    const off = results.filter((b) => !citationsOn(b.block)).map((b) => b.where);
    throw invalidInput(
      `Citations must be enabled on every search result of a request or on none (the API answers 400): ${off.length} of ${results.length} have them off (${off.slice(0, 3).join(', ')}${off.length > 3 ? ', …' : ''}); set citations: { enabled: true } on them or send them in another request`,
      ['messages'],
    );
  }
  const documents = blocks.filter((b) => b.kind === 'document' && citationsOn(b.block)).length;
  const format = parsed.output_config?.format?.type ?? parsed.output_format?.type;
  if (format === 'json_schema' && (on.length > 0 || documents > 0)) {
    throw invalidInput(
      'Citations cannot be combined with JSON-schema structured output (the API answers 400): drop output_config.format, or turn citations off',
      ['output_config', 'format'],
    );
  }
  return { searchResults: on.length, documents };
}
