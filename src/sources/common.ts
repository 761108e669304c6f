// What the built-in loaders share: a version from the file's bytes, a title from its name, and how a loader
// loads a library it needs only for its own format (on first use, and a clear skip when it is not installed).
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { LoaderResult } from './loader.js';

/** The version of a file read as bytes: the first 12 hex digits of their sha256 (an edit anywhere is a new version). */
export function versionOfBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}

/** A file's name, the title of a document that names none. */
export function fileTitle(path: string): string {
  return basename(path);
}

/** Whether an import failed because the package is not installed (not because it threw while loading). */
export function isMissingModule(error: unknown, specifier: string): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = String((error as Error | undefined)?.message ?? '');
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(specifier.split('/')[0]!);
}

/** The skip notice of a file whose reader needs an optional package that is not installed. */
export function missingLibrary(kind: string, packages: string): LoaderResult {
  return {
    skip: {
      reason: 'missing-library',
      message: `reading ${kind} needs ${packages} (optional dependencies of litm-pack): npm install ${packages}`,
    },
  };
}

/** The message of anything thrown, on one line. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim() || 'unknown error';
}
