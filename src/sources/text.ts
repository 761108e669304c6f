/**
 * The built-in loaders for text: markdown (front matter read, the rest kept with its offsets) and plain text.
 * Both take UTF-8, or UTF-16 or UTF-32 when a byte order mark says so (Windows tools write subtitles and notes
 * as UTF-16 with a BOM): a file with binary content or that is not valid in its encoding (Latin-1, say) is
 * skipped with a reason, and the byte order mark is dropped.
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
// eslint-disable-next-line no-control-regex -- finding control characters is what this pattern is for
const CONTROL = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f]/gu;

/** The encodings a byte order mark names, longest mark first (UTF-32LE's starts with UTF-16LE's). */
const MARKS: ReadonlyArray<{ mark: readonly number[]; encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be' }> = [
  { mark: [0x00, 0x00, 0xfe, 0xff], encoding: 'utf-32be' },
  { mark: [0xff, 0xfe, 0x00, 0x00], encoding: 'utf-32le' },
  { mark: [0xef, 0xbb, 0xbf], encoding: 'utf-8' },
  { mark: [0xfe, 0xff], encoding: 'utf-16be' },
  { mark: [0xff, 0xfe], encoding: 'utf-16le' },
];

/** The encoding a file's byte order mark names, and the mark's length; UTF-8 without a mark otherwise. */
export function encodingOf(bytes: Uint8Array): { encoding: (typeof MARKS)[number]['encoding']; bom: number } {
  for (const { mark, encoding } of MARKS) {
    if (bytes.length >= mark.length && mark.every((byte, i) => bytes[i] === byte)) return { encoding, bom: mark.length };
  }
  return { encoding: 'utf-8', bom: 0 };
}

/**
 * UTF-32 without its mark, or null when it is not valid (a length not a multiple of four, a code point past
 * U+10FFFF or a surrogate). By hand: TextDecoder reads UTF-8 and UTF-16 only.
 */
function decodeUtf32(bytes: Uint8Array, littleEndian: boolean): string | null {
  if (bytes.length % 4 !== 0) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  let piece: number[] = [];
  for (let at = 0; at < bytes.length; at += 4) {
    const code = view.getUint32(at, littleEndian);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return null;
    piece.push(code);
    // fromCodePoint takes its arguments on the stack: a few thousand at a time.
    if (piece.length === 4096) {
      parts.push(String.fromCodePoint(...piece));
      piece = [];
    }
  }
  parts.push(String.fromCodePoint(...piece));
  return parts.join('');
}

/**
 * The text of a file without its byte order mark, or why it is not text: UTF-8, or the UTF-16 or UTF-32 its
 * BOM names. Without a BOM a NUL byte means binary (UTF-16 without a mark is not guessed at).
 */
export function decodeText(bytes: Uint8Array): { text: string } | { problem: 'binary' | 'not-utf8' } {
  const { encoding, bom } = encodingOf(bytes);
  if (encoding === 'utf-8' && bytes.includes(0)) return { problem: 'binary' };
  let text: string;
  if (encoding === 'utf-32le' || encoding === 'utf-32be') {
    const decoded = decodeUtf32(bytes.subarray(bom), encoding === 'utf-32le');
    if (decoded === null) return { problem: 'not-utf8' };
    text = decoded;
  } else {
    try {
      // fatal: invalid input (Latin-1 read as UTF-8, a lone surrogate in UTF-16) is an error, not U+FFFD.
      text = new TextDecoder(encoding, { fatal: true }).decode(bytes.subarray(bom));
    } catch {
      return { problem: 'not-utf8' };
    }
  }
  // A NUL in decoded text (UTF-16 or UTF-32 of a binary file) is binary as it is in UTF-8.
  if (bom > 0 && encoding !== 'utf-8' && text.includes('\u0000')) return { problem: 'binary' };
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
