// OpenTelemetry spans as an application that registers the SDK sees them: one bundle request over HTTP with a
// traceparent header gives a server span in the caller's trace, and the pipeline's stage spans (search, rerank,
// sentence selection, pack) as its children, with the pack's facts as attributes.
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MemoryHybridStore, Pack } from '../src/index.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { fixtureKeys, fixtureStore } from './helpers/serve-fixtures.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_SPAN_ID}-01`;
const STAGES = ['litm-pack.search', 'litm-pack.rerank', 'litm-pack.select_sentences', 'litm-pack.pack'];

const exporter = new InMemorySpanExporter();
let store: MemoryHybridStore;
let server: RunningServer;

beforeAll(async () => {
  // What an application does when it turns tracing on (the NodeSDK registers the same three).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  store = await fixtureStore({ restricted: false });
  // A reranker that keeps the order it is given, so the rerank stage runs.
  const reranker = {
    rerank: (_query: string, texts: readonly string[]) => Promise.resolve(texts.map((_, index) => ({ index, score: 1 - index / 100 }))),
  };
  server = await startServer({ store, apiKeys: fixtureKeys(), rateLimit: false, rerank: { reranker, topN: 20, timeoutMs: 60_000 } });
});

afterAll(async () => {
  await server.close();
  trace.disable();
  propagation.disable();
  context.disable();
});

beforeEach(() => {
  exporter.reset();
});

/** The spans of one request, once its server span has ended (it ends when the answer has been sent). */
async function spansOfRequest(): Promise<{ request: ReadableSpan; stages: ReadableSpan[] }> {
  await vi.waitFor(() => expect(exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER)).toHaveLength(1));
  const spans = exporter.getFinishedSpans();
  const request = spans.find((span) => span.kind === SpanKind.SERVER) as ReadableSpan;
  return { request, stages: spans.filter((span) => span !== request) };
}

describe('spans of a bundle request over HTTP', () => {
  it("keeps the caller's trace, makes each stage a child of the request span, and records the pack's facts", async () => {
    const answer = await fetch(`${server.url}/api/bundle?q=refunds&budget=60&compress=sentences`, {
      headers: { traceparent: TRACEPARENT },
    });
    expect(answer.status).toBe(200);
    const pack = (await answer.json()) as Pack;
    const { request, stages } = await spansOfRequest();

    expect(request.name).toBe('GET /api/bundle');
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(request.parentSpanContext?.spanId).toBe(PARENT_SPAN_ID);
    expect(request.parentSpanContext?.isRemote).toBe(true);
    expect(stages.map((span) => span.name).sort()).toEqual([...STAGES].sort());
    for (const stage of stages) {
      expect(stage.spanContext().traceId, stage.name).toBe(TRACE_ID);
      expect(stage.parentSpanContext?.spanId, stage.name).toBe(request.spanContext().spanId);
      expect(stage.status.code, stage.name).not.toBe(SpanStatusCode.ERROR);
    }

    const facts = {
      'litm_pack.budget': 60,
      'litm_pack.used_tokens': pack.budget.usedTokens,
      'litm_pack.budget_bound': pack.truncated,
      'litm_pack.items': pack.items.length,
      'litm_pack.confidence': pack.coverage.confidence,
      'litm_pack.degraded': [],
    };
    expect(request.attributes).toMatchObject({
      ...facts,
      'http.request.method': 'GET',
      'http.route': '/api/bundle',
      'http.response.status_code': 200,
      'litm_pack.kind': 'bundle',
    });
    const byName = new Map(stages.map((span) => [span.name, span] as const));
    expect(byName.get('litm-pack.pack')?.attributes).toMatchObject({ ...facts, 'litm_pack.kind': 'bundle' });
    expect(byName.get('litm-pack.search')?.attributes).toMatchObject({
      'litm_pack.mode': 'hybrid',
      'litm_pack.limit': 50,
      'litm_pack.candidates': expect.any(Number),
    });
    expect(byName.get('litm-pack.rerank')?.attributes).toMatchObject({ 'litm_pack.top_n': 20, 'litm_pack.degraded': [] });
    // No query text in any attribute.
    expect(JSON.stringify([request, ...stages].map((span) => span.attributes))).not.toContain('refunds');
  });

  it('starts a trace of its own without traceparent; a refused request has a span with its status and code, and no stages', async () => {
    const fresh = await fetch(`${server.url}/api/bundle?q=refunds&budget=60&rerank=false`);
    expect(fresh.status).toBe(200);
    const { request, stages } = await spansOfRequest();
    expect(request.parentSpanContext).toBeUndefined();
    expect(request.spanContext().traceId).not.toBe(TRACE_ID);
    expect(stages.map((span) => span.name).sort()).toEqual(['litm-pack.pack', 'litm-pack.search']);

    exporter.reset();
    const refused = await fetch(`${server.url}/api/bundle?q=refunds`, {
      headers: { traceparent: TRACEPARENT, authorization: 'Bearer not-a-configured-key-0123' },
    });
    expect(refused.status).toBe(401);
    const denied = await spansOfRequest();
    expect(denied.stages).toEqual([]);
    expect(denied.request.spanContext().traceId).toBe(TRACE_ID);
    expect(denied.request.attributes).toMatchObject({ 'http.response.status_code': 401, 'litm_pack.code': 'unauthorized' });
  });
});
