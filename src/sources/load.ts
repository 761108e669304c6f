/**
 * `loadDocuments`: the one ingest path of the library and the CLI. Walks files and folders (in name order;
 * hidden entries skipped; symbolic links kept inside the folder given unless `followSymlinks`, never in
 * circles), hands each file to the loader of its extension, and returns the documents `store.addDocuments`
 * takes. Source ids are paths relative to `base` (default: the working directory) with forward slashes; a file
 * outside `base` gets its path relative to the folder holding the path given, so an id never starts with `../`.
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { AbortSignalSchema, throwIfAborted } from '../base/abort.js';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { parseIngestDocuments } from '../store/chunk.js';
import type { IngestDocument } from '../store/schemas.js';
import { codeLoader } from './code.js';
import { emailLoader } from './email.js';
import { htmlLoader } from './html.js';
import { DEFAULT_LOAD_LIMITS } from './limits.js';
import type { LoadLimits, Loader, LoaderContext, SkipNotice } from './loader.js';
import { pdfLoader } from './pdf.js';
import { recordsLoader } from './records.js';
import { markdownLoader, textLoader } from './text.js';
import { transcriptLoader } from './transcript.js';

/**
 * The loaders `loadDocuments` uses unless told otherwise: markdown and text, HTML, PDF, source code, e-mail
 * (.eml, .mbox), WebVTT and SRT transcripts, and JSON records (`recordsLoader()` with its default field names).
 * The PDF and code readers load their libraries on the first file of their kind.
 */
export function defaultLoaders(): Loader[] {
  return [markdownLoader, textLoader, htmlLoader, pdfLoader, codeLoader, emailLoader, transcriptLoader, recordsLoader()];
}


/** Something a file was read without: a message left out, pages past the limit. */
export interface LoadWarning {
  path: string;
  message: string;
}

/** A file or link that was not ingested, and why. */
export interface SkippedFile extends SkipNotice {
  path: string;
}

const LoaderSchema = z.custom<Loader>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Loader).name === 'string' &&
    Array.isArray((value as Loader).extensions) &&
    typeof (value as Loader).load === 'function',
  { message: 'a loader must have a name, a list of extensions and a load(input) function' },
);

const fn = <T>(what: string) => z.custom<T>((value) => typeof value === 'function', { message: `${what} must be a function` });

export const LoadDocumentsOptionsSchema = z.strictObject({
  /** Source ids are paths relative to this folder (default: the working directory). */
  base: z.string().min(1).optional(),
  /** Follow symbolic links that lead outside the folder they are found in (never in circles). */
  followSymlinks: z.boolean().default(false),
  /** The readers by extension (default `defaultLoaders()`); a later loader for an extension wins. */
  loaders: z.array(LoaderSchema).optional(),
  /** Clusters every document joins (besides those its front matter names). */
  clusters: z.array(z.string().min(1)).optional(),
  /** Kind of the documents that name none themselves. */
  kind: z.string().min(1).optional(),
  /** Principals of the documents that name no `acl` themselves (front matter `acl:` wins). */
  acl: z.array(z.string().min(1)).min(1).optional(),
  /** Any skipped file fails the load (`invalid_input`, listing them) instead of being reported. */
  strict: z.boolean().default(false),
  /** An empty result is no error (e.g. before pruning the sources of an emptied folder). */
  allowEmpty: z.boolean().default(false),
  /** Called for every file or link skipped, with the reason. */
  onSkip: fn<(skip: SkippedFile) => void>('onSkip').optional(),
  /** Called for every file read only in part (a malformed message left out, pages past `maxPages`), with what was left out. */
  onWarning: fn<(warning: LoadWarning) => void>('onWarning').optional(),
  /** Files larger than this many bytes are skipped unread (default 25 MiB). */
  maxFileBytes: z.number().int().positive().default(DEFAULT_LOAD_LIMITS.maxFileBytes),
  /** PDF pages read per file (default 2,000). */
  maxPages: z.number().int().positive().default(DEFAULT_LOAD_LIMITS.maxPages),
  /** Messages read per mailbox (default 10,000). */
  maxMessages: z.number().int().positive().default(DEFAULT_LOAD_LIMITS.maxMessages),
  /** Records read per JSON Lines or JSON file (default 100,000). */
  maxRecords: z.number().int().positive().default(DEFAULT_LOAD_LIMITS.maxRecords),
  /** Called for each file that gave documents, with how many (a mailbox gives one per message). */
  onFile: fn<(file: { path: string; documents: number }) => void>('onFile').optional(),
  /** Called after each file is read, with the number read and the number found. */
  onProgress: fn<(done: number, total: number) => void>('onProgress').optional(),
  signal: AbortSignalSchema.optional(),
});
export type LoadDocumentsOptions = z.input<typeof LoadDocumentsOptionsSchema>;

interface Found {
  path: string;
  /** The file's real path: a file reached twice (through a link) is read once. */
  real: string;
  /** The path given that this file was found under. */
  given: string;
}

const inside = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const posix = (path: string) => path.split(sep).join('/');

function notFound(path: string, error: unknown): LitmPackError {
  return new LitmPackError('not_found', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
}

/**
 * The source id of `path` found under the path `given`: relative to `base` when inside it, else relative to
 * the folder that holds `given`.
 */
export function sourceIdOf(path: string, given: string, base: string): string {
  const absolute = resolve(path);
  const fromBase = relative(resolve(base), absolute);
  if (fromBase !== '' && !fromBase.startsWith('..') && !isAbsolute(fromBase)) return posix(fromBase);
  return posix(relative(dirname(resolve(given)), absolute));
}

/**
 * What a path given to `loadDocuments` covers, as source ids: a folder's prefix (every id under it starts with
 * `prefix/`; an empty prefix is the whole of `base`) or a file's own id. Pruning removes the sources it covers
 * that were not found again.
 */
export async function sourceScope(given: string, base = process.cwd()): Promise<{ prefix: string; folder: boolean }> {
  const folder = (await stat(given)).isDirectory();
  const absolute = resolve(given);
  const fromBase = relative(resolve(base), absolute);
  if (fromBase === '') return { prefix: '', folder };
  if (!fromBase.startsWith('..') && !isAbsolute(fromBase)) return { prefix: posix(fromBase), folder };
  return { prefix: posix(relative(dirname(absolute), absolute)), folder };
}

/**
 * The files under `paths`, in walk order. Links are followed after everything reachable without them, so a
 * file or folder that is both linked and present is taken under its own path; a link is followed only when
 * its target stays inside the path given (or `followSymlinks`); folders already walked are not walked again,
 * so links in circles (`self -> .`, `up -> ..`) end.
 */
async function findFiles(
  paths: readonly string[],
  extensions: readonly string[],
  followSymlinks: boolean,
  skip: (skip: SkippedFile) => void,
): Promise<Found[]> {
  const readable = (path: string) => extensions.includes(extname(path).toLowerCase());
  const files: Found[] = [];
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>();
  const links: { path: string; root: string; given: string }[] = [];

  const addFile = (path: string, real: string, given: string) => {
    if (seenFiles.has(real)) return;
    seenFiles.add(real);
    files.push({ path, real, given });
  };

  const walk = async (dir: string, real: string, root: string, given: string): Promise<void> => {
    if (seenDirs.has(real)) return;
    seenDirs.add(real);
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      throw notFound(dir, error);
    }
    for (const entry of entries.sort(byName)) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) links.push({ path, root, given });
      else if (entry.isDirectory()) await walk(path, join(real, entry.name), root, given);
      else if (entry.isFile() && readable(path)) addFile(path, join(real, entry.name), given);
    }
  };

  for (const given of paths) {
    let info;
    let real: string;
    try {
      info = await stat(given);
      real = await realpath(given);
    } catch (error) {
      throw notFound(given, error);
    }
    if (info.isDirectory()) await walk(given, real, real, given);
    // A FIFO, socket or device named like a document would block the read (or never end).
    else if (!info.isFile()) skip({ path: given, reason: 'not-a-file', message: 'not a regular file (a FIFO, socket or device)' });
    else if (readable(given)) addFile(given, real, given);
    else skip({ path: given, reason: 'extension', message: `not ${extensions.join(', ')}` });
  }

  // Links last, in the order found; following a link to a folder may find more links.
  for (let i = 0; i < links.length; i += 1) {
    const { path, root, given } = links[i]!;
    let real: string;
    try {
      real = await realpath(path);
    } catch (error) {
      const loop = (error as NodeJS.ErrnoException).code === 'ELOOP';
      skip({ path, reason: loop ? 'link-loop' : 'dangling-link', message: loop ? 'a symbolic link that loops' : 'a symbolic link to nothing' });
      continue;
    }
    if (!inside(real, root) && !followSymlinks) {
      skip({ path, reason: 'outside-root', message: `a symbolic link leading outside ${given} (not followed; --follow-symlinks follows it)` });
      continue;
    }
    const info = await stat(real);
    if (info.isDirectory()) await walk(path, real, root, given);
    else if (info.isFile() && readable(path)) addFile(path, real, given);
  }
  return files;
}

/**
 * Reads the files under `paths` into the documents `store.addDocuments` takes. A path that does not exist, or
 * a file that cannot be read, fails the whole load before anything is returned; a file a loader cannot read
 * (binary, not UTF-8...) is skipped and reported through `onSkip` (or fails the load with `strict`).
 *
 * @example
 * const docs = await loadDocuments(['docs/'], { clusters: ['handbook'] });
 * await store.addDocuments(docs);   // the same store as `litm-pack ingest docs/ --clusters handbook`
 */
export async function loadDocuments(paths: readonly string[], options: LoadDocumentsOptions = {}): Promise<IngestDocument[]> {
  const opts = parseOrThrow(LoadDocumentsOptionsSchema, options, 'loadDocuments options');
  parseOrThrow(z.array(z.string().min(1, 'paths must be non-empty strings')).min(1, 'give at least one file or folder'), paths, 'loadDocuments paths');
  const base = opts.base ?? process.cwd();
  const byExtension = new Map<string, Loader>();
  for (const loader of opts.loaders ?? defaultLoaders()) for (const extension of loader.extensions) byExtension.set(extension.toLowerCase(), loader);
  const skipped: SkippedFile[] = [];
  const skip = (entry: SkippedFile) => {
    skipped.push(entry);
    opts.onSkip?.(entry);
  };
  const found = await findFiles(paths, [...byExtension.keys()], opts.followSymlinks, skip);
  const documents: IngestDocument[] = [];
  const limits: LoadLimits = { maxFileBytes: opts.maxFileBytes, maxPages: opts.maxPages, maxMessages: opts.maxMessages, maxRecords: opts.maxRecords };
  const context: LoaderContext = { signal: opts.signal, limits, loaderFor: (extension) => byExtension.get(extension.toLowerCase()), state: new Map() };
  const ids = new Set<string>();
  for (const [index, file] of found.entries()) {
    throwIfAborted(opts.signal);
    const size = await sizeOf(file.path);
    if (size > opts.maxFileBytes) {
      skip({ path: file.path, reason: 'too-large', message: `${size} bytes, over the limit of ${opts.maxFileBytes} (maxFileBytes; --max-file-bytes)` });
      opts.onProgress?.(index + 1, found.length);
      continue;
    }
    const bytes = await readSteady(file.path);
    if (bytes === null) {
      skip({ path: file.path, reason: 'changing', message: 'the file changed while it was read; ingest it again once it is written' });
      opts.onProgress?.(index + 1, found.length);
      continue;
    }
    const extension = extname(file.path).toLowerCase();
    const loader = byExtension.get(extension)!;
    const result = await loader.load({ path: file.path, sourceId: sourceIdOf(file.path, file.given, base), extension, bytes }, context);
    if ('skip' in result) skip({ path: file.path, ...result.skip });
    else if (result.documents.every((doc) => !hasText(doc))) {
      skip({ path: file.path, reason: 'empty', message: 'no text to index (only headings, front matter or blank lines)' });
    } else {
      for (const message of result.warnings ?? []) opts.onWarning?.({ path: file.path, message });
      const before = documents.length;
      for (const doc of result.documents) {
        if (!hasText(doc)) continue;
        // Two files cannot give one id, but a loader's derived ids (a message's, a record's) could repeat one.
        if (ids.has(doc.id)) {
          opts.onWarning?.({ path: file.path, message: `left out ${doc.id}: another document of this load has that id` });
          continue;
        }
        ids.add(doc.id);
        documents.push(withDefaults(doc, opts));
      }
      if (documents.length > before) opts.onFile?.({ path: file.path, documents: documents.length - before });
    }
    opts.onProgress?.(index + 1, found.length);
  }
  if (opts.strict && skipped.length > 0) {
    throw new LitmPackError('invalid_input', `strict: ${describeSkipped(skipped)} Nothing was ingested.`, {
      details: { option: 'strict', skipped: skipped.map((entry) => entry.path) },
    });
  }
  if (documents.length === 0 && !opts.allowEmpty) {
    // The loaders' names, not their extensions: the default loaders read dozens of extensions.
    const kinds = [...new Set(byExtension.values())].map((loader) => loader.name).join(', ');
    const why = skipped.length > 0 ? describeSkipped(skipped).replace(/\.$/u, '') : `no file of a kind the loaders read (${kinds})`;
    throw new LitmPackError('invalid_input', `No documents to ingest in ${paths.join(', ')} (${why})`);
  }
  // The same checks the stores make, before any store is touched.
  return parseIngestDocuments(documents);
}

/**
 * A file's bytes, read while it holds still: its size and modification time are the same before and after the
 * read, and the size is what was read. A file being written (a copy in progress, an editor saving) is read
 * again once; null when it is still changing.
 */
async function readSteady(path: string): Promise<Uint8Array | null> {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const before = await stat(path);
      const bytes = await readFile(path);
      const after = await stat(path);
      if (before.size === after.size && before.mtimeMs === after.mtimeMs && bytes.length === after.size) return bytes;
    } catch (error) {
      throw notFound(path, error);
    }
  }
  return null;
}

/**
 * Whether a document holds anything to index (what chunking keeps): text in its regions, or for markdown,
 * anything besides headings and blank lines.
 */
function hasText(doc: IngestDocument): boolean {
  if (doc.regions !== undefined) return doc.regions.some((region) => /\S/u.test(doc.text.slice(region.start, region.end)));
  return /\S/u.test(doc.text.replace(/^[ \t]{0,3}#{1,6}(?:[ \t][^\n]*)?$/gmu, ''));
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    throw notFound(path, error);
  }
}

/** The options' clusters, kind and ACL on a document (its own clusters kept, its own kind and ACL first). */
function withDefaults(doc: IngestDocument, opts: z.output<typeof LoadDocumentsOptionsSchema>): IngestDocument {
  const clusters = [...new Set([...(doc.clusters ?? []), ...(opts.clusters ?? [])])];
  const out: IngestDocument = { ...doc };
  if (clusters.length > 0) out.clusters = clusters;
  const kind = doc.kind ?? opts.kind;
  if (kind !== undefined) out.kind = kind;
  const acl = doc.acl ?? opts.acl;
  if (acl !== undefined) out.acl = acl;
  return out;
}

const count = (n: number, noun: string) => `${n} ${n === 1 ? noun : `${noun}s`}`;

const COUNTED: Record<string, (n: number) => string> = {
  binary: (n) => `${n} binary`,
  'not-utf8': (n) => `${n} not UTF-8`,
  'dangling-link': (n) => count(n, 'dangling symlink'),
  'link-loop': (n) => count(n, 'looping symlink'),
  'outside-root': (n) => `${count(n, 'symlink')} leading outside the folders given`,
  'not-a-file': (n) => `${n} not a regular file`,
  changing: (n) => `${n} changing while read`,
  empty: (n) => `${n} with no text to index`,
  extension: (n) => `${n} of a kind no loader reads`,
  'too-large': (n) => `${n} over the size limit`,
  encrypted: (n) => `${n} encrypted`,
  'no-text': (n) => `${n} without a text layer`,
  unreadable: (n) => `${n} unreadable`,
  'not-records': (n) => `${n} not records`,
  duplicate: (n) => `${n} already read from another file`,
  'missing-library': (n) => `${n} needing a library that is not installed`,
};

/** "Skipped 3 files: 1 binary, 2 not UTF-8." (empty when nothing was skipped). */
export function describeSkipped(skipped: readonly SkippedFile[]): string {
  if (skipped.length === 0) return '';
  const byReason = new Map<string, number>();
  for (const entry of skipped) byReason.set(entry.reason, (byReason.get(entry.reason) ?? 0) + 1);
  // The reasons this module knows in a fixed order, then loaders' own in the order they came.
  const known = Object.keys(COUNTED).filter((reason) => byReason.has(reason));
  const others = [...byReason.keys()].filter((reason) => !(reason in COUNTED));
  const parts = [...known, ...others].map((reason) => COUNTED[reason]?.(byReason.get(reason)!) ?? `${byReason.get(reason)} ${reason}`);
  return `Skipped ${count(skipped.length, 'file')}: ${parts.join(', ')}.`;
}
