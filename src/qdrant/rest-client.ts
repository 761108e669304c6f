import type { QdrantClient } from '@qdrant/js-client-rest';
import { z } from 'zod';
import { badResponse, parseQdrantResponse } from './responses.js';
import type { QdrantClientLike } from './types.js';

/**
 * The HTTP client the store builds from `url`: Qdrant's REST API over `fetch`, with the same method
 * signatures as `@qdrant/js-client-rest`'s `QdrantClient` (so an injected client and this one are
 * interchangeable). It exists because the official client cannot give the store three things it needs:
 * the raw `Retry-After` header (it keeps only the header's first character, and throws on an HTTP date),
 * the `time` Qdrant reports for each answer (the engine's own time, for benchmarks and logs), and an answer
 * that is not JSON or has no `result` reported as such rather than as `undefined`.
 */

export interface QdrantResponseInfo {
  /** `METHOD /path` as sent, e.g. `POST /collections/docs/points/query`. */
  request: string;
  status: number;
  /** Milliseconds from sending the request to having read the whole answer. */
  elapsedMs: number;
  /** The `time` field of Qdrant's answer, in seconds (the server's own time), when it sent one. */
  serverTimeSeconds: number | undefined;
  /** Bytes of the JSON body sent (0 without one) and of the answer's body. */
  requestBytes: number;
  responseBytes: number;
}

export interface QdrantRestClientOptions {
  /** e.g. `http://localhost:6333`; a path prefix (behind a proxy) is kept. */
  url: string;
  apiKey?: string;
  /** Deadline of each request in milliseconds; the socket is closed when it passes. */
  timeoutMs?: number;
  /** Called after every answer (including errors), e.g. to sum the server's own time. */
  onResponse?: (info: QdrantResponseInfo) => void;
}

/** A non-2xx answer: the shape `toQdrantError` translates (status, Qdrant's error body, raw headers). */
export class QdrantHttpError extends Error {
  override readonly name = 'QdrantHttpError';
  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly data: unknown,
    readonly headers: Headers,
    request: string,
  ) {
    super(`${request} answered ${status} ${statusText}`.trim());
  }
}

/** Qdrant's success envelope `{ result, status: "ok", time }`. */
const EnvelopeSchema = z.looseObject({
  result: z.custom<unknown>((value) => value !== undefined, { message: 'the answer has no "result"' }),
  time: z.number().optional(),
});

type Query = Record<string, string | number | boolean | undefined | null>;
type Args<M extends keyof QdrantClient> = Parameters<QdrantClient[M]>;
type Result<M extends keyof QdrantClient> = ReturnType<QdrantClient[M]>;

const enc = encodeURIComponent;

/** Each base URL a key was sent to in the clear is warned about once per process. */
const warnedPlaintext = new Set<string>();

/**
 * An API key sent over plain http to a host other than loopback can be read on the way: said once (a Node
 * process warning, `LITM_PACK_PLAINTEXT_KEY`), when the first request goes out, not at construction.
 */
function warnIfPlaintextKey(base: string): void {
  if (warnedPlaintext.has(base)) return;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return;
  }
  const host = url.hostname.replace(/^\[|\]$/gu, '').toLowerCase();
  const loopback = host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/u.test(host);
  if (url.protocol !== 'http:' || loopback) return;
  warnedPlaintext.add(base);
  process.emitWarning(
    `The Qdrant API key is sent over plain http to ${url.host}: anyone on the way can read it. Use https (qdrants:// on the command line).`,
    {
      code: 'LITM_PACK_PLAINTEXT_KEY',
    },
  );
}

export class QdrantRestClient implements QdrantClientLike {
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number | undefined;
  readonly #onResponse: ((info: QdrantResponseInfo) => void) | undefined;

  constructor(options: QdrantRestClientOptions) {
    this.#base = options.url.replace(/\/+$/, '');
    this.#headers = { accept: 'application/json', 'user-agent': 'litm-pack' };
    if (options.apiKey !== undefined) this.#headers['api-key'] = options.apiKey;
    this.#timeoutMs = options.timeoutMs;
    this.#onResponse = options.onResponse;
  }

  /** Safe to log: no key. */
  toJSON(): Record<string, unknown> {
    return { client: 'QdrantRestClient', url: this.#base };
  }

  async #send(method: string, path: string, query: Query, body: unknown): Promise<unknown> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) search.set(key, String(value));
    }
    const qs = search.size > 0 ? `?${search.toString()}` : '';
    const request = `${method} ${path}`;
    const headers: Record<string, string> = { ...this.#headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    // Bytes rather than a string: fetch would otherwise scan a string body for lone surrogates before encoding it.
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    if (this.#headers['api-key'] !== undefined) warnIfPlaintextKey(this.#base);
    const started = performance.now();
    const response = await fetch(`${this.#base}${path}${qs}`, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: payload }),
      ...(this.#timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(this.#timeoutMs) }),
    });
    const text = await response.text();
    let data: unknown = text;
    let json = false;
    try {
      data = text === '' ? undefined : JSON.parse(text);
      json = true;
    } catch {
      // Proxies and some errors answer plain text or HTML; kept as text.
    }
    if (this.#onResponse !== undefined) {
      const time = typeof data === 'object' && data !== null ? (data as { time?: unknown }).time : undefined;
      this.#onResponse({
        request,
        status: response.status,
        elapsedMs: performance.now() - started,
        serverTimeSeconds: typeof time === 'number' && Number.isFinite(time) ? time : undefined,
        requestBytes: payload === undefined ? 0 : payload.byteLength,
        responseBytes: Buffer.byteLength(text),
      });
    }
    if (!response.ok) throw new QdrantHttpError(response.status, response.statusText, data, response.headers, request);
    const context = { operation: request, collection: collectionOf(path) };
    if (!json) badResponse(context, `answered ${response.status} with a body that is not JSON (${JSON.stringify(text.slice(0, 80))})`);
    return parseQdrantResponse(EnvelopeSchema, data, context).result;
  }

  // Points

  query(collection: string, { consistency, timeout, ...body }: Args<'query'>[1]): Result<'query'> {
    return this.#send('POST', `/collections/${enc(collection)}/points/query`, { consistency, timeout }, body) as Result<'query'>;
  }

  queryBatch(collection: string, { consistency, timeout, ...body }: Args<'queryBatch'>[1]): Result<'queryBatch'> {
    return this.#send('POST', `/collections/${enc(collection)}/points/query/batch`, { consistency, timeout }, body) as Result<'queryBatch'>;
  }

  scroll(collection: string, args: Args<'scroll'>[1] = {}): Result<'scroll'> {
    const { consistency, timeout, ...body } = args;
    return this.#send('POST', `/collections/${enc(collection)}/points/scroll`, { consistency, timeout }, body) as Result<'scroll'>;
  }

  /** Unlike the official client, passes `consistency` on (Qdrant's count endpoint takes it). */
  count(collection: string, args: Args<'count'>[1] & { consistency?: ReadConsistencyParam } = {}): Result<'count'> {
    const { consistency, timeout, ...body } = args;
    return this.#send('POST', `/collections/${enc(collection)}/points/count`, { consistency, timeout }, body) as Result<'count'>;
  }

  facet(collection: string, { consistency, timeout, ...body }: Args<'facet'>[1]): Result<'facet'> {
    return this.#send('POST', `/collections/${enc(collection)}/facet`, { consistency, timeout }, body) as Result<'facet'>;
  }

  upsert(collection: string, { wait = true, ordering, timeout, ...body }: Args<'upsert'>[1]): Result<'upsert'> {
    return this.#send('PUT', `/collections/${enc(collection)}/points`, { wait, ordering, timeout }, body) as Result<'upsert'>;
  }

  delete(collection: string, { wait, ordering, timeout, ...body }: Args<'delete'>[1]): Result<'delete'> {
    return this.#send('POST', `/collections/${enc(collection)}/points/delete`, { wait, ordering, timeout }, body) as Result<'delete'>;
  }

  // Collections

  getCollection(collection: string): Result<'getCollection'> {
    return this.#send('GET', `/collections/${enc(collection)}`, {}, undefined) as Result<'getCollection'>;
  }

  collectionExists(collection: string): Result<'collectionExists'> {
    return this.#send('GET', `/collections/${enc(collection)}/exists`, {}, undefined) as Result<'collectionExists'>;
  }

  getCollections(): Result<'getCollections'> {
    return this.#send('GET', '/collections', {}, undefined) as Result<'getCollections'>;
  }

  /** Unlike the official client, sends every field of the body (the official one drops `metadata`). */
  createCollection(collection: string, { timeout, ...body }: Args<'createCollection'>[1]): Result<'createCollection'> {
    return this.#send('PUT', `/collections/${enc(collection)}`, { timeout }, body) as Result<'createCollection'>;
  }

  updateCollection(collection: string, args: Args<'updateCollection'>[1] = {}): Result<'updateCollection'> {
    const { timeout, ...body } = args;
    return this.#send('PATCH', `/collections/${enc(collection)}`, { timeout }, body) as Result<'updateCollection'>;
  }

  deleteCollection(collection: string, args: Args<'deleteCollection'>[1] = {}): Result<'deleteCollection'> {
    return this.#send('DELETE', `/collections/${enc(collection)}`, { timeout: args.timeout }, undefined) as Result<'deleteCollection'>;
  }

  createPayloadIndex(
    collection: string,
    { wait, ordering, timeout, ...body }: Args<'createPayloadIndex'>[1],
  ): Result<'createPayloadIndex'> {
    return this.#send('PUT', `/collections/${enc(collection)}/index`, { wait, ordering, timeout }, body) as Result<'createPayloadIndex'>;
  }

  // Aliases and shard keys

  getAliases(): Result<'getAliases'> {
    return this.#send('GET', '/aliases', {}, undefined) as Result<'getAliases'>;
  }

  updateCollectionAliases({ timeout, ...body }: Args<'updateCollectionAliases'>[0]): Result<'updateCollectionAliases'> {
    return this.#send('POST', '/collections/aliases', { timeout }, body) as Result<'updateCollectionAliases'>;
  }

  listShardKeys(collection: string): Result<'listShardKeys'> {
    return this.#send('GET', `/collections/${enc(collection)}/shards`, {}, undefined) as Result<'listShardKeys'>;
  }

  createShardKey(collection: string, { timeout, ...body }: Args<'createShardKey'>[1]): Result<'createShardKey'> {
    return this.#send('PUT', `/collections/${enc(collection)}/shards`, { timeout }, body) as Result<'createShardKey'>;
  }

  deleteShardKey(collection: string, { timeout, ...body }: Args<'deleteShardKey'>[1]): Result<'deleteShardKey'> {
    return this.#send('POST', `/collections/${enc(collection)}/shards/delete`, { timeout }, body) as Result<'deleteShardKey'>;
  }
}

type ReadConsistencyParam = number | 'majority' | 'quorum' | 'all';

function collectionOf(path: string): string {
  const match = /^\/collections\/([^/]+)/.exec(path);
  return match === null ? '(none)' : decodeURIComponent(match[1]!);
}
