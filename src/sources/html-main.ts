/**
 * What the HTML loader leaves out of a page besides its landmarks' outside: the main-content pass for pages
 * without `<main>` or an `<article>` (older generators: DocBook manuals, old Sphinx, javadoc), the permalink
 * anchors documentation generators put in headings (`¶`, `§`, `#`, `🔗`), and the chrome lines they put between
 * sections (rustdoc's `Source`, `Expand description`).
 *
 * The main-content pass keeps two of Readability's signals, on parse5's tree: blocks whose class or id names them
 * as chrome (navigation, tables of contents, sidebars, headers and footers: Readability's "unlikely candidates")
 * and blocks whose text is mostly link text (a table of contents, a "Prev | Up | Next" bar). Written here rather
 * than with @mozilla/readability: that needs a DOM (jsdom or linkedom, a large dependency for one pass), rewrites
 * the tree it is given and returns cleaned HTML the loader would parse again; and its choice of one top candidate
 * would drop content a generated page spreads over sibling blocks. Every block that is not chrome is kept.
 */
import type { DefaultTreeAdapterMap } from 'parse5';

export type Node = DefaultTreeAdapterMap['node'];
export type Element = DefaultTreeAdapterMap['element'];

export const isElement = (node: Node): node is Element => 'tagName' in node;
export const attr = (element: Element, name: string) => element.attrs.find((a) => a.name === name)?.value;

export function children(node: Node): Node[] {
  if (isElement(node) && node.tagName === 'template') return [];
  return 'childNodes' in node ? node.childNodes : [];
}

export function textOf(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterMap['textNode']).value;
  return children(node).map(textOf).join('');
}

/**
 * Characters (not counting whitespace) of an element's text and of the text inside its links, and the text
 * itself while it is short (what a chrome line is: `Source`, `1.0.0 · Source`, `Expand description`).
 */
export interface LinkStats {
  chars: number;
  linkChars: number;
  short: string | undefined;
}

/** Never text: counted as nothing. */
const UNCOUNTED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);
/** Characters of text kept as `short` (longer text is never chrome); whitespace counted, so a run of it stops it too. */
const SHORT_TEXT = 160;

const visibleChars = (text: string) => {
  let count = 0;
  for (const char of text) if (char.trim() !== '') count += 1;
  return count;
};

/** The text and link text under every element of `root`, in one pass (short texts built while they stay short). */
export function linkStats(root: Element): Map<Element, LinkStats> {
  const stats = new Map<Element, LinkStats>();
  const visit = (node: Node, inLink: boolean): LinkStats => {
    if (node.nodeName === '#text') {
      const value = (node as DefaultTreeAdapterMap['textNode']).value;
      const chars = visibleChars(value);
      return { chars, linkChars: inLink ? chars : 0, short: value.length <= SHORT_TEXT ? value : undefined };
    }
    if (!isElement(node) || UNCOUNTED.has(node.tagName)) return { chars: 0, linkChars: 0, short: '' };
    const link = inLink || (node.tagName === 'a' && attr(node, 'href') !== undefined);
    const own: LinkStats = { chars: 0, linkChars: 0, short: '' };
    for (const child of children(node)) {
      const inner = visit(child, link);
      own.chars += inner.chars;
      own.linkChars += inner.linkChars;
      own.short =
        own.short === undefined || inner.short === undefined || own.short.length + inner.short.length > SHORT_TEXT
          ? undefined
          : own.short + inner.short;
    }
    stats.set(node, own);
    return own;
  };
  visit(root, false);
  return stats;
}

/** Elements a generator's chrome line is made of (a table cell or a paragraph that reads `Source` is content). */
const CHROME_LINE_TAGS = new Set(['a', 'span', 'summary', 'button']);

/** Whether an element holds only a chrome line (`<a class="src">Source</a>`, `<summary>Expand description</summary>`). */
export function isChromeLine(element: Element, stats: ReadonlyMap<Element, LinkStats>): boolean {
  if (!CHROME_LINE_TAGS.has(element.tagName)) return false;
  const short = stats.get(element)?.short;
  return short !== undefined && short.trim() !== '' && isBoilerplateLine(short);
}

/** Words of class names and ids that name chrome (`navheader`, `sphinxsidebar`, `nav-footer` → `nav`, `footer`). */
const CHROME_NAMES = new Set([
  'nav',
  'navbar',
  'navheader',
  'navfooter',
  'navigation',
  'breadcrumb',
  'breadcrumbs',
  'sidebar',
  'sphinxsidebar',
  'menu',
  'toc',
  'related',
  'header',
  'footer',
  'masthead',
  'topbar',
  'skiplink',
  'skip',
]);
/** Words that name content: a block named both ways (`content-sidebar`?) is kept, as Readability keeps it. */
const CONTENT_NAMES = new Set(['content', 'main', 'article', 'body', 'document', 'chapter', 'section']);
/** Blocks the link-density rule looks at (not paragraphs: a sentence of links is still a sentence). */
const DENSITY_BLOCKS = new Set(['div', 'table', 'tbody', 'tr', 'td', 'ul', 'ol', 'dl', 'center', 'section', 'span']);
/** Share of a block's text inside links above which it is chrome (Readability's threshold for its cleaning). */
const MAX_LINK_DENSITY = 0.5;
/** A chrome-named block is left out when it is mostly links or this short (a footer line, a title bar). */
const SHORT_CHROME = 200;

/**
 * The words that name a block: its classes split at dashes and underscores (`nav-footer` → `nav`, `footer`), its
 * id whole (an id is often a heading's slug: `edit-menu` is a section about a menu), a table's summary.
 */
function namesOf(element: Element): string[] {
  const classes = (attr(element, 'class') ?? '').toLowerCase().split(/[\s_-]+/u);
  const summary = (attr(element, 'summary') ?? '').toLowerCase().split(/\s+/u);
  return [...classes, (attr(element, 'id') ?? '').toLowerCase(), ...summary].filter((name) => name !== '');
}

/** Whether a block of a page without landmarks is chrome: named so and short or link-heavy, or mostly links. */
export function isChrome(element: Element, stats: ReadonlyMap<Element, LinkStats>): boolean {
  const own = stats.get(element);
  if (own === undefined || own.chars === 0) return false;
  const density = own.linkChars / own.chars;
  // A section or an article is content by what it is, whatever it is named.
  const names = element.tagName === 'section' || element.tagName === 'article' ? [] : namesOf(element);
  if (names.some((name) => CHROME_NAMES.has(name)) && !names.some((name) => CONTENT_NAMES.has(name))) {
    if (density >= 0.3 || own.chars < SHORT_CHROME) return true;
  }
  return DENSITY_BLOCKS.has(element.tagName) && density > MAX_LINK_DENSITY;
}

/** Permalink glyphs (and the invisible characters some generators put in an anchor instead). */
const GLYPHS = new Set(['#', '¶', '§', '🔗', '⚓', '\u200b', '\ufe0e', '\ufe0f']);

/** Whether a link is a permalink anchor: its text is glyphs only (`¶`, `§`, `#`, `🔗`). */
export function isAnchorGlyphLink(element: Element, text: string): boolean {
  if (element.tagName !== 'a') return false;
  let glyphs = 0;
  for (const char of text) {
    if (char.trim() === '') continue;
    if (!GLYPHS.has(char)) return false;
    glyphs += 1;
  }
  return glyphs > 0;
}

/** Glyphs stripped from either end of a heading whatever stands beside them (`IDLE¶`, `§ Examples`). */
const EDGE_GLYPHS = new Set(['¶', '§', '🔗', '⚓', '\u200b', '\ufe0e', '\ufe0f']);

/**
 * A heading without the permalink glyphs at its ends: `¶`, `§`, `🔗`, `⚓` always; `#` only apart from the words
 * (`File system #`, `# Install`), so `C#` and `F#` keep theirs.
 */
export function cleanHeading(title: string): string {
  const chars = Array.from(title.trim());
  let start = 0;
  let end = chars.length;
  for (;;) {
    const before = end;
    while (end > start && (EDGE_GLYPHS.has(chars[end - 1]!) || chars[end - 1]!.trim() === '')) end -= 1;
    if (end > start && chars[end - 1] === '#' && (end - 1 === start || chars[end - 2]!.trim() === '')) end -= 1;
    if (end === before) break;
  }
  for (;;) {
    const before = start;
    while (start < end && (EDGE_GLYPHS.has(chars[start]!) || chars[start]!.trim() === '')) start += 1;
    if (start < end && chars[start] === '#' && (start + 1 === end || chars[start + 1]!.trim() === '')) start += 1;
    if (start === before) break;
  }
  return chars.slice(start, end).join('');
}

/** Lines generators put between sections, as their letters read (`1.0.0 · Source§` reads `source`). */
const BOILERPLATE = new Set([
  'source',
  'src',
  'constsource', // rustdoc: `Source`, `[src]`, `1.0.0 (const: 1.39.0) · Source`
  'expanddescription',
  'collapsedescription',
  'copyitempath',
  'readmore', // rustdoc
  'permalink',
  'editongithub',
  'editthispage',
  'viewsource',
  'showsource',
  'viewpagesource',
  'backtotop',
  'skiptocontent',
  'skiptomaincontent',
  'tableofcontents',
]);
/** Marks a line of chrome may hold besides its words (`[−]`, `·`, `|`); a line of these alone is chrome too. */
const MARKS = new Set([...GLYPHS, '·', '•', '|', '[', ']', '+', '−', '-', '↑', '▲', '▼']);
/** Letters of the longest phrase above and then some: a longer line is never chrome (and is not read further). */
const MAX_LETTERS = 24;

/** Whether a line is only generator chrome: a phrase of `BOILERPLATE` with version numbers and marks, or marks alone. */
export function isBoilerplateLine(line: string): boolean {
  let letters = '';
  let marksOnly = true;
  for (const char of line) {
    if (char.trim() === '') continue;
    if (/\p{L}/u.test(char)) {
      letters += char.toLowerCase();
      if (letters.length > MAX_LETTERS) return false;
      marksOnly = false;
    } else if (!MARKS.has(char)) marksOnly = false;
  }
  if (letters === '') return marksOnly && line.trim() !== '';
  return BOILERPLATE.has(letters);
}
