import type { z } from 'zod';
import { describeUnknownKeys, knownKeysAt } from './unknown-keys.js';

/**
 * Every failure litm-pack reports has one of these codes. Input problems are the caller's to fix;
 * store faults (connection, timeout, rate limit, server) are the environment's and may be retried.
 */
export type LitmPackErrorCode =
  /** A value given to a function or constructor failed validation; `issues` holds the zod issues. */
  | 'invalid_input'
  /** An option the implementation does not support (never silently ignored). */
  | 'unsupported'
  /** A filter that uses a part of Qdrant's filter language the store does not implement. */
  | 'unsupported_filter'
  /** A search mode the store or collection cannot serve (e.g. lexical without a sparse vector). */
  | 'unsupported_mode'
  /** A file or store on disk that is missing or unreadable, or a Qdrant collection that does not exist. */
  | 'not_found'
  /** A file that exists but is not what it should be (corrupt store, wrong schema version). */
  | 'corrupt'
  /** Local I/O failed (disk full, permissions). */
  | 'io_error'
  /** The store could not be reached (connection refused, DNS, socket closed). */
  | 'connection_failed'
  /** The request took longer than its `timeoutMs` or was aborted by the caller's signal. */
  | 'timeout'
  | 'aborted'
  /** The store answered 429; `retryAfterMs` says when to try again when the server said so. */
  | 'rate_limited'
  /** The store rejected the request (4xx): a bad body, or a vector name the collection has not (when not caught before). */
  | 'bad_request'
  /** The store failed (5xx). */
  | 'server_error'
  /** An existing collection or store does not match the configuration it is opened with (vectors, model, dimension). */
  | 'config_mismatch'
  /** The store answered something that is not what its API specifies (missing field, wrong type). */
  | 'bad_response'
  /** A caller of the HTTP API or MCP server without a valid API key where one is required. */
  | 'unauthorized'
  /** A service litm-pack calls (Qdrant, embeddings, a reranker) refused its credentials (401/403): fix its key. */
  | 'upstream_unauthorized'
  /** A request body or value over a size limit of the HTTP API. */
  | 'too_large';

export interface LitmPackErrorOptions {
  cause?: unknown;
  /** zod issues when the error comes from validation. */
  issues?: readonly z.core.$ZodIssue[];
  /** HTTP status when the error comes from a store's answer. */
  status?: number;
  /** Milliseconds to wait before retrying, when the store said so. */
  retryAfterMs?: number;
  /** Extra context, e.g. `{ line: 3 }` for JSON lines input. */
  details?: Record<string, unknown>;
}

export class LitmPackError extends Error {
  override readonly name = 'LitmPackError' as const;
  readonly code: LitmPackErrorCode;
  readonly issues: readonly z.core.$ZodIssue[];
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: LitmPackErrorCode, message: string, options: LitmPackErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.issues = options.issues ?? [];
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details ?? {};
  }
}

/**
 * Type guard that also works when two copies of litm-pack are loaded (it checks the name and code,
 * not the prototype chain).
 */
export function isLitmPackError(error: unknown, code?: LitmPackErrorCode): error is LitmPackError {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as { name?: unknown; code?: unknown };
  if (candidate.name !== 'LitmPackError' || typeof candidate.code !== 'string') return false;
  return code === undefined || candidate.code === code;
}

/**
 * `invalid_input` for a rule a schema cannot state (one of two options, a combination): the message, and one
 * issue at `path` carrying it, so every door reports it as it reports a schema's issues.
 */
export function invalidInput(message: string, path: (string | number)[] = []): LitmPackError {
  return new LitmPackError('invalid_input', message, { issues: [{ code: 'custom', path, message, input: undefined }] });
}

/** Formats zod issues as `path: message; path: message` for one readable line. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

interface ParseOptions {
  /** Unknown keys that are another library's name for one of ours (`k` → `limit`): named in the message. */
  aliases?: Readonly<Record<string, string>>;
}

/**
 * Parses `value` with `schema` or throws `invalid_input` naming what to fix. An unknown key (strict objects
 * reject them: a misspelt option must not be silently ignored) is named with the option it probably meant.
 */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, what: string, options: ParseOptions = {}): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) =>
    issue.code === 'unrecognized_keys'
      ? { ...issue, message: describeUnknownKeys(issue.keys, knownKeysAt(schema, issue.path), options.aliases) }
      : issue,
  );
  throw new LitmPackError('invalid_input', `Invalid ${what}: ${describeIssues(issues)}`, {
    issues,
    cause: result.error,
  });
}

/** How each error code surfaces on the HTTP API, as an MCP tool error and as a CLI exit code. */
export interface ErrorSurface {
  /** HTTP status of the API's answer. */
  http: number;
  /** Exit code of the CLI: 2 usage or input, 3 store fault, 1 anything else. */
  exit: number;
  /** A fault of the environment (store, network) rather than of the request: may be retried later. */
  fault: boolean;
}

/** One table, so the CLI, the HTTP API and the MCP tools never disagree on what an error means. */
export const ERROR_SURFACES: Readonly<Record<LitmPackErrorCode, ErrorSurface>> = {
  invalid_input: { http: 400, exit: 2, fault: false },
  unsupported: { http: 400, exit: 2, fault: false },
  unsupported_filter: { http: 400, exit: 2, fault: false },
  unsupported_mode: { http: 400, exit: 2, fault: false },
  not_found: { http: 404, exit: 2, fault: false },
  too_large: { http: 413, exit: 2, fault: false },
  unauthorized: { http: 401, exit: 2, fault: false },
  upstream_unauthorized: { http: 502, exit: 3, fault: true },
  corrupt: { http: 503, exit: 3, fault: true },
  io_error: { http: 500, exit: 1, fault: true },
  connection_failed: { http: 503, exit: 3, fault: true },
  timeout: { http: 503, exit: 3, fault: true },
  aborted: { http: 503, exit: 3, fault: true },
  rate_limited: { http: 503, exit: 3, fault: true },
  bad_request: { http: 503, exit: 3, fault: true },
  server_error: { http: 503, exit: 3, fault: true },
  bad_response: { http: 503, exit: 3, fault: true },
  config_mismatch: { http: 503, exit: 3, fault: true },
};
