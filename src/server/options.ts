/** The HTTP API's options (validated once, at createServer), its request log line and its sink. */
import { z } from 'zod';
import { ServedStoreOptionsShape } from '../service/options.js';
import { LitmPackError } from '../base/errors.js';
import type { Pack } from '../core/schemas.js';
import { RATE_LIMIT_DEFAULTS } from '../service/limits.js';
import { ApiKeys } from './auth.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Whether `address` is a loopback address (what `--host` binds to). */
export function isLoopback(address: string): boolean {
  const host = address.replace(/^\[|\]$/gu, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/u.test(host);
}

/**
 * On an address other than loopback, a server without API keys serves every document without an ACL to anyone
 * who can reach the port: refused unless `allowAnonymous` says that is meant.
 */
export function exposureProblem(host: string, keys: number, allowAnonymous: boolean): LitmPackError | null {
  if (isLoopback(host) || keys > 0 || allowAnonymous) return null;
  return new LitmPackError(
    'invalid_input',
    `Listening on ${host} without API keys serves every document without an ACL to anyone who can reach the port: give API keys (--keys FILE or LITM_PACK_API_KEYS; apiKeys in code), or say it is meant with --allow-anonymous (allowAnonymous: true)`,
  );
}

const RateLimitSchema = z.strictObject({
  /** Calls per window one caller (an API key's id, else a client address) may make. */
  perClient: z.number().int().positive().default(RATE_LIMIT_DEFAULTS.perClient),
  /** Calls per window all callers with a key together may make (all callers, on a server without keys). */
  global: z.number().int().positive().default(RATE_LIMIT_DEFAULTS.global),
  /** Calls per window all anonymous callers together may make, on a server with keys: apart from `global`. */
  anonymousGlobal: z.number().int().positive().default(RATE_LIMIT_DEFAULTS.anonymousGlobal),
  /** MCP housekeeping messages (initialize, notifications, ping, server/discover) per window, per caller and for all. */
  housekeepingPerClient: z.number().int().positive().default(RATE_LIMIT_DEFAULTS.housekeepingPerClient),
  housekeepingGlobal: z.number().int().positive().default(RATE_LIMIT_DEFAULTS.housekeepingGlobal),
  windowMs: z.number().int().positive().default(RATE_LIMIT_DEFAULTS.windowMs),
});

/** A host name a request may name in `Host` (with or without a port), or `*` for any (behind a proxy that checks it). */
const HostNameSchema = z
  .string()
  .min(1)
  .transform((value, context) => {
    if (value === '*') return value;
    try {
      return new URL(`http://${value}`).hostname.toLowerCase();
    } catch {
      context.addIssue({ code: 'custom', message: `allowedHosts: "${value}" is not a host name` });
      return z.NEVER;
    }
  });

/** An origin a browser page may call from (`https://app.example.com`), or `*` for any. */
const OriginSchema = z
  .string()
  .min(1)
  .transform((value, context) => {
    if (value === '*') return value;
    try {
      const url = new URL(value);
      if (url.origin === 'null') throw new Error('opaque');
      return url.origin;
    } catch {
      context.addIssue({ code: 'custom', message: `allowedOrigins: "${value}" is not an origin (scheme://host[:port])` });
      return z.NEVER;
    }
  });

const LogSinkSchema = z.custom<LogSink>(
  (value) => typeof value === 'object' && value !== null && typeof (value as LogSink).write === 'function',
  {
    message: 'log must have a write(line) method (a stream such as process.stdout)',
  },
);

export const ServerOptionsSchema = z.strictObject({
  ...ServedStoreOptionsShape,
  /** API keys and the principals each one reads as; without keys every caller is anonymous. */
  apiKeys: z.instanceof(ApiKeys).optional(),
  /** Reject callers without a valid key (401) instead of serving them as anonymous. */
  requireAuth: z.boolean().default(false),
  /** `false` turns rate limiting off (benchmarks, a server behind a gateway that limits). */
  rateLimit: z.union([z.literal(false), RateLimitSchema]).default({ ...RATE_LIMIT_DEFAULTS }),
  /**
   * Host names requests may be addressed to (the `Host` header), besides the loopback names (`localhost`,
   * `127.0.0.1`, `[::1]`), which are always allowed. Anything else is refused 403: a web page cannot reach the
   * server through a DNS name that rebinds to it. `['*']` allows any host (only behind a proxy that checks it).
   */
  allowedHosts: z.array(HostNameSchema).default([]),
  /**
   * Origins browser pages may call from (the `Origin` header, when sent), besides pages of an allowed host
   * (the inspector served by this server, say). `['*']` allows any.
   */
  allowedOrigins: z.array(OriginSchema).default([]),
  /**
   * Serve without API keys on an address other than loopback, where every unrestricted document is readable
   * by anyone who can reach the port. Without it such a server refuses to start (startServer).
   */
  allowAnonymous: z.boolean().default(false),
  /** Largest request body in bytes. */
  bodyLimit: z.number().int().positive().default(DEFAULT_BODY_LIMIT),
  /**
   * A request whose headers and body have not all arrived after this long is answered 408 and its connection
   * closed, so slow senders cannot hold sockets open (Node's own default is five minutes).
   */
  requestTimeoutMs: z.number().int().positive().max(600_000).default(30_000),
  /** Where the request log goes, one JSON line per request; `false` for none. */
  log: z.union([z.literal(false), LogSinkSchema]).default(false),
  /** Put the query text in the log lines (off by default: queries can be personal data). */
  logQueries: z.boolean().default(false),
  /** Serve the MCP tools over Streamable HTTP at /mcp. */
  mcp: z.boolean().default(true),
  /**
   * Serve `GET /metrics` (Prometheus text) on the API, behind the same guard as every route (keys when they are
   * required, rate limits). `startServer({ metricsPort })` serves them on a listener of their own instead.
   */
  metrics: z.boolean().default(true),
  /** `GET /readyz` answers 503 when the store has not answered its check within this long. */
  readinessTimeoutMs: z.number().int().positive().max(600_000).default(5_000),
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
  /** The request kind that made the pack: bundle, briefing (from the store) or pack (from candidates). */
  kind?: 'bundle' | 'briefing' | 'pack';
  /** The search mode of a pack retrieved from the store. */
  mode?: string;
  budget?: number;
  usedTokens?: number;
  /** The budget bound: an item was cut or dropped because it did not fit. */
  budgetBound?: boolean;
  items?: number;
  confidence?: string;
  /** Whether the dense arm answered (`coverage.denseAvailable`): false means the pack is lexical only. */
  denseAvailable?: boolean;
  /** Optional stages that failed and were bypassed (`pack.degraded`), when any did. */
  degraded?: Pack['degraded'];
  query?: string;
}
