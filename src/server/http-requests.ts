/**
 * The HTTP API's request schemas: the service's, with the HTTP spellings (`q`, response `format`), and the
 * decoding of query strings (every value arrives as a string) into the types the schemas check.
 */
import { z } from 'zod';
import { GranularitySchema } from '../service/anthropic.js';
import { LitmPackError } from '../base/errors.js';
import { FormatSchema, type PackFormat } from '../core/schemas.js';
import type { ServiceLimits } from '../service/limits.js';
import {
  briefingRequestShape,
  bundleRequestShape,
  httpQueryParameter,
  staleRequestShape,
  packRequestShape,
  oneOf,
  says,
  verifyRequestShape,
  type BriefingRequest,
  type BundleRequest,
} from '../service/requests.js';

const BUNDLE_RESPONSE_FORMATS = ['json', 'md', 'xml', 'anthropic'] as const;
const BRIEFING_RESPONSE_FORMATS = ['json', 'md', 'anthropic'] as const;
export type ResponseFormat = (typeof BUNDLE_RESPONSE_FORMATS)[number];

export function httpSchemas(limits: ServiceLimits) {
  const { query: _query, format: _format, ...bundleRest } = bundleRequestShape(limits);
  const query = httpQueryParameter(limits);
  const { format: _briefingFormat, ...briefingRest } = briefingRequestShape(limits);
  // No default here: a json answer's context is markdown unless this says otherwise, md and xml imply theirs.
  const contextFormat = () => z.enum(FormatSchema.options, oneOf(FormatSchema.options)).optional();
  return {
    bundle: z.strictObject({
      q: query,
      ...bundleRest,
      format: z
        .enum(BUNDLE_RESPONSE_FORMATS, oneOf(BUNDLE_RESPONSE_FORMATS))
        .default('json')
        .describe(
          'json: the pack (canonical JSON); md: the context as text/markdown; xml: the context in XML blocks; anthropic: { pack, search_results } with the items as Anthropic search_result blocks.',
        ),
      context_format: contextFormat().describe('Format of pack.context in a json answer (markdown by default).'),
      granularity: GranularitySchema.optional(),
      debug: z
        .enum(['rankings'], oneOf(['rankings']))
        .optional()
        .describe("rankings: answer { pack, rankings } with each search arm's raw ranking beside the fused one."),
      k: z
        .number(says('must be a whole number'))
        .int(says('must be a whole number'))
        .min(1, says('must be at least 1'))
        .max(limits.maxRankingsDepth, says(`must be at most ${limits.maxRankingsDepth}`))
        .optional()
        .describe(`Depth of the debug rankings (default ${limits.defaultRankingsDepth}).`),
    }),
    briefing: z.strictObject({
      ...briefingRest,
      format: z
        .enum(BRIEFING_RESPONSE_FORMATS, oneOf(BRIEFING_RESPONSE_FORMATS))
        .default('json')
        .describe('json: the pack (canonical JSON); md: the context as text/markdown; anthropic: { pack, search_results }.'),
      context_format: contextFormat().describe('Format of pack.context in a json answer (markdown by default).'),
      granularity: GranularitySchema.optional(),
    }),
    pack: z.strictObject(packRequestShape(limits)),
    verify: z.strictObject(verifyRequestShape(limits)),
    stale: z.strictObject(staleRequestShape(limits)),
    /** GET /inspect: a bundle's parameters; the answer is the pack's HTML report. */
    inspect: z.strictObject({
      q: query,
      ...bundleRest,
      context_format: contextFormat().describe("Format of the pack's context (markdown by default)."),
    }),
  };
}
export type HttpSchemas = ReturnType<typeof httpSchemas>;
type HttpBundleRequest = z.output<HttpSchemas['bundle']>;
type HttpBriefingRequest = z.output<HttpSchemas['briefing']>;
type HttpInspectRequest = z.output<HttpSchemas['inspect']>;

/** Parameters the HTTP API spells differently from the MCP tools: named when a caller uses the other spelling. */
export const HTTP_ALIASES: Readonly<Record<string, string>> = { query: 'q', max_tokens: 'budget' };

function contextFormatFor(format: ResponseFormat, contextFormat: PackFormat | undefined): PackFormat {
  const implied: PackFormat | undefined = format === 'md' ? 'markdown' : format === 'xml' ? 'xml' : undefined;
  if (implied !== undefined && contextFormat !== undefined && contextFormat !== implied) {
    const message = `context_format "${contextFormat}" contradicts format "${format}": leave context_format out, or use format json`;
    throw new LitmPackError('invalid_input', message, { details: { requestIssues: [{ path: ['context_format'], message }] } });
  }
  return implied ?? contextFormat ?? 'markdown';
}

/** `granularity` shapes the search_result blocks of format anthropic, and nothing else. */
function checkGranularity(format: ResponseFormat, granularity: unknown): void {
  if (granularity === undefined || format === 'anthropic') return;
  const message = 'granularity goes with format anthropic (it says what each search_result text block holds)';
  throw new LitmPackError('invalid_input', message, { details: { requestIssues: [{ path: ['granularity'], message }] } });
}

export function toBundleRequest(request: HttpBundleRequest): BundleRequest {
  const { q, format, context_format, debug: _debug, k: _k, granularity, ...rest } = request;
  checkGranularity(format, granularity);
  return { ...rest, query: q, format: contextFormatFor(format, context_format) };
}

export function toInspectRequest(request: HttpInspectRequest): BundleRequest {
  const { q, context_format, ...rest } = request;
  return { ...rest, query: q, format: context_format ?? 'markdown' };
}

export function toBriefingRequest(request: HttpBriefingRequest): BriefingRequest {
  const { format, context_format, granularity, ...rest } = request;
  checkGranularity(format, granularity);
  return { ...rest, format: contextFormatFor(format, context_format) };
}

/** How a query-string parameter is decoded before the schema checks it. */
type Kind = 'number' | 'boolean' | 'list' | 'json';

export const BUNDLE_QUERY_KINDS: Readonly<Record<string, Kind>> = {
  budget: 'number',
  limit: 'number',
  max_per_source: 'number',
  min_score: 'number',
  diversity: 'number',
  k: 'number',
  rerank: 'boolean',
  filter: 'json',
};

/** GET /api/citations/stale: `status` may list several (`status=changed,missing`). */
export const STALE_QUERY_KINDS: Readonly<Record<string, Kind>> = { limit: 'number', status: 'list' };

export const BRIEFING_QUERY_KINDS: Readonly<Record<string, Kind>> = {
  ...BUNDLE_QUERY_KINDS,
  pins: 'list',
  clusters: 'list',
  tier_weights: 'json',
};

const NUMBER = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * Turns a parsed query string into the values the schema expects. A value that cannot be decoded is
 * left as it is, so the schema rejects it with a message naming the parameter (`budget must be a whole
 * number`). Lists are comma-separated and may also be repeated (`pins=a,b&pins=c`).
 */
export function decodeQuery(query: unknown, kinds: Readonly<Record<string, Kind>>): Record<string, unknown> {
  if (typeof query !== 'object' || query === null) return {};
  // Own keys only, and entries rather than assignment: `constructor` or `__proto__` in a query string are
  // parameters like any other (unknown ones, refused by name), never the object's own machinery.
  const decoded = Object.entries(query as Record<string, unknown>).map(([name, raw]): [string, unknown] => {
    const kind = Object.hasOwn(kinds, name) ? kinds[name] : undefined;
    if (kind === 'list') {
      const parts = (Array.isArray(raw) ? raw : [raw]).flatMap((value) => String(value).split(','));
      return [name, parts.map((part) => part.trim()).filter((part) => part !== '')];
    }
    if (Array.isArray(raw) || typeof raw !== 'string' || kind === undefined) return [name, raw];
    if (kind === 'number') return [name, NUMBER.test(raw) ? Number(raw) : raw];
    if (kind === 'boolean') return [name, raw === 'true' ? true : raw === 'false' ? false : raw];
    try {
      return [name, JSON.parse(raw) as unknown];
    } catch {
      return [name, raw];
    }
  });
  return Object.fromEntries(decoded);
}
