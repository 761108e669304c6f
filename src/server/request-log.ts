/**
 * The request log line: what one answered request did, built once per request and handed to every observer
 * (the log sink, the metrics, the request's span), so what they report can never disagree. The query text is
 * in the line only with `logQueries`, and only the log sink gets it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestState } from './context.js';
import type { LogSink, RequestLogLine } from './options.js';

/** Something that hears of every answered request. */
export type RequestObserver = (line: RequestLogLine, request: FastifyRequest) => void;

export function requestLogLine(request: FastifyRequest, reply: FastifyReply, state: RequestState | undefined): RequestLogLine {
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
  const pack = state?.pack;
  if (pack !== undefined) {
    if (state?.kind !== undefined) line.kind = state.kind;
    if (state?.mode !== undefined) line.mode = state.mode;
    line.budget = pack.budget.maxTokens;
    line.usedTokens = pack.budget.usedTokens;
    line.budgetBound = pack.truncated;
    line.items = pack.items.length;
    line.confidence = pack.coverage.confidence;
    line.denseAvailable = pack.coverage.denseAvailable;
    if (pack.degraded.length > 0) line.degraded = pack.degraded;
  }
  return line;
}

/** One hook for every observer: each answered request's line is built once and handed to each in turn. */
export function installRequestObservers(
  app: FastifyInstance,
  stateOf: (request: FastifyRequest) => RequestState | undefined,
  observers: readonly RequestObserver[],
): void {
  if (observers.length === 0) return;
  app.addHook('onResponse', async (request, reply) => {
    const line = requestLogLine(request, reply, stateOf(request));
    for (const observe of observers) observe(line, request);
  });
}

/** The observer that writes each line to `sink`, one JSON line per request (with the query when `logQueries`). */
export function logWriter(sink: LogSink, logQueries: boolean, stateOf: (request: FastifyRequest) => RequestState | undefined): RequestObserver {
  return (line, request) => {
    const query = logQueries ? stateOf(request)?.query : undefined;
    sink.write(`${JSON.stringify(query === undefined ? line : { ...line, query })}\n`);
  };
}
