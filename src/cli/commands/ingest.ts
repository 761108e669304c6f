import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { sha256Hex } from '../../core/canonical.js';
import { LitmPackError } from '../../core/errors.js';
import { MemoryHybridStore } from '../../retrieve/memory-store.js';
import type { IngestDocument } from '../../retrieve/types.js';
import { readUserFile } from '../io.js';
import { reindexIngest } from '../reindex.js';
import { storeOption } from '../options.js';
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

/** Ingests files and folders into the store `storeDir` names; returns the one-line summary. */
export async function ingest(paths: string[], storeDir: string, quiet: boolean, reindex?: { alias?: string }): Promise<string> {
  const files = await collectFiles(paths);
  if (files.length === 0) throw new LitmPackError('invalid_input', `No .md or .txt files found in ${paths.join(', ')}`);
  // Read everything first: an unreadable file fails the ingest before the store is touched.
  const docs: IngestDocument[] = [];
  for (const file of files) {
    const text = await readUserFile(file);
    const id = relative(process.cwd(), resolve(file)).split(sep).join('/');
    docs.push({ id, text, title: titleOf(text, file), version: sha256Hex(text).slice(0, 12) });
  }
  if (reindex !== undefined) return reindexIngest(storeDir, reindex.alias, docs);
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

export function registerIngest(program: Command): void {
  storeOption(
    program
      .command('ingest')
      .description('chunk and index .md/.txt files and folders into the embedded store')
      .argument('<paths...>', 'files or folders'),
  )
    .option('--quiet', 'no progress bar')
    .option('--reindex', 'Qdrant: build a new collection behind the alias, verify it, then swap the alias (zero downtime)')
    .option('--alias <name>', 'with --reindex: the alias queries use (the collection of --store qdrant://host:port/NAME)')
    .action(async (paths: string[], flags: { store: string; quiet?: boolean; reindex?: boolean; alias?: string }) => {
      if (flags.alias !== undefined && flags.reindex !== true) throw new LitmPackError('invalid_input', '--alias goes with --reindex');
      const reindex = flags.reindex === true ? (flags.alias === undefined ? {} : { alias: flags.alias }) : undefined;
      process.stdout.write(`${await ingest(paths, flags.store, flags.quiet === true, reindex)}\n`);
    });
}
