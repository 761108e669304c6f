import type { BlockProvenance, HeaderStyle, ItemRole, PackFormat } from './formats.js';
import { escapeBody, escapeLine, escapeXml, headerField, oneLine, quoteField } from './escape.js';
import { locatorParts } from './locator.js';

/** What a rendered block shows: its marker, its provenance and its (already cut) body. */
export interface BlockInput {
  ref: number;
  candidate: BlockProvenance;
  body: string;
  truncated: boolean;
  /** A pinned item that did not fit: one line pointing at the source instead of the text. */
  pointer?: { tokens: number } | undefined;
}

export interface ZonedBlocks {
  role: ItemRole;
  blocks: string[];
}

const ELLIPSIS = ' …';

function provenanceParts(format: PackFormat, candidate: BlockInput['candidate']): string[] {
  const parts = [`source: ${headerField(format, candidate.sourceId ?? candidate.id)}`];
  if (candidate.version !== undefined && oneLine(candidate.version) !== '')
    parts.push(`version: ${headerField(format, candidate.version)}`);
  if (candidate.section !== undefined && candidate.section.length > 0) {
    parts.push(`section: ${candidate.section.map((part) => headerField(format, part)).join(' > ')}`);
  }
  // Numbers only (see locator.ts): nothing in a locator needs quoting or escaping.
  parts.push(...locatorParts(candidate.locator));
  return parts;
}

function pointerNote(tokens: number): string {
  return `pinned; not shown in full (${tokens} tokens did not fit the budget)`;
}

/**
 * The one name a compact or minimal header shows: the title, or the source when there is no title or the
 * title is the source (a file named after itself needs saying once).
 */
function nameOf(candidate: BlockInput['candidate'], title: string | undefined): { field: 'title' | 'source'; value: string } {
  const source = candidate.sourceId ?? candidate.id;
  if (title === undefined || oneLine(title) === oneLine(source)) return { field: 'source', value: source };
  return { field: 'title', value: title };
}

function renderXmlBlock(block: BlockInput, title: string | undefined, header: HeaderStyle): string {
  const { candidate } = block;
  const lines = [`<document index="${block.ref}">`];
  if (header === 'full') {
    lines.push(`<source>${escapeXml(oneLine(candidate.sourceId ?? candidate.id))}</source>`);
    if (title !== undefined) lines.push(`<title>${escapeXml(oneLine(title))}</title>`);
    if (candidate.version !== undefined && oneLine(candidate.version) !== '') {
      lines.push(`<version>${escapeXml(oneLine(candidate.version))}</version>`);
    }
    if (candidate.section !== undefined && candidate.section.length > 0) {
      // Parts are quoted when needed so that one part cannot pass for two.
      lines.push(`<section>${escapeXml(candidate.section.map((part) => quoteField(oneLine(part))).join(' > '))}</section>`);
    }
  } else {
    const name = nameOf(candidate, title);
    lines.push(`<${name.field}>${escapeXml(oneLine(name.value))}</${name.field}>`);
  }
  const locator = header === 'minimal' ? [] : locatorParts(candidate.locator);
  if (locator.length > 0) lines.push(`<locator>${locator.join(', ')}</locator>`);
  if (block.pointer) {
    lines.push(`<note>${pointerNote(block.pointer.tokens)}</note>`);
  } else {
    lines.push('<document_content>', escapeBody('xml', block.body) + (block.truncated ? ELLIPSIS : ''), '</document_content>');
  }
  lines.push('</document>');
  return lines.join('\n');
}

/** The header line of a markdown or text block, as `header` asks (see HEADER_STYLES). */
function headerLine(format: PackFormat, block: BlockInput, title: string | undefined, header: HeaderStyle): string {
  const { candidate } = block;
  if (header === 'full') {
    const provenance = provenanceParts(format, candidate).join(', ');
    return `[${block.ref}] ${title !== undefined ? `${headerField(format, title)} ` : ''}(${provenance})`;
  }
  const name = headerField(format, nameOf(candidate, title).value);
  const locator = header === 'minimal' ? [] : locatorParts(candidate.locator);
  return `[${block.ref}] ${name}${locator.length > 0 ? ` (${locator.join(', ')})` : ''}`;
}

/** Renders one block. `body` is the item text before escaping. */
export function renderBlock(format: PackFormat, block: BlockInput, header: HeaderStyle): string {
  const { candidate } = block;
  const title = candidate.title !== undefined && oneLine(candidate.title) !== '' ? candidate.title : undefined;
  if (format === 'xml') return renderXmlBlock(block, title, header);
  const line = headerLine(format, block, title, header);
  if (block.pointer) return `${line} — ${pointerNote(block.pointer.tokens)}`;
  return `${line}\n${escapeBody(format, block.body, block.truncated)}${block.truncated ? ELLIPSIS : ''}`;
}

/** Caveat lines rendered as the final block of a briefing. Lines are computed facts, escaped like content. */
export function renderCaveats(format: PackFormat, lines: readonly string[]): string {
  const escaped = lines.map((line) => `- ${escapeLine(format, oneLine(line))}`);
  if (format === 'xml') return ['<caveats>', ...escaped, '</caveats>'].join('\n');
  if (format === 'markdown') return ['## Caveats', '', ...escaped].join('\n');
  return ['== Caveats ==', ...escaped].join('\n');
}

/** Bundle context: blocks in context order. */
export function renderBundleContext(format: PackFormat, blocks: readonly string[]): string {
  if (blocks.length === 0) return '';
  if (format === 'xml') return ['<documents>', ...blocks, '</documents>'].join('\n');
  return blocks.join('\n\n');
}

const ZONE_TITLES: Record<ItemRole, string> = { grounding: 'Grounding', evidence: 'Evidence' };

/** Briefing context: zones in order (empty zones are left out), then the caveats block. */
export function renderBriefingContext(format: PackFormat, zones: readonly ZonedBlocks[], caveats: string | null): string {
  const parts: string[] = [];
  for (const zone of zones) {
    if (zone.blocks.length === 0) continue;
    const title = ZONE_TITLES[zone.role];
    if (format === 'xml') parts.push([`<${zone.role}>`, ...zone.blocks, `</${zone.role}>`].join('\n'));
    else if (format === 'markdown') parts.push([`## ${title}`, ...zone.blocks].join('\n\n'));
    else parts.push([`== ${title} ==`, ...zone.blocks].join('\n\n'));
  }
  if (caveats !== null) parts.push(caveats);
  if (parts.length === 0) return '';
  if (format === 'xml') return ['<briefing>', ...parts, '</briefing>'].join('\n');
  return parts.join('\n\n');
}
