// Finding and reading the files `ingest` is given: folders walked in name order, symbolic links kept inside
// the folder given unless --follow-symlinks, text checked to be UTF-8 before it reaches the store.
import type { Dirent } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, relative, resolve, sep } from 'node:path';
import { LitmPackError } from '../base/errors.js';

export const INGESTED_EXTENSIONS = ['.md', '.markdown', '.txt'];

export type SkipReason = 'binary' | 'not-utf8' | 'dangling-link' | 'link-loop' | 'outside-root' | 'extension';

export interface SkippedFile {
  path: string;
  reason: SkipReason;
  /** The folder given on the command line, for links that lead outside it. */
  root?: string;
}

export interface ReadOptions {
  /** Follow symbolic links that lead outside the folder they are found in (never in circles). */
  followSymlinks?: boolean;
  /** Source ids are paths relative to this directory (default: the working directory). */
  base?: string;
}

/** A text file to ingest: its source id (the path relative to the base, with forward slashes) and text. */
export interface TextFile {
  id: string;
  path: string;
  text: string;
}

export interface ReadResult {
  files: TextFile[];
  skipped: SkippedFile[];
}

interface Found {
  path: string;
  /** The file's real path: a file reached twice (through a link) is read once. */
  real: string;
}

const isIngested = (path: string) => INGESTED_EXTENSIONS.includes(extname(path).toLowerCase());
const inside = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function notFound(path: string, error: unknown): LitmPackError {
  return new LitmPackError('not_found', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
}

/**
 * The files under `paths`, in walk order. Links are followed after everything reachable without them, so a
 * file or folder that is both linked and present is taken under its own path; a link is followed only when
 * its target stays inside the path given (or `followSymlinks`); folders already walked are not walked again,
 * so links in circles (`self -> .`, `up -> ..`) end.
 */
async function findFiles(paths: readonly string[], options: ReadOptions): Promise<{ files: Found[]; skipped: SkippedFile[] }> {
  const files: Found[] = [];
  const skipped: SkippedFile[] = [];
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>();
  const links: { path: string; root: string; given: string }[] = [];

  const addFile = (path: string, real: string) => {
    if (seenFiles.has(real)) return;
    seenFiles.add(real);
    files.push({ path, real });
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
      else if (entry.isFile() && isIngested(path)) addFile(path, join(real, entry.name));
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
    else if (isIngested(given)) addFile(given, real);
    else skipped.push({ path: given, reason: 'extension' });
  }

  // Links last, in the order found; following a link to a folder may find more links.
  for (let i = 0; i < links.length; i += 1) {
    const { path, root, given } = links[i]!;
    let real: string;
    try {
      real = await realpath(path);
    } catch (error) {
      skipped.push({ path, reason: (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'link-loop' : 'dangling-link' });
      continue;
    }
    if (!inside(real, root) && options.followSymlinks !== true) {
      skipped.push({ path, reason: 'outside-root', root: given });
      continue;
    }
    const info = await stat(real);
    if (info.isDirectory()) await walk(path, real, root, given);
    else if (info.isFile() && isIngested(path)) addFile(path, real);
  }
  return { files, skipped };
}

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

/**
 * Reads the .md/.markdown/.txt files under `paths` (source id: the path relative to `base`, with forward
 * slashes). Files that are not UTF-8 text and links that are dangling, circular or lead outside the path given
 * are skipped and listed. A path that does not exist, or a file that cannot be read, fails the whole read.
 */
export async function readTextFiles(paths: readonly string[], options: ReadOptions = {}): Promise<ReadResult> {
  const found = await findFiles(paths, options);
  const { skipped } = found;
  const base = options.base ?? process.cwd();
  const files: TextFile[] = [];
  for (const { path } of found.files) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw notFound(path, error);
    }
    const decoded = decodeText(bytes);
    if ('problem' in decoded) {
      skipped.push({ path, reason: decoded.problem });
      continue;
    }
    files.push({ id: relative(base, resolve(path)).split(sep).join('/'), path, text: decoded.text });
  }
  return { files, skipped };
}

/** "1 file", "2 files". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

const REASONS: Record<SkipReason, { warning: (skip: SkippedFile) => string; counted: (n: number) => string }> = {
  binary: { warning: () => 'binary content', counted: (n) => `${n} binary` },
  'not-utf8': {
    warning: () => 'not UTF-8 text (convert it first, e.g. iconv -f latin1 -t utf-8)',
    counted: (n) => `${n} not UTF-8`,
  },
  'dangling-link': { warning: () => 'a symbolic link to nothing', counted: (n) => count(n, 'dangling symlink') },
  'link-loop': { warning: () => 'a symbolic link that loops', counted: (n) => count(n, 'looping symlink') },
  'outside-root': {
    warning: (skip) => `a symbolic link leading outside ${skip.root ?? 'the folder given'} (not followed; --follow-symlinks follows it)`,
    counted: (n) => `${count(n, 'symlink')} leading outside the folders given`,
  },
  extension: {
    warning: () => `not ${INGESTED_EXTENSIONS.join(', ')}`,
    counted: (n) => `${n} not ${INGESTED_EXTENSIONS.join('/')}`,
  },
};

/** One warning line per skipped file. */
export function skipWarning(skip: SkippedFile): string {
  return `skipped ${skip.path}: ${REASONS[skip.reason].warning(skip)}`;
}

/** "Skipped 3 files: 1 binary, 2 not UTF-8." (empty when nothing was skipped). */
export function skipSummary(skipped: readonly SkippedFile[]): string {
  if (skipped.length === 0) return '';
  const parts = (Object.keys(REASONS) as SkipReason[]).flatMap((reason) => {
    const n = skipped.filter((skip) => skip.reason === reason).length;
    return n === 0 ? [] : [REASONS[reason].counted(n)];
  });
  return `Skipped ${count(skipped.length, 'file')}: ${parts.join(', ')}.`;
}
