/**
 * The PDF loader: the text of every page, read with pdf.js (`pdfjs-dist`, an optional dependency loaded on
 * the first PDF). Each page is a region with its page number, so a chunk never spans two pages and its
 * locator names the page (and its printed label, from /PageLabels, when it is not the page's number);
 * paragraphs are told apart by the gaps between lines; running headers and footers are left out and words
 * hyphenated at line ends made whole (pdf-layout.ts says how). An encrypted PDF, one with no
 * text layer (scanned images) and one pdf.js cannot open (truncated, not a PDF) or whose pages show nothing
 * (damaged) are skipped with the reason; pages past `maxPages` are left out with a warning. Streams that decode
 * to more than `maxInflatedBytes` (or 32 times the file) skip the file before pdf.js reads it (pdf-streams.ts).
 */
import type { Region } from '../store/schemas.js';
import { fileTitle, isMissingModule, missingLibrary, reasonOf, versionOfBytes } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { DEFAULT_LOAD_LIMITS } from './limits.js';
import { dropRunningLines, joinHyphenation, type PageLine } from './pdf-layout.js';
import { decodedBytes } from './pdf-streams.js';
import { PAGE_LABEL } from '../core/schemas.js';

// The few pdf.js shapes read here (its own types are not needed to build without the optional package).
interface TextItem {
  str: string;
  hasEOL?: boolean;
  transform: number[];
  height: number;
}
interface PdfPage {
  getTextContent(): Promise<{ items: Array<TextItem | { type: string }> }>;
  getOperatorList(): Promise<{ fnArray: number[] }>;
  cleanup(): void;
}
interface PdfDocument {
  numPages: number;
  getPageLabels(): Promise<string[] | null>;
  getPage(n: number): Promise<PdfPage>;
  getMetadata(): Promise<{ info?: Record<string, unknown> }>;
  destroy(): Promise<void>;
}
interface PdfJs {
  getDocument(options: Record<string, unknown>): { promise: Promise<PdfDocument>; destroy(): Promise<void> };
  OPS: Record<string, number>;
}

// The legacy build is the one made for Node (no DOM, no browser-only APIs).
const PDFJS = 'pdfjs-dist/legacy/build/pdf.mjs';
let pdfjs: Promise<PdfJs> | undefined;

/** pdf.js, imported on the first PDF (it costs about 200 ms and most loads read no PDF). */
function loadPdfJs(): Promise<PdfJs> {
  pdfjs ??= (import(/* @vite-ignore */ PDFJS) as Promise<PdfJs>).catch((error: unknown) => {
    pdfjs = undefined;
    throw error;
  });
  return pdfjs;
}

/**
 * A page's lines: items joined, a new line where pdf.js ends one, a blank line before it where the gap between
 * lines is wider than a line; trailing whitespace trimmed and lines of whitespace left out.
 */
export function pageLines(items: ReadonlyArray<TextItem | { type: string }>): PageLine[] {
  const lines: PageLine[] = [];
  // The current line's pieces, joined once when it ends.
  let parts: string[] = [];
  let current: PageLine | undefined;
  let lastY: number | undefined;
  let lastHeight = 0;
  let pendingBreak = false;
  const endLine = () => {
    if (current === undefined) return;
    current.text = parts.join('').trimEnd();
    parts = [];
    // A line of whitespace leaves no trace: the next line's separator is the gap from this one's items.
    if (current.text !== '') lines.push(current);
    current = undefined;
  };
  for (const item of items) {
    if (!('str' in item)) continue;
    const y = item.transform[5] ?? 0;
    if (item.str !== '') {
      if (pendingBreak && lastY !== undefined) {
        const gap = Math.abs(lastY - y);
        endLine();
        current = { text: '', y, sep: gap > 1.8 * Math.max(lastHeight, item.height, 1) ? '\n\n' : '\n' };
      }
      current ??= { text: '', y, sep: '\n' };
      pendingBreak = false;
      parts.push(item.str);
      lastY = y;
      lastHeight = item.height;
    }
    if (item.hasEOL === true) pendingBreak = true;
  }
  endLine();
  return lines;
}

/** Lines joined by their separators, the whole trimmed (what a page's text is). */
export function joinLines(lines: readonly PageLine[]): string {
  return lines
    .map((line, index) => (index === 0 ? line.text : line.sep + line.text))
    .join('')
    .trim();
}

/** A page's text: items joined, a line break where pdf.js ends a line, a blank line where a gap between lines is wider than a line. */
export function pageText(items: ReadonlyArray<TextItem | { type: string }>): string {
  return joinLines(pageLines(items));
}

/**
 * The printed label of each page (PDF /PageLabels, read by pdf.js: decimal, roman, letters, prefixes, start values),
 * undefined where it is the page's own number or not one a header can show; null when the PDF has none.
 */
async function pageLabels(pdf: PdfDocument): Promise<Array<string | undefined> | null> {
  let labels: string[] | null;
  try {
    labels = await pdf.getPageLabels();
  } catch {
    // A damaged /PageLabels tree costs the labels, not the text.
    return null;
  }
  if (labels === null) return null;
  return labels.map((raw, index) => {
    const label = raw.replace(/\s+/gu, ' ').trim();
    return label === '' || label === String(index + 1) || !PAGE_LABEL.test(label) ? undefined : label;
  });
}

/** A PDF's streams may decode to this many times its size (or `maxInflatedBytes`, whichever is larger). */
const INFLATE_RATIO = 32;
/** Pages read × the page count: beyond it, a PDF is read in part (a flat tree of a million pages costs a million steps per page). */
const PAGE_LOOKUP_BUDGET = 20_000_000;
/** Pages whose drawing operations are looked at to tell a scan from a damaged PDF. */
const PAGES_LOOKED_AT = 3;

/** Whether one of the first pages paints anything: an image, a path, a shading. */
async function showsSomething(lib: PdfJs, pdf: PdfDocument, pages: number): Promise<boolean> {
  const painting = new Set(
    Object.entries(lib.OPS)
      .filter(([name]) =>
        /^(?:constructPath|fill|eoFill|stroke|closeStroke|fillStroke|eoFillStroke|closeFillStroke|closeEOFillStroke|shadingFill|paint\w*(?:Image|Mask|Form)\w*)$/u.test(
          name,
        ),
      )
      .map(([, code]) => code),
  );
  for (let n = 1; n <= Math.min(pages, PAGES_LOOKED_AT); n += 1) {
    try {
      const page = await pdf.getPage(n);
      const { fnArray } = await page.getOperatorList();
      page.cleanup();
      if (fnArray.some((code) => painting.has(code))) return true;
    } catch {
      // A page that cannot be read shows nothing.
    }
  }
  return false;
}

function skipFor(error: unknown): LoaderResult {
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'PasswordException')
    return { skip: { reason: 'encrypted', message: 'an encrypted PDF (it needs a password); decrypt it first, e.g. qpdf --decrypt' } };
  if (name === 'InvalidPDFException')
    return { skip: { reason: 'unreadable', message: 'not a readable PDF (truncated or damaged: pdf.js found no valid structure)' } };
  return { skip: { reason: 'unreadable', message: `pdf.js could not read it: ${reasonOf(error)}` } };
}

export const pdfLoader: Loader = {
  name: 'pdf',
  extensions: ['.pdf'],
  async load(input, context): Promise<LoaderResult> {
    let lib: PdfJs;
    try {
      lib = await loadPdfJs();
    } catch (error) {
      if (isMissingModule(error, 'pdfjs-dist')) return missingLibrary('PDF', 'pdfjs-dist');
      throw error;
    }
    const maxPages = context.limits?.maxPages ?? DEFAULT_LOAD_LIMITS.maxPages;
    // pdf.js decodes a stream whole when it reads it: streams that decode to more than the budget are never handed to it.
    const budget = Math.max(context.limits?.maxInflatedBytes ?? DEFAULT_LOAD_LIMITS.maxInflatedBytes, INFLATE_RATIO * input.bytes.length);
    if ((await decodedBytes(input.bytes, budget)) > budget) {
      return {
        skip: {
          reason: 'too-large',
          message: `its compressed streams decode to over ${budget} bytes (a compression bomb, or a PDF beyond maxInflatedBytes)`,
        },
      };
    }
    // pdf.js takes ownership of the buffer it is given: a copy keeps the caller's bytes intact.
    const task = lib.getDocument({
      data: new Uint8Array(input.bytes),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
      stopAtErrors: false,
    });
    let pdf: PdfDocument;
    try {
      pdf = await task.promise;
    } catch (error) {
      await task.destroy().catch(() => undefined);
      return skipFor(error);
    }
    try {
      const warnings: string[] = [];
      // pdf.js finds a page by walking the page tree from its root, which in a flat tree (one list of every page)
      // costs as much as the page count: reading pages × the page count is bounded.
      const lookable = Math.max(1, Math.floor(PAGE_LOOKUP_BUDGET / Math.max(1, pdf.numPages)));
      const pages = Math.min(pdf.numPages, maxPages, lookable);
      if (pdf.numPages > pages) {
        warnings.push(
          `read the first ${pages} of ${pdf.numPages} pages (${pages === maxPages ? 'maxPages' : 'pages are looked up in a tree of every page: a PDF this long is read in part'})`,
        );
      }
      const read: Array<{ page: number; lines: PageLine[] }> = [];
      let unreadable = 0;
      for (let n = 1; n <= pages; n += 1) {
        if (context.signal?.aborted) break;
        let page: PdfPage;
        let lines: PageLine[];
        try {
          page = await pdf.getPage(n);
          lines = pageLines((await page.getTextContent()).items);
          page.cleanup();
        } catch {
          unreadable += 1;
          continue;
        }
        if (lines.length > 0) read.push({ page: n, lines });
      }
      // Running headers and footers go first, so a header line never joins a hyphenated word. Pages that held
      // nothing else (the same few lines on every page) keep their lines: a document is never emptied.
      const cleaned = joinHyphenation(dropRunningLines(read.map((p) => p.lines)).pages).pages;
      const clean = cleaned.some((lines) => lines.length > 0) ? cleaned : read.map((p) => p.lines);
      const labels = await pageLabels(pdf);
      let text = '';
      const regions: Region[] = [];
      read.forEach(({ page }, index) => {
        const content = joinLines(clean[index]!);
        if (content === '') return;
        if (text !== '') text += '\n\n';
        const start = text.length;
        text += content;
        const label = labels?.[page - 1];
        regions.push({ start, end: text.length, page, ...(label === undefined ? {} : { pageLabel: label }) });
      });
      if (unreadable > 0)
        warnings.push(
          `${unreadable} page${unreadable === 1 ? '' : 's'} could not be read and ${unreadable === 1 ? 'was' : 'were'} left out`,
        );
      if (regions.length === 0) {
        // OCR helps a page that shows something (a scan, a drawing); a PDF whose pages cannot be read or show nothing is damaged.
        if (unreadable < pages && (await showsSomething(lib, pdf, pages))) {
          return {
            skip: {
              reason: 'no-text',
              message: 'a PDF without a text layer (scanned pages or images only); run OCR on it first, e.g. ocrmypdf',
            },
          };
        }
        return {
          skip: {
            reason: 'unreadable',
            message: 'a damaged PDF: pdf.js opened it but its pages cannot be read or show nothing (OCR would not help)',
          },
        };
      }
      const info = await pdf.getMetadata().then(
        (meta): Record<string, unknown> => meta.info ?? {},
        (): Record<string, unknown> => ({}),
      );
      const title = typeof info.Title === 'string' && info.Title.trim() !== '' ? info.Title.trim() : fileTitle(input.path);
      return {
        documents: [{ id: input.sourceId, text, title, version: versionOfBytes(input.bytes), regions }],
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    } finally {
      await pdf.destroy().catch(() => undefined);
    }
  },
};
