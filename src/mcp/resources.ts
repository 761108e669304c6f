/**
 * The corpus as MCP resources: every source a caller may read is `litm://sources/{sourceId}` (the id
 * percent-encoded), optionally narrowed to one chunk (`?chunk=ID`) or a span of the source (`?start=S&end=E`,
 * the offsets a citation's `span`/`spans` give). Every read runs under the caller's principals through
 * `store.getChunks`, so a restricted source and a missing one answer the same "not found".
 */
import { LitmPackError } from '../base/errors.js';
import type { Citation } from '../core/schemas.js';
import { GET_CHUNKS_MAX_LIMIT, type ChunkRecord, type Principals } from '../store/schemas.js';
import type { Store } from '../store/types.js';

export const RESOURCE_SCHEME = 'litm:';
export const SOURCE_TEMPLATE = 'litm://sources/{sourceId}{?chunk,start,end}';
/** Sources per page of `resources/list`. */
export const RESOURCES_PAGE_SIZE = 100;

/** The resource of a source, of one of its chunks, or of a span of it. */
export function sourceUri(sourceId: string, narrow: { chunk?: string; start?: number; end?: number } = {}): string {
  const query = new URLSearchParams();
  if (narrow.chunk !== undefined) query.set('chunk', narrow.chunk);
  if (narrow.start !== undefined && narrow.end !== undefined) {
    query.set('start', String(narrow.start));
    query.set('end', String(narrow.end));
  }
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
}

function notFound(uri: string): LitmPackError {
  return new LitmPackError('not_found', `Resource ${uri} not found`, { details: { uri } });
}

/** A `litm://sources/...` URI, or `not_found` for anything else (one answer for every bad address). */
export function parseSourceUri(uri: string): ParsedUri {
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
    const s = Number(start);
    const e = Number(end);
    if (!Number.isSafeInteger(s) || !Number.isSafeInteger(e) || s < 0 || e < s) throw notFound(uri);
    parsed.span = { start: s, end: e };
  }
  return parsed;
}

function storeReads(store: Store): NonNullable<Store['getChunks']> {
  if (typeof store.getChunks !== 'function') {
    throw new LitmPackError('unsupported', 'Resources need a store with getChunks (MemoryHybridStore or QdrantHybridStore)');
  }
  return store.getChunks.bind(store);
}

/**
 * The text of a resource as the caller may read it: a chunk's text exactly; a span's text cut from the chunks
 * that hold it; a whole source's chunks in document order, a blank line between them (the store keeps the
 * chunks, not what lies between them). `not_found` for a source the caller may not read, as for one that does
 * not exist.
 */
export async function readSource(store: Store, uri: string, principals: Principals, signal?: AbortSignal): Promise<{ text: string; title?: string }> {
  const parsed = parseSourceUri(uri);
  const chunks = await storeReads(store)({
    sourceIds: [parsed.sourceId],
    principals,
    limit: GET_CHUNKS_MAX_LIMIT,
    ...(signal === undefined ? {} : { signal }),
  });
  const title = chunks.find((chunk) => chunk.title !== undefined)?.title;
  const withTitle = (text: string) => (title === undefined ? { text } : { text, title });
  if (chunks.length === 0) throw notFound(uri);
  if (parsed.chunk !== undefined) {
    const chunk = chunks.find((c) => c.id === parsed.chunk);
    if (chunk === undefined) throw notFound(uri);
    return withTitle(chunk.text);
  }
  if (parsed.span !== undefined) {
    const text = spanText(chunks, parsed.span);
    if (text === null) throw notFound(uri);
    return withTitle(text);
  }
  return withTitle(chunks.map((chunk) => chunk.text).join('\n\n'));
}

/** The text of `span` from the chunks that cover it (their own offsets), or null when no chunk holds any of it. */
function spanText(chunks: readonly ChunkRecord[], span: { start: number; end: number }): string | null {
  const parts: string[] = [];
  for (const chunk of chunks) {
    const from = Math.max(span.start, chunk.span.start);
    const to = Math.min(span.end, chunk.span.end);
    if (from >= to) continue;
    parts.push(chunk.text.slice(from - chunk.span.start, to - chunk.span.start));
  }
  return parts.length === 0 ? null : parts.join('\n\n');
}

/** One page of the sources the caller may read, sorted by id; `next` is the cursor of the following page. */
export async function listSources(
  store: Store,
  principals: Principals,
  cursor: string | undefined,
  signal?: AbortSignal,
): Promise<{ sources: { sourceId: string; title?: string }[]; next?: string }> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const chunks = await storeReads(store)({ filter: { must: [] }, principals, limit: GET_CHUNKS_MAX_LIMIT, ...(signal === undefined ? {} : { signal }) });
  const titles = new Map<string, string | undefined>();
  for (const chunk of chunks) if (!titles.has(chunk.sourceId) || titles.get(chunk.sourceId) === undefined) titles.set(chunk.sourceId, chunk.title);
  const ids = [...titles.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).filter((id) => after === undefined || id > after);
  const page = ids.slice(0, RESOURCES_PAGE_SIZE);
  const sources = page.map((sourceId) => {
    const title = titles.get(sourceId);
    return title === undefined ? { sourceId } : { sourceId, title };
  });
  return ids.length > RESOURCES_PAGE_SIZE ? { sources, next: encodeCursor(page[page.length - 1]!) } : { sources };
}

const encodeCursor = (sourceId: string) => Buffer.from(sourceId, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (decoded === '' || encodeCursor(decoded) !== cursor) {
    throw new LitmPackError('invalid_input', 'cursor is not one this server gave: start again without a cursor');
  }
  return decoded;
}
