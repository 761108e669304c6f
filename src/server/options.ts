/** The HTTP API's options (validated once, at createServer), its request log line and its sink. */
import { z } from 'zod';
import type { Pack } from '../core/schemas.js';
import { RerankStageSchema } from '../refine/stages.js';
import { EmbeddingsSchema, StoreSchema } from '../retrieve/schemas.js';
import type { ServiceLimitsInput } from '../service/limits.js';
import { ApiKeys } from './auth.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

const RateLimitSchema = z.strictObject({
  /** Requests per window one client (an API key, else an IP address) may make. */
  perClient: z.number().int().positive().default(3),
  /** Requests per window all clients together may make. */
  global: z.number().int().positive().default(10),
  windowMs: z.number().int().positive().default(1000),
});

const LogSinkSchema = z.custom<LogSink>((value) => typeof value === 'object' && value !== null && typeof (value as LogSink).write === 'function', {
  message: 'log must have a write(line) method (a stream such as process.stdout)',
});

export const ServerOptionsSchema = z.strictObject({
  store: StoreSchema,
  /** API keys and the principals each one reads as; without keys every caller is anonymous. */
  apiKeys: z.instanceof(ApiKeys).optional(),
  /** Reject callers without a valid key (401) instead of serving them as anonymous. */
  requireAuth: z.boolean().default(false),
  /** `false` turns rate limiting off (benchmarks, a server behind a gateway that limits). */
  rateLimit: z.union([z.literal(false), RateLimitSchema]).default({ perClient: 3, global: 10, windowMs: 1000 }),
  /** Largest request body in bytes. */
  bodyLimit: z.number().int().positive().default(DEFAULT_BODY_LIMIT),
  /**
   * A request whose headers and body have not all arrived after this long is answered 408 and its connection
   * closed, so slow senders cannot hold sockets open (Node's own default is five minutes).
   */
  requestTimeoutMs: z.number().int().positive().max(600_000).default(30_000),
  /** Defaults and limits of the requests (budgets, pins, clusters, query length...). */
  limits: z.custom<ServiceLimitsInput>((value) => typeof value === 'object' && value !== null).optional(),
  /** Where the request log goes, one JSON line per request; `false` for none. */
  log: z.union([z.literal(false), LogSinkSchema]).default(false),
  /** Put the query text in the log lines (off by default: queries can be personal data). */
  logQueries: z.boolean().default(false),
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
  /** Serve the MCP tools over Streamable HTTP at /mcp. */
  mcp: z.boolean().default(true),
});
export type ServerOptions = z.input<typeof ServerOptionsSchema>;
export type ServerConfig = z.output<typeof ServerOptionsSchema>;

/** Anything with `write(line)`: process.stdout, a file stream. */
export interface LogSink {
  write(line: string): unknown;
}

/** One line of the request log. */
export interface RequestLogLine {
  time: string;
  method: string;
  route: string;
  status: number;
  principal: string;
  latencyMs: number;
  code?: string;
  tool?: string;
  budget?: number;
  usedTokens?: number;
  /** The budget bound: an item was cut or dropped because it did not fit. */
  budgetBound?: boolean;
  items?: number;
  confidence?: string;
  /** Optional stages that failed and were bypassed (`pack.degraded`), when any did. */
  degraded?: Pack['degraded'];
  query?: string;
}

