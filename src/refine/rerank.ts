/**
 * Rerankers: a relevance model applied to the top of the retrieved pool before packing. `HttpReranker` speaks
 * the two rerank protocols in use: text-embeddings-inference's `POST /rerank` and the Cohere-style
 * `POST /v1/rerank` that Cohere, Jina and Voyage (and servers compatible with them) answer.
 */
import { parseRetryAfter } from '../base/retry-after.js';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { statusCode } from './contain.js';

/** One scored text: its index in the texts given, and its relevance (higher is better). */
export interface RerankResult {
  index: number;
  score: number;
}

export interface RerankOptions {
  signal?: AbortSignal | undefined;
}

/**
 * Scores texts against a query. Returns one result per text it keeps, in any order; a reranker may keep
 * fewer than it was given (a compressor with a `topN`), and the ones it leaves out are not packed.
 */
export interface Reranker {
  rerank(query: string, texts: readonly string[], options?: RerankOptions): Promise<RerankResult[]>;
}

export const RerankerSchema = z.custom<Reranker>(
  (value) => typeof value === 'object' && value !== null && typeof (value as Reranker).rerank === 'function',
  { message: 'reranker must have a rerank(query, texts) method, e.g. new HttpReranker({ url })' },
);

export const HttpRerankerOptionsSchema = z.strictObject({
  /** The endpoint, e.g. `http://localhost:8080/rerank` (TEI) or `https://api.cohere.com/v1/rerank`. */
  url: z.url({ message: 'url must be an absolute http(s) URL of the rerank endpoint' }),
  /**
   * `tei`: `{ query, texts }` → `[{ index, score }]`. `cohere`: `{ model, query, documents }` →
   * `{ results | data: [{ index, relevance_score }] }` (Cohere, Jina, Voyage). Default: `tei` when the path
   * ends in `/rerank` without a version, else `cohere`.
   */
  protocol: z.enum(['tei', 'cohere']).optional(),
  /** The model name the service expects (Cohere, Jina and Voyage require one). */
  model: z.string().min(1).optional(),
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Texts per request (TEI's default server limit is 32). */
  batchSize: z.number().int().positive().max(10_000).optional(),
  fetch: z.custom<typeof fetch>((value) => typeof value === 'function', { message: 'fetch must be a function' }).optional(),
});
export type HttpRerankerOptions = z.input<typeof HttpRerankerOptionsSchema>;

const finiteScore = z.number().refine(Number.isFinite, { message: 'must be a finite number' });
const TeiResponseSchema = z.array(z.object({ index: z.number().int().nonnegative(), score: finiteScore }));
const CohereEntrySchema = z.object({ index: z.number().int().nonnegative(), relevance_score: finiteScore });
const CohereResponseSchema = z.union([z.object({ results: z.array(CohereEntrySchema) }), z.object({ data: z.array(CohereEntrySchema) })]);

/**
 * A reranker behind HTTP.
 *
 * @example
 * const reranker = new HttpReranker({ url: 'http://localhost:8080/rerank' });                 // TEI
 * const cohere = new HttpReranker({ url: 'https://api.cohere.com/v1/rerank', model: 'rerank-v3.5', apiKey });
 */
export class HttpReranker implements Reranker {
  readonly url: string;
  readonly protocol: 'tei' | 'cohere';
  readonly #model: string | undefined;
  readonly #headers: Record<string, string>;
  readonly #batchSize: number;
  readonly #fetch: typeof fetch;

  constructor(options: HttpRerankerOptions) {
    const parsed = parseOrThrow(HttpRerankerOptionsSchema, options, 'HttpReranker options');
    this.url = parsed.url;
    this.protocol =
      parsed.protocol ??
      (/\/rerank\/?$/.test(new URL(parsed.url).pathname) && !/\/v\d+\/rerank\/?$/.test(new URL(parsed.url).pathname) ? 'tei' : 'cohere');
    this.#model = parsed.model;
    this.#headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(parsed.apiKey === undefined ? {} : { authorization: `Bearer ${parsed.apiKey}` }),
      ...parsed.headers,
    };
    this.#batchSize = parsed.batchSize ?? (this.protocol === 'tei' ? 32 : 1000);
    this.#fetch = parsed.fetch ?? fetch;
  }

  async rerank(query: string, texts: readonly string[], options: RerankOptions = {}): Promise<RerankResult[]> {
    const out: RerankResult[] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      const batch = texts.slice(start, start + this.#batchSize);
      for (const result of await this.#call(query, batch, options.signal)) out.push({ index: start + result.index, score: result.score });
    }
    return out;
  }

  async #call(query: string, texts: readonly string[], signal: AbortSignal | undefined): Promise<RerankResult[]> {
    const body =
      this.protocol === 'tei'
        ? { query, texts }
        : { ...(this.#model === undefined ? {} : { model: this.#model }), query, documents: texts };
    let response: Response;
    try {
      response = await this.#fetch(this.url, {
        method: 'POST',
        headers: this.#headers,
        body: JSON.stringify(body),
        signal: signal ?? null,
      });
    } catch (error) {
      if (signal?.aborted === true) {
        const reason: unknown = signal.reason;
        throw reason instanceof LitmPackError ? reason : new LitmPackError('aborted', 'The rerank request was aborted', { cause: error });
      }
      throw new LitmPackError('connection_failed', `Could not reach the reranker at ${this.url}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const raw = await response.text();
    if (!response.ok) {
      const code = statusCode(response.status);
      throw new LitmPackError(code, `The reranker at ${this.url} answered ${response.status}: ${raw.slice(0, 300)}`, {
        status: response.status,
        ...(code === 'rate_limited' ? { retryAfterMs: parseRetryAfter(response.headers.get('retry-after')) } : {}),
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new LitmPackError('bad_response', `The reranker at ${this.url} answered something that is not JSON`, { cause: error });
    }
    let results: RerankResult[];
    if (this.protocol === 'tei') {
      const parsed = TeiResponseSchema.safeParse(json);
      if (!parsed.success) throw this.#badResponse('[{ index, score }]', parsed.error);
      results = parsed.data;
    } else {
      const parsed = CohereResponseSchema.safeParse(json);
      if (!parsed.success) throw this.#badResponse('{ results: [{ index, relevance_score }] }', parsed.error);
      const entries = 'results' in parsed.data ? parsed.data.results : parsed.data.data;
      results = entries.map((e) => ({ index: e.index, score: e.relevance_score }));
    }
    // Every text sent must come back once: a silently smaller answer would silently shrink the pack.
    const seen = new Set<number>();
    for (const r of results) {
      if (r.index >= texts.length || seen.has(r.index)) {
        throw new LitmPackError('bad_response', `The reranker at ${this.url} answered index ${r.index} for ${texts.length} texts`);
      }
      seen.add(r.index);
    }
    if (seen.size !== texts.length) {
      throw new LitmPackError('bad_response', `The reranker at ${this.url} scored ${seen.size} of ${texts.length} texts`);
    }
    return results;
  }

  #badResponse(expected: string, cause: unknown): LitmPackError {
    return new LitmPackError('bad_response', `The reranker at ${this.url} answered a body that is not ${expected}`, { cause });
  }
}
