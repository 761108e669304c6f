import { z } from 'zod';
import { LitmPackError, isLitmPackError, parseOrThrow } from '../base/errors.js';
import { encodeBm25Query } from '../tokenize/bm25.js';
import type { AddDocumentsResult } from '../store/types.js';
import type { IngestDocument, SearchMode } from '../store/schemas.js';

/**
 * Zero-downtime reindex through an alias: build a new versioned collection beside the live one, verify it,
 * then move the alias in one atomic `update_aliases` call. Queries go through the alias, so readers see the
 * old collection until the swap and the new one after it; nothing is written into the live collection.
 */

export interface ReindexRequest {
  /** The alias readers query (e.g. `docs`); the collections behind it are `docs_v1`, `docs_v2`, ... */
  alias: string;
  documents: IngestDocument[];
  /** Queries that must each return at least one chunk from the new collection before the swap. */
  sampleQueries?: string[];
  /** Keep the previous collection after the swap (default false: dropped once the alias has moved). */
  keepPrevious?: boolean;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

export interface ReindexResult {
  alias: string;
  /** The new collection the alias points at. */
  collection: string;
  /** The collection the alias pointed at before, or null when the alias is new. */
  previous: string | null;
  /** Chunks written into the new collection. */
  chunks: number;
  /** Points the new collection holds (checked equal to `chunks` before the swap). */
  points: number;
  /** Sample queries run against the new collection before the swap (given ones and chunk probes). */
  sampleQueries: number;
  /** True when the previous collection was dropped after the swap. */
  previousDropped: boolean;
  /** Why the previous collection is still there (a failed drop after a successful swap), when it is. */
  warning?: string;
}

const ReindexRequestSchema = z.strictObject({
  alias: z
    .string()
    .min(1, 'alias must be a non-empty string')
    .max(200)
    .regex(/^[^/\\\s]+$/, 'alias must not contain slashes or spaces'),
  documents: z.array(z.unknown()),
  sampleQueries: z.array(z.string().trim().min(1, 'sample queries must not be empty')).max(100).optional(),
  keepPrevious: z.boolean().optional(),
  onProgress: z.custom<(done: number, total: number) => void>((value) => typeof value === 'function').optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, { message: 'signal must be an AbortSignal' }).optional(),
});

/** A store bound to one collection, as far as reindexing uses it. */
interface ReindexTarget {
  ensureCollection(options: { signal?: AbortSignal }): Promise<unknown>;
  addDocuments(
    docs: IngestDocument[],
    options: { onProgress?: (done: number, total: number) => void; signal?: AbortSignal },
  ): Promise<AddDocumentsResult>;
  search(request: {
    text: string;
    mode: SearchMode;
    limit: number;
    signal?: AbortSignal;
  }): Promise<{ id: string; sourceId?: string; text: string }[]>;
  getChunks(request: { sourceIds: string[]; limit: number; signal?: AbortSignal }): Promise<{ id: string; text: string }[]>;
}

/** What the reindex needs from Qdrant, given by the store (its client, policy and settings). */
export interface ReindexOperations {
  aliases(signal: AbortSignal | undefined): Promise<{ alias_name: string; collection_name: string }[]>;
  collections(signal: AbortSignal | undefined): Promise<string[]>;
  /** A store with the caller's settings on `collection`. */
  open(collection: string): ReindexTarget;
  /** The mode sample probes use (lexical when the collection has BM25 vectors). */
  probeMode: SearchMode;
  count(collection: string, signal: AbortSignal | undefined): Promise<number>;
  changeAliases(actions: AliasAction[], signal: AbortSignal | undefined): Promise<void>;
  dropCollection(collection: string, signal: AbortSignal | undefined): Promise<void>;
}

type AliasAction = { delete_alias: { alias_name: string } } | { create_alias: { alias_name: string; collection_name: string } };

/** Chunks probed by searching for their own text (evenly spread over the documents). */
const CHUNK_PROBES = 3;

/** `docs_v7` → 7 for alias `docs`. */
function versionOf(alias: string, collection: string): number | undefined {
  const prefix = `${alias}_v`;
  if (!collection.startsWith(prefix)) return undefined;
  const rest = collection.slice(prefix.length);
  return /^\d{1,9}$/.test(rest) ? Number(rest) : undefined;
}

/**
 * The steps, each of which can fail; until the swap a failure drops the new collection and leaves the alias
 * where it was. The swap is one `update_aliases` call (delete + create): Qdrant applies it under its
 * collections lock, so no query sees the alias missing.
 */
export async function runReindex(ops: ReindexOperations, raw: ReindexRequest): Promise<ReindexResult> {
  const request = parseOrThrow(ReindexRequestSchema, raw, 'reindex request');
  const { alias, signal } = request;
  const documents = raw.documents;

  const [aliases, collections] = await Promise.all([ops.aliases(signal), ops.collections(signal)]);
  if (collections.includes(alias)) {
    throw new LitmPackError(
      'invalid_input',
      `"${alias}" is a collection, not an alias: reindex moves an alias between versioned collections (${alias}_v1, ` +
        `${alias}_v2, ...). Choose an alias name that is not a collection (queries then go through the alias).`,
      { details: { alias } },
    );
  }
  const previous = aliases.find((entry) => entry.alias_name === alias)?.collection_name ?? null;
  const versions = [previous, ...collections].flatMap((name) => (name === null ? [] : (versionOf(alias, name) ?? [])));
  const collection = `${alias}_v${Math.max(0, ...versions) + 1}`;

  const target = ops.open(collection);
  let step = 'creating the new collection';
  let createdNew = false;
  try {
    await target.ensureCollection(signal === undefined ? {} : { signal });
    createdNew = true;
    step = 'ingesting into the new collection';
    const ingested = await target.addDocuments(documents, {
      ...(request.onProgress === undefined ? {} : { onProgress: request.onProgress }),
      ...(signal === undefined ? {} : { signal }),
    });
    const chunks = ingested.added + ingested.unchanged;

    step = 'counting the new collection';
    const points = await ops.count(collection, signal);
    if (points !== chunks) {
      throw new LitmPackError(
        'server_error',
        `the new collection "${collection}" holds ${points} points after ${chunks} chunks were written`,
        { details: { collection, points, chunks } },
      );
    }

    step = 'running sample queries on the new collection';
    let sampled = 0;
    for (const text of request.sampleQueries ?? []) {
      const found = await target.search({ text, mode: ops.probeMode, limit: 1, ...(signal === undefined ? {} : { signal }) });
      if (found.length === 0) {
        throw new LitmPackError('server_error', `the sample query ${JSON.stringify(text)} finds nothing in "${collection}"`, {
          details: { collection, query: text },
        });
      }
      sampled += 1;
    }
    sampled += await probeChunks(target, ops.probeMode, documents, collection, signal);

    step = 'moving the alias';
    const actions: AliasAction[] = [];
    if (previous !== null) actions.push({ delete_alias: { alias_name: alias } });
    actions.push({ create_alias: { alias_name: alias, collection_name: collection } });
    await ops.changeAliases(actions, signal);

    const result: ReindexResult = { alias, collection, previous, chunks, points, sampleQueries: sampled, previousDropped: false };
    if (previous === null || request.keepPrevious === true) return result;
    try {
      await ops.dropCollection(previous, undefined);
      result.previousDropped = true;
    } catch (error) {
      // The alias has moved: the reindex succeeded; only the clean-up did not.
      result.warning = `the previous collection "${previous}" could not be dropped: ${error instanceof Error ? error.message : String(error)}`;
    }
    return result;
  } catch (error) {
    // ensureCollection creates the collection and then indexes it: a failure after the creation leaves it
    // behind. The name was new, so whatever holds it now is this reindex's own.
    if (!createdNew)
      createdNew = await ops.collections(undefined).then(
        (names) => names.includes(collection),
        () => false,
      );
    let cleanup = '';
    if (createdNew) {
      try {
        await ops.dropCollection(collection, undefined);
        cleanup = ` The new collection "${collection}" was dropped.`;
      } catch (dropError) {
        cleanup = ` The new collection "${collection}" could not be dropped (${dropError instanceof Error ? dropError.message : String(dropError)}).`;
      }
    }
    const where = previous === null ? 'the alias was not created' : `the alias still points at "${previous}"`;
    const code = isLitmPackError(error) ? error.code : 'server_error';
    throw new LitmPackError(
      code,
      `Reindex of alias "${alias}" failed while ${step}; ${where}.${cleanup} ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
        ...(isLitmPackError(error) && error.status !== undefined ? { status: error.status } : {}),
        ...(isLitmPackError(error) && error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
        issues: isLitmPackError(error) ? error.issues : [],
        details: { alias, collection, previous, step },
      },
    );
  }
}

/**
 * Searches for a few chunks by their own text: each must come back (itself, or a chunk with the same text)
 * within the top 10, which shows the new collection answers queries with what was written.
 */
async function probeChunks(
  target: ReindexTarget,
  mode: SearchMode,
  documents: readonly IngestDocument[],
  collection: string,
  signal: AbortSignal | undefined,
): Promise<number> {
  if (documents.length === 0) return 0;
  const picks = new Set<number>();
  for (let i = 0; i < CHUNK_PROBES; i += 1) picks.add(Math.floor((i * documents.length) / CHUNK_PROBES));
  let probed = 0;
  for (const index of picks) {
    const [chunk] = await target.getChunks({ sourceIds: [documents[index]!.id], limit: 1, ...(signal === undefined ? {} : { signal }) });
    // A document of whitespace has no chunks; a chunk of stopwords has no BM25 terms: nothing to probe.
    if (chunk === undefined || chunk.text.trim() === '') continue;
    if (mode === 'lexical' && encodeBm25Query(chunk.text).indices.length === 0) continue;
    const found = await target.search({ text: chunk.text, mode, limit: 10, ...(signal === undefined ? {} : { signal }) });
    if (!found.some((candidate) => candidate.id === chunk.id || candidate.text === chunk.text)) {
      throw new LitmPackError('server_error', `a search for chunk "${chunk.id}" by its own text does not find it in "${collection}"`, {
        details: { collection, chunk: chunk.id },
      });
    }
    probed += 1;
  }
  return probed;
}
