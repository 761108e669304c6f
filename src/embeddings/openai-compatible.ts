import { parseRetryAfter } from '../base/retry-after.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { upstreamStatusCode } from '../base/http-status.js';
import { LitmPackError, describeIssues, parseOrThrow } from '../base/errors.js';
import type { EmbeddingsLike } from '../store/embeddings.js';

// The protocol is one POST with a small JSON body. A fetch of our own (rather than the OpenAI SDK or
// LangChain's OpenAIEmbeddings) keeps the CLI free of optional peers and large dependency trees, and makes
// every fault a typed LitmPackError with the server's own message.

export const OpenAICompatibleEmbeddingsOptionsSchema = z.strictObject({
  /**
   * The API's base URL as OpenAI's SDK takes it (`https://api.openai.com/v1`, `http://localhost:11434/v1`),
   * or the full embeddings endpoint (`…/v1/embeddings`).
   */
  url: z.url({ protocol: /^https?$/, message: 'url must be an http(s) URL, e.g. http://localhost:11434/v1' }),
  /** The model the server should run (sent as `model`; stores remember it beside the vectors). */
  model: z.string().trim().min(1, 'model must be a non-empty model name'),
  /** Sent as `Authorization: Bearer …`; never printed or serialised. */
  apiKey: z.string().min(1).optional(),
  /** Ask for vectors of this size (OpenAI's `dimensions`, for models that can shorten them). */
  dimensions: z.number().int().positive().max(65_536).optional(),
  /** Texts per request (default 64). */
  batchSize: z.number().int().min(1).max(2048).default(64),
  /** Deadline of one request in milliseconds (default 60 s). */
  timeoutMs: z.number().int().min(1).max(600_000).default(60_000),
  /** Further attempts after a connection failure, a 429 or a 5xx (default 3). */
  retries: z.number().int().min(0).max(10).default(3),
  /** First backoff step in milliseconds; each retry doubles it (default 500). */
  retryBaseDelayMs: z.number().int().min(0).max(60_000).default(500),
  /** Longest wait between attempts; a longer `Retry-After` is not waited for, the error is thrown (default 30 s). */
  retryMaxDelayMs: z.number().int().min(0).max(600_000).default(30_000),
  /** Extra request headers (e.g. an organisation or a gateway key). */
  headers: z.record(z.string(), z.string()).optional(),
});
export type OpenAICompatibleEmbeddingsOptions = z.input<typeof OpenAICompatibleEmbeddingsOptionsSchema>;

const ResponseSchema = z.object({
  data: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      embedding: z.array(z.number().refine(Number.isFinite, { message: 'must be a finite number' })).min(1),
    }),
  ),
});

/** Where the server's answer says what went wrong: OpenAI's `{error:{message}}`, TEI's `{error}`, or text. */
function serverMessage(body: string): string {
  try {
    const json = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = json.error;
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    for (const value of [error, json.message, json.detail]) if (typeof value === 'string') return value;
  } catch {
    // not JSON: the text itself
  }
  return body.trim().slice(0, 300);
}

function endpointOf(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return /\/embeddings$/.test(trimmed) ? trimmed : `${trimmed}/embeddings`;
}

const RETRYABLE = new Set(['connection_failed', 'rate_limited', 'server_error', 'timeout']);

/**
 * Embeddings from any server that speaks OpenAI's `POST /v1/embeddings` (OpenAI, Ollama, vLLM,
 * text-embeddings-inference, LM Studio, llama.cpp): LangChain's `embedQuery`/`embedDocuments`, so both stores
 * and any LangChain code take it. Texts go in batches of `batchSize`; connection failures, timeouts, 429 and
 * 5xx are retried with exponential backoff (honouring `Retry-After`). Every failure is a `LitmPackError`:
 * `connection_failed`, `timeout`, `rate_limited` (with `retryAfterMs`), `server_error`, `upstream_unauthorized`
 * (401/403), `bad_request` (other 4xx: unknown model, input too long) or `bad_response` (an answer that is
 * not the protocol's, naming the field).
 *
 * @example
 * ```typescript
 * const embeddings = new OpenAICompatibleEmbeddings({ url: 'http://localhost:11434/v1', model: 'nomic-embed-text' });
 * const store = new MemoryHybridStore({ embeddings });
 * ```
 */
export class OpenAICompatibleEmbeddings implements EmbeddingsLike {
  /** The model name (stores read it to remember which model made their vectors). */
  readonly model: string;
  readonly endpoint: string;
  readonly #options: z.output<typeof OpenAICompatibleEmbeddingsOptionsSchema>;

  constructor(options: OpenAICompatibleEmbeddingsOptions) {
    this.#options = parseOrThrow(OpenAICompatibleEmbeddingsOptionsSchema, options, 'OpenAICompatibleEmbeddings options');
    this.model = this.#options.model;
    this.endpoint = endpointOf(this.#options.url);
  }

  async embedQuery(text: string): Promise<number[]> {
    const [vector] = await this.#embedBatch([text]);
    return vector as number[];
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.#options.batchSize) {
      vectors.push(...(await this.#embedBatch(texts.slice(start, start + this.#options.batchSize))));
    }
    return vectors;
  }

  /** Keeps the key out of logs and traces that serialise their inputs. */
  toJSON(): Record<string, unknown> {
    return { endpoint: this.endpoint, model: this.model, dimensions: this.#options.dimensions };
  }

  async #embedBatch(texts: string[]): Promise<number[][]> {
    const { retries, retryBaseDelayMs, retryMaxDelayMs } = this.#options;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.#request(texts);
      } catch (error) {
        const typed = error as LitmPackError;
        if (!RETRYABLE.has(typed.code) || attempt >= retries) throw typed;
        if (typed.retryAfterMs !== undefined && typed.retryAfterMs > retryMaxDelayMs) throw typed;
        const backoff = Math.round(Math.random() * Math.min(retryMaxDelayMs, retryBaseDelayMs * 2 ** attempt));
        await sleep(Math.max(typed.retryAfterMs ?? 0, backoff));
      }
    }
  }

  async #request(texts: string[]): Promise<number[][]> {
    const { apiKey, dimensions, headers, timeoutMs } = this.#options;
    const where = { details: { endpoint: this.endpoint, model: this.model } };
    const body: Record<string, unknown> = { model: this.model, input: texts, encoding_format: 'float' };
    if (dimensions !== undefined) body.dimensions = dimensions;
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...headers,
          ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') {
        throw new LitmPackError('timeout', `The embeddings server at ${this.endpoint} did not answer within ${timeoutMs} ms`, {
          cause: error,
          ...where,
        });
      }
      const reason = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new LitmPackError(
        'connection_failed',
        `Cannot reach the embeddings server at ${this.endpoint}: ${reason?.code ?? reason?.message ?? (error as Error).message}`,
        { cause: error, ...where },
      );
    }
    if (!response.ok) throw this.#statusError(response, text, where.details);

    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new LitmPackError('bad_response', `The embeddings server at ${this.endpoint} answered with something that is not JSON`, {
        cause: error,
        ...where,
      });
    }
    const parsed = ResponseSchema.safeParse(json);
    if (!parsed.success) {
      throw new LitmPackError(
        'bad_response',
        `The embeddings server at ${this.endpoint} answered outside the OpenAI embeddings protocol: ${describeIssues(parsed.error.issues)}`,
        { issues: parsed.error.issues, ...where },
      );
    }
    return this.#vectorsInOrder(parsed.data.data, texts.length);
  }

  #vectorsInOrder(data: { index: number; embedding: number[] }[], expected: number): number[][] {
    const vectors = new Array<number[] | undefined>(expected);
    for (const { index, embedding } of data) {
      if (index >= expected || vectors[index] !== undefined) {
        throw new LitmPackError('bad_response', `The embeddings server returned data[].index ${index} for a batch of ${expected} texts`);
      }
      vectors[index] = embedding;
    }
    if (data.length !== expected) {
      throw new LitmPackError('bad_response', `The embeddings server returned ${data.length} vectors for ${expected} texts`);
    }
    const size = (vectors[0] as number[]).length;
    const wanted = this.#options.dimensions ?? size;
    if (vectors.some((vector) => (vector as number[]).length !== wanted)) {
      throw new LitmPackError(
        'bad_response',
        `The embeddings server returned vectors of ${[...new Set(vectors.map((v) => v?.length))].join(' and ')} dimensions (expected ${wanted})`,
      );
    }
    return vectors as number[][];
  }

  #statusError(response: Response, body: string, details: Record<string, unknown>): LitmPackError {
    const status = response.status;
    const said = serverMessage(body);
    const base = `The embeddings server at ${this.endpoint} answered ${status}${said ? `: ${said}` : ''}`;
    const code = upstreamStatusCode(status);
    const options = { status, details };
    if (code === 'rate_limited') {
      const wait = parseRetryAfter(response.headers.get('retry-after'));
      return new LitmPackError(code, base, { ...options, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
    }
    const hint =
      code === 'upstream_unauthorized'
        ? ' (check the API key: LITM_EMBEDDINGS_API_KEY or the apiKey option)'
        : status === 413
          ? ' (send fewer texts per request: the batchSize option)'
          : status === 404
            ? ` (is ${this.endpoint} the embeddings endpoint, and is model "${this.model}" served there?)`
            : '';
    return new LitmPackError(code, `${base}${hint}`, options);
  }
}
