/**
 * `loadDocuments`: the one ingest path of the library and the CLI. Walks files and folders (in name order;
 * hidden entries skipped; symbolic links kept inside the folder given unless `followSymlinks`, never in
 * circles), hands each file to the loader of its extension, and returns the documents `store.addDocuments`
 * takes. A file that cannot be read (gone, unreadable, a loader that fails, documents the store would refuse,
 * a name that is not UTF-8) is skipped with the reason; it never fails the load of the others. Source ids are paths relative to `base` (default: the working directory) with forward slashes; a file
 * outside `base` gets its path relative to the folder holding the path given, so an id never starts with `../`.
 */
import type { Dirent, Stats } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import { AbortSignalSchema, throwIfAborted } from '../base/abort.js';
import { describeIssues, LitmPackError, parseOrThrow } from '../base/errors.js';
import { IngestDocumentSchema, type IngestDocument } from '../store/schemas.js';
import { capChunks } from './bounds.js';
import { codeLoader } from './code.js';
import { reasonOf } from './common.js';
import { emailLoader } from './email.js';
import { htmlLoader } from './html.js';
import { DEFAULT_LOAD_LIMITS } from './limits.js';
import type { LoadLimits, Loader, LoaderContext, LoaderResult, SkipNotice } from './loader.js';
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
  /** The source id of the file (or folder) found: what it held before stays stored when pruning. */
  sourceId?: string;
}

/** A file that gave documents. */
export interface LoadedFile {
  path: string;
  sourceId: string;
  /** How many documents it gave (a mailbox gives one per message, a message one per readable attachment). */
  documents: number;
  /** Source ids it holds whose documents were left out as copies of another file's (see `LoaderResult`). */
  held: string[];
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
  /** How deep e-mail attachments are read: 1, a message's attachments; 2, theirs too... (default 3). */
  maxAttachmentDepth: z.number().int().nonnegative().default(DEFAULT_LOAD_LIMITS.maxAttachmentDepth),
  /** Bytes of attachments, at every depth, one message may hand to loaders (default 25 MiB). */
  maxExpandedBytes: z.number().int().nonnegative().default(DEFAULT_LOAD_LIMITS.maxExpandedBytes),
  /** Chunks one file may give at least (sections, pages, definitions that cannot share one); the rest is left out (default 50,000). */
  maxChunksPerFile: z.number().int().positive().default(DEFAULT_LOAD_LIMITS.maxChunksPerFile),
  /** Bytes a PDF's compressed streams may decode to (or 32 times the file's size, if more); a PDF over it is skipped (default 64 MiB). */
  maxInflatedBytes: z.number().int().positive().default(DEFAULT_LOAD_LIMITS.maxInflatedBytes),
  /** Called for each file that gave documents, with how many (a mailbox gives one per message). */
  onFile: fn<(file: LoadedFile) => void>('onFile').optional(),
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
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A file name's text, or null when its bytes are not UTF-8. */
function utf8Name(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
const posix = (path: string) => path.split(sep).join('/');

function notFound(path: string, error: unknown): LitmPackError {
  return new LitmPackError('not_found', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
    cause: error,
  });
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
  base: string,
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
    let entries: Dirent<Buffer>[];
    try {
      // Names as bytes: a name that is not UTF-8 would come back with U+FFFD in it, a path that does not exist.
      entries = await readdir(dir, { withFileTypes: true, encoding: 'buffer' });
    } catch (error) {
      // The folder given must be readable; a folder found inside it that is not is skipped like a file.
      if (dir === given) throw notFound(dir, error);
      const code = (error as NodeJS.ErrnoException).code ?? reasonOf(error);
      skip({ path: dir, sourceId: sourceIdOf(dir, given, base), reason: 'unreadable', message: `a folder that cannot be read (${code})` });
      return;
    }
    const named: { entry: Dirent<Buffer>; name: string }[] = [];
    for (const entry of entries) {
      if (entry.name[0] === 0x2e) continue; // hidden: starts with '.'
      const name = utf8Name(entry.name);
      if (name === null) {
        skip({
          path: join(dir, new TextDecoder().decode(entry.name)),
          reason: 'bad-name',
          message: 'a name that is not UTF-8 (rename it: source ids are text)',
        });
        continue;
      }
      named.push({ entry, name });
    }
    for (const { entry, name } of named.sort(byName)) {
      const path = join(dir, name);
      if (entry.isSymbolicLink()) links.push({ path, root, given });
      else if (entry.isDirectory()) await walk(path, join(real, name), root, given);
      else if (entry.isFile() && readable(path)) addFile(path, join(real, name), given);
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
      skip({
        path,
        reason: loop ? 'link-loop' : 'dangling-link',
        message: loop ? 'a symbolic link that loops' : 'a symbolic link to nothing',
      });
      continue;
    }
    if (!inside(real, root) && !followSymlinks) {
      skip({
        path,
        reason: 'outside-root',
        message: `a symbolic link leading outside ${given} (not followed; --follow-symlinks follows it)`,
      });
      continue;
    }
    const info = await stat(real);
    if (info.isDirectory()) await walk(path, real, root, given);
    else if (info.isFile() && readable(path)) addFile(path, real, given);
  }
  return files;
}

/**
 * Reads the files under `paths` into the documents `store.addDocuments` takes. A path given that does not exist
 * fails the load; a file found that cannot be read (binary, not UTF-8, gone, a loader that fails, documents the
 * store would refuse) is skipped and reported through `onSkip` (or fails the load with `strict`), and the rest
 * is read. A document held by another of the same file (an attachment, by `parentId`) can be read by no one its
 * container's readers are not: its own `acl` only narrows the container's.
 *
 * @example
 * const docs = await loadDocuments(['docs/'], { clusters: ['handbook'] });
 * await store.addDocuments(docs);   // the same store as `litm-pack ingest docs/ --clusters handbook`
 */
export async function loadDocuments(paths: readonly string[], options: LoadDocumentsOptions = {}): Promise<IngestDocument[]> {
  const opts = parseOrThrow(LoadDocumentsOptionsSchema, options, 'loadDocuments options');
  parseOrThrow(
    z.array(z.string().min(1, 'paths must be non-empty strings')).min(1, 'give at least one file or folder'),
    paths,
    'loadDocuments paths',
  );
  const base = opts.base ?? process.cwd();
  const byExtension = new Map<string, Loader>();
  for (const loader of opts.loaders ?? defaultLoaders())
    for (const extension of loader.extensions) byExtension.set(extension.toLowerCase(), loader);
  const skipped: SkippedFile[] = [];
  const skip = (entry: SkippedFile) => {
    skipped.push(entry);
    opts.onSkip?.(entry);
  };
  const found = await findFiles(paths, [...byExtension.keys()], opts.followSymlinks, base, skip);
  const documents: IngestDocument[] = [];
  const limits: Required<LoadLimits> = {
    maxFileBytes: opts.maxFileBytes,
    maxPages: opts.maxPages,
    maxMessages: opts.maxMessages,
    maxRecords: opts.maxRecords,
    maxAttachmentDepth: opts.maxAttachmentDepth,
    maxExpandedBytes: opts.maxExpandedBytes,
    maxChunksPerFile: opts.maxChunksPerFile,
    maxInflatedBytes: opts.maxInflatedBytes,
  };
  const context: LoaderContext = {
    signal: opts.signal,
    limits,
    loaderFor: (extension) => byExtension.get(extension.toLowerCase()),
    state: new Map(),
  };
  const ids = new Set<string>();
  for (const [index, file] of found.entries()) {
    throwIfAborted(opts.signal);
    const sourceId = sourceIdOf(file.path, file.given, base);
    const read = await readFound(file, sourceId, byExtension, context, opts);
    if ('skip' in read) skip({ path: file.path, sourceId, ...read.skip });
    else {
      const warn = (message: string) => opts.onWarning?.({ path: file.path, message });
      for (const message of read.warnings) warn(message);
      const before = documents.length;
      for (const doc of read.documents) {
        // Two files cannot give one id, but a loader's derived ids (a message's, a record's) could repeat one.
        if (ids.has(doc.id)) {
          warn(`left out ${doc.id}: another document of this load has that id`);
          continue;
        }
        ids.add(doc.id);
        documents.push(doc);
      }
      if (documents.length > before) opts.onFile?.({ path: file.path, sourceId, documents: documents.length - before, held: read.held });
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
  // Each document passed the stores' own checks as it was admitted (admit), so adding them cannot fail on one.
  return documents;
}

type LoadOptions = z.output<typeof LoadDocumentsOptionsSchema>;

/** What reading one file gave: its admitted documents, or why it was skipped. */
type Read = { documents: IngestDocument[]; warnings: string[]; held: string[] } | { skip: SkipNotice };

/** Reads one file found by the walk: its bytes while it holds still, through its loader, then admitted. */
async function readFound(
  file: Found,
  sourceId: string,
  byExtension: ReadonlyMap<string, Loader>,
  context: LoaderContext,
  opts: LoadOptions,
): Promise<Read> {
  let info: Stats;
  try {
    info = await stat(file.path);
  } catch (error) {
    return unreadable(error);
  }
  if (info.size > opts.maxFileBytes) {
    return {
      skip: { reason: 'too-large', message: `${info.size} bytes, over the limit of ${opts.maxFileBytes} (maxFileBytes; --max-file-bytes)` },
    };
  }
  let bytes: Uint8Array | null;
  try {
    bytes = await readSteady(file.path);
  } catch (error) {
    return unreadable(error);
  }
  if (bytes === null)
    return { skip: { reason: 'changing', message: 'the file changed while it was read; ingest it again once it is written' } };
  const extension = extname(file.path).toLowerCase();
  const loader = byExtension.get(extension)!;
  let result: LoaderResult;
  try {
    result = await loader.load({ path: file.path, sourceId, extension, bytes }, context);
  } catch (error) {
    return { skip: { reason: 'failed', message: failure(loader, error) } };
  }
  if ('skip' in result) return result;
  if (result.documents.every((doc) => !hasText(doc)))
    return { skip: { reason: 'empty', message: 'no text to index (only headings, front matter or blank lines)' } };
  const warnings = [...(result.warnings ?? [])];
  const capped = capChunks(result.documents.filter(hasText), opts.maxChunksPerFile);
  if (capped.warning !== undefined) warnings.push(capped.warning);
  const admitted = admit(capped.documents, opts);
  warnings.push(...admitted.warnings);
  if (admitted.documents.length === 0)
    return { skip: { reason: 'invalid', message: admitted.warnings[0] ?? 'no document the store accepts' } };
  return { documents: admitted.documents, warnings, held: result.held ?? [] };
}

/** The skip of a file that could not be read: gone since it was found, or unreadable (permissions...). */
function unreadable(error: unknown): { skip: SkipNotice } {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return { skip: { reason: 'gone', message: 'the file was removed while the load ran' } };
  return { skip: { reason: 'unreadable', message: `the file cannot be read (${code ?? reasonOf(error)})` } };
}

/** What a loader that threw says: its message on one line (a stack overflow named as what it is). */
function failure(loader: Loader, error: unknown): string {
  if (error instanceof RangeError && /call stack/u.test(error.message))
    return `the ${loader.name} loader ran out of stack: the file nests too deeply to read`;
  return `the ${loader.name} loader failed: ${reasonOf(error).slice(0, 300)}`;
}

/**
 * The documents of one file as the store will take them: defaults applied, each checked by the stores' schema (one
 * the store would refuse is left out with a warning, and so is what it holds), and containment kept: a document
 * held by another of the file (`parentId`) is readable by no one its container's readers are not.
 */
function admit(docs: readonly IngestDocument[], opts: LoadOptions): { documents: IngestDocument[]; warnings: string[] } {
  const warnings: string[] = [];
  const documents: IngestDocument[] = [];
  // The effective ACL of each document admitted so far (undefined: everyone), and those left out.
  const acls = new Map<string, string[] | undefined>();
  const leftOut = new Set<string>();
  for (const doc of docs) {
    const contained = doc.parentId !== undefined && (acls.has(doc.parentId) || leftOut.has(doc.parentId));
    if (contained && leftOut.has(doc.parentId!)) {
      leftOut.add(doc.id);
      warnings.push(`left out ${doc.id}: the document that holds it (${doc.parentId}) was left out`);
      continue;
    }
    const out = withDefaults(doc, opts);
    if (contained) {
      const acl = narrow(acls.get(doc.parentId!), doc.acl);
      if (acl !== undefined && acl.length === 0) {
        leftOut.add(doc.id);
        warnings.push(
          `left out ${doc.id}: its acl names none of the readers of ${doc.parentId} that holds it (an attachment can only narrow its message's readers)`,
        );
        continue;
      }
      if (acl === undefined) delete out.acl;
      else out.acl = acl;
    }
    const parsed = IngestDocumentSchema.safeParse(out);
    if (!parsed.success) {
      leftOut.add(doc.id);
      warnings.push(`left out ${doc.id}: ${describeIssues(parsed.error.issues).slice(0, 500)}`);
      continue;
    }
    acls.set(doc.id, parsed.data.acl);
    documents.push(parsed.data);
  }
  return { documents, warnings };
}

/** The readers of a contained document: its container's, narrowed by its own (undefined: everyone). */
function narrow(container: string[] | undefined, own: string[] | undefined): string[] | undefined {
  if (container === undefined) return own;
  if (own === undefined) return [...container];
  const mine = new Set(own);
  return container.filter((principal) => mine.has(principal));
}

/** A file modified this recently may still be being written within one tick of the file system's clock. */
const FRESH_MS = 2_000;

/**
 * A file's bytes, read while it holds still: its size, modification and change times and inode are the same before
 * and after the read, and the size is what was read. A file modified in the last `FRESH_MS` is read a second time
 * and must read the same: a writer's two writes within one tick of the file system's coarse clock leave the times
 * unchanged, and a read between them is torn. A file being written is read again (three tries); null when it is
 * still changing.
 */
async function readSteady(path: string): Promise<Uint8Array | null> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const before = await stat(path);
    const bytes = await readFile(path);
    const after = await stat(path);
    const still =
      before.size === after.size &&
      before.mtimeMs === after.mtimeMs &&
      before.ctimeMs === after.ctimeMs &&
      before.ino === after.ino &&
      bytes.length === after.size;
    if (!still) continue;
    if (Date.now() - after.mtimeMs >= FRESH_MS) return bytes;
    const again = await readFile(path);
    if (again.equals(bytes)) return bytes;
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

/** The options' clusters, kind and ACL on a document (its own clusters kept, its own kind and ACL first). */
function withDefaults(doc: IngestDocument, opts: LoadOptions): IngestDocument {
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
  'bad-name': (n) => `${n} with a name that is not UTF-8`,
  'front-matter': (n) => `${n} with bad front matter`,
  invalid: (n) => `${n} with nothing the store accepts`,
  failed: (n) => `${n} a loader failed on`,
  gone: (n) => `${n} removed while read`,
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
