/**
 * The built-in loaders for text: markdown (front matter read, the rest kept with its offsets) and plain text.
 * Both take UTF-8 only: a file with binary content or that is not valid UTF-8 (Latin-1, say) is skipped with
 * a reason, and a byte order mark is dropped.
 */
import { basename } from 'node:path';
import { sha256Hex } from '../base/canonical.js';
import type { IngestDocument } from '../store/schemas.js';
import { readFrontMatter, type FrontMatter } from './front-matter.js';
import { reasonOf } from './common.js';
import type { Loader, LoaderInput, LoaderResult } from './loader.js';

// Hand-written rather than a dependency: two checks that need no heuristics table. A NUL byte never occurs in
// text; other C0 controls (besides tab, newlines, form feed and escape) in more than 1% of the characters mean
// a binary format that happens to decode.
const CONTROL = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f]/gu;

/** The text of a UTF-8 file without its byte order mark, or why it is not text. */
export function decodeText(bytes: Uint8Array): { text: string } | { problem: 'binary' | 'not-utf8' } {
  if (bytes.includes(0)) return { problem: 'binary' };
  let text: string;
  try {
    // fatal: invalid UTF-8 (Latin-1, UTF-16 without NULs...) is an error, not U+FFFD; the BOM is dropped.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { problem: 'not-utf8' };
  }
  const controls = text.match(CONTROL)?.length ?? 0;
  if (controls > 0 && controls > text.length / 100) return { problem: 'binary' };
  return { text };
}

/** The skip notice of a file that is not UTF-8 text. */
export function notText(problem: 'binary' | 'not-utf8'): LoaderResult {
  return problem === 'binary'
    ? { skip: { reason: 'binary', message: 'binary content' } }
    : { skip: { reason: 'not-utf8', message: 'not UTF-8 text (convert it first, e.g. iconv -f latin1 -t utf-8)' } };
}

function titleOf(text: string, path: string): string {
  const heading = /^#\s+(.+)$/m.exec(text);
  return heading?.[1]?.trim() ?? basename(path);
}

/** The document of a text file: its front matter's fields over the defaults (title from the first heading). */
function documentOf(input: LoaderInput, raw: string, frontMatter: FrontMatter, text: string): IngestDocument {
  // The version hashes the whole file, so an edit of the front matter alone is a new version too.
  const doc: IngestDocument = {
    id: input.sourceId,
    text,
    title: frontMatter.title ?? titleOf(text, input.path),
    version: frontMatter.version ?? sha256Hex(raw).slice(0, 12),
  };
  if (frontMatter.url !== undefined) doc.url = frontMatter.url;
  if (frontMatter.timestamp !== undefined) doc.timestamp = frontMatter.timestamp;
  if (frontMatter.acl !== undefined) doc.acl = frontMatter.acl;
  if (frontMatter.clusters !== undefined) doc.clusters = frontMatter.clusters;
  if (frontMatter.kind !== undefined) doc.kind = frontMatter.kind;
  return doc;
}

export const markdownLoader: Loader = {
  name: 'markdown',
  extensions: ['.md', '.markdown'],
  load(input) {
    const decoded = decodeText(input.bytes);
    if ('problem' in decoded) return notText(decoded.problem);
    let read: ReturnType<typeof readFrontMatter>;
    try {
      read = readFrontMatter(decoded.text, input.path);
    } catch (error) {
      // Bad front matter skips the file: read without it, an `acl:` it meant to set would be lost (the file public).
      return { skip: { reason: 'front-matter', message: reasonOf(error) } };
    }
    return { documents: [documentOf(input, decoded.text, read.frontMatter, read.text)] };
  },
};

export const textLoader: Loader = {
  name: 'text',
  extensions: ['.txt'],
  load(input) {
    const decoded = decodeText(input.bytes);
    if ('problem' in decoded) return notText(decoded.problem);
    return { documents: [documentOf(input, decoded.text, {}, decoded.text)] };
  },
};
