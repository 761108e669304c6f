/**
 * What the HTTP server and the MCP server are both given, written once: the store, the limits of the requests,
 * the store model's embeddings, the reranker, the citation ledger and the text content of tool answers. Each
 * server's options add their own (keys and guards; the MCP caller).
 */
import { z } from 'zod';
import { RerankStageSchema } from '../refine/stages.js';
import { EmbeddingsSchema } from '../store/schemas.js';
import { StoreSchema } from '../store/types.js';
import { CitationLedger } from './ledger.js';
import type { ServiceLimitsInput } from './limits.js';

export const ServedStoreOptionsShape = {
  store: StoreSchema,
  /** Defaults and limits of the requests and tool arguments (budgets, pools, pins, clusters, query length, read sizes...). */
  limits: z
    .custom<ServiceLimitsInput>((value) => typeof value === 'object' && value !== null, { message: 'limits must be an object' })
    .optional(),
  /**
   * Embeddings of the store's model: sentence selection blends in sentence vectors (else BM25 alone), and
   * briefings from clusters without a prompt start from the chunks nearest the centroid (else lexical).
   */
  embeddings: EmbeddingsSchema.optional(),
  /**
   * A reranker over the top of every bundle's pool (and a briefing's prompt results), e.g.
   * `{ reranker: new HttpReranker({ url }), topN: 50, timeoutMs: 10000 }`; a request may turn it off with
   * `rerank: false`. A reranker that fails or times out is bypassed and reported in `pack.degraded`.
   */
  rerank: RerankStageSchema.optional(),
  /**
   * The citation ledger (`CitationLedger.open`): every pack served from the store is recorded, and
   * `GET /api/citations/stale` and MCP `list_stale_citations` list the served citations that went stale.
   * Absent (the default in code; `litm-pack serve` and `mcp` open one beside the store): nothing is recorded.
   */
  ledger: z
    .custom<CitationLedger>((value) => value instanceof CitationLedger, {
      message: 'ledger must be a CitationLedger (CitationLedger.open)',
    })
    .optional(),
  /**
   * What the text block of an MCP tool answer holds: `context` (the context and a trailer with the confidence
   * and the citations) or `json` (the structured content as JSON text, for hosts that parse it).
   */
  textContent: z.enum(['context', 'json']).default('context'),
};
