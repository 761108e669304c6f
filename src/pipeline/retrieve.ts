/**
 * The retrieval half of every surface (CLI, retrievers, HTTP API, MCP tools): one path from a request to the
 * candidates a pack is built from, so the same request gives the same pack everywhere. Framework-neutral.
 */
import type { Candidate, Degraded } from '../core/schemas.js';
import type { Filter, Fusion, SearchMode, SearchRequest, Store } from '../retrieve/types.js';

export interface RetrieveRequest {
  text: string;
  mode: SearchMode;
  /** Candidate pool size. */
  limit: number;
  filter?: Filter | undefined;
  principals?: string[] | undefined;
  fusion?: Fusion | undefined;
  signal?: AbortSignal | undefined;
}

/** What retrieval hands to packing: the pool, and the optional stages that failed and were bypassed. */
export interface Retrieved {
  candidates: Candidate[];
  degraded: Degraded[];
}

export function toSearchRequest(request: RetrieveRequest): SearchRequest {
  const search: SearchRequest = { text: request.text, mode: request.mode, limit: request.limit };
  if (request.filter !== undefined) search.filter = request.filter;
  if (request.principals !== undefined) search.principals = request.principals;
  if (request.fusion !== undefined) search.fusion = request.fusion;
  if (request.signal !== undefined) search.signal = request.signal;
  return search;
}

/** Searches the store for a pack's candidate pool. Faults of the store are thrown, never a smaller pool. */
export async function retrieveCandidates(store: Store, request: RetrieveRequest): Promise<Retrieved> {
  const candidates = await store.search(toSearchRequest(request));
  return { candidates, degraded: [] };
}
