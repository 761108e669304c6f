/**
 * The request log line: what one answered request did, built once per request and handed to every observer
 * (the log sink, the metrics, the request's span), so what they report can never disagree. The query text is
 * in the line only with `logQueries`, and only the log sink gets it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Pack } from '../core/schemas.js';
import type { SearchMode } from '../store/schemas.js';
import type { PackKind, RequestState } from './context.js';
import type { LogSink, RequestLogLine } from './options.js';

/** Something that hears of every answered request. */
export type RequestObserver = (line: RequestLogLine, request: FastifyRequest) => void;

function requestLogLine(request: FastifyRequest, reply: FastifyReply, state: RequestState | undefined): RequestLogLine {
  const line: RequestLogLine = {
    time: new Date().toISOString(),
    method: request.method,
    route: request.routeOptions.url ?? request.url.split('?')[0] ?? request.url,
    status: reply.statusCode,
    principal: state?.caller.id ?? 'anonymous',
    latencyMs: Math.round(reply.elapsedTime * 100) / 100,
  };
  if (state?.code !== undefined) line.code = state.code;
  if (state?.tool !== undefined) line.tool = state.tool;
  if (state?.pack !== undefined) Object.assign(line, packLogFields(state.pack, state.kind, state.mode));
  return line;
}

/** What a log line says of the pack a request or tool call made (HTTP and `litm-pack mcp` write the same fields). */
export function packLogFields(pack: Pack, kind: PackKind | undefined, mode: SearchMode | undefined): Partial<RequestLogLine> {
  const fields: Partial<RequestLogLine> = {};
  if (kind !== undefined) fields.kind = kind;
  if (mode !== undefined) fields.mode = mode;
  fields.budget = pack.budget.maxTokens;
  fields.usedTokens = pack.budget.usedTokens;
  fields.budgetBound = pack.truncated;
  fields.items = pack.items.length;
  fields.confidence = pack.coverage.confidence;
  fields.denseAvailable = pack.coverage.denseAvailable;
  if (pack.degraded.length > 0) fields.degraded = pack.degraded;
  return fields;
}

/** One hook for every observer: each answered request's line is built once and handed to each in turn. */
export function installRequestObservers(
  app: FastifyInstance,
  stateOf: (request: FastifyRequest) => RequestState | undefined,
  observers: readonly RequestObserver[],
): void {
  if (observers.length === 0) return;
  app.addHook('onResponse', async (request, reply) => {
    const state = stateOf(request);
    const line = requestLogLine(request, reply, state);
    for (const observe of observers) observe(line, request);
    // The answer is out and every observer has read the pack: let it go now. A keep-alive connection holds its
    // last request until the next one arrives, and a pack (its context, its JSON) held that long outlives the
    // young generation: every pack was promoted and collected only by full collections.
    if (state !== undefined) state.pack = undefined;
  });
}

/** The observer that writes each line to `sink`, one JSON line per request (with the query when `logQueries`). */
export function logWriter(
  sink: LogSink,
  logQueries: boolean,
  stateOf: (request: FastifyRequest) => RequestState | undefined,
): RequestObserver {
  return (line, request) => {
    const query = logQueries ? stateOf(request)?.query : undefined;
    sink.write(`${JSON.stringify(query === undefined ? line : { ...line, query })}\n`);
  };
}
