/**
 * The corpus as MCP resources: every source a caller may read is `litm://sources/{sourceId}` (the id
 * percent-encoded), read a page of chunks at a time (`?from=OFFSET`: the chunks from that offset of the
 * source on), or narrowed to one chunk (`?chunk=ID`) or a span of the source (`?start=S&end=E`, the offsets a
 * citation's `span`/`spans` give). Every read runs under the caller's principals through `store.getChunks`,
 * so a restricted source and a missing one answer the same "not found".
 *
 * An answer is bounded: a read answers at most `maxResourceReadBytes` of text (a longer source answers its
 * first page and names the next one), and all the reads of one request together at most
 * `maxRequestReadBytes` (a batch of reads). A chunk or span longer than what one read answers is refused
 * (`too_large`, naming how to read it in parts), never cut silently. The store is read for what is answered:
 * a page reads its chunks, a chunk read that chunk, a span the chunks it overlaps.
 */
import { LitmPackError } from '../base/errors.js';
import type { Citation } from '../core/schemas.js';
import { GET_CHUNKS_MAX_LIMIT, type ChunkRecord, type Principals } from '../store/schemas.js';
import type { ListSourcesPage, Store } from '../store/types.js';
import { DEFAULT_LIMITS, SURFACE_DEFAULTS, type ServiceLimits } from '../service/limits.js';

const RESOURCE_SCHEME = 'litm:';
export const SOURCE_TEMPLATE = 'litm://sources/{sourceId}{?chunk,start,end,from}';
/** The key of a page's `_meta` that names the next page of a source. */
export const NEXT_PAGE_META_KEY = 'litm-pack/next';

const PAGE_CHUNKS = SURFACE_DEFAULTS.resourcePageChunks;
const LIST_SCAN_FACTOR = SURFACE_DEFAULTS.listScanFactor;

/** How much text the reads of one request may still answer (shared by the reads of a batch). */
export interface ReadBudget {
  remaining: number;
}

/** The resource of a source, of a page of it, of one of its chunks, or of a span of it. */
export function sourceUri(sourceId: string, narrow: { chunk?: string; start?: number; end?: number; from?: number } = {}): string {
  const query = new URLSearchParams();
  if (narrow.chunk !== undefined) query.set('chunk', narrow.chunk);
  if (narrow.start !== undefined && narrow.end !== undefined) {
    query.set('start', String(narrow.start));
    query.set('end', String(narrow.end));
  }
  if (narrow.from !== undefined) query.set('from', String(narrow.from));
  const rest = query.size === 0 ? '' : `?${query.toString()}`;
  return `litm://sources/${encodeURIComponent(sourceId)}${rest}`;
}

/** The resource a citation names: the chunk it cites (its text hashes to `textSha256`). */
export function citationUri(citation: Pick<Citation, 'sourceId' | 'chunkId'>): string {
  return sourceUri(citation.sourceId, { chunk: citation.chunkId });
}

interface ParsedUri {
  sourceId: string;
  chunk?: string;
  span?: { start: number; end: number };
  from?: number;
}

/** An excerpt of an address for a message: a 100 KB URI is not echoed back whole. */
const excerpt = (uri: string) => (uri.length <= 200 ? uri : `${uri.slice(0, 200)}… (${uri.length} characters)`);

function notFound(uri: string): LitmPackError {
  return new LitmPackError('not_found', `Resource ${excerpt(uri)} not found`, { details: { uri: excerpt(uri) } });
}

const offsetOf = (text: string | null) => {
  const value = Number(text);
  return text !== null && text !== '' && Number.isSafeInteger(value) && value >= 0 ? value : null;
};

/** A `litm://sources/...` URI, or `not_found` for anything else (one answer for every bad address). */
function parseSourceUri(uri: string): ParsedUri {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw notFound(uri);
  }
  if (url.protocol !== RESOURCE_SCHEME || url.hostname !== 'sources') throw notFound(uri);
  const encoded = url.pathname.replace(/^\//u, '');
  if (encoded === '' || encoded.includes('/')) throw notFound(uri);
  let sourceId: string;
  try {
    sourceId = decodeURIComponent(encoded);
  } catch {
    throw notFound(uri);
  }
  const parsed: ParsedUri = { sourceId };
  const chunk = url.searchParams.get('chunk');
  if (chunk !== null) parsed.chunk = chunk;
  const start = url.searchParams.get('start');
  const end = url.searchParams.get('end');
  if (start !== null || end !== null) {
    const s = offsetOf(start);
    const e = offsetOf(end);
    if (s === null || e === null || e < s) throw notFound(uri);
    parsed.span = { start: s, end: e };
  }
  const from = url.searchParams.get('from');
  if (from !== null) {
    const f = offsetOf(from);
    // A page is of the whole source: a chunk or a span is read whole.
    if (f === null || parsed.chunk !== undefined || parsed.span !== undefined) throw notFound(uri);
    parsed.from = f;
  }
  return parsed;
}

function storeReads(store: Store): NonNullable<Store['getChunks']> {
  if (typeof store.getChunks !== 'function') {
    throw new LitmPackError('unsupported', 'Resources need a store with getChunks (MemoryHybridStore or QdrantHybridStore)');
  }
  return store.getChunks.bind(store);
}

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

function tooLarge(message: string): LitmPackError {
  return new LitmPackError('too_large', message);
}

interface ReadOptions {
  /** The server's limits (what one read and one request answer at most); the defaults otherwise. */
  limits?: Pick<ServiceLimits, 'maxResourceReadBytes' | 'maxRequestReadBytes'>;
  /** Shared by the reads of one request; a budget of `maxRequestReadBytes` of its own otherwise. */
  budget?: ReadBudget;
  signal?: AbortSignal;
}

/** The text of a read, with the page after it when the source goes on. */
interface ResourceRead {
  text: string;
  title?: string;
  /** The resource of the next page of the source. */
  next?: string;
}

/**
 * The text of a resource as the caller may read it: a chunk's text exactly; a span's text cut from the chunks
 * that hold it; a page of a source's chunks in document order, a blank line between them (the store keeps the
 * chunks, not what lies between them), as many as fit what one read answers. `not_found` for a source the
 * caller may not read, as for one that does not exist; `too_large` for a chunk or span longer than one read
 * answers, or once the request's reads have answered all they may.
 */
export async function readSource(store: Store, uri: string, principals: Principals, options: ReadOptions = {}): Promise<ResourceRead> {
  const { limits = DEFAULT_LIMITS, signal } = options;
  const budget = options.budget ?? { remaining: limits.maxRequestReadBytes };
  const parsed = parseSourceUri(uri);
  const read = storeReads(store);
  const scope = { principals, ...(signal === undefined ? {} : { signal }) };
  const allowed = Math.min(limits.maxResourceReadBytes, budget.remaining);
  const spent = (text: string): string => {
    const bytes = bytesOf(text);
    if (bytes > budget.remaining) {
      throw tooLarge(
        `This request's resource reads reached ${limits.maxRequestReadBytes} bytes: read ${excerpt(uri)} in a request of its own`,
      );
    }
    budget.remaining -= bytes;
    return text;
  };
  const titleOf = (chunks: readonly ChunkRecord[]) => chunks.find((chunk) => chunk.title !== undefined)?.title;
  const answer = (text: string, chunks: readonly ChunkRecord[], next?: string): ResourceRead => {
    const title = titleOf(chunks);
    return { text: spent(text), ...(title === undefined ? {} : { title }), ...(next === undefined ? {} : { next }) };
  };

  if (parsed.chunk !== undefined) {
    const chunk = (await read({ ids: [parsed.chunk], limit: 1, ...scope })).find((c) => c.sourceId === parsed.sourceId);
    if (chunk === undefined) throw notFound(uri);
    if (bytesOf(chunk.text) > allowed) {
      throw tooLarge(
        `Chunk ${excerpt(parsed.chunk)} holds ${bytesOf(chunk.text)} bytes, more than one read answers (${allowed}): read it in parts by span, ` +
          `e.g. ${sourceUri(parsed.sourceId, { start: chunk.span.start, end: Math.min(chunk.span.end, chunk.span.start + Math.floor(allowed / 4)) })}`,
      );
    }
    return answer(chunk.text, [chunk]);
  }

  if (parsed.span !== undefined) {
    const { start, end } = parsed.span;
    if (end - start > allowed) {
      throw tooLarge(
        `The span ${start}–${end} is longer than one read answers (${allowed} bytes): read at most ${allowed} characters at a time`,
      );
    }
    const filter = {
      must: [
        { key: 'span.start', range: { lt: Math.max(end, start + 1) } },
        { key: 'span.end', range: { gt: start } },
      ],
    };
    const chunks = await read({ sourceIds: [parsed.sourceId], filter, limit: GET_CHUNKS_MAX_LIMIT, ...scope });
    const text = spanText(chunks, parsed.span);
    if (text === null) throw notFound(uri);
    if (bytesOf(text) > allowed)
      throw tooLarge(`The span ${start}–${end} holds ${bytesOf(text)} bytes, more than one read answers (${allowed}): read a shorter span`);
    return answer(text, chunks);
  }

  // A page: the chunks from `from` on, while they fit.
  const from = parsed.from ?? 0;
  const filter = from === 0 ? undefined : { must: [{ key: 'span.start', range: { gte: from } }] };
  const chunks = await read({
    sourceIds: [parsed.sourceId],
    limit: PAGE_CHUNKS + 1,
    ...(filter === undefined ? {} : { filter }),
    ...scope,
  });
  if (chunks.length === 0) throw notFound(uri);
  const page: string[] = [];
  let bytes = 0;
  let taken = 0;
  for (const chunk of chunks.slice(0, PAGE_CHUNKS)) {
    const size = bytesOf(chunk.text) + (page.length === 0 ? 0 : 2);
    if (bytes + size > allowed) break;
    page.push(chunk.text);
    bytes += size;
    taken += 1;
  }
  if (taken === 0) {
    const first = chunks[0]!;
    throw tooLarge(
      `Chunk ${excerpt(first.id)} of ${excerpt(parsed.sourceId)} holds ${bytesOf(first.text)} bytes, more than one read answers (${allowed}): read it in parts by span, ` +
        `e.g. ${sourceUri(parsed.sourceId, { start: first.span.start, end: Math.min(first.span.end, first.span.start + Math.floor(allowed / 4)) })}`,
    );
  }
  const following = chunks[taken];
  return answer(
    page.join('\n\n'),
    chunks.slice(0, taken),
    following === undefined ? undefined : sourceUri(parsed.sourceId, { from: following.span.start }),
  );
}

/** The text of `span` from the chunks that cover it (their own offsets), or null when no chunk holds any of it. */
function spanText(chunks: readonly ChunkRecord[], span: { start: number; end: number }): string | null {
  const parts: string[] = [];
  for (const chunk of [...chunks].sort((a, b) => a.span.start - b.span.start)) {
    const from = Math.max(span.start, chunk.span.start);
    const to = Math.min(span.end, chunk.span.end);
    if (from >= to) continue;
    parts.push(chunk.text.slice(from - chunk.span.start, to - chunk.span.start));
  }
  return parts.length === 0 ? null : parts.join('\n\n');
}

/** What the embedded store (and the reloading view over its file) can list: its sources, by id. */
interface SourcesListing {
  sources(): readonly { sourceId: string }[];
}

const hasSourcesList = (store: Store): store is Store & SourcesListing => typeof (store as Partial<SourcesListing>).sources === 'function';

/**
 * One page of the sources the caller may read, sorted by id; `next` is the cursor of the following page. Read
 * from the store's index of sources (`listSources`, or the embedded store's `sources()`), each candidate
 * checked under the caller's principals by reading one chunk of it; a store with neither is scanned through
 * `getChunks`, and refused (`too_large`) when the scan cannot reach every source, never cut silently.
 */
export async function listSources(
  store: Store,
  principals: Principals,
  cursor: string | undefined,
  pageSize: number,
  signal?: AbortSignal,
): Promise<{ sources: { sourceId: string; title?: string }[]; next?: string }> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const page = await sourcesPage(store, principals, after, pageSize, signal);
  return page.next === undefined ? { sources: page.sources } : { sources: page.sources, next: encodeCursor(page.next) };
}

async function sourcesPage(
  store: Store,
  principals: Principals,
  after: string | undefined,
  pageSize: number,
  signal?: AbortSignal,
): Promise<ListSourcesPage> {
  if (typeof store.listSources === 'function') {
    return store.listSources({
      principals: principals === 'all' ? 'all' : [...principals],
      after,
      limit: pageSize,
      ...(signal === undefined ? {} : { signal }),
    });
  }
  const read = storeReads(store);
  if (hasSourcesList(store)) {
    const ids = store
      .sources()
      .map((source) => source.sourceId)
      .filter((id) => after === undefined || id > after)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const sources: { sourceId: string; title?: string }[] = [];
    const scanLimit = pageSize * LIST_SCAN_FACTOR;
    let examined = 0;
    for (const sourceId of ids) {
      if (sources.length === pageSize || examined === scanLimit) return { sources, next: ids[examined - 1]! };
      examined += 1;
      // One chunk of the source, under the caller's principals: whether it may be read, and its title.
      const [first] = await read({ sourceIds: [sourceId], principals, limit: 1, ...(signal === undefined ? {} : { signal }) });
      if (first === undefined) continue;
      sources.push(first.title === undefined ? { sourceId } : { sourceId, title: first.title });
    }
    return { sources };
  }
  const chunks = await read({ filter: { must: [] }, principals, limit: GET_CHUNKS_MAX_LIMIT, ...(signal === undefined ? {} : { signal }) });
  if (chunks.length >= GET_CHUNKS_MAX_LIMIT) {
    throw new LitmPackError(
      'too_large',
      `This store holds more than ${GET_CHUNKS_MAX_LIMIT} chunks the caller may read, and lists its sources only by reading them all: its sources cannot all be listed (a store with listSources can); read sources by id instead`,
    );
  }
  const titles = new Map<string, string | undefined>();
  for (const chunk of chunks) if (titles.get(chunk.sourceId) === undefined) titles.set(chunk.sourceId, chunk.title);
  const ids = [...titles.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).filter((id) => after === undefined || id > after);
  const sources = ids.slice(0, pageSize).map((sourceId) => {
    const title = titles.get(sourceId);
    return title === undefined ? { sourceId } : { sourceId, title };
  });
  return ids.length > pageSize ? { sources, next: ids[pageSize - 1]! } : { sources };
}

const encodeCursor = (sourceId: string) => Buffer.from(sourceId, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (decoded === '' || encodeCursor(decoded) !== cursor) {
    throw new LitmPackError('invalid_input', 'cursor is not one this server gave: start again without a cursor');
  }
  return decoded;
}
