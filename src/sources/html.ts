/**
 * The HTML loader: the page's main content as text, headings h1–h6 as the section path of what follows them,
 * the title from `<title>` (else the first h1). Parsed by parse5 (the WHATWG parsing algorithm: broken markup is
 * repaired as browsers repair it, entities decoded). Main content is the page's `<main>` (or `role="main"`),
 * else its one `<article>`, else `<body>`; scripts, styles, forms, navigation, asides and the page's own header
 * and footer are left out wherever they are.
 *
 * Pages without those landmarks (older generators: DocBook, old Sphinx, javadoc) get a main-content pass in
 * the spirit of Readability (html-main.ts): blocks named as navigation, tables of contents or sidebars, and blocks
 * that are mostly link text, are left out. Everywhere, permalink anchors (`¶`, `§`, `#`, `🔗`) are left out of
 * headings and text, and a section whose text is only generator chrome (rustdoc's `Source` links, `Expand
 * description`) gives no chunk.
 */
import type { DefaultTreeAdapterMap } from 'parse5';
import { sha256Hex } from '../base/canonical.js';
import type { IngestDocument, Region } from '../store/schemas.js';
import { fileTitle } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { decodeText, notText } from './text.js';
import {
  attr,
  children,
  cleanHeading,
  isAnchorGlyphLink,
  isBoilerplateLine,
  isChrome,
  isChromeLine,
  isElement,
  linkStats,
  textOf,
  type Element,
  type LinkStats,
  type Node,
} from './html-main.js';

/** Never content: code, styling, embedded documents, controls. */
const DROPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'form',
  'button',
  'select',
  'textarea',
  'input',
  'nav',
  'aside',
  'dialog',
  'head',
]);
/** Boilerplate roles, wherever they are. */
const DROPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar', 'toolbar', 'dialog']);
/** Elements whose content starts and ends a paragraph. */
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'blockquote',
  'pre',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'figure',
  'figcaption',
  'address',
  'details',
  'summary',
  'hr',
  'header',
  'footer',
  'caption',
  'fieldset',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);
const HEADING = /^h([1-6])$/u;
/** Sectioning elements: a header or footer inside one belongs to it (an article's header holds its h1) and is kept. */
const SECTIONING = new Set(['article', 'section', 'main']);

function find(node: Node, test: (element: Element) => boolean, out: Element[] = []): Element[] {
  for (const child of children(node)) {
    if (!isElement(child)) continue;
    if (test(child)) out.push(child);
    find(child, test, out);
  }
  return out;
}

const collapse = (text: string) => text.replace(/[\s\u00a0]+/gu, ' ');

/** The element whose content is the page's main text, and whether a landmark names it (else it is the body). */
function mainOf(root: Node): { element: Element | undefined; landmark: boolean } {
  const main = find(root, (e) => e.tagName === 'main' || attr(e, 'role') === 'main');
  if (main.length > 0) return { element: main[0], landmark: true };
  const articles = find(root, (e) => e.tagName === 'article');
  if (articles.length === 1) return { element: articles[0], landmark: true };
  return { element: find(root, (e) => e.tagName === 'body')[0], landmark: false };
}

interface Built {
  text: string;
  regions: Region[];
  firstHeading: string | undefined;
}

/**
 * Text with blank lines between blocks, headings on their own lines, and one region per heading's section.
 * Chrome lines are left out; with `density` (a page without landmarks), chrome blocks too (html-main.ts).
 */
function build(main: Element, stats: ReadonlyMap<Element, LinkStats>, density: boolean): Built {
  let text = '';
  let line = '';
  const stack: (string | undefined)[] = [];
  const regions: Region[] = [];
  let regionStart = 0;
  let section: string[] = [];
  let firstHeading: string | undefined;

  const flushLine = () => {
    const trimmed = line.trim();
    line = '';
    if (trimmed === '') return;
    text += (text === '' ? '' : '\n\n') + trimmed;
  };
  const closeRegion = () => {
    flushLine();
    if (text.length > regionStart)
      regions.push({ start: regionStart, end: text.length, ...(section.length > 0 ? { section: [...section] } : {}) });
  };
  const walk = (node: Node, inSection: boolean, pre: boolean) => {
    if (node.nodeName === '#text') {
      const value = (node as DefaultTreeAdapterMap['textNode']).value;
      line += pre ? value : collapse(value);
      return;
    }
    if (!isElement(node)) return;
    const tag = node.tagName;
    if (
      DROPPED.has(tag) ||
      DROPPED_ROLES.has(attr(node, 'role') ?? '') ||
      attr(node, 'hidden') !== undefined ||
      attr(node, 'aria-hidden') === 'true'
    )
      return;
    if ((tag === 'header' || tag === 'footer') && !inSection) return;
    if (tag === 'a' && isAnchorGlyphLink(node, stats.get(node)?.short ?? '')) return;
    if (isChromeLine(node, stats) || (density && isChrome(node, stats))) return;
    if (tag === 'br') {
      line += '\n';
      return;
    }
    const heading = HEADING.exec(tag);
    if (heading) {
      const title = cleanHeading(collapse(headingText(node)));
      if (title === '') return;
      firstHeading ??= tag === 'h1' ? title : undefined;
      closeRegion();
      const level = Number(heading[1]);
      stack.length = level;
      stack[level - 1] = title;
      section = stack.filter((part): part is string => part !== undefined);
      // The heading's own line is in the text (it reads as the page does) but in no region: like a markdown
      // heading, it is the section of what follows, not a chunk of its own.
      text += (text === '' ? '' : '\n\n') + title;
      regionStart = text.length;
      return;
    }
    const block = BLOCKS.has(tag);
    if (block) flushLine();
    if (tag === 'li') line += '- ';
    const nowInSection = inSection || SECTIONING.has(tag);
    for (const child of children(node)) walk(child, nowInSection, pre || tag === 'pre');
    if (block || tag === 'td' || tag === 'th') {
      if (tag === 'td' || tag === 'th') line += ' ';
      else flushLine();
    }
  };
  for (const child of children(main)) walk(child, SECTIONING.has(main.tagName), false);
  closeRegion();
  return { text, regions: withoutBoilerplate(text, regions), firstHeading };
}

/** A heading's text without its permalink anchors and what is never shown (a copy button, an icon). */
function headingText(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterMap['textNode']).value;
  if (!isElement(node)) return '';
  if (DROPPED.has(node.tagName) || attr(node, 'hidden') !== undefined || attr(node, 'aria-hidden') === 'true') return '';
  if (node.tagName === 'a' && isAnchorGlyphLink(node, textOf(node))) return '';
  return children(node).map(headingText).join('');
}

/**
 * The regions with the generator's chrome lines trimmed from their ends (rustdoc's `Source`, `Expand
 * description`), and regions that held nothing else left out: they would be chunks of their own.
 */
function withoutBoilerplate(text: string, regions: readonly Region[]): Region[] {
  const out: Region[] = [];
  for (const region of regions) {
    let start = region.start;
    let end = region.end;
    let trimmed = false;
    // Line by line from each end; a line is what lies between line breaks.
    while (start < end && text[start] === '\n') start += 1;
    for (;;) {
      const lineEnd = text.indexOf('\n', start);
      const stop = lineEnd === -1 || lineEnd > end ? end : lineEnd;
      if (start >= end || !isBoilerplateLine(text.slice(start, stop))) break;
      trimmed = true;
      start = stop;
      while (start < end && text[start] === '\n') start += 1;
    }
    for (;;) {
      const lineStart = text.lastIndexOf('\n', end - 1) + 1;
      const from = Math.max(lineStart, start);
      if (end <= start || !isBoilerplateLine(text.slice(from, end))) break;
      trimmed = true;
      end = from;
      while (end > start && text[end - 1] === '\n') end -= 1;
    }
    // A region with no chrome line stays as it was (its bytes, so its chunks, unchanged).
    if (!trimmed) out.push(region);
    else if (end > start) out.push({ ...region, start, end });
  }
  return out;
}

// parse5 is imported on the first page, not with the package: most loads read no HTML.
let parse5: Promise<typeof import('parse5')> | undefined;

/** The document of an HTML page (exported for the e-mail loader, which reads HTML bodies). */
export async function htmlDocument(html: string, id: string, fallbackTitle: string): Promise<IngestDocument & { regions: Region[] }> {
  parse5 ??= import('parse5');
  const root = (await parse5).parse(html) as Node;
  const { element: main, landmark } = mainOf(root);
  let built: Built = { text: '', regions: [], firstHeading: undefined };
  if (main !== undefined) {
    const stats = linkStats(main);
    built = build(main, stats, !landmark);
    // A page that is all links (an index) keeps them: left out, nothing would be left.
    if (!landmark && built.regions.length === 0) built = build(main, stats, false);
  }
  const titleElement = find(root, (e) => e.tagName === 'title')[0];
  const title = (titleElement ? collapse(textOf(titleElement)).trim() : '') || built.firstHeading || fallbackTitle;
  return { id, text: built.text, title, regions: built.regions };
}

export const htmlLoader: Loader = {
  name: 'html',
  extensions: ['.html', '.htm', '.xhtml'],
  async load(input): Promise<LoaderResult> {
    const decoded = decodeText(input.bytes);
    if ('problem' in decoded) return notText(decoded.problem);
    const doc = await htmlDocument(decoded.text, input.sourceId, fileTitle(input.path));
    // The version hashes the page as written, so a change in markup alone is a new version too.
    return { documents: [{ ...doc, version: sha256Hex(decoded.text).slice(0, 12) }] };
  },
};
