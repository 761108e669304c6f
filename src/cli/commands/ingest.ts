import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import { mkdir } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { sha256Hex } from '../../core/canonical.js';
import { LitmPackError } from '../../core/errors.js';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import type { EmbeddingsLike, IngestDocument, Store } from '../../retrieve/types.js';
import { readFrontMatter, type FrontMatter } from '../front-matter.js';
import { INGESTED_EXTENSIONS, count, readTextFiles, skipSummary, skipWarning, type ReadOptions, type TextFile } from '../ingest-files.js';
import { warn } from '../io.js';
import { embeddingsFrom, embeddingsOptions, list, storeOption, type EmbeddingsFlags } from '../options.js';
import { STORE_FILE, loadStore, openQdrant } from '../stores.js';

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
export async function readForIngest(paths: string[], options: ReadOptions & DocumentFlags & { strict?: boolean }) {
  const { files, skipped } = await readTextFiles(paths, options);
  for (const skip of skipped) warn(skipWarning(skip));
  if (options.strict === true && skipped.length > 0) {
    throw new LitmPackError('invalid_input', `--strict: ${skipSummary(skipped)} Nothing was ingested.`, {
      details: { skipped: skipped.map((skip) => skip.path) },
    });
  }
  const docs = files.map((file) => toDocument(file, options));
  if (docs.length === 0) {
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
  const store = await openForIngest(flags.store, embeddings);
  const counts = await addWithProgress(store, docs, flags.quiet === true);
  if (store instanceof MemoryHybridStore) {
    await mkdir(flags.store, { recursive: true });
    await store.save(join(flags.store, STORE_FILE));
  }
  const lines = [`Ingested ${count(docs.length, 'file')} into ${flags.store}: ${counts}.`];
  if (skipped.length > 0) lines.push(skipSummary(skipped));
  return lines.join('\n');
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
    .action(async (paths: string[], flags: IngestFlags) => {
      process.stdout.write(`${await ingest(paths, flags)}\n`);
    });
}
