/**
 * The stale feed (Wikantik's drift feed): the citations a server handed out whose status is now `changed`,
 * `moved` or `missing`, newest served first, a page at a time. Each page checks served citations against the
 * store with `verifyCitations` under a full view (what the store really holds), the newest first, until it has
 * `limit` stale ones or has checked `maxStaleCheck`; the cursor goes on from the last citation it checked, so a
 * page costs a bounded number of checks whatever the ledger holds.
 *
 * A caller sees only citations of sources it may read: a source that still exists when the caller may read
 * it now; a source that is gone when it was served to a caller who could read no more than this one (whose
 * principals are all among this caller's), so it was readable by this caller too. Who was served a pack is
 * told to that caller and to a full view only.
 */
import { LitmPackError } from '../base/errors.js';
import { timestampMillis } from '../core/schemas.js';
import { verifyCitations, type CitationCheck, type VerifiableCitation } from '../verify/verify.js';
import type { ServedCitation } from './ledger.js';
import type { ServiceLimits } from './limits.js';
import { STALE_STATUSES, type StaleRequest } from './requests.js';
import type { StaleAnswer, StaleCitation } from './responses.js';
import type { ServiceContext } from './service.js';

/** Citations verified in one `verifyCitations` call (each distinct source is one store read). */
const CHECK_BATCH = 200;

type StaleStatus = (typeof STALE_STATUSES)[number];

/** Newest served first; ties by key, so the order is total and a cursor names one place in it. */
function compareServed(a: Pick<ServedCitation, 'lastAt' | 'key'>, b: Pick<ServedCitation, 'lastAt' | 'key'>): number {
  if (a.lastAt !== b.lastAt) return a.lastAt > b.lastAt ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

interface Cursor {
  lastAt: string;
  key: string;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify([cursor.lastAt, cursor.key]), 'utf8').toString('base64url');

function decodeCursor(text: string): Cursor {
  const refused = () =>
    new LitmPackError('invalid_input', 'cursor is not one this server gave: start again without a cursor', {
      details: { requestIssues: [{ path: ['cursor'], message: 'cursor is not one this server gave: start again without a cursor' }] },
    });
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw refused();
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string') throw refused();
  if (encodeCursor({ lastAt: value[0], key: value[1] }) !== text) throw refused();
  return { lastAt: value[0], key: value[1] };
}

function verifiable(served: ServedCitation): VerifiableCitation {
  const { citation } = served;
  return {
    sourceId: citation.sourceId,
    chunkId: citation.chunkId,
    textSha256: citation.textSha256,
    ...(citation.version === undefined ? {} : { version: citation.version }),
    ...(citation.span === undefined ? {} : { span: citation.span }),
  };
}

/** Whether every one of `served`'s principals is among `caller`'s (a reader who saw no more than the caller). */
function withinPrincipals(served: readonly string[] | 'all', caller: readonly string[]): boolean {
  return served !== 'all' && served.every((principal) => caller.includes(principal));
}

/**
 * One page of the stale feed for the caller of `context` (its principals decide what it sees). Needs the
 * server's ledger; a server without one refuses with `unsupported`.
 */
export async function serveStale(
  request: StaleRequest,
  context: ServiceContext,
  limits: Pick<ServiceLimits, 'maxStaleCheck'>,
): Promise<StaleAnswer> {
  const { ledger, store } = context;
  if (ledger === undefined) {
    throw new LitmPackError(
      'unsupported',
      'This server keeps no citation ledger, so it cannot tell which served citations went stale (it is started without --no-ledger, or given a ledger in code)',
    );
  }
  if (typeof store.getChunks !== 'function') {
    throw new LitmPackError('unsupported', 'The stale feed needs a store with getChunks (MemoryHybridStore or QdrantHybridStore)');
  }
  const since = request.since === undefined ? undefined : timestampMillis(request.since);
  const wanted = new Set<StaleStatus>(
    request.status === undefined ? STALE_STATUSES : typeof request.status === 'string' ? [request.status] : request.status,
  );
  const after = request.cursor === undefined ? undefined : decodeCursor(request.cursor);
  const inWindow = (at: string) => since === undefined || timestampMillis(at) >= since;

  const ordered = [...(await ledger.served()).values()].filter((served) => inWindow(served.lastAt)).sort(compareServed);
  let next = after === undefined ? 0 : ordered.findIndex((served) => compareServed(served, after) > 0);
  if (next < 0) next = ordered.length;

  const caller = context.principals;
  const readable = new Map<string, Promise<boolean>>();
  const mayRead = (sourceId: string) => {
    let known = readable.get(sourceId);
    if (known === undefined) {
      known = store.getChunks!({
        sourceIds: [sourceId],
        principals: caller === 'all' ? 'all' : [...caller],
        limit: 1,
        ...(context.signal === undefined ? {} : { signal: context.signal }),
      }).then((chunks) => chunks.length > 0);
      readable.set(sourceId, known);
    }
    return known;
  };
  const visible = async (served: ServedCitation, check: CitationCheck) => {
    if (caller === 'all') return true;
    if (check.status !== 'missing') return mayRead(served.citation.sourceId);
    return served.packs.some((pack) => withinPrincipals(pack.principals, caller));
  };

  const found: StaleCitation[] = [];
  let checked = 0;
  let last: ServedCitation | undefined;
  scan: while (next < ordered.length && found.length < request.limit && checked < limits.maxStaleCheck) {
    const batch = ordered.slice(next, next + Math.min(CHECK_BATCH, limits.maxStaleCheck - checked));
    const checks = await verifyCitations({
      store,
      citations: batch.map(verifiable),
      principals: 'all',
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    const checkedAt = new Date().toISOString();
    for (const [index, served] of batch.entries()) {
      const check = checks[index]!;
      ledger.noteStatus(served.key, check.status, checkedAt);
      checked += 1;
      next += 1;
      last = served;
      if (check.status !== 'current' && wanted.has(check.status) && (await visible(served, check))) {
        found.push(staleCitation(served, check, context, inWindow));
        if (found.length === request.limit) break scan;
      }
    }
  }
  return { citations: found, nextCursor: next < ordered.length && last !== undefined ? encodeCursor(last) : null, checked };
}

function staleCitation(
  served: ServedCitation,
  check: CitationCheck,
  context: ServiceContext,
  inWindow: (at: string) => boolean,
): StaleCitation {
  const { citation } = served;
  const packs = served.packs.filter((pack) => inWindow(pack.at));
  const tellCaller = (caller: string) => context.principals === 'all' || caller === (context.caller ?? 'anonymous');
  const answer: StaleCitation = {
    sourceId: citation.sourceId,
    chunkId: citation.chunkId,
    status: check.status as StaleStatus,
    textSha256: citation.textSha256,
    citedVersion: check.citedVersion,
    currentVersion: check.currentVersion,
    citedSpan: check.citedSpan,
    span: check.status === 'moved' ? check.span : null,
    closest: check.closest,
    firstServedAt: served.firstAt,
    lastServedAt: served.lastAt,
    servedCount: served.count,
    packs: packs.map((pack) => ({
      packHash: pack.pack,
      servedAt: pack.at,
      kind: pack.kind,
      ...(tellCaller(pack.caller) ? { caller: pack.caller } : {}),
    })),
  };
  if (citation.title !== undefined) answer.title = citation.title;
  if (citation.locator !== undefined) answer.locator = citation.locator;
  return answer;
}
