// Splits a pack's context back into what the model reads as one block per item, plus the frame between
// them (wrappers, zone headings, separators, the caveats block), so the report can show the context verbatim
// and still label each block with its ref, role and rank.
import { escapeBody } from '../render/escape.js';
import type { InspectablePack } from './schema.js';

export type ContextSegment =
  { kind: 'item'; index: number; text: string } | { kind: 'frame'; text: string } | { kind: 'caveats'; text: string };

interface SegmentedContext {
  segments: ContextSegment[];
  /** False when the blocks could not be located (a context rendered by other code): one frame holds it all. */
  split: boolean;
}

const FORMATS = ['markdown', 'xml', 'text'] as const;
type KnownFormat = (typeof FORMATS)[number];
const isKnownFormat = (format: string): format is KnownFormat => (FORMATS as readonly string[]).includes(format);

function marker(format: KnownFormat, ref: number): string {
  return format === 'xml' ? `<document index="${ref}">` : `[${ref}] `;
}

/** The first occurrence of `needle` at a line start, at or after `from`; -1 when none. */
function lineStartIndexOf(haystack: string, needle: string, from: number): number {
  for (let at = haystack.indexOf(needle, from); at >= 0; at = haystack.indexOf(needle, at + 1)) {
    if (at === 0 || haystack[at - 1] === '\n') return at;
  }
  return -1;
}

/** Where the block that starts at `start` ends, when its shape can be confirmed; else null. */
function blockEnd(context: string, format: KnownFormat, item: InspectablePack['items'][number], start: number): number | null {
  if (format === 'xml') {
    // Content and provenance are XML-escaped, so the first closing tag after the marker is this block's.
    const close = context.indexOf('\n</document>', start);
    return close < 0 ? null : close + '\n</document>'.length;
  }
  const newline = context.indexOf('\n', start);
  const headerEnd = newline < 0 ? context.length : newline;
  if (item.pointer) return headerEnd;
  if (newline < 0) return null;
  const body = `${escapeBody(format, item.text, item.truncated)}${item.truncated ? ' …' : ''}`;
  return context.startsWith(body, newline + 1) ? newline + 1 + body.length : null;
}

export function segmentContext(pack: InspectablePack): SegmentedContext {
  const { context, items } = pack;
  const whole: SegmentedContext = { segments: context === '' ? [] : [{ kind: 'frame', text: context }], split: false };
  if (!isKnownFormat(pack.format)) return whole;
  const format = pack.format;

  const bounds: { start: number; end: number }[] = [];
  let from = 0;
  for (const [index, item] of items.entries()) {
    const start = lineStartIndexOf(context, marker(format, item.ref), from);
    if (start < 0) return whole;
    const previous = bounds[index - 1];
    if (previous !== undefined && previous.end < 0) previous.end = start; // unconfirmed end: up to this block
    const end = blockEnd(context, format, item, start);
    bounds.push({ start, end: end ?? -1 });
    from = end ?? start + 1;
  }

  const segments: ContextSegment[] = [];
  let at = 0;
  const frame = (text: string) => {
    if (text !== '') segments.push({ kind: 'frame', text });
  };
  bounds.forEach(({ start, end }, index) => {
    const stop = end < 0 ? context.length : end;
    frame(context.slice(at, start));
    segments.push({ kind: 'item', index, text: context.slice(start, stop) });
    at = stop;
  });
  const tail = context.slice(at);
  // a briefing's caveats block closes the context (xml wraps it; the closing tag stays frame)
  const cut = pack.caveats !== null && pack.caveats !== '' ? tail.lastIndexOf(pack.caveats) : -1;
  if (cut >= 0 && pack.caveats !== null) {
    frame(tail.slice(0, cut));
    segments.push({ kind: 'caveats', text: pack.caveats });
    frame(tail.slice(cut + pack.caveats.length));
  } else {
    frame(tail);
  }
  return { segments, split: true };
}
