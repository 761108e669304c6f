/**
 * A span per HTTP request (OpenTelemetry, through base/trace.ts): started when the request arrives, as a child
 * of the trace its `traceparent` header carries, made the active span while its handler runs (so the pipeline's
 * stage spans are its children), and ended from the request's log line with its status and its pack's facts.
 */
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { markFailed, packAttributes, startRequestSpan, withContext, type Context, type Span } from '../base/trace.js';
import type { RequestState } from './context.js';
import type { RequestObserver } from './request-log.js';

/** Installs the span hooks (before the guard's and before any route); returns the observer that ends each span. */
export function installRequestSpans(app: FastifyInstance, stateOf: (request: FastifyRequest) => RequestState | undefined): RequestObserver {
  const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();

  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    // As HTTP spans are named: the method and the route template, never the path with its query.
    const name = route === undefined ? request.method : `${request.method} ${route}`;
    spans.set(
      request,
      startRequestSpan(name, request.headers, {
        'http.request.method': request.method,
        ...(route === undefined ? {} : { 'http.route': route }),
      }),
    );
    done();
  });

  // Every route's handler runs in its request's context: the pipeline's spans start under the request span.
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    const traced: RouteHandlerMethod = function (this: FastifyInstance, request, reply) {
      const entry = spans.get(request);
      return entry === undefined
        ? handler.call(this, request, reply)
        : withContext(entry.context, () => handler.call(this, request, reply));
    };
    route.handler = traced;
  });

  // A client that goes away before its answer: no log line will come, so the span ends here.
  app.addHook('onRequestAbort', (request, done) => {
    const entry = spans.get(request);
    if (entry !== undefined) {
      spans.delete(request);
      markFailed(entry.span, 'the client closed the connection before the answer');
      entry.span.end();
    }
    done();
  });

  return (line, request) => {
    const entry = spans.get(request);
    if (entry === undefined) return;
    spans.delete(request);
    const { span } = entry;
    span.setAttribute('http.response.status_code', line.status);
    if (line.tool !== undefined) span.setAttribute('litm_pack.tool', line.tool);
    if (line.code !== undefined) span.setAttribute('litm_pack.code', line.code);
    if (line.kind !== undefined) span.setAttribute('litm_pack.kind', line.kind);
    const pack = stateOf(request)?.pack;
    if (pack !== undefined) span.setAttributes(packAttributes(pack));
    if (line.status >= 500) markFailed(span, line.code ?? `status ${line.status}`);
    span.end();
  };
}
