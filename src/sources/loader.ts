/**
 * The `Loader` seam: a reader for one kind of file. `loadDocuments` walks the paths it is given and hands
 * each file to the loader of its extension; a loader turns the file's bytes into ingest documents (a mailbox
 * may give many, a message with attachments several) or says why it skips the file. Users add their own
 * loaders beside the built-in ones.
 */
import type { IngestDocument } from '../retrieve/schemas.js';

/** One file, as a loader receives it. */
export interface LoaderInput {
  /** The file's path as it was found (under a path given to `loadDocuments`). */
  path: string;
  /** The source id the file gets: its path relative to `base`, with forward slashes. */
  sourceId: string;
  /** The file name's extension, lower case, with the dot (`.md`). */
  extension: string;
  bytes: Uint8Array;
}

/** Why a file was not ingested: a short reason (`binary`, `not-utf8`, `encrypted`...) and a message for a person. */
export interface SkipNotice {
  reason: string;
  message: string;
}

export type LoaderResult = { documents: IngestDocument[]; warnings?: string[] } | { skip: SkipNotice };

export interface LoaderContext {
  signal?: AbortSignal | undefined;
}

export interface Loader {
  /** A short name for messages (`markdown`, `text`). */
  readonly name: string;
  /** The extensions it reads, lower case with the dot (`.md`). */
  readonly extensions: readonly string[];
  /** Reads one file. A file it cannot read is skipped with a notice, never a throw (a throw fails the whole load). */
  load(input: LoaderInput, context: LoaderContext): LoaderResult | Promise<LoaderResult>;
}
