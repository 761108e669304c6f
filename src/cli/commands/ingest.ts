import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import { isLitmPackError, LitmPackError } from '../../base/errors.js';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import type { DeleteSourcesResult, EmbeddingsLike, IngestDocument, Store } from '../../retrieve/types.js';
import { describeSkipped, loadDocuments, sourceScope, type SkippedFile } from '../../sources/load.js';
import { warn } from '../io.js';
import { visible } from '../terminal.js';
import { embeddingsFrom, embeddingsOptions, list, storeOption, type EmbeddingsFlags } from '../options.js';
import { reindexIngest } from '../reindex.js';
import { loadOrCreateStore, openQdrant } from '../stores.js';
import { listSourceIds } from './remove.js';

export interface IngestFlags extends EmbeddingsFlags {
  store: string;
  quiet?: boolean;
  strict?: boolean;
  followSymlinks?: boolean;
  /** Clusters every ingested file joins (besides those its front matter names). */
  clusters?: string[];
  /** Kind of the files whose front matter names none. */
  kind?: string;
  /** Remove sources under the ingested folders whose files are gone. */
  prune?: boolean;
  /** Qdrant: build a new collection behind the alias and swap it (see ../reindex.ts). */
  reindex?: boolean;
  alias?: string;
}

/** "1 file", "2 files". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** One warning line per skipped file. */
export function skipWarning(skip: SkippedFile): string {
  return `skipped ${skip.path}: ${skip.message}`;
}

/** The documents under `paths` (the library's `loadDocuments`), warning about each file skipped. */
export async function readForIngest(paths: string[], flags: Pick<IngestFlags, 'followSymlinks' | 'strict' | 'clusters' | 'kind' | 'prune'> & { base?: string }) {
  const skipped: SkippedFile[] = [];
  const load = loadDocuments(paths, {
    followSymlinks: flags.followSymlinks === true,
    strict: flags.strict === true,
    // With --prune an emptied folder is no error: its sources are removed.
    allowEmpty: flags.prune === true,
    ...(flags.base === undefined ? {} : { base: flags.base }),
    ...(flags.clusters === undefined ? {} : { clusters: flags.clusters }),
    ...(flags.kind === undefined ? {} : { kind: flags.kind }),
    onSkip: (skip) => {
      skipped.push(skip);
      warn(skipWarning(skip));
    },
  });
  const docs = await load.catch((error: unknown) => {
    // The library names its option; the command line names the flag.
    if (isLitmPackError(error, 'invalid_input') && error.details.option === 'strict') {
      throw new LitmPackError('invalid_input', error.message.replace(/^strict:/u, '--strict:'), { cause: error, details: error.details });
    }
    throw error;
  });
  return { docs, skipped };
}

/** Adds documents to an open store with a progress bar on a terminal; returns the counts line. */
export async function addWithProgress(store: Store, docs: IngestDocument[], quiet: boolean): Promise<string> {
  const bar = !quiet && process.stderr.isTTY ? new SingleBar({ format: 'ingest [{bar}] {value}/{total} files', stream: process.stderr }, Presets.shades_classic) : null;
  bar?.start(docs.length, 0);
  try {
    const result = await store.addDocuments(docs, { onProgress: (done) => bar?.update(done) });
    const total = store instanceof MemoryHybridStore ? ` (${count(store.size, 'chunk')} in all)` : '';
    return `${count(result.added, 'chunk')} added, ${result.unchanged} unchanged, ${result.removed} removed${total}`;
  } finally {
    bar?.stop();
  }
}

/** A local store opened for writing must get vectors for new chunks when it holds vectors already. */
function checkVectorsKept(store: MemoryHybridStore, spec: string, embeddings: EmbeddingsLike | undefined): void {
  if (embeddings !== undefined || store.embedding === null) return;
  // New chunks without vectors would be invisible to the dense half of hybrid search.
  const { model, dimension } = store.embedding;
  throw new LitmPackError(
    'invalid_input',
    `The store at ${spec} holds ${dimension}-d vectors${model === null ? '' : ` of ${model}`}: ingest with --embeddings URL --embed-model ${model ?? 'NAME'} so new chunks get vectors too`,
  );
}

/** Ingests files and folders into the store `flags.store` names; returns the summary lines. */
export async function ingest(paths: string[], flags: IngestFlags): Promise<string> {
  const embeddings = embeddingsFrom(flags);
  // Read everything first: an unreadable file fails the ingest before the store is touched.
  const { docs, skipped } = await readForIngest(paths, flags);
  if (flags.reindex === true) {
    return [await reindexIngest(flags.store, flags.alias, docs, embeddings), ...(skipped.length > 0 ? [describeSkipped(skipped)] : [])].join('\n');
  }
  const qdrant = await openQdrant(flags.store, { embeddings });
  let store: Store;
  let file: string | undefined;
  if (qdrant !== null) {
    await qdrant.ensureCollection();
    store = qdrant;
  } else {
    const local = await loadOrCreateStore(flags.store, { embeddings });
    checkVectorsKept(local.store, flags.store, embeddings);
    store = local.store;
    file = local.file;
  }
  const counts = await addWithProgress(store, docs, flags.quiet === true);
  const pruned = flags.prune === true ? await prune(store, paths, new Set(docs.map((d) => d.id))) : null;
  if (store instanceof MemoryHybridStore && file !== undefined) await store.save(file);
  const lines = [`Ingested ${count(docs.length, 'file')} into ${flags.store}: ${counts}.`];
  if (pruned !== null) lines.push(`Pruned ${count(pruned.sources, 'source')} whose files are gone (${count(pruned.chunks, 'chunk')}).`);
  if (skipped.length > 0) lines.push(describeSkipped(skipped));
  return lines.join('\n');
}

/**
 * `--prune`: deletes the sources that lie under the ingested folders (or are the ingested files) but were
 * not found as files this time. Source ids are as `loadDocuments` writes them (`sourceScope`).
 */
async function prune(store: Store, paths: string[], found: ReadonlySet<string>): Promise<DeleteSourcesResult> {
  const roots = await Promise.all(paths.map((path) => sourceScope(path)));
  const under = (sourceId: string) =>
    roots.some(({ prefix, folder }) =>
      !folder ? sourceId === prefix : prefix === '' ? !sourceId.startsWith('../') && !sourceId.startsWith('/') : sourceId.startsWith(`${prefix}/`),
    );
  const gone = (await listSourceIds(store)).filter((id) => under(id) && !found.has(id));
  if (gone.length === 0) return { sources: 0, chunks: 0 };
  if (typeof store.deleteSources !== 'function') throw new LitmPackError('unsupported', 'This store cannot delete sources');
  return store.deleteSources(gone);
}

export function registerIngest(program: Command): void {
  embeddingsOptions(
    storeOption(
      program
        .command('ingest')
        .description('chunk and index .md/.markdown/.txt files and folders (UTF-8 text; source ids are paths relative to the working directory)')
        .argument('<paths...>', 'files or folders'),
    ),
  )
    .option('--quiet', 'no progress bar')
    .option('--strict', 'fail instead of skipping files that are not UTF-8 text and symlinks that are not followed')
    .option('--follow-symlinks', 'follow symbolic links that lead outside the folders given (never in circles)')
    .option('--clusters <list>', 'comma-separated clusters every file joins (front matter `clusters:` adds more)', list)
    .option('--kind <kind>', 'tier of files whose front matter names no `kind:` (e.g. insight, segment)')
    .option('--prune', 'remove sources under the given folders whose files are gone')
    .option('--reindex', 'Qdrant: build a new collection behind the alias, verify it, then swap the alias (zero downtime)')
    .option('--alias <name>', 'with --reindex: the alias queries use (the collection of --store qdrant://host:port/NAME)')
    .action(async (paths: string[], flags: IngestFlags) => {
      if (flags.alias !== undefined && flags.reindex !== true) throw new LitmPackError('invalid_input', '--alias goes with --reindex');
      process.stdout.write(`${visible(await ingest(paths, flags))}\n`);
    });
}
