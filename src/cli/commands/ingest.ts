import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { sha256Hex } from '../../core/canonical.js';
import { LitmPackError } from '../../core/errors.js';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import type { IngestDocument } from '../../retrieve/types.js';
import { readUserFile } from '../io.js';
import { readFrontMatter, type FrontMatter } from '../front-matter.js';
import { list, storeOption } from '../options.js';
import { STORE_FILE, loadStore, openQdrant } from '../stores.js';

async function collectFiles(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  const visit = async (path: string) => {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw new LitmPackError('not_found', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { cause: error });
    }
    if (info.isDirectory()) {
      const entries = (await readdir(path)).sort();
      for (const entry of entries) if (!entry.startsWith('.')) await visit(join(path, entry));
    } else if (['.md', '.markdown', '.txt'].includes(extname(path).toLowerCase())) {
      out.push(path);
    }
  };
  for (const path of paths) await visit(path);
  return out;
}

function titleOf(text: string, path: string): string {
  const heading = /^#\s+(.+)$/m.exec(text);
  return heading?.[1]?.trim() ?? basename(path);
}

export interface IngestFlags {
  /** Clusters every ingested file joins (besides those its front matter names). */
  clusters?: string[];
  /** Kind of the files whose front matter names none. */
  kind?: string;
}

/** Ingests files and folders into the store `storeDir` names; returns the one-line summary. */
export async function ingest(paths: string[], storeDir: string, quiet: boolean, flags: IngestFlags = {}): Promise<string> {
  const files = await collectFiles(paths);
  if (files.length === 0) throw new LitmPackError('invalid_input', `No .md or .txt files found in ${paths.join(', ')}`);
  // Read everything first: an unreadable file fails the ingest before the store is touched.
  const docs: IngestDocument[] = [];
  for (const file of files) {
    const raw = await readUserFile(file);
    const id = relative(process.cwd(), resolve(file)).split(sep).join('/');
    docs.push(withFrontMatter(id, raw, file, flags));
  }
  const qdrant = await openQdrant(storeDir);
  const store = qdrant ?? (await loadStore(storeDir, false));
  if (qdrant) await qdrant.ensureCollection();
  const bar = !quiet && process.stderr.isTTY ? new SingleBar({ format: 'ingest [{bar}] {value}/{total} files', stream: process.stderr }, Presets.shades_classic) : null;
  bar?.start(docs.length, 0);
  const result = await store.addDocuments(docs, { onProgress: (done) => bar?.update(done) });
  bar?.stop();
  if (store instanceof MemoryHybridStore) {
    await mkdir(storeDir, { recursive: true });
    await store.save(join(storeDir, STORE_FILE));
  }
  const total = store instanceof MemoryHybridStore ? ` (${store.size} chunks in all)` : '';
  return `Ingested ${docs.length} files into ${storeDir}: ${result.added} chunks added, ${result.unchanged} unchanged, ${result.removed} removed${total}.`;
}

/** The document for one file: markdown front matter and the flags set clusters, kind and title. */
function withFrontMatter(id: string, raw: string, file: string, flags: IngestFlags): IngestDocument {
  const markdown = ['.md', '.markdown'].includes(extname(file).toLowerCase());
  const { text, frontMatter } = markdown ? readFrontMatter(raw, file) : { text: raw, frontMatter: {} as FrontMatter };
  // The version hashes the whole file, so an edit of the front matter alone is a new version too.
  const doc: IngestDocument = { id, text, title: frontMatter.title ?? titleOf(text, file), version: sha256Hex(raw).slice(0, 12) };
  const clusters = [...new Set([...(frontMatter.clusters ?? []), ...(flags.clusters ?? [])])];
  if (clusters.length > 0) doc.clusters = clusters;
  const kind = frontMatter.kind ?? flags.kind;
  if (kind !== undefined) doc.kind = kind;
  return doc;
}

export function registerIngest(program: Command): void {
  storeOption(
    program
      .command('ingest')
      .description('chunk and index .md/.txt files and folders into the embedded store')
      .argument('<paths...>', 'files or folders'),
  )
    .option('--quiet', 'no progress bar')
    .option('--clusters <list>', 'comma-separated clusters every file joins (front matter `clusters:` adds more)', list)
    .option('--kind <kind>', 'tier of files whose front matter names no `kind:` (e.g. insight, segment)')
    .action(async (paths: string[], flags: IngestFlags & { store: string; quiet?: boolean }) => {
      process.stdout.write(`${await ingest(paths, flags.store, flags.quiet === true, flags)}\n`);
    });
}
