/**
 * The HTML loader: the page's main content as text, headings h1–h6 as the section path of what follows them,
 * the title from `<title>` (else the first h1). Parsed by parse5 (the WHATWG parsing algorithm: broken markup is
 * repaired as browsers repair it, entities decoded). Main content is the page's `<main>` (or `role="main"`),
 * else its one `<article>`, else `<body>`; scripts, styles, forms, navigation, asides and the page's own header
 * and footer are left out wherever they are.
 */
import type { DefaultTreeAdapterMap } from 'parse5';
import { sha256Hex } from '../base/canonical.js';
import type { IngestDocument, Region } from '../store/schemas.js';
import { fileTitle } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { decodeText, notText } from './text.js';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

/** Never content: code, styling, embedded documents, controls. */
const DROPPED = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'canvas', 'form', 'button', 'select', 'textarea', 'input', 'nav', 'aside', 'dialog', 'head']);
/** Boilerplate roles, wherever they are. */
const DROPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar', 'toolbar', 'dialog']);
/** Elements whose content starts and ends a paragraph. */
const BLOCKS = new Set([
  'p', 'div', 'section', 'article', 'main', 'blockquote', 'pre', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'thead', 'tbody', 'tfoot', 'tr',
  'figure', 'figcaption', 'address', 'details', 'summary', 'hr', 'header', 'footer', 'caption', 'fieldset', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
]);
const HEADING = /^h([1-6])$/u;
/** Sectioning elements: a header or footer inside one belongs to it (an article's header holds its h1) and is kept. */
const SECTIONING = new Set(['article', 'section', 'main']);

const isElement = (node: Node): node is Element => 'tagName' in node;
const attr = (element: Element, name: string) => element.attrs.find((a) => a.name === name)?.value;

function children(node: Node): Node[] {
  if (isElement(node) && node.tagName === 'template') return [];
  return 'childNodes' in node ? (node.childNodes as Node[]) : [];
}

function find(node: Node, test: (element: Element) => boolean, out: Element[] = []): Element[] {
  for (const child of children(node)) {
    if (!isElement(child)) continue;
    if (test(child)) out.push(child);
    find(child, test, out);
  }
  return out;
}

function textOf(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterMap['textNode']).value;
  return children(node).map(textOf).join('');
}

const collapse = (text: string) => text.replace(/[\s\u00a0]+/gu, ' ');

/** The element whose content is the page's main text. */
function mainOf(root: Node): Element | undefined {
  const main = find(root, (e) => e.tagName === 'main' || attr(e, 'role') === 'main');
  if (main.length > 0) return main[0];
  const articles = find(root, (e) => e.tagName === 'article');
  if (articles.length === 1) return articles[0];
  return find(root, (e) => e.tagName === 'body')[0];
}

interface Built {
  text: string;
  regions: Region[];
  firstHeading: string | undefined;
}

/** Text with blank lines between blocks, headings on their own lines, and one region per heading's section. */
function build(main: Element): Built {
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
    if (text.length > regionStart) regions.push({ start: regionStart, end: text.length, ...(section.length > 0 ? { section: [...section] } : {}) });
  };
  const walk = (node: Node, inSection: boolean, pre: boolean) => {
    if (node.nodeName === '#text') {
      const value = (node as DefaultTreeAdapterMap['textNode']).value;
      line += pre ? value : collapse(value);
      return;
    }
    if (!isElement(node)) return;
    const tag = node.tagName;
    if (DROPPED.has(tag) || DROPPED_ROLES.has(attr(node, 'role') ?? '') || attr(node, 'hidden') !== undefined || attr(node, 'aria-hidden') === 'true') return;
    if ((tag === 'header' || tag === 'footer') && !inSection) return;
    if (tag === 'br') {
      line += '\n';
      return;
    }
    const heading = HEADING.exec(tag);
    if (heading) {
      const title = collapse(textOf(node)).trim();
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
  return { text, regions, firstHeading };
}

// parse5 is imported on the first page, not with the package: most loads read no HTML.
let parse5: Promise<typeof import('parse5')> | undefined;

/** The document of an HTML page (exported for the e-mail loader, which reads HTML bodies). */
export async function htmlDocument(html: string, id: string, fallbackTitle: string): Promise<IngestDocument & { regions: Region[] }> {
  parse5 ??= import('parse5');
  const root = (await parse5).parse(html) as Node;
  const main = mainOf(root);
  const built = main === undefined ? { text: '', regions: [], firstHeading: undefined } : build(main);
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
