/**
 * Session briefings: the one path from a briefing request (pins, clusters, a task prompt, or any mix) to a
 * pack. The CLI, the LangChain and LlamaIndex briefing retrievers, the HTTP API and the MCP tool all call
 * `assembleBriefing`, so the same request gives the same pack everywhere. Framework-neutral.
 */
import { StoreSchema } from '../store/types.js';
import { z } from 'zod';
import { invalidInput, LitmPackError, parseOrThrow } from '../base/errors.js';
import { SPAN_PACK, inSpanSync, packAttributes } from '../base/trace.js';
import { packBriefing } from '../core/briefing.js';
import { BriefingOptionsSchema, type Candidate, type Pack, type Pool } from '../core/schemas.js';
import { rerankPools } from '../refine/stages.js';
import { tokenizeBm25 } from '../tokenize/bm25.js';
import { chunkToCandidate } from '../store/chunk.js';
import { checkEmbedderVectors, cosineSimilarity } from '../base/vectors.js';
import {
  EmbeddingsSchema,
  FusionSchema,
  PrincipalsSchema,
  SearchModeSchema,
  GET_CHUNKS_MAX_LIMIT,
  type ChunkRecord,
  DiversitySchema,
  FilterSchema,
} from '../store/schemas.js';
import type { EmbeddingsLike } from '../store/embeddings.js';
import type { Filter } from '../store/filter.js';
import { getTokenizer } from '../tokenize/tiktoken.js';
import { preparePacking, retrieveCandidates, type RetrieveRequest } from './retrieve.js';
import { packerOptions, packerShape, widerPool, type Assembled } from './bundle.js';
import { PIPELINE_DEFAULTS, PIPELINE_LIMITS } from './defaults.js';
import { AbortSignalSchema } from '../base/abort.js';

const DEFAULT_MAX_PINS = PIPELINE_LIMITS.maxPins;
const DEFAULT_MAX_CLUSTERS = PIPELINE_LIMITS.maxClusters;
const DEFAULT_MAX_CLUSTER_SOURCES = PIPELINE_LIMITS.maxClusterSources;

const briefingShape = BriefingOptionsSchema.shape;

/** The briefing's retrieval and scope options, without the store and the prompt (what a retriever is configured with). */
export const BriefingSettingsShape = {
  /** Source ids, chunk ids, or ingested paths that are an unambiguous suffix of one source id (`policy.md`). */
  pins: z.array(z.string().min(1)).default([]),
  /** Named clusters (the `clusters` payload field) to draw representative context from. */
  clusters: z.array(z.string().min(1)).default([]),
  /** `prefer`: prompt results may come from anywhere; `strict`: only from the pinned sources and the clusters. */
  scopeMode: z.enum(['prefer', 'strict']).default('prefer'),
  mode: SearchModeSchema.default('hybrid'),
  /** Candidate pool per search (the prompt's, and each cluster's when there is a prompt), widened up to `maxPool` while the budget is not filled. */
  limit: z.number().int().positive().max(PIPELINE_LIMITS.maxPool).default(PIPELINE_DEFAULTS.pool),
  /** The largest pool widening may reach (`limit` itself keeps the pool as asked). */
  maxPool: z.number().int().positive().max(PIPELINE_LIMITS.maxPool).default(PIPELINE_LIMITS.maxPool),
  filter: FilterSchema.optional(),
  /** Whom the briefing is for (pins, clusters and the prompt's results are read as them); `'all'`: a full view. Absent: anonymous. */
  principals: PrincipalsSchema.optional(),
  fusion: FusionSchema.optional(),
  /** MMR in the prompt's searches: 0 = pure relevance (default), 1 = maximum diversity (needs the store's embeddings). */
  diversity: DiversitySchema.optional(),
  /** Embeddings of the store's model: without a prompt, a cluster's chunks nearest their dense centroid lead. */
  embeddings: EmbeddingsSchema.optional(),
  maxPins: z.number().int().positive().default(DEFAULT_MAX_PINS),
  maxClusters: z.number().int().positive().default(DEFAULT_MAX_CLUSTERS),
  /** At most this many member sources of one cluster are read; a larger cluster is an error. */
  maxClusterSources: z.number().int().positive().default(DEFAULT_MAX_CLUSTER_SOURCES),
  tierWeights: briefingShape.tierWeights,
  groundingCount: briefingShape.groundingCount,
  entity: briefingShape.entity,
  contradictions: briefingShape.contradictions,
  gaps: briefingShape.gaps,
  ...packerShape(PIPELINE_DEFAULTS.briefingBudget),
};

export const BriefingRequestSchema = z.strictObject({
  store: StoreSchema,
  /** The task prompt; absent, empty or blank means no prompt. */
  prompt: z.string().optional(),
  ...BriefingSettingsShape,
  signal: AbortSignalSchema.optional(),
});
export type BriefingRequest = z.input<typeof BriefingRequestSchema>;
type Parsed = z.output<typeof BriefingRequestSchema>;

/** A briefing and the candidates it was built from (pins, cluster picks, prompt results), for mapping items back. */
export type Briefing = Assembled;

/**
 * Builds a session briefing from any mix of pins, clusters and a prompt:
 * - pins are fetched from the store whether or not the prompt finds them, and open the grounding zone in
 *   the order given, a source's chunks in document order (verbatim while they fit, then cut, then a
 *   one-line pointer). A pin that does not exist and one the principals may not read are both "not found".
 * - each cluster contributes at most a fair share of the budget the pins leave (÷ clusters, + 1 when there
 *   is a prompt): its chunks most relevant to the prompt, else its most central ones.
 * - the prompt's results fill the rest (`scopeMode: 'strict'`: only from the pinned sources and clusters).
 * - `diversity` runs MMR in the prompt's searches (its own and each cluster's); `rerank` scores the heads of
 *   all of them in one reranker call (one scale for the whole pool; pins are never reranked); `compress`
 *   selects the sentences of every candidate but the pins. All three need a prompt. A failing reranker or
 *   sentence embedder is bypassed and reported in `pack.degraded` and the caveats.
 * With none of prompt, pins and clusters the request is `invalid_input`.
 *
 * @example
 * const { pack } = await assembleBriefing({ store, prompt: 'refund complaints', pins: ['policy.md'],
 *   clusters: ['billing'], maxTokens: 3000 });
 */
export async function assembleBriefing(request: BriefingRequest): Promise<Briefing> {
  const req = parseOrThrow(BriefingRequestSchema, request, 'briefing request');
  const { prompt, pins, clusters } = checkBriefing(req);
  const resolved = await resolvePins(req, pins);
  // The prompt's pool widens as a bundle's does (see widerPool) while the budget is not filled.
  for (let limit = req.limit; ;) {
    const at = limit === req.limit ? req : { ...req, limit };
    const pool = new CandidatePool();
    for (const record of resolved.chunks) pool.add(chunkToCandidate(record, 0));
    const searched = await searchBriefing(at, prompt, clusters, resolved);
    const gaps = [...req.gaps];
    const precedence = clusters.length > 0 ? pickClusterShares(at, prompt, clusters, resolved, searched.clusters, pool, gaps) : [];
    for (const candidate of searched.promptResults) pool.add(candidate);
    const searchedPool: Pool | undefined = searched.prompted ? { candidates: searched.promptResults.length, limit } : undefined;
    const briefing = await packGathered(at, prompt, pool.candidates(), resolved, {
      gaps,
      precedence,
      degraded: searched.degraded,
      pool: searchedPool,
    });
    const wider = searchedPool === undefined ? null : widerPool(searchedPool, req.maxPool, briefing.pack);
    if (wider === null) return briefing;
    limit = wider;
  }
}

/** The request's prompt (absent when blank), pins and clusters (each once), checked against its limits and stages. */
function checkBriefing(req: Parsed): { prompt: string | undefined; pins: string[]; clusters: string[] } {
  const prompt = req.prompt !== undefined && req.prompt.trim() !== '' ? req.prompt : undefined;
  const pins = [...new Set(req.pins)];
  const clusters = [...new Set(req.clusters)];
  if (prompt === undefined && pins.length === 0 && clusters.length === 0) {
    throw invalidInput('A briefing needs at least one of prompt, pins or clusters');
  }
  if (pins.length > req.maxPins) {
    throw new LitmPackError('invalid_input', `Too many pins: ${pins.length}, at most ${req.maxPins} (raise maxPins to allow more)`);
  }
  if (clusters.length > req.maxClusters) {
    throw new LitmPackError(
      'invalid_input',
      `Too many clusters: ${clusters.length}, at most ${req.maxClusters} (raise maxClusters to allow more)`,
    );
  }
  if (req.scopeMode === 'strict' && pins.length === 0 && clusters.length === 0) {
    throw new LitmPackError(
      'invalid_input',
      'scopeMode "strict" limits prompt results to the pins and clusters: give at least one of them',
    );
  }
  const promptStages = (['compress', 'rerank', 'diversity'] as const).filter((name) => req[name] !== undefined && req[name] !== 0);
  if (prompt === undefined && promptStages.length > 0) {
    throw new LitmPackError(
      'invalid_input',
      `${promptStages.join(', ')} ${promptStages.length === 1 ? 'works' : 'work'} on the prompt's results; this briefing has no prompt (give one, or leave ${promptStages.length === 1 ? 'it' : 'them'} out)`,
    );
  }
  if ((pins.length > 0 || clusters.length > 0) && typeof req.store.getChunks !== 'function') {
    throw new LitmPackError('unsupported', 'Pins and clusters need a store with getChunks (MemoryHybridStore or QdrantHybridStore)');
  }
  return { prompt, pins, clusters };
}

/** The briefing's candidates by id: a search result (with its score and similarity) beats the same chunk fetched without a query. */
class CandidatePool {
  readonly #byId = new Map<string, Candidate>();

  add(candidate: Candidate): void {
    const previous = this.#byId.get(candidate.id);
    if (
      previous === undefined ||
      candidate.score > previous.score ||
      (candidate.score === previous.score && previous.similarity === undefined)
    ) {
      this.#byId.set(candidate.id, candidate);
    }
  }

  candidates(): Candidate[] {
    return [...this.#byId.values()];
  }
}

interface Searched {
  /** Per cluster, in request order: its candidates best first, or null when the principals can read no member. */
  clusters: (Candidate[] | null)[];
  /** Whether the prompt was searched (not when strict scope leaves nothing to search). */
  prompted: boolean;
  promptResults: Candidate[];
  degraded: Pack['degraded'];
}

/**
 * Every search first (each cluster's, then the prompt's), so that one reranker call can score them all: the
 * clusters' searches and the prompt's (inside the pins and clusters with strict scope) share one scale.
 */
async function searchBriefing(
  req: Parsed,
  prompt: string | undefined,
  clusters: readonly string[],
  resolved: ResolvedPins,
): Promise<Searched> {
  const ordered: (Candidate[] | null)[] = [];
  const searched: number[] = [];
  for (const cluster of clusters) {
    const found = await clusterCandidates(req, cluster, prompt);
    if (found !== null && found.searched) searched.push(ordered.length);
    ordered.push(found === null ? null : found.candidates);
  }
  let promptResults: Candidate[] = [];
  let degraded: Pack['degraded'] = [];
  let prompted = false;
  if (prompt !== undefined) {
    const scope = req.scopeMode === 'strict' ? scopeFilter(resolved.sourceIds, clusters) : undefined;
    if (scope !== null) {
      const retrieved = await retrieveCandidates(req.store, { ...searchRequest(req, prompt), filter: andFilters(req.filter, scope) });
      promptResults = retrieved.candidates;
      degraded = retrieved.degraded;
      prompted = true;
    }
    if (req.rerank !== undefined) {
      const reranked = await rerankPools(prompt, [...searched.map((i) => ordered[i]!), promptResults], req.rerank, req.signal);
      searched.forEach((i, k) => (ordered[i] = reranked.pools[k]!));
      promptResults = reranked.pools[searched.length]!;
      degraded = [...degraded, ...reranked.degraded];
    }
  }
  return { clusters: ordered, prompted, promptResults, degraded };
}

/**
 * Adds each cluster's fair share of what the pins leave (÷ clusters, + 1 when there is a prompt) to the pool,
 * round robin, so that when pins leave too little room every cluster still gets its first picks. A cluster
 * the principals can read nothing of becomes a gap. Returns the picks in the order taken (the precedence).
 */
function pickClusterShares(
  req: Parsed,
  prompt: string | undefined,
  clusters: readonly string[],
  resolved: ResolvedPins,
  found: readonly (Candidate[] | null)[],
  pool: CandidatePool,
  gaps: string[],
): string[] {
  const pinTokens = resolved.chunks.reduce((sum, chunk) => sum + tokensOf(chunkToCandidate(chunk, 0), req), 0);
  const left = Math.max(0, req.maxTokens - pinTokens);
  const share = Math.floor(left / (clusters.length + (prompt === undefined ? 0 : 1)));
  const pinned = new Set(resolved.chunks.map((c) => c.id));
  const picks: Candidate[][] = [];
  clusters.forEach((cluster, index) => {
    const candidates = found[index];
    if (candidates === null || candidates === undefined) {
      gaps.push(`cluster "${cluster}": no sources found.`);
      picks.push([]);
      return;
    }
    picks.push(
      takeShare(
        candidates.filter((c) => !pinned.has(c.id)),
        share,
        req,
      ),
    );
  });
  const precedence: string[] = [];
  for (let round = 0; picks.some((p) => p.length > round); round += 1) {
    for (const p of picks) {
      const pick = p[round];
      if (pick === undefined) continue;
      pool.add(pick);
      if (!precedence.includes(pick.id)) precedence.push(pick.id);
    }
  }
  return precedence;
}

/**
 * Sentence vectors for selection (one batched call, contained, when compress has embeddings), then
 * `packBriefing`. Pins are shown whole (the packer selects no sentences of them), so their sentences are not
 * embedded.
 */
async function packGathered(
  req: Parsed,
  prompt: string | undefined,
  candidates: Candidate[],
  resolved: ResolvedPins,
  slots: { gaps: string[]; precedence: string[]; degraded: Pack['degraded']; pool: Pool | undefined },
): Promise<Briefing> {
  const pinSet = new Set(resolved.pinIds);
  const selectable = candidates.filter((candidate) => !pinSet.has(candidate.id) && !pinSet.has(candidate.sourceId ?? candidate.id));
  const inputs = await preparePacking(prompt ?? '', { candidates: selectable, degraded: slots.degraded }, req.compress, req.signal);
  const pack = inSpanSync(SPAN_PACK, { 'litm_pack.kind': 'briefing', 'litm_pack.candidates': candidates.length }, (span) => {
    const packed = packBriefing({
      query: prompt ?? '',
      candidates,
      pins: [...resolved.pinIds],
      precedence: slots.precedence,
      ...(req.tierWeights === undefined ? {} : { tierWeights: req.tierWeights }),
      groundingCount: req.groundingCount,
      entity: req.entity,
      contradictions: req.contradictions,
      gaps: slots.gaps,
      ...packerOptions(req),
      degraded: inputs.degraded,
      ...(inputs.compress === undefined ? {} : { compress: inputs.compress }),
      ...(slots.pool === undefined ? {} : { pool: slots.pool }),
    });
    span.setAttributes(packAttributes(packed));
    return packed;
  });
  return { pack, candidates };
}

function readRequest(req: Parsed) {
  return {
    limit: GET_CHUNKS_MAX_LIMIT,
    ...(req.principals === undefined ? {} : { principals: req.principals }),
    ...(req.signal === undefined ? {} : { signal: req.signal }),
  };
}

interface ResolvedPins {
  /** What the packer pins: the resolved source or chunk id per pin, or the pin itself when not found. */
  pinIds: string[];
  /** Every pinned chunk. */
  chunks: ChunkRecord[];
  /** Sources the pins resolved to (chunk pins: their source), for strict scope. */
  sourceIds: string[];
}

/**
 * Pins are chunk ids, source ids, or a path suffix of exactly one visible source id (at a `/`). Reads run
 * under the principals, so a pin the caller may not see is not found, exactly like one that does not exist,
 * and never shows up among the candidates of an ambiguous suffix.
 */
async function resolvePins(req: Parsed, pins: readonly string[]): Promise<ResolvedPins> {
  const out: ResolvedPins = { pinIds: [], chunks: [], sourceIds: [] };
  if (pins.length === 0) return out;
  const getChunks = req.store.getChunks!.bind(req.store);
  const byId = new Map((await getChunks({ ids: [...pins], ...readRequest(req) })).map((c) => [c.id, c] as const));
  const bySource = groupBySource(await getChunks({ sourceIds: [...pins], ...readRequest(req) }));
  let visibleSources: string[] | undefined;
  for (const pin of pins) {
    const chunk = byId.get(pin);
    if (chunk !== undefined) {
      out.pinIds.push(pin);
      out.chunks.push(chunk);
      out.sourceIds.push(chunk.sourceId);
      continue;
    }
    let sourceId: string | undefined = bySource.has(pin) ? pin : undefined;
    if (sourceId === undefined) {
      // A path as the user ingested it: the one visible source id it ends (at a path separator).
      visibleSources ??= [...groupBySource(await getChunks({ filter: { must: [] }, ...readRequest(req) })).keys()];
      const suffix = pin.replace(/^\.\//, '');
      const matches = visibleSources.filter((id) => id.endsWith(`/${suffix}`) || id === suffix).sort();
      if (matches.length > 1) {
        throw new LitmPackError(
          'invalid_input',
          `Pin "${pin}" is ambiguous: it could be ${matches.join(', ')}; pin one of these source ids`,
          {
            details: { pin, candidates: matches },
          },
        );
      }
      sourceId = matches[0];
      if (sourceId !== undefined && !bySource.has(sourceId)) {
        bySource.set(sourceId, await getChunks({ sourceIds: [sourceId], ...readRequest(req) }));
      }
    }
    if (sourceId === undefined) {
      out.pinIds.push(pin); // not found: the packer reports it in the caveats
      continue;
    }
    out.pinIds.push(sourceId);
    out.chunks.push(...(bySource.get(sourceId) ?? []));
    out.sourceIds.push(sourceId);
  }
  return out;
}

function groupBySource(chunks: readonly ChunkRecord[]): Map<string, ChunkRecord[]> {
  const out = new Map<string, ChunkRecord[]>();
  for (const chunk of chunks) {
    const list = out.get(chunk.sourceId);
    if (list === undefined) out.set(chunk.sourceId, [chunk]);
    else list.push(chunk);
  }
  return out;
}

function clusterFilter(cluster: string): Filter {
  return { must: [{ key: 'clusters', match: { any: [cluster] } }] };
}

function andFilters(a: Filter | undefined, b: Filter | undefined): Filter | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return { must: [a, b] };
}

/** Strict scope: the pinned sources or the named clusters; null when that scope is empty. */
function scopeFilter(sourceIds: readonly string[], clusters: readonly string[]): Filter | null {
  const should: Filter['should'] = [];
  if (sourceIds.length > 0) should.push({ key: 'sourceId', match: { any: [...new Set(sourceIds)] } });
  if (clusters.length > 0) should.push({ key: 'clusters', match: { any: [...clusters] } });
  return should.length === 0 ? null : { should };
}

/**
 * A cluster's chunks, best first: those most relevant to the prompt (a search inside the cluster), else
 * the most central ones. Null when the principals can read no member.
 */
async function clusterCandidates(
  req: Parsed,
  cluster: string,
  prompt: string | undefined,
): Promise<{ candidates: Candidate[]; searched: boolean } | null> {
  const members = await req.store.getChunks!({ filter: andFilters(req.filter, clusterFilter(cluster))!, ...readRequest(req) });
  if (members.length >= GET_CHUNKS_MAX_LIMIT) {
    throw new LitmPackError('too_large', `Cluster "${cluster}" has more than ${GET_CHUNKS_MAX_LIMIT} chunks`);
  }
  const sources = new Set(members.map((m) => m.sourceId));
  if (sources.size > req.maxClusterSources) {
    throw new LitmPackError(
      'invalid_input',
      `Cluster "${cluster}" has ${sources.size} member sources, more than maxClusterSources (${req.maxClusterSources}); narrow it or raise the limit`,
    );
  }
  if (members.length === 0) return null;
  if (prompt !== undefined) {
    const { candidates } = await retrieveCandidates(req.store, {
      ...searchRequest(req, prompt),
      filter: andFilters(req.filter, clusterFilter(cluster)),
    });
    return { candidates, searched: true };
  }
  const centrality = req.embeddings !== undefined ? await denseCentrality(members, req.embeddings) : lexicalCentrality(members);
  const candidates = members
    .map((record, index) => chunkToCandidate(record, centrality[index]!))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { candidates, searched: false };
}

/** A search for the prompt as the request asks for it (the caller adds its filter); reranking is the caller's. */
function searchRequest(req: Parsed, prompt: string): RetrieveRequest {
  return {
    text: prompt,
    mode: req.mode,
    limit: req.limit,
    principals: req.principals,
    fusion: req.fusion,
    diversity: req.diversity,
    signal: req.signal,
  };
}

/** Cosine of each chunk with the mean of the cluster's unit-length chunk vectors. */
async function denseCentrality(members: readonly ChunkRecord[], embeddings: EmbeddingsLike): Promise<number[]> {
  const vectors: number[][] = [];
  for (let start = 0; start < members.length; start += 64) {
    vectors.push(...(await embeddings.embedDocuments(members.slice(start, start + 64).map((m) => m.text))));
  }
  checkEmbedderVectors(vectors, members.length, 'embedDocuments', null, 'the cluster');
  const dimension = vectors[0]?.length ?? 0;
  const centroid = new Array<number>(dimension).fill(0);
  for (const vector of vectors) {
    const norm = Math.hypot(...vector) || 1;
    vector.forEach((x, i) => (centroid[i] = centroid[i]! + x / norm));
  }
  return vectors.map((vector) => cosineSimilarity(vector, centroid));
}

/**
 * Without vectors: the share of a chunk's distinct terms (BM25 tokens: stemmed, no stopwords) that other
 * chunks of the cluster also use, averaged over its terms.
 */
function lexicalCentrality(members: readonly ChunkRecord[]): number[] {
  const terms = members.map((m) => new Set(tokenizeBm25(m.text)));
  const frequency = new Map<string, number>();
  for (const set of terms) for (const term of set) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const others = Math.max(1, members.length - 1);
  return terms.map((set) => {
    if (set.size === 0) return 0;
    let shared = 0;
    for (const term of set) shared += (frequency.get(term)! - 1) / others;
    return shared / set.size;
  });
}

/** A candidate's text tokens: the store's count for the encoding when it has one, else counted. */
function tokensOf(candidate: Candidate, req: Parsed): number {
  const tokenizer = req.tokenizer ?? getTokenizer(req.encoding);
  const hint = typeof candidate.tokens === 'object' ? candidate.tokens[tokenizer.name] : undefined;
  return hint ?? tokenizer.count(candidate.text);
}

/**
 * A cluster's fair share: its chunks in order while their tokens fit `share` (a chunk that does not fit is
 * skipped; smaller later ones may). When not even one fits, the first is taken alone, so every cluster is
 * represented; the packer then cuts it if the budget runs short.
 */
function takeShare(ordered: readonly Candidate[], share: number, req: Parsed): Candidate[] {
  const taken: Candidate[] = [];
  let used = 0;
  for (const candidate of ordered) {
    const tokens = tokensOf(candidate, req);
    if (used + tokens > share) continue;
    taken.push(candidate);
    used += tokens;
  }
  if (taken.length === 0 && ordered.length > 0) taken.push(ordered[0]!);
  return taken;
}
