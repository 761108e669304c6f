/**
 * The `Loader` seam: a reader for one kind of file. `loadDocuments` walks the paths it is given and hands
 * each file to the loader of its extension; a loader turns the file's bytes into ingest documents (a mailbox
 * may give many, a message with attachments several) or says why it skips the file. Users add their own
 * loaders beside the built-in ones.
 */
import type { IngestDocument } from '../store/schemas.js';

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

/**
 * The documents read, with `warnings` for what was read only in part (a malformed message left out, pages past
 * the limit), or a skip notice. A loader that throws has its file skipped (reason `failed`), like a skip notice.
 */
export type LoaderResult =
  | {
      documents: IngestDocument[];
      warnings?: string[];
      /**
       * Source ids the file holds whose documents were left out as copies of documents another file of this load
       * gave (the same message in two mailboxes): not gone, so pruning keeps what is stored under them.
       */
      held?: string[];
    }
  | { skip: SkipNotice };

/** Bounds on what one file may make loaders read (`loadDocuments` options; defaults in `DEFAULT_LOAD_LIMITS`). */
export interface LoadLimits {
  /** Files larger than this are skipped unread (`too-large`). */
  maxFileBytes: number;
  /** PDF pages read per file; the rest are left out with a warning. */
  maxPages: number;
  /** Messages read per mailbox; the rest are left out with a warning. */
  maxMessages: number;
  /** Records read per JSON Lines or JSON file; the rest are left out with a warning. */
  maxRecords: number;
  /** How deep attachments are read: 1 reads a message's attachments, 2 also theirs (a forwarded message's)... */
  maxAttachmentDepth?: number;
  /** Bytes of attachments (at every depth) one message may hand to loaders; the rest are left out with a warning. */
  maxExpandedBytes?: number;
  /** Chunks one file may give at least (its regions that cannot share a chunk); past it the rest is left out. */
  maxChunksPerFile?: number;
  /** Bytes a PDF's compressed streams may decode to (or 32 times the file's size, if more); past it the PDF is skipped. */
  maxInflatedBytes?: number;
}

export interface LoaderContext {
  signal?: AbortSignal | undefined;
  /** The limits of this load (built-in loaders honour them; a loader of your own may). */
  limits?: LoadLimits;
  /** The loader this load uses for an extension (`.pdf`): how a container (an e-mail) reads what it carries. */
  loaderFor?: (extension: string) => Loader | undefined;
  /**
   * Scratch space shared by every file of one load, by key: e.g. the Message-IDs read so far, so a message
   * found in two mailboxes is ingested once.
   */
  state?: Map<string, unknown>;
  /**
   * Set by a container for what it carries (an e-mail's attachments): how deep the file is (1 for a message's
   * attachment), and the bytes the outermost message has handed to loaders so far (shared by every depth).
   */
  nesting?: { depth: number; expanded: { bytes: number } };
}

export interface Loader {
  /** A short name for messages (`markdown`, `text`). */
  readonly name: string;
  /** The extensions it reads, lower case with the dot (`.md`). */
  readonly extensions: readonly string[];
  /** Reads one file. A file it cannot read is skipped with a notice (a throw skips the file too, as `failed`). */
  load(input: LoaderInput, context: LoaderContext): LoaderResult | Promise<LoaderResult>;
}
