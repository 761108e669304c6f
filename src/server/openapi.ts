/** The OpenAPI 3.1 document of the HTTP API, generated from the same zod schemas the routes parse with. */
import { z } from 'zod';
import { PackSchema } from '../core/schemas.js';
import { ErrorBodySchema, RankingsSchema, StaleAnswerSchema, VerifyAnswerSchema } from '../service/responses.js';
import { BRIEFING_QUERY_KINDS, BUNDLE_QUERY_KINDS, STALE_QUERY_KINDS, type HttpSchemas } from './http-requests.js';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** Query parameters of a GET route, one per property of its schema. */
function queryParameters(schema: z.ZodType, kinds: Readonly<Record<string, string>>): JsonSchema[] {
  const object = jsonSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...schemaOnly } = property;
    const parameter: JsonSchema = { name, in: 'query', required: required.has(name) };
    if (typeof description === 'string') parameter.description = description;
    if (kinds[name] === 'json') parameter.content = { 'application/json': { schema: schemaOnly } };
    else if (kinds[name] === 'list') Object.assign(parameter, { schema: schemaOnly, style: 'form', explode: false });
    else parameter.schema = schemaOnly;
    return parameter;
  });
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });

const ERRORS = {
  '400': errorResponse(
    'Bad request: { error, code, issues } naming each parameter as sent (codes invalid_input, unsupported, unsupported_filter, unsupported_mode; ' +
      'unsupported: e.g. diversity on a store without embeddings, rerank=true on a server without a reranker)',
  ),
  '401': errorResponse('No valid API key where one is required (code unauthorized)'),
  '413': errorResponse('Request body over the size limit (code too_large)'),
  '429': {
    ...errorResponse('Rate limited (code rate_limited); Retry-After gives the seconds to wait'),
    headers: { 'Retry-After': { schema: { type: 'integer' } } },
  },
  '503': errorResponse(
    'The store could not answer (codes connection_failed, timeout, server_error, bad_response, ...); never a smaller pack',
  ),
};

function body(schema: z.ZodType) {
  return { required: true, content: { 'application/json': { schema: jsonSchema(schema, 'input') } } };
}

export function openApiDocument(schemas: HttpSchemas, version: string): JsonSchema {
  const packAnswer = (extra: Record<string, unknown> = {}) => ({
    '200': { description: 'The pack', content: { 'application/json': { schema: ref('Pack') }, ...extra } },
    ...ERRORS,
  });
  const markdown = { 'text/markdown': { schema: { type: 'string' } } };
  const bundleAnswer = packAnswer({ ...markdown, 'application/xml': { schema: { type: 'string' } } });
  const briefingAnswer = packAnswer(markdown);
  return {
    openapi: '3.1.0',
    info: {
      title: 'litm-pack',
      version,
      description:
        'Token-budgeted, Lost-in-the-Middle-ordered, cited context packs. Callers with an API key see what their principals may read; anonymous callers see documents without an ACL. ' +
        "Optional stages that fail (the server's reranker, sentence embeddings) never fail a pack: it is built without them and lists them in pack.degraded ([{ stage, code }], empty when nothing degraded).",
    },
    security: [{}, { bearer: [] }],
    paths: {
      '/api/bundle': {
        get: { summary: 'A bundle for a query', parameters: queryParameters(schemas.bundle, BUNDLE_QUERY_KINDS), responses: bundleAnswer },
        post: { summary: 'A bundle for a query (parameters as a JSON body)', requestBody: body(schemas.bundle), responses: bundleAnswer },
      },
      '/api/briefing': {
        get: {
          summary: 'A briefing from a prompt, pins and clusters',
          parameters: queryParameters(schemas.briefing, BRIEFING_QUERY_KINDS),
          responses: briefingAnswer,
        },
        post: { summary: 'A briefing (parameters as a JSON body)', requestBody: body(schemas.briefing), responses: briefingAnswer },
      },
      '/api/pack': {
        post: {
          summary: 'Pack candidates you send (canonical JSON, for evaluation harnesses)',
          requestBody: body(schemas.pack),
          responses: packAnswer(),
        },
      },
      '/api/citations/verify': {
        post: {
          summary: 'Check citations against the current corpus (current, moved, changed, missing)',
          requestBody: body(schemas.verify),
          responses: {
            '200': { description: 'One check per citation', content: { 'application/json': { schema: ref('VerifyAnswer') } } },
            ...ERRORS,
          },
        },
      },
      '/api/citations/stale': {
        get: {
          summary:
            'Served citations now changed, moved or missing (from the citation ledger), newest first, a page at a time; only sources the caller may read',
          parameters: queryParameters(schemas.stale, STALE_QUERY_KINDS),
          responses: {
            '200': {
              description: 'One page of the stale feed; nextCursor continues it',
              content: { 'application/json': { schema: ref('StaleAnswer') } },
            },
            ...ERRORS,
          },
        },
      },
      '/inspect': {
        get: {
          summary: 'The HTML report of a bundle (parameters as for /api/bundle)',
          parameters: queryParameters(schemas.inspect, BUNDLE_QUERY_KINDS),
          responses: {
            '200': { description: 'A self-contained HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
            ...ERRORS,
          },
        },
        post: {
          summary: 'The HTML report of a pack sent as the body',
          requestBody: { required: true, content: { 'application/json': { schema: ref('Pack') } } },
          responses: {
            '200': { description: 'A self-contained HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
            ...ERRORS,
          },
        },
      },
      '/healthz': {
        get: {
          summary: 'Liveness (answers any Host)',
          security: [{}],
          responses: {
            '200': {
              description: 'Up',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
            },
          },
        },
      },
      '/readyz': {
        get: {
          summary: 'Readiness: the store answers a cheap read (and a served store file is there and readable); answers any Host',
          security: [{}],
          responses: {
            '200': {
              description: 'Ready',
              content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ready' } } } } },
            },
            '503': { description: 'Not ready: { status: "unready", error, code, issues } with the store\'s error code' },
          },
        },
      },
      '/metrics': {
        get: {
          summary: 'Prometheus metrics (text exposition format); absent when served on --metrics-port',
          responses: { '200': { description: 'Metrics' }, ...ERRORS },
        },
      },
      '/api/openapi.json': { get: { summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1' } } } },
      '/mcp': {
        post: {
          summary:
            'MCP over Streamable HTTP, stateless, protocol revisions 2025-11-25 (and before) and 2026-07-28 (JSON-RPC; tools assemble_bundle, get_briefing, corpus_briefing_pack, get_rag_context, get_rankings, pack_candidates, verify_citations, list_stale_citations with a ledger)',
          responses: { '200': { description: 'JSON-RPC answer' }, ...ERRORS },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Pack: jsonSchema(PackSchema, 'output'),
        Rankings: jsonSchema(RankingsSchema, 'output'),
        Error: jsonSchema(ErrorBodySchema, 'output'),
        VerifyAnswer: jsonSchema(VerifyAnswerSchema, 'output'),
        StaleAnswer: jsonSchema(StaleAnswerSchema, 'output'),
      },
    },
  };
}
