import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import { mkdir, stat } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { sha256Hex } from '../../base/canonical.js';
import { LitmPackError } from '../../base/errors.js';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import type { DeleteSourcesResult, EmbeddingsLike, IngestDocument, Store } from '../../retrieve/types.js';
import { readFrontMatter, type FrontMatter } from '../../sources/front-matter.js';
import { INGESTED_EXTENSIONS, count, readTextFiles, skipSummary, skipWarning, type ReadOptions, type TextFile } from '../ingest-files.js';
import { warn } from '../io.js';
import { embeddingsFrom, embeddingsOptions, list, storeOption, type EmbeddingsFlags } from '../options.js';
import { reindexIngest } from '../reindex.js';
import { STORE_FILE, loadStore, openQdrant } from '../stores.js';
import { listSourceIds } from './remove.js';

/** What a document takes from the flags besides its file. */
export interface DocumentFlags {
  /** Clusters every ingested file joins (besides those its front matter names). */
  clusters?: string[];
  /** Kind of the files whose front matter names none. */
  kind?: string;
}

export interface IngestFlags extends EmbeddingsFlags, DocumentFlags {
  store: string;
  quiet?: boolean;
  strict?: boolean;
  followSymlinks?: boolean;
  /** Remove sources under the ingested folders whose files are gone. */
  prune?: boolean;
  /** Qdrant: build a new collection behind the alias and swap it (see ../reindex.ts). */
  reindex?: boolean;
  alias?: string;
}

function titleOf(text: string, path: string): string {
  const heading = /^#\s+(.+)$/m.exec(text);
  return heading?.[1]?.trim() ?? basename(path);
}

/** The document for one file: markdown front matter and the flags set clusters, kind and title. */
function toDocument({ id, path, text: raw }: TextFile, flags: DocumentFlags): IngestDocument {
  const markdown = ['.md', '.markdown'].includes(extname(path).toLowerCase());
  const { text, frontMatter } = markdown ? readFrontMatter(raw, path) : { text: raw, frontMatter: {} as FrontMatter };
  // The version hashes the whole file, so an edit of the front matter alone is a new version too.
  const doc: IngestDocument = { id, text, title: frontMatter.title ?? titleOf(text, path), version: sha256Hex(raw).slice(0, 12) };
  const clusters = [...new Set([...(frontMatter.clusters ?? []), ...(flags.clusters ?? [])])];
  if (clusters.length > 0) doc.clusters = clusters;
  const kind = frontMatter.kind ?? flags.kind;
  if (kind !== undefined) doc.kind = kind;
  return doc;
}

/**
 * Reads the files under `paths` as documents, warning about each one skipped; with `strict`, anything
 * skipped fails the ingest before a store is touched.
 */
export async function readForIngest(paths: string[], options: ReadOptions & DocumentFlags & { strict?: boolean; prune?: boolean }) {
  const { files, skipped } = await readTextFiles(paths, options);
  for (const skip of skipped) warn(skipWarning(skip));
  if (options.strict === true && skipped.length > 0) {
    throw new LitmPackError('invalid_input', `--strict: ${skipSummary(skipped)} Nothing was ingested.`, {
      details: { skipped: skipped.map((skip) => skip.path) },
    });
  }
  const docs = files.map((file) => toDocument(file, options));
  // With --prune an emptied folder is no error: its sources are removed.
  if (docs.length === 0 && options.prune !== true) {
    const why = skipped.length > 0 ? ` (${skipSummary(skipped).replace(/\.$/, '')})` : '';
    throw new LitmPackError('invalid_input', `No ${INGESTED_EXTENSIONS.join('/')} text files to ingest in ${paths.join(', ')}${why}`);
  }
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

/** Opens (or creates) the store `storeDir` names for writing. */
async function openForIngest(storeDir: string, embeddings: EmbeddingsLike | undefined): Promise<Store> {
  const qdrant = await openQdrant(storeDir, { embeddings });
  if (qdrant) {
    await qdrant.ensureCollection();
    return qdrant;
  }
  const store = await loadStore(storeDir, false, { embeddings });
  if (embeddings === undefined && store.embedding !== null) {
    // New chunks without vectors would be invisible to the dense half of hybrid search.
    const { model, dimension } = store.embedding;
    throw new LitmPackError(
      'invalid_input',
      `The store at ${storeDir} holds ${dimension}-d vectors${model === null ? '' : ` of ${model}`}: ingest with --embeddings URL --embed-model ${model ?? 'NAME'} so new chunks get vectors too`,
    );
  }
  return store;
}

/** Ingests files and folders into the store `flags.store` names; returns the summary lines. */
export async function ingest(paths: string[], flags: IngestFlags): Promise<string> {
  const embeddings = embeddingsFrom(flags);
  const options = { ...flags, followSymlinks: flags.followSymlinks === true, strict: flags.strict === true };
  // Read everything first: an unreadable file fails the ingest before the store is touched.
  const { docs, skipped } = await readForIngest(paths, options);
  if (flags.reindex === true) {
    return [await reindexIngest(flags.store, flags.alias, docs, embeddings), ...(skipped.length > 0 ? [skipSummary(skipped)] : [])].join('\n');
  }
  const store = await openForIngest(flags.store, embeddings);
  const counts = await addWithProgress(store, docs, flags.quiet === true);
  const pruned = flags.prune === true ? await prune(store, paths, new Set(docs.map((d) => d.id))) : null;
  if (store instanceof MemoryHybridStore) {
    await mkdir(flags.store, { recursive: true });
    await store.save(join(flags.store, STORE_FILE));
  }
  const lines = [`Ingested ${count(docs.length, 'file')} into ${flags.store}: ${counts}.`];
  if (pruned !== null) lines.push(`Pruned ${count(pruned.sources, 'source')} whose files are gone (${count(pruned.chunks, 'chunk')}).`);
  if (skipped.length > 0) lines.push(skipSummary(skipped));
  return lines.join('\n');
}

/**
 * `--prune`: deletes the sources that lie under the ingested folders (or are the ingested files) but were
 * not found as files this time. Source ids are paths relative to the working directory, as ingest writes them.
 */
async function prune(store: Store, paths: string[], found: ReadonlySet<string>): Promise<DeleteSourcesResult> {
  const roots: { prefix: string; folder: boolean }[] = [];
  for (const path of paths) {
    const id = relative(process.cwd(), resolve(path)).split(sep).join('/');
    roots.push({ prefix: id, folder: (await stat(path)).isDirectory() });
  }
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
      process.stdout.write(`${await ingest(paths, flags)}\n`);
    });
}
