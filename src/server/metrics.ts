/**
 * The server's Prometheus metrics (prom-client), in a registry of each server's own, so several servers in one
 * process never share or collide on a metric. Every request metric is read from the request's log line (see
 * request-log.ts), so the log and the metrics cannot disagree. Labels are bounded: routes as registered (an
 * unknown path is `unmatched`), tool names of the server's own tools, error codes, API key ids; never query text.
 */
import type { FastifyInstance } from 'fastify';
import { createServer as createHttpServer, type Server } from 'node:http';
import { once } from 'node:events';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LitmPackError } from '../base/errors.js';
import type { Store } from '../store/types.js';
import type { CitationLedger } from '../service/ledger.js';
import { LOOPBACK_NAMES } from './guard.js';
import type { RequestLogLine } from './options.js';

/** The names of every metric the server exports (the dashboard and the README name these). */
export const METRIC_NAMES = Object.freeze({
  requests: 'litm_pack_http_requests_total',
  duration: 'litm_pack_http_request_duration_seconds',
  budgetRatio: 'litm_pack_budget_used_ratio',
  budgetBound: 'litm_pack_budget_bound_total',
  items: 'litm_pack_pack_items',
  confidence: 'litm_pack_confidence_total',
  degraded: 'litm_pack_degraded_total',
  denseUnavailable: 'litm_pack_dense_unavailable_total',
  refused: 'litm_pack_refused_total',
  storeSources: 'litm_pack_store_sources',
  storeChunks: 'litm_pack_store_chunks',
  storeLastIngest: 'litm_pack_store_last_ingest_timestamp_seconds',
  staleCitations: 'litm_pack_stale_citations',
});

/**
 * The guard's refusals, by code and the status it answers them with: each a `reason` of the refused counter. The
 * status matters: a store that rate-limits the server is a 503 with code `rate_limited`, a fault, not a refusal.
 */
const REFUSALS: ReadonlyMap<string, number> = new Map([
  ['forbidden', 403],
  ['unauthorized', 401],
  ['rate_limited', 429],
]);

/** A route label for a path that matched no route: the path itself would be an unbounded label. */
const UNMATCHED_ROUTE = 'unmatched';

/** The parts of a store the size gauges read; a store without them has no size gauges. */
interface SizedStore {
  readonly size: number;
  sources(): readonly unknown[];
  /** When the newest chunk was indexed, ms since the epoch (NaN: empty); the embedded store has it. */
  newestIndexedAt?(): number;
}

function isSized(store: Store): store is Store & SizedStore {
  const candidate = store as Partial<SizedStore>;
  return typeof candidate.size === 'number' && typeof candidate.sources === 'function';
}

export class ServerMetrics {
  readonly registry = new Registry();
  /** Routes the server registered (method-independent): the only route labels besides `unmatched`. */
  readonly #routes = new Set<string>();
  readonly #requests: Counter<'route' | 'tool' | 'status'>;
  readonly #duration: Histogram<'route' | 'tool' | 'status'>;
  readonly #budgetRatio: Histogram<'kind'>;
  readonly #budgetBound: Counter<'kind'>;
  readonly #items: Histogram<'kind'>;
  readonly #confidence: Counter<'kind' | 'level'>;
  readonly #degraded: Counter<'stage' | 'code'>;
  readonly #denseUnavailable: Counter<'kind'>;
  readonly #refused: Counter<'reason' | 'caller'>;

  constructor(store: Store, ledger?: Pick<CitationLedger, 'staleCount'>) {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: METRIC_NAMES.requests,
      help: 'Requests answered, by route, MCP tool (empty outside /mcp) and HTTP status',
      labelNames: ['route', 'tool', 'status'],
      registers,
    });
    this.#duration = new Histogram({
      name: METRIC_NAMES.duration,
      help: 'Time from a request arriving to its answer sent, by route, MCP tool and HTTP status',
      labelNames: ['route', 'tool', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#budgetRatio = new Histogram({
      name: METRIC_NAMES.budgetRatio,
      help: 'Used tokens over the budget of each pack served, by request kind',
      labelNames: ['kind'],
      buckets: [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1],
      registers,
    });
    this.#budgetBound = new Counter({
      name: METRIC_NAMES.budgetBound,
      help: 'Packs in which the budget bound (an item was cut or dropped because it did not fit), by request kind',
      labelNames: ['kind'],
      registers,
    });
    this.#items = new Histogram({
      name: METRIC_NAMES.items,
      help: 'Items per pack served, by request kind',
      labelNames: ['kind'],
      buckets: [0, 1, 2, 3, 5, 8, 13, 21, 34, 55],
      registers,
    });
    this.#confidence = new Counter({
      name: METRIC_NAMES.confidence,
      help: 'Packs served by coverage confidence (strong, partial, weak, unknown) and request kind',
      labelNames: ['kind', 'level'],
      registers,
    });
    this.#degraded = new Counter({
      name: METRIC_NAMES.degraded,
      help: 'Optional stages that failed and were bypassed (pack.degraded), by stage and error code',
      labelNames: ['stage', 'code'],
      registers,
    });
    this.#denseUnavailable = new Counter({
      name: METRIC_NAMES.denseUnavailable,
      help: 'Packs of hybrid or dense requests with items whose dense arm did not answer (lexical only), by request kind',
      labelNames: ['kind'],
      registers,
    });
    this.#refused = new Counter({
      name: METRIC_NAMES.refused,
      help: 'Requests the guard refused, by reason (forbidden, unauthorized, rate_limited) and caller (API key id, anonymous or invalid-key)',
      labelNames: ['reason', 'caller'],
      registers,
    });
    if (ledger !== undefined) {
      new Gauge({
        name: METRIC_NAMES.staleCitations,
        help: 'Served citations (from the citation ledger) that the last check of each found changed, moved or missing',
        registers,
        collect() {
          this.set(ledger.staleCount());
        },
      });
    }
    // Read at each scrape; a store that does not expose its size (Qdrant) has no size gauges.
    if (isSized(store)) {
      new Gauge({
        name: METRIC_NAMES.storeSources,
        help: 'Sources in the store the server reads',
        registers,
        collect() {
          this.set(store.sources().length);
        },
      });
      new Gauge({
        name: METRIC_NAMES.storeChunks,
        help: 'Chunks in the store the server reads',
        registers,
        collect() {
          this.set(store.size);
        },
      });
      const { newestIndexedAt } = store as Partial<SizedStore>;
      if (typeof newestIndexedAt === 'function') {
        new Gauge({
          name: METRIC_NAMES.storeLastIngest,
          help: 'When the newest chunk in the store was indexed (Unix seconds): the last ingest that added or changed content; 0 while the store is empty',
          registers,
          collect() {
            const at = newestIndexedAt.call(store);
            this.set(Number.isNaN(at) ? 0 : at / 1000);
          },
        });
      }
    }
  }

  /** Remembers the routes of `app` as they are registered (call before the routes are). */
  trackRoutes(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      this.#routes.add(route.url);
    });
  }

  /** Counts one answered request from its log line. */
  observe(line: RequestLogLine): void {
    const labels = {
      route: this.#routes.has(line.route) ? line.route : UNMATCHED_ROUTE,
      tool: line.tool ?? '',
      status: String(line.status),
    };
    this.#requests.inc(labels);
    this.#duration.observe(labels, line.latencyMs / 1000);
    if (line.code !== undefined && REFUSALS.get(line.code) === line.status)
      this.#refused.inc({ reason: line.code, caller: line.principal });
    if (line.kind === undefined || line.budget === undefined || line.usedTokens === undefined) return;
    const kind = { kind: line.kind };
    this.#budgetRatio.observe(kind, line.budget > 0 ? line.usedTokens / line.budget : 0);
    if (line.budgetBound === true) this.#budgetBound.inc(kind);
    if (line.items !== undefined) this.#items.observe(kind, line.items);
    if (line.confidence !== undefined) this.#confidence.inc({ ...kind, level: line.confidence });
    for (const { stage, code } of line.degraded ?? []) this.#degraded.inc({ stage, code });
    if (line.denseAvailable === false && (line.items ?? 0) > 0 && (line.mode === 'hybrid' || line.mode === 'dense'))
      this.#denseUnavailable.inc(kind);
  }

  /** The exposition text of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** `GET /metrics` on the API itself, behind the same guard (keys, rate limits) as every route. */
// eslint-disable-next-line @typescript-eslint/require-await -- a fastify plugin without a `done` parameter must return a promise
export async function metricsRoute(app: FastifyInstance, options: { metrics: ServerMetrics }): Promise<void> {
  app.get('/metrics', async (_request, reply) => reply.type(options.metrics.contentType).send(await options.metrics.text()));
}

function hostnameOf(host: string | undefined): string | null {
  try {
    return host === undefined ? null : new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * A listener of its own for the metrics (`--metrics-port`): `GET /metrics` only, nothing of the API. On loopback
 * it answers loopback `Host` names only, so no web page reads it through a DNS name that rebinds to 127.0.0.1.
 */
export async function listenMetrics(
  metrics: ServerMetrics,
  port: number,
  host: string,
  loopback: boolean,
): Promise<{ server: Server; port: number }> {
  const server = createHttpServer((request, response) => {
    if (loopback && !LOOPBACK_NAMES.has(hostnameOf(request.headers.host) ?? '')) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('Host is not a loopback name\n');
      return;
    }
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served here\n');
      return;
    }
    metrics.text().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(request.method === 'HEAD' ? undefined : text),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The metrics could not be collected\n'),
    );
  });
  server.listen(port, host);
  try {
    await once(server, 'listening');
  } catch (error) {
    throw new LitmPackError(
      'io_error',
      `Cannot serve the metrics on ${host}:${port}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      { cause: error },
    );
  }
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : port };
}
