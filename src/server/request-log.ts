/** The request log: one JSON line per answered request, without the query text unless `logQueries`. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestState } from './context.js';
import type { LogSink, RequestLogLine } from './options.js';

export function installRequestLog(
  app: FastifyInstance,
  sink: LogSink,
  logQueries: boolean,
  stateOf: (request: FastifyRequest) => RequestState | undefined,
): void {
  app.addHook('onResponse', async (request, reply) => {
    const state = stateOf(request);
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
      line.budget = pack.budget.maxTokens;
      line.usedTokens = pack.budget.usedTokens;
      line.budgetBound = pack.truncated;
      line.items = pack.items.length;
      line.confidence = pack.coverage.confidence;
      if (pack.degraded.length > 0) line.degraded = pack.degraded;
    }
    if (logQueries && state?.query !== undefined) line.query = state.query;
    sink.write(`${JSON.stringify(line)}\n`);
  });
}
