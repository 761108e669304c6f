/**
 * The PDF loader: the text of every page, read with pdf.js (`pdfjs-dist`, an optional dependency loaded on
 * the first PDF). Each page is a region with its page number, so a chunk never spans two pages and its
 * locator names the page; paragraphs are told apart by the gaps between lines. An encrypted PDF, one with no
 * text layer (scanned images) and one pdf.js cannot open (truncated, not a PDF) or whose pages show nothing
 * (damaged) are skipped with the reason; pages past `maxPages` are left out with a warning. Streams that decode
 * to more than `maxInflatedBytes` (or 32 times the file) skip the file before pdf.js reads it (pdf-streams.ts).
 */
import type { Region } from '../store/schemas.js';
import { fileTitle, isMissingModule, missingLibrary, reasonOf, versionOfBytes } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { DEFAULT_LOAD_LIMITS } from './limits.js';
import { decodedBytes } from './pdf-streams.js';

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

/** A page's text: items joined, a line break where pdf.js ends a line, a blank line where a gap between lines is wider than a line. */
export function pageText(items: ReadonlyArray<TextItem | { type: string }>): string {
  // Pieces joined once at the end: trimming the whole text so far at every line break is quadratic in the lines.
  const parts: string[] = [];
  let lastY: number | undefined;
  let lastHeight = 0;
  let pendingBreak = false;
  for (const item of items) {
    if (!('str' in item)) continue;
    const y = item.transform[5] ?? 0;
    if (item.str !== '') {
      if (pendingBreak && lastY !== undefined) {
        const gap = Math.abs(lastY - y);
        trimEndOf(parts);
        parts.push(gap > 1.8 * Math.max(lastHeight, item.height, 1) ? '\n\n' : '\n');
      }
      pendingBreak = false;
      parts.push(item.str);
      lastY = y;
      lastHeight = item.height;
    }
    if (item.hasEOL === true) pendingBreak = true;
  }
  return parts.join('').trim();
}

/** Drops the trailing whitespace of what `parts` join to, looking only at the parts that end it. */
function trimEndOf(parts: string[]): void {
  while (parts.length > 0) {
    const last = parts[parts.length - 1]!;
    const trimmed = last.trimEnd();
    if (trimmed !== '') {
      parts[parts.length - 1] = trimmed;
      return;
    }
    parts.pop();
  }
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
      .filter(([name]) => /^(?:constructPath|fill|eoFill|stroke|closeStroke|fillStroke|eoFillStroke|closeFillStroke|closeEOFillStroke|shadingFill|paint\w*(?:Image|Mask|Form)\w*)$/u.test(name))
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
  if (name === 'PasswordException') return { skip: { reason: 'encrypted', message: 'an encrypted PDF (it needs a password); decrypt it first, e.g. qpdf --decrypt' } };
  if (name === 'InvalidPDFException') return { skip: { reason: 'unreadable', message: 'not a readable PDF (truncated or damaged: pdf.js found no valid structure)' } };
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
      return { skip: { reason: 'too-large', message: `its compressed streams decode to over ${budget} bytes (a compression bomb, or a PDF beyond maxInflatedBytes)` } };
    }
    // pdf.js takes ownership of the buffer it is given: a copy keeps the caller's bytes intact.
    const task = lib.getDocument({ data: new Uint8Array(input.bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: false });
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
        warnings.push(`read the first ${pages} of ${pdf.numPages} pages (${pages === maxPages ? 'maxPages' : 'pages are looked up in a tree of every page: a PDF this long is read in part'})`);
      }
      let text = '';
      const regions: Region[] = [];
      let unreadable = 0;
      for (let n = 1; n <= pages; n += 1) {
        if (context.signal?.aborted) break;
        let page: PdfPage;
        let content: string;
        try {
          page = await pdf.getPage(n);
          content = pageText((await page.getTextContent()).items);
          page.cleanup();
        } catch {
          unreadable += 1;
          continue;
        }
        if (content === '') continue;
        if (text !== '') text += '\n\n';
        const start = text.length;
        text += content;
        regions.push({ start, end: text.length, page: n });
      }
      if (unreadable > 0) warnings.push(`${unreadable} page${unreadable === 1 ? '' : 's'} could not be read and ${unreadable === 1 ? 'was' : 'were'} left out`);
      if (regions.length === 0) {
        // OCR helps a page that shows something (a scan, a drawing); a PDF whose pages cannot be read or show nothing is damaged.
        if (unreadable < pages && (await showsSomething(lib, pdf, pages))) {
          return { skip: { reason: 'no-text', message: 'a PDF without a text layer (scanned pages or images only); run OCR on it first, e.g. ocrmypdf' } };
        }
        return { skip: { reason: 'unreadable', message: 'a damaged PDF: pdf.js opened it but its pages cannot be read or show nothing (OCR would not help)' } };
      }
      const info = await pdf.getMetadata().then((meta) => meta.info ?? {}, () => ({}) as Record<string, unknown>);
      const title = typeof info.Title === 'string' && info.Title.trim() !== '' ? info.Title.trim() : fileTitle(input.path);
      return { documents: [{ id: input.sourceId, text, title, version: versionOfBytes(input.bytes), regions }], ...(warnings.length > 0 ? { warnings } : {}) };
    } finally {
      await pdf.destroy().catch(() => undefined);
    }
  },
};
