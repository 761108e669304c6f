/**
 * The PDF loader: the text of every page, read with pdf.js (`pdfjs-dist`, an optional dependency loaded on
 * the first PDF). Each page is a region with its page number, so a chunk never spans two pages and its
 * locator names the page; paragraphs are told apart by the gaps between lines. An encrypted PDF, one with no
 * text layer (scanned images) and one pdf.js cannot open (truncated, not a PDF) are skipped with the reason;
 * pages past `maxPages` are left out with a warning.
 */
import type { Region } from '../store/schemas.js';
import { fileTitle, isMissingModule, missingLibrary, reasonOf, versionOfBytes } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { DEFAULT_LOAD_LIMITS } from './limits.js';

// The few pdf.js shapes read here (its own types are not needed to build without the optional package).
interface TextItem {
  str: string;
  hasEOL?: boolean;
  transform: number[];
  height: number;
}
interface PdfPage {
  getTextContent(): Promise<{ items: Array<TextItem | { type: string }> }>;
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
      const pages = Math.min(pdf.numPages, maxPages);
      if (pdf.numPages > maxPages) warnings.push(`read the first ${maxPages} of ${pdf.numPages} pages (maxPages)`);
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
        return { skip: { reason: 'no-text', message: 'a PDF without a text layer (scanned pages or images only); run OCR on it first, e.g. ocrmypdf' } };
      }
      const info = await pdf.getMetadata().then((meta) => meta.info ?? {}, () => ({}) as Record<string, unknown>);
      const title = typeof info.Title === 'string' && info.Title.trim() !== '' ? info.Title.trim() : fileTitle(input.path);
      return { documents: [{ id: input.sourceId, text, title, version: versionOfBytes(input.bytes), regions }], ...(warnings.length > 0 ? { warnings } : {}) };
    } finally {
      await pdf.destroy().catch(() => undefined);
    }
  },
};
