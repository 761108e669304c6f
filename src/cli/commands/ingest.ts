import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import { isLitmPackError, LitmPackError } from '../../base/errors.js';
import { MemoryHybridStore } from '../../memory/memory-hybrid-store.js';
import type { AddDocumentsResult, DeleteSourcesResult, Store } from '../../store/types.js';
import type { EmbeddingsLike } from '../../store/embeddings.js';
import { applyIngest, readPaths, type IngestRead, type IngestResult } from '../../pipeline/ingest.js';
import { defaultLoaders, describeSkipped, type LoadWarning, type SkippedFile } from '../../sources/load.js';
import { recordsLoader, type RecordsMapping } from '../../sources/records.js';
import { watchDocuments, type WatchBatch } from '../../sources/watch.js';
import { stderr, stdout, warn } from '../io.js';
import { visible, visibleLine, count } from '../terminal.js';
import { embeddingsFrom, embeddingsOptions, integer, list, storeOption, type EmbeddingsFlags } from '../options.js';
import { reindexIngest } from '../reindex.js';
import { openQdrant, storeFile, updateStore } from '../stores.js';

interface IngestFlags extends EmbeddingsFlags {
  store: string;
  quiet?: boolean;
  strict?: boolean;
  followSymlinks?: boolean;
  /** Clusters every ingested file joins (besides those its front matter names). */
  clusters?: string[];
  /** Kind of the files whose front matter names none. */
  kind?: string;
  /** Principals of the files whose front matter names no `acl`. */
  acl?: string[];
  /** Remove sources under the ingested folders whose files are gone. */
  prune?: boolean;
  /** Write chunks without vectors even into a store that holds vectors (found by keyword search only). */
  lexicalOnly?: boolean;
  /** Qdrant: build a new collection behind the alias and swap it (see ../reindex.ts). */
  reindex?: boolean;
  alias?: string;
  /** Records (.jsonl, .ndjson, .json): the fields holding each record's id, text and title, and those kept as metadata. */
  idField?: string;
  textField?: string;
  titleField?: string;
  metadataFields?: string[];
  /** Files larger than this are skipped unread. */
  maxFileBytes?: number;
  /** Keep the store current as files change (until interrupted). */
  watch?: boolean;
}

type ReadFlags = Pick<
  IngestFlags,
  | 'followSymlinks'
  | 'strict'
  | 'clusters'
  | 'kind'
  | 'acl'
  | 'prune'
  | 'idField'
  | 'textField'
  | 'titleField'
  | 'metadataFields'
  | 'maxFileBytes'
> & { base?: string };

/** The loaders for the flags: the defaults, with the records loader's field mapping when one is given. */
function loadersFor(flags: ReadFlags) {
  const mapping: RecordsMapping = {};
  if (flags.idField !== undefined) mapping.idField = flags.idField;
  if (flags.textField !== undefined) mapping.textField = flags.textField;
  if (flags.titleField !== undefined) mapping.titleField = flags.titleField;
  if (flags.metadataFields !== undefined) mapping.metadataFields = flags.metadataFields;
  return Object.keys(mapping).length === 0 ? undefined : [...defaultLoaders(), recordsLoader(mapping)];
}

/** The `loadDocuments` options the flags give (loaders, limits, clusters, kind, ACL). */
function loadOptionsFor(flags: ReadFlags) {
  const loaders = loadersFor(flags);
  return {
    followSymlinks: flags.followSymlinks === true,
    ...(loaders === undefined ? {} : { loaders }),
    ...(flags.maxFileBytes === undefined ? {} : { maxFileBytes: flags.maxFileBytes }),
    ...(flags.base === undefined ? {} : { base: flags.base }),
    ...(flags.clusters === undefined ? {} : { clusters: flags.clusters }),
    ...(flags.kind === undefined ? {} : { kind: flags.kind }),
    ...(flags.acl === undefined ? {} : { acl: flags.acl }),
  };
}

/** One warning line per file read in part. */
function partialWarning(warning: LoadWarning): string {
  return `read ${warning.path} in part: ${warning.message}`;
}

/** One warning line per skipped file. */
function skipWarning(skip: SkippedFile): string {
  return `skipped ${skip.path}: ${skip.message}`;
}

/** The documents under `paths` (the pipeline's `readPaths`), warning about each file skipped or read in part. */
export async function readForIngest(paths: string[], flags: ReadFlags): Promise<IngestRead> {
  return readPaths(paths, {
    ...loadOptionsFor(flags),
    strict: flags.strict === true,
    prune: flags.prune === true,
    onSkip: (skip) => warn(skipWarning(skip)),
    onWarning: (warning) => warn(partialWarning(warning)),
  }).catch((error: unknown) => {
    // The library names its option; the command line names the flag.
    if (isLitmPackError(error, 'invalid_input') && error.details.option === 'strict') {
      throw new LitmPackError('invalid_input', error.message.replace(/^strict:/u, '--strict:'), { cause: error, details: error.details });
    }
    throw error;
  });
}

/** "3 files", or "2 files (5 sources)" when files held several (messages, attachments, records). */
function filesLine(files: number, sources: number): string {
  return files === sources ? count(files, 'file') : `${count(files, 'file')} (${count(sources, 'source')})`;
}

/** Applies what was read to an open store (`applyIngest`) with a progress bar on a terminal. */
export async function applyWithProgress(
  store: Store,
  read: IngestRead,
  options: { quiet: boolean; prune?: boolean },
): Promise<IngestResult> {
  const bar =
    !options.quiet && stderr().isTTY
      ? new SingleBar({ format: 'ingest [{bar}] {value}/{total} files', stream: stderr() }, Presets.shades_classic)
      : null;
  bar?.start(read.documents.length, 0);
  try {
    return await applyIngest(store, read, { prune: options.prune === true, add: { onProgress: (done) => bar?.update(done) } });
  } finally {
    bar?.stop();
  }
}

/** The counts line of an ingest. */
export function addedLine(added: AddDocumentsResult): string {
  return `${count(added.added, 'chunk')} added, ${added.unchanged} unchanged, ${added.removed} removed`;
}

/** " (N chunks in all)" for the embedded store, which knows its size; nothing for others. */
function totalOf(store: Store): string {
  return store instanceof MemoryHybridStore ? ` (${count(store.size, 'chunk')} in all)` : '';
}

/** A local store opened for writing must get vectors for new chunks when it holds vectors already. */
function checkVectorsKept(store: MemoryHybridStore, spec: string, embeddings: EmbeddingsLike | undefined, lexicalOnly: boolean): void {
  if (embeddings !== undefined || store.embedding === null || lexicalOnly) return;
  // New chunks without vectors would be invisible to the dense half of hybrid search.
  const { model, dimension } = store.embedding;
  throw new LitmPackError(
    'invalid_input',
    `The store at ${spec} holds ${dimension}-d vectors${model === null ? '' : ` of ${model}`}: ingest with --embeddings URL --embed-model ${model ?? 'NAME'} so new chunks get vectors too, or with --lexical-only to add chunks only keyword search finds`,
  );
}

/** Ingests files and folders into the store `flags.store` names; returns the summary lines. */
export async function ingest(paths: string[], flags: IngestFlags): Promise<string> {
  const embeddings = embeddingsFrom(flags);
  // Read everything first: an unreadable file fails the ingest before the store is touched.
  const read = await readForIngest(paths, flags);
  const { documents: docs, skipped, files } = read;
  if (flags.reindex === true) {
    return [
      await reindexIngest(flags.store, flags.alias, docs, embeddings),
      ...(skipped.length > 0 ? [describeSkipped(skipped)] : []),
    ].join('\n');
  }
  // Adds, prunes, and says how large the store is after both.
  const change = async (store: Store) => {
    const { added, pruned } = await applyWithProgress(store, read, { quiet: flags.quiet === true, prune: flags.prune === true });
    return { counts: `${addedLine(added)}${totalOf(store)}`, pruned };
  };
  const qdrant = await openQdrant(flags.store, { embeddings, lexicalOnly: flags.lexicalOnly === true });
  let done: { counts: string; pruned: DeleteSourcesResult | null };
  let file: string | undefined;
  if (qdrant !== null) {
    await qdrant.ensureCollection();
    done = await change(qdrant);
  } else {
    // One writer at a time: another ingest or remove of this store file waits for the lock (see updateStore).
    file = await storeFile(flags.store);
    done = await updateStore(
      file,
      async (local) => {
        checkVectorsKept(local, flags.store, embeddings, flags.lexicalOnly === true);
        return change(local);
      },
      { embeddings },
    );
  }
  const { counts, pruned } = done;
  const lines = [`Ingested ${filesLine(files, docs.length)} into ${flags.store}: ${counts}.`];
  if (pruned !== null) lines.push(`Pruned ${count(pruned.sources, 'source')} whose files are gone (${count(pruned.chunks, 'chunk')}).`);
  if (skipped.length > 0) lines.push(describeSkipped(skipped));
  if (flags.watch === true) {
    stdout().write(`${visible(lines.join('\n'))}\n`);
    await watchIngest(paths, flags, qdrant, file, embeddings);
    return '';
  }
  return lines.join('\n');
}

/** What a batch of --watch did, on one line. */
function batchLine(batch: WatchBatch): string {
  const parts = [`${count(batch.changed.length, 'file')} read`, `${count(batch.removed.length, 'file')} gone`];
  const { added, deleted } = batch;
  return `Updated: ${parts.join(', ')}: ${count(added.added, 'chunk')} added, ${added.unchanged} unchanged, ${added.removed + deleted.chunks} removed${deleted.sources > 0 ? ` (${count(deleted.sources, 'source')} deleted)` : ''}.`;
}

/**
 * `--watch`: after the ingest, keeps the store current until interrupted (SIGINT or SIGTERM), one line per
 * batch of changes; an embedded store is saved after each batch.
 */
async function watchIngest(
  paths: string[],
  flags: IngestFlags,
  qdrant: Store | null,
  file: string | undefined,
  embeddings: EmbeddingsLike | undefined,
): Promise<void> {
  // An embedded store is loaded, changed and saved under its lock per batch, so other writers' changes stay.
  const target =
    qdrant !== null
      ? { store: qdrant }
      : { update: <T>(change: (store: Store) => Promise<T>) => updateStore(file!, change, { embeddings }) };
  const watcher = await watchDocuments(paths, {
    ...loadOptionsFor(flags),
    ...target,
    onSkip: (skip) => warn(skipWarning(skip)),
    onWarning: (warning) => warn(partialWarning(warning)),
    onBatch: (batch) => stdout().write(`${visibleLine(batchLine(batch))}\n`),
    onError: (error) => warn(`a batch of changes was not applied: ${error instanceof Error ? error.message : String(error)}`),
  });
  warn(`watching ${paths.join(', ')} for changes (Ctrl-C stops)`);
  await new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void watcher.close().then(done, done);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export function registerIngest(program: Command): void {
  embeddingsOptions(
    storeOption(
      program
        .command('ingest')
        .description(
          'chunk and index files and folders: markdown, text, HTML, PDF, source code, e-mail (.eml, .mbox), WebVTT/SRT transcripts, JSON records (source ids are paths relative to the working directory)',
        )
        .argument('<paths...>', 'files or folders'),
    ),
  )
    .option('--quiet', 'no progress bar')
    .option('--strict', 'fail instead of skipping files that are not UTF-8 text and symlinks that are not followed')
    .option('--follow-symlinks', 'follow symbolic links that lead outside the folders given (never in circles)')
    .option('--clusters <list>', 'comma-separated clusters every file joins (front matter `clusters:` adds more)', list)
    .option('--kind <kind>', 'tier of files whose front matter names no `kind:` (e.g. insight, segment)')
    .option('--acl <list>', 'comma-separated principals who may read the files whose front matter names no `acl:`', list)
    .option('--prune', 'remove sources under the given folders whose files are gone')
    .option(
      '--lexical-only',
      'without --embeddings, add chunks without vectors even to a store that holds vectors (keyword search finds them; dense and hybrid do not)',
    )
    .option('--reindex', 'Qdrant: build a new collection behind the alias, verify it, then swap the alias (zero downtime)')
    .option('--alias <name>', 'with --reindex: the alias queries use (the collection of --store qdrant://host:port/NAME)')
    .option('--id-field <field>', "records (.jsonl/.ndjson/.json): the field holding each record's id (default id)")
    .option('--text-field <field>', 'records: the field holding the text to index (default text)')
    .option('--title-field <field>', 'records: the field holding the title (default title)')
    .option('--metadata-fields <list>', 'records: comma-separated fields kept as metadata', list)
    .option('--max-file-bytes <n>', 'skip files larger than this (default 26214400, 25 MiB)', integer('--max-file-bytes', { min: 1 }))
    .option('--watch', 'after the ingest, keep the store current as files are added, changed, renamed and deleted (until Ctrl-C)')
    .action(async (paths: string[], flags: IngestFlags) => {
      if (flags.alias !== undefined && flags.reindex !== true) throw new LitmPackError('invalid_input', '--alias goes with --reindex');
      if (flags.watch === true && flags.reindex === true) throw new LitmPackError('invalid_input', '--watch cannot go with --reindex');
      const summary = await ingest(paths, flags);
      if (summary !== '') stdout().write(`${visible(summary)}\n`);
    });
}
