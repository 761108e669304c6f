// Opening the store a command names. `--store` is the embedded store's file, the folder that holds it
// (`DIR/store.json`), or qdrant://host:port/collection.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LitmPackError } from '../base/errors.js';
import { warn } from './io.js';
import { STORE_FILE_NAME } from '../memory/file.js';
import { MemoryHybridStore } from '../memory/memory-hybrid-store.js';
import { ReloadingStore } from '../memory/reloading-store.js';
import type { EmbeddingsLike } from '../store/embeddings.js';
import { reindexAdvice } from '../store/indexed-text.js';
import type { Store } from '../store/types.js';
import { PAYLOAD_PRESETS, type PayloadPreset } from '../qdrant/presets.js';

/** What `--help` says `--store` takes. */
export const STORE_HELP = `the store: a store file, the folder holding it (${STORE_FILE_NAME} inside it is used), or qdrant://host:6333/collection`;

/** How a command opens its store. */
interface OpenStoreOptions {
  /** Embeddings of the store's model (the CLI's --embeddings); without them hybrid search runs on BM25. */
  embeddings?: EmbeddingsLike | undefined;
  /** BM25 IDF over every chunk (`all`) or over what the caller may read (`visible`; embedded store only). */
  idfCorpus?: 'all' | 'visible' | undefined;
  /** Qdrant: write chunks without dense vectors even into a collection that holds them (--lexical-only). */
  lexicalOnly?: boolean | undefined;
}

/** What a qdrant:// spec can say besides where the collection is (`?preset=...&tenant=...&tenancy=...`). */
const QDRANT_SETTINGS = ['preset', 'tenant', 'tenancy'] as const;
type QdrantSettings = Partial<Record<(typeof QDRANT_SETTINGS)[number], string>>;

/**
 * `spec` with `--preset`, `--tenant` and `--tenancy` as its query (`qdrant://host:6333/docs?tenant=acme`);
 * `spec` itself when none is given. They name a Qdrant collection's settings: with another store they are refused.
 */
export function withQdrantSettings(spec: string, settings: QdrantSettings): string {
  const given = QDRANT_SETTINGS.filter((key) => settings[key] !== undefined);
  if (given.length === 0) return spec;
  if (!/^qdrants?:\/\//.test(spec)) {
    throw new LitmPackError(
      'invalid_input',
      `${given.map((key) => `--${key}`).join(' and ')} apply to a Qdrant store (--store qdrant://host:6333/collection), not to ${spec}`,
    );
  }
  if (settings.tenancy !== undefined && settings.tenant === undefined)
    throw new LitmPackError('invalid_input', '--tenancy goes with --tenant');
  const query = new URLSearchParams(given.map((key): [string, string] => [key, settings[key]!]));
  return `${spec}${spec.includes('?') ? '&' : '?'}${query.toString()}`;
}

/** Where a qdrant:// spec points and the store options it names. */
interface QdrantTarget {
  url: string;
  collection: string;
  apiKey?: string;
  payloadPreset?: PayloadPreset;
  tenancy?: 'payload' | 'shard-key';
  tenant?: string;
}

/**
 * Where a `qdrant://host:port/collection` (or `qdrants://` for TLS) spec points, with `QDRANT_API_KEY` as the
 * key and the settings of its query; null when `spec` is not one. An http(s) URL is what a user copying
 * `QDRANT_URL` types: refused with the form to use, never taken for a local path.
 */
export function qdrantTarget(spec: string, flag = '--store'): QdrantTarget | null {
  const match = /^qdrant(s?):\/\/([^/?#]+)\/([^/?#]+)\/?(?:\?([^#]*))?$/.exec(spec);
  if (!match) {
    const web = /^(https?):\/\/([^/]+)(?:\/([^/?#]+))?/i.exec(spec);
    if (web) {
      const scheme = web[1]!.toLowerCase() === 'https' ? 'qdrants' : 'qdrant';
      throw new LitmPackError(
        'invalid_input',
        `${flag} ${spec} is a web address; a Qdrant collection is named ${scheme}://${web[2]}/${web[3] ?? 'COLLECTION'}`,
      );
    }
    if (spec.startsWith('qdrant')) {
      throw new LitmPackError('invalid_input', `Bad Qdrant store "${spec}": use qdrant://host:6333/collection (qdrants:// for TLS)`);
    }
    return null;
  }
  const apiKey = process.env.QDRANT_API_KEY;
  const target: QdrantTarget = {
    url: `${match[1] === 's' ? 'https' : 'http'}://${match[2]}`,
    collection: decodeURIComponent(match[3] as string),
    ...(apiKey ? { apiKey } : {}),
  };
  for (const [key, value] of new URLSearchParams(match[4] ?? '')) {
    if (key === 'preset' && (PAYLOAD_PRESETS as readonly string[]).includes(value)) target.payloadPreset = value as PayloadPreset;
    else if (key === 'tenancy' && (value === 'payload' || value === 'shard-key')) target.tenancy = value;
    else if (key === 'tenant' && value !== '') target.tenant = value;
    else {
      throw new LitmPackError(
        'invalid_input',
        `Bad Qdrant store "${spec}": ${key}=${value} is not a setting (preset: ${PAYLOAD_PRESETS.join(', ')}; tenant: a name; tenancy: payload or shard-key)`,
      );
    }
  }
  if (target.tenant !== undefined) target.tenancy ??= 'payload';
  return target;
}

/** The Qdrant collection a `qdrant://` spec names (the Qdrant module is loaded only then); null otherwise. */
export async function openQdrant(spec: string, options: OpenStoreOptions = {}) {
  const target = qdrantTarget(spec);
  if (target === null) return null;
  const { QdrantHybridStore } = await import('../qdrant/index.js');
  // Without --embeddings the CLI writes BM25 vectors only; a collection it creates still gets a dense slot,
  // sized for the common 384-d sentence embedders, so it can be filled later. With them, the size is probed.
  // Another tool's collection is never created, so it is not sized.
  const { embeddings, idfCorpus, lexicalOnly } = options;
  const creates = target.payloadPreset === undefined || target.payloadPreset === 'litm';
  const dense = embeddings !== undefined ? { embeddings } : creates ? { vectorSize: 384 } : {};
  return new QdrantHybridStore({
    ...target,
    ...dense,
    ...(idfCorpus === undefined ? {} : { idfCorpus }),
    ...(lexicalOnly === true ? { lexicalOnly } : {}),
  });
}

/** The store file `spec` names, which must exist (else `not_found` saying how to make it). */
export async function existingStoreFile(spec: string): Promise<string> {
  const file = await storeFile(spec);
  try {
    await stat(file);
  } catch {
    throw new LitmPackError('not_found', `No store at ${spec}: run "litm-pack ingest PATH... --store ${spec}" first`);
  }
  return file;
}

/**
 * The store file `spec` names: `spec` itself when it is a file or ends in `.json`, else `spec/store.json` (a
 * folder, existing or to be made).
 */
export async function storeFile(spec: string): Promise<string> {
  if (spec.toLowerCase().endsWith('.json')) return spec;
  try {
    if ((await stat(spec)).isFile()) return spec;
  } catch {
    // Neither a file nor a folder yet: a folder ingest will make.
  }
  return join(spec, STORE_FILE_NAME);
}

/** The embedded store at `spec` for reading; it must exist. */
async function loadStore(spec: string, options: OpenStoreOptions = {}): Promise<MemoryHybridStore> {
  const file = await existingStoreFile(spec);
  const { embeddings, idfCorpus } = options;
  return MemoryHybridStore.load(file, {
    ...(embeddings === undefined ? {} : { embeddings }),
    ...(idfCorpus === undefined ? {} : { idfCorpus }),
  });
}

/**
 * Runs `change` on the embedded store file `file` as one load → change → save under the file's lock
 * (`MemoryHybridStore.update`): a second writer (another ingest, remove or watch batch) waits its turn, up to
 * ten seconds, then stops with a `timeout` error naming the process that holds the store. A missing file
 * starts a new store; the file is written only when `change` changed the store.
 */
export async function updateStore<T>(
  file: string,
  change: (store: MemoryHybridStore) => Promise<T>,
  options: OpenStoreOptions = {},
): Promise<T> {
  const { embeddings } = options;
  return MemoryHybridStore.update(file, change, { ...(embeddings === undefined ? {} : { embeddings }), create: true });
}

/** How often a served store file is checked for a newer version (one `stat`), in ms. */
const SERVED_STORE_CHECK_MS = 500;

/**
 * The store `serve` and `mcp` answer from: a Qdrant collection, or the embedded store file followed as it
 * changes (`ReloadingStore`): an `ingest` or `remove` while the server runs is seen within about a second (checks every half second, off the request path); a
 * version that cannot be read is reported and the last good one keeps serving.
 */
export async function openServedStore(spec: string, options: OpenStoreOptions = {}): Promise<Store> {
  const qdrant = await openQdrant(spec, options);
  if (qdrant !== null) return qdrant;
  const { embeddings, idfCorpus } = options;
  return ReloadingStore.open(await existingStoreFile(spec), {
    ...(embeddings === undefined ? {} : { embeddings }),
    ...(idfCorpus === undefined ? {} : { idfCorpus }),
    checkIntervalMs: SERVED_STORE_CHECK_MS,
    onReloadError: (error) => warn(`the store file changed but could not be read (still serving the previous version): ${error.message}`),
  });
}

/** The store a read-only command (bundle, briefing, ...) works on; a local one must exist. */
export async function openStore(spec: string, options: OpenStoreOptions = {}): Promise<Store> {
  return (await openQdrant(spec, options)) ?? (await loadStore(spec, options));
}

/**
 * Says so when a local store holds dense vectors that this command cannot use (no --embeddings): hybrid
 * search then runs on BM25 alone and the confidence is `unknown`.
 */
export function noteUnusedVectors(store: Store): void {
  if (!(store instanceof MemoryHybridStore || store instanceof ReloadingStore) || store.embedding === null) return;
  const { model, dimension } = store.embedding;
  warn(
    `the store holds ${dimension}-d vectors${model === null ? '' : ` of ${model}`}, but no --embeddings was given: searching with BM25 only (confidence unknown)`,
  );
}

/**
 * Says how to re-index when a local store was indexed with an older indexed-text recipe (chunk text alone): it
 * still answers, but words only in titles and headings do not find their chunks.
 */
export function noteReindex(store: Store, spec: string): void {
  const local = store instanceof ReloadingStore ? store.current : store instanceof MemoryHybridStore ? store : null;
  if (local === null) return;
  const advice = reindexAdvice(
    local.indexedText,
    `run "litm-pack reindex --store ${spec}"${local.embedding === null ? '' : ' with --embeddings and --embed-model of the model that made its vectors'}`,
  );
  if (advice !== null) warn(advice);
}
