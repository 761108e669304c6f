/**
 * Tracing through `@opentelemetry/api` alone: spans go to whatever tracer provider the application registers,
 * and cost next to nothing until one is (the API's tracer is a no-op then). Stage spans are started in the
 * active context, so under a server's request span (and with the application's context manager) they are its
 * children. Attributes are facts about a pack, never query text.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

export type { Attributes, Context, Span } from '@opentelemetry/api';

/** The tracer name spans are recorded under (the package's name, as instrumentation scopes are named). */
const TRACER_NAME = 'litm-pack';

/** Span names of the pipeline's stages. */
export const SPAN_SEARCH = 'litm-pack.search';
export const SPAN_RERANK = 'litm-pack.rerank';
export const SPAN_SENTENCES = 'litm-pack.select_sentences';
export const SPAN_PACK = 'litm-pack.pack';

/** Looked up per span, not once, so a provider registered after this module loaded is used. */
export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

function failed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * Runs `run` in a span named `name` (a child of the active one), ends it when `run` settles and marks it
 * failed when `run` throws (the error is thrown on). `run` may add attributes of its result.
 */
export async function inSpan<T>(name: string, attributes: Attributes, run: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await run(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** `inSpan` for synchronous work (packing). */
export function inSpanSync<T>(name: string, attributes: Attributes, run: (span: Span) => T): T {
  return tracer().startActiveSpan(name, { attributes }, (span) => {
    try {
      return run(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** What a pack's span attributes are read from (a `Pack` fits; base/ knows nothing of core/'s types). */
interface PackFacts {
  budget: { maxTokens: number; usedTokens: number };
  truncated: boolean;
  items: readonly unknown[];
  coverage: { confidence: string };
  degraded: readonly { stage: string; code: string }[];
}

/** The attributes of a pack, on its stage span and on the request span that made it. */
export function packAttributes(pack: PackFacts): Attributes {
  return {
    'litm_pack.budget': pack.budget.maxTokens,
    'litm_pack.used_tokens': pack.budget.usedTokens,
    'litm_pack.budget_bound': pack.truncated,
    'litm_pack.items': pack.items.length,
    'litm_pack.confidence': pack.coverage.confidence,
    // stage:code pairs; an empty list when nothing degraded, so "not degraded" is visible too.
    'litm_pack.degraded': pack.degraded.map((d) => `${d.stage}:${d.code}`),
  };
}

/** Marks a span failed without an exception (an HTTP answer of 5xx). */
export function markFailed(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * A server span for an incoming request, whose parent is the trace its headers carry (`traceparent`, read by
 * whatever propagator the application registered), and the context to run its handler in.
 */
export function startRequestSpan(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes,
): { span: Span; context: Context } {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `run` with `ctx` active, so the spans it starts are children of that context's span. */
export function withContext<T>(ctx: Context, run: () => T): T {
  return context.with(ctx, run);
}
