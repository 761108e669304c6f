/**
 * One function per request kind: a parsed request and the caller's principals in, a Pack (or rankings, or
 * citation checks) out, or a typed error. The HTTP API, the MCP tools and the library call these, so one
 * request gives the same bytes on every surface. Retrieval goes through src/pipeline like the CLI's.
 */
import { LitmPackError } from '../core/errors.js';
import { packBriefing, packBundle } from '../core/pack.js';
import type { Candidate, Pack, PackFormat } from '../core/schemas.js';
import { retrieveCandidates, type Retrieved } from '../pipeline/retrieve.js';
import { validateFilter } from '../retrieve/filter.js';
import type { Filter, Rankings, Store } from '../retrieve/types.js';
import type { EncodingName } from '../tokenize/types.js';
import type { RagContext, RagHit } from './responses.js';
import type { BriefingRequest, BundleRequest, PackRequest, RankingsRequest, VerifyRequest } from './requests.js';

/** Who asks, and against which store. */
export interface ServiceContext {
  store: Store;
  /**
   * The caller's principals. Only chunks without an ACL, or whose ACL shares one of these, are searched;
   * `[]` (an anonymous caller) sees only documents without an ACL. Applied inside the store query.
   */
  principals: readonly string[];
  signal?: AbortSignal | undefined;
}

function unsupported(parameter: string, message: string): never {
  throw new LitmPackError('unsupported', `${parameter}: ${message}`, { details: { parameter } });
}

/** Parameters of optional pipeline stages that this build cannot run yet: refused, never ignored. */
function refuseUnavailableStages(request: { compress?: string; rerank?: boolean | undefined; diversity?: number | undefined }): void {
  if (request.compress !== undefined && request.compress !== 'none') {
    unsupported('compress', `sentence selection ("${request.compress}") is not available in this version; leave compress out or use "none"`);
  }
  if (request.rerank === true) unsupported('rerank', 'no reranker is configured on this server; leave rerank out');
  if (request.diversity !== undefined && request.diversity > 0) {
    unsupported('diversity', 'diversity (MMR) is not available in this version; leave it out or use 0');
  }
}

interface PackingParameters {
  budget: number;
  format: PackFormat;
  encoding: EncodingName;
  max_per_source?: number | undefined;
  min_score?: number | undefined;
}

function packerOptions(request: PackingParameters) {
  return {
    maxTokens: request.budget,
    format: request.format,
    encoding: request.encoding,
    maxPerSource: request.max_per_source,
    minScore: request.min_score,
  };
}

async function retrieve(
  context: ServiceContext,
  request: { mode: BundleRequest['mode']; filter?: Record<string, unknown> | undefined; limit: number },
  text: string,
): Promise<Retrieved> {
  // Checked before any I/O, so a bad filter never costs a search.
  const filter: Filter | undefined = request.filter === undefined ? undefined : validateFilter(request.filter);
  return retrieveCandidates(context.store, {
    text,
    mode: request.mode,
    limit: request.limit,
    filter,
    principals: [...context.principals],
    signal: context.signal,
  });
}

/** A Lost-in-the-Middle bundle for `request.query` from what the caller may see. */
export async function serveBundle(request: BundleRequest, context: ServiceContext): Promise<Pack> {
  refuseUnavailableStages(request);
  const { candidates, degraded } = await retrieve(context, request, request.query);
  return packBundle({ ...packerOptions(request), query: request.query, candidates, degraded });
}

/**
 * A briefing (grounding, evidence, caveats) from a prompt, pins and clusters. Pins are matched among what
 * the caller may see; a pin the caller may not see is reported exactly like one that does not exist.
 */
export async function serveBriefing(request: BriefingRequest, context: ServiceContext): Promise<Pack> {
  const pins = request.pins ?? [];
  const clusters = request.clusters ?? [];
  if (request.prompt === undefined && pins.length === 0 && clusters.length === 0) {
    throw new LitmPackError('invalid_input', 'A briefing needs at least one of prompt, pins or clusters', {
      details: { requestIssues: [{ path: [], message: 'A briefing needs at least one of prompt, pins or clusters' }] },
    });
  }
  refuseUnavailableStages(request);
  if (clusters.length > 0) unsupported('clusters', 'briefings from clusters are not available in this version; leave clusters out');
  if (request.scope_mode === 'strict') unsupported('scope_mode', '"strict" is not available in this version; use "prefer"');
  if (request.tier_weights !== undefined) unsupported('tier_weights', 'tier weights are not available in this version; leave them out');
  if (request.prompt === undefined) {
    unsupported('prompt', 'a briefing from pins alone (pins fetched directly) is not available in this version; give a prompt too');
  }
  const { candidates, degraded } = await retrieve(context, request, request.prompt);
  return packBriefing({ ...packerOptions(request), query: request.prompt, candidates, pins, degraded });
}

/** Packs candidates the caller sends (evaluation harnesses): no store involved. */
export function servePack(request: PackRequest): Pack {
  refuseUnavailableStages(request);
  if (request.kind === 'bundle' && request.pins !== undefined && request.pins.length > 0) {
    throw new LitmPackError('invalid_input', 'pins apply to kind "briefing" only', {
      details: { requestIssues: [{ path: ['pins'], message: 'pins apply to kind "briefing" only' }] },
    });
  }
  const options = {
    ...packerOptions(request),
    query: request.query,
    candidates: request.candidates as Candidate[],
    ...(request.dedupe === undefined ? {} : { dedupe: dedupeOption(request.dedupe) }),
    ...(request.coverage === undefined ? {} : { coverage: coverageOption(request.coverage) }),
  };
  return request.kind === 'briefing' ? packBriefing({ ...options, pins: request.pins ?? [] }) : packBundle(options);
}

function dedupeOption(dedupe: NonNullable<PackRequest['dedupe']>) {
  if (dedupe === false) return false as const;
  return {
    ...(dedupe.near_duplicate_threshold === undefined ? {} : { nearDuplicateThreshold: dedupe.near_duplicate_threshold }),
    ...(dedupe.containment_threshold === undefined ? {} : { containmentThreshold: dedupe.containment_threshold }),
    ...(dedupe.shingle_size === undefined ? {} : { shingleSize: dedupe.shingle_size }),
  };
}

function coverageOption(coverage: NonNullable<PackRequest['coverage']>) {
  return {
    ...(coverage.strong === undefined ? {} : { strong: coverage.strong }),
    ...(coverage.strong_min_items === undefined ? {} : { strongMinItems: coverage.strong_min_items }),
    ...(coverage.partial === undefined ? {} : { partial: coverage.partial }),
  };
}

/** Each arm's raw ranking beside the fused one, for tuning fusion; same ACL as search. */
export async function serveRankings(request: RankingsRequest, context: ServiceContext): Promise<Rankings> {
  const { store } = context;
  if (typeof store.rankings !== 'function') unsupported('debug', 'this store does not report rankings');
  const filter: Filter | undefined = request.filter === undefined ? undefined : validateFilter(request.filter);
  return store.rankings({
    text: request.query,
    mode: request.mode,
    limit: request.k,
    principals: [...context.principals],
    ...(filter === undefined ? {} : { filter }),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
}

/** Checks citations against the current corpus, as the caller may see it. */
export async function serveVerify(request: VerifyRequest, _context: ServiceContext): Promise<never> {
  if ((request.pack === undefined) === (request.citations === undefined)) {
    throw new LitmPackError('invalid_input', 'Give exactly one of pack or citations', {
      details: { requestIssues: [{ path: [], message: 'Give exactly one of pack or citations' }] },
    });
  }
  unsupported('citations', 'citation verification is not available in this version');
}

/** `get_rag_context`'s answer from a bundle: its context, a hit per item, the exact token count. */
export function ragContextOf(pack: Pack): RagContext {
  const hits = pack.items.map((item, index): RagHit => {
    const citation = pack.citations[index];
    const hit: RagHit = { ref: item.ref, source_id: item.sourceId, chunk_id: item.id, score: item.score, text_sha256: citation?.textSha256 ?? '' };
    if (citation?.title !== undefined) hit.title = citation.title;
    if (citation?.url !== undefined) hit.url = citation.url;
    if (citation?.version !== undefined) hit.version = citation.version;
    if (citation?.section !== undefined) hit.section = citation.section;
    if (citation?.span !== undefined) hit.span = citation.span;
    return hit;
  });
  return { context: pack.context, hits, token_estimate: pack.budget.usedTokens, truncated: pack.truncated };
}
