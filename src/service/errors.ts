/**
 * Parsing a request and turning any failure into what a caller sees: `{ error, code, issues }` with the HTTP
 * status of ERROR_SURFACES, the same body on the HTTP API and in MCP tool errors.
 */
import type { z } from 'zod';
import { ERROR_SURFACES, LitmPackError, isLitmPackError, type LitmPackErrorCode } from '../base/errors.js';
import { describeUnknownKeys, knownKeysAt } from '../base/unknown-keys.js';
import { SURFACE_DEFAULTS } from './limits.js';

/** One problem with a request: where (the caller's parameter path) and what. */
export interface RequestIssue {
  path: (string | number)[];
  message: string;
}

/** The body of every error answer. */
export interface ErrorBody {
  error: string;
  /** A `LitmPackErrorCode`, `rate_limited` for the server's own limit, `forbidden` for a refused Host or Origin, or `internal_error`. */
  code: LitmPackErrorCode | 'internal_error' | 'forbidden';
  issues: RequestIssue[];
}

export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
  /** Seconds to wait, for a store that said so. */
  retryAfterSeconds?: number;
}

const pathOf = (path: readonly PropertyKey[]) => path.map((part) => (typeof part === 'number' ? part : String(part)));

/** A message that names its parameter: our own messages already start with it, zod's defaults get it in front. */
function located(path: readonly PropertyKey[], message: string): string {
  if (path.length === 0) return message;
  const name = path.map(String).join('.');
  return message.startsWith(name) ? message : `${name}: ${message}`;
}

/**
 * Parses a request with one of the request schemas, or throws `invalid_input` whose message and issues name
 * every parameter as the caller spelled it. An unknown parameter is named with the one it probably meant;
 * `aliases` name parameters of other surfaces (`query` on the HTTP API, which calls it `q`).
 */
export function parseRequest<T extends z.ZodType>(schema: T, value: unknown, aliases: Readonly<Record<string, string>> = {}): z.output<T> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issues: RequestIssue[] = result.error.issues.map((issue) => {
    const message =
      issue.code === 'unrecognized_keys'
        ? describeUnknownKeys(issue.keys, knownKeysAt(schema, issue.path), issue.path.length === 0 ? aliases : {})
        : issue.message;
    return { path: pathOf(issue.path), message: located(issue.path, message) };
  });
  throw new LitmPackError('invalid_input', issues.map((issue) => issue.message).join('; '), {
    issues: result.error.issues,
    cause: result.error,
    details: { requestIssues: issues },
  });
}

/**
 * What the HTTP API and MCP say instead of a store's own message, when the message names library options their
 * callers cannot set: a search that needs the store's embeddings (dense mode, MMR) on a store without them, a
 * Qdrant collection that does not exist or has no sparse vector. (The CLI says it in flags: cli/remedies.ts.)
 */
export function serviceRemedy(error: LitmPackError): string | undefined {
  const collection = typeof error.details.collection === 'string' ? error.details.collection : undefined;
  if (error.details.missing === 'collection' && collection !== undefined) {
    return "the server's store has no collection yet: documents must be ingested first";
  }
  if (error.details.requires === 'sparse' && collection !== undefined) {
    return "this server's collection has no sparse (BM25) vector: use mode dense (with the server's embeddings of the collection's model)";
  }
  if (error.details.requires !== 'embeddings') return undefined;
  const server = 'this server has no embeddings (it is started with --embeddings URL --embed-model NAME, or given embeddings in code)';
  return error.details.parameter === 'diversity'
    ? `diversity (MMR) needs dense vectors: ${server}; leave diversity out`
    : `mode dense needs dense vectors: ${server}; use mode lexical or hybrid`;
}

/** At most `max` characters of `text`, the cut said so (an answer never echoes more than an excerpt of the input). */
export function excerpt(text: string, max: number = SURFACE_DEFAULTS.maxErrorChars): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** Characters of one issue's message, and of one part of its path. */
const ISSUE_CHARS = 300;
const PATH_PART_CHARS = 100;
const PATH_PARTS = 20;

/**
 * An error body of bounded size, whatever the request held: the message and each issue cut to an excerpt, at
 * most `maxErrorIssues` issues (the last one says how many more there were). A body of 60,000 unknown keys is
 * answered in a few kilobytes, not echoed back several times over.
 */
export function boundedBody(body: ErrorBody): ErrorBody {
  const { maxErrorIssues } = SURFACE_DEFAULTS;
  const issue = (item: RequestIssue): RequestIssue => ({
    path: item.path.slice(0, PATH_PARTS).map((part) => (typeof part === 'string' ? excerpt(part, PATH_PART_CHARS) : part)),
    message: excerpt(item.message, ISSUE_CHARS),
  });
  const issues = body.issues.slice(0, maxErrorIssues).map(issue);
  if (body.issues.length > maxErrorIssues) issues.push({ path: [], message: `and ${body.issues.length - maxErrorIssues} more issues` });
  return { error: excerpt(body.error), code: body.code, issues };
}

/** The answer for an error thrown while serving a request. Anything that is not ours says nothing about itself. */
export function errorAnswer(error: unknown): ErrorAnswer {
  if (!isLitmPackError(error)) {
    return { status: 500, body: { error: 'internal error', code: 'internal_error', issues: [] } };
  }
  const surface = ERROR_SURFACES[error.code] ?? { http: 500, fault: true };
  const fromRequest = error.details.requestIssues as RequestIssue[] | undefined;
  const answer: ErrorAnswer = surface.fault
    ? // A store's own message may name hosts, collections or paths of the deployment: the caller gets the code.
      { status: surface.http, body: { error: `The store could not answer (${error.code}); try again later`, code: error.code, issues: [] } }
    : {
        status: surface.http,
        body: {
          error: serviceRemedy(error) ?? error.message,
          code: error.code,
          issues: fromRequest ?? error.issues.map((issue) => ({ path: pathOf(issue.path), message: located(issue.path, issue.message) })),
        },
      };
  if (error.retryAfterMs !== undefined) answer.retryAfterSeconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  answer.body = boundedBody(answer.body);
  return answer;
}
