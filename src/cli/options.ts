// The command line's flags and how they become the service's requests. A command owns no defaults, limits or
// messages of its own: flags are passed through as the service's parameters (`--max-per-source` is
// `max_per_source`), the service's schema parses them, and its messages are shown with the flag's name
// (`--budget must be at most 2000000`). `--help` prints the service's defaults and limits.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { LitmPackError, parseOrThrow } from '../base/errors.js';
import { FORMATS, HEADER_STYLES } from '../render/formats.js';
import { DEFAULT_HEADER, ORDERS } from '../core/schemas.js';
import { OpenAICompatibleEmbeddings } from '../embeddings/openai-compatible.js';
import { HttpReranker } from '../refine/rerank.js';
import { RERANK_STAGE, RerankStageSchema, type ParsedRerankStage } from '../refine/stages.js';
import { SEARCH_MODES } from '../store/schemas.js';
import type { EmbeddingsLike } from '../store/embeddings.js';
import type { Store } from '../store/types.js';
import { parseRequest, type RequestIssue } from '../service/errors.js';
import { DEFAULT_LIMITS, type ServiceLimits } from '../service/limits.js';
import type { ServiceContext } from '../service/service.js';
import { ENCODINGS } from '../tokenize/types.js';
import type { z } from 'zod';
import { PAYLOAD_PRESETS } from '../qdrant/presets.js';
import { STORE_HELP, noteReindex, noteUnusedVectors, openStore, withQdrantSettings } from './stores.js';

export const DEFAULT_STORE = '.litm-store';

/** A whole-number flag of the CLI itself (not a service parameter); messages name the flag. */
export function integer(flag: string, bounds: { min?: number; max?: number } = {}) {
  return (value: string) => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${flag} must be a whole number`);
    const parsed = Number(value);
    if (bounds.min !== undefined && parsed < bounds.min) throw new InvalidArgumentError(`${flag} must be at least ${bounds.min}`);
    if (bounds.max !== undefined && parsed > bounds.max) throw new InvalidArgumentError(`${flag} must be at most ${bounds.max}`);
    return parsed;
  };
}

/** An http(s) URL flag. */
export function httpUrl(flag: string, example: string) {
  return (value: string) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InvalidArgumentError(`${flag} must be an http(s) URL, e.g. ${example}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new InvalidArgumentError(`${flag} must be an http(s) URL, e.g. ${example}`);
    return value;
  };
}

export const list = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');

export function jsonFilter(value: string): Record<string, unknown> {
  try {
    return JSON.parse(value) as Record<string, unknown>;
  } catch {
    throw new InvalidArgumentError(
      'filter must be JSON in Qdrant filter form, e.g. {"must":[{"key":"sourceId","match":{"value":"a.md"}}]}',
    );
  }
}

/**
 * A flag's text as the service's parameter: a number when it reads as one (the service checks its range and
 * whether it must be whole), else the text itself (the service says it must be a number).
 */
export function numeric(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  return /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?\s*$/iu.test(value) ? Number(value) : value;
}

/** The service parameters whose flag is not `--` + the parameter in kebab case. */
const FLAG_NAMES: Readonly<Record<string, string>> = { query: 'query', scope_mode: '--scope', candidates: 'candidates' };

function flagOf(parameter: string): string {
  return FLAG_NAMES[parameter] ?? `--${parameter.replace(/_/gu, '-')}`;
}

/** A service message that starts with its parameter's name, with the flag's name instead. */
function withFlag(issue: RequestIssue): string {
  const parameter = issue.path[0];
  if (typeof parameter !== 'string' || !issue.message.startsWith(parameter)) return issue.message;
  return `${flagOf(parameter)}${issue.message.slice(parameter.length)}`;
}

/** Parses a request with the service's schema; a bad one is `invalid_input` whose message names the flags. */
export function serviceRequest<T extends z.ZodType>(schema: T, request: Record<string, unknown>): z.output<T> {
  const defined = Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined));
  try {
    return parseRequest(schema, defined);
  } catch (error) {
    const issues = (error as LitmPackError).details?.requestIssues as RequestIssue[] | undefined;
    if (issues === undefined) throw error;
    throw new LitmPackError('invalid_input', issues.map(withFlag).join('; '), { cause: error, details: { requestIssues: issues } });
  }
}

/** `--budget`'s help: the service's default and largest budget for this kind of request. */
function budgetHelp(kind: 'bundle' | 'briefing' | 'pack', limits: ServiceLimits = DEFAULT_LIMITS): string {
  const [fallback, max] =
    kind === 'bundle'
      ? [limits.bundleDefaultBudget, limits.bundleMaxBudget]
      : kind === 'briefing'
        ? [limits.briefingDefaultBudget, limits.briefingMaxBudget]
        : [limits.packDefaultBudget, limits.packMaxBudget];
  return `token budget for the context (default ${fallback}, at most ${max})`;
}

/** Flags of every command that packs (the service's packing parameters), and the CLI's reranker. */
export interface PackFlags {
  budget?: string;
  format?: string;
  header?: string;
  /** Bundles only (a briefing's order is its zones). */
  order?: string;
  encoding?: string;
  maxPerSource?: string;
  minScore?: string;
  compress?: string;
  /** A rerank endpoint (TEI `/rerank` or Cohere-style `/v1/rerank`); the key comes from LITM_RERANK_API_KEY. */
  rerank?: string;
  rerankProtocol?: 'tei' | 'cohere';
  rerankModel?: string;
  rerankTopN?: number;
  rerankTimeout?: number;
}

export function packOptions(command: Command, kind: 'bundle' | 'briefing' | 'pack'): Command {
  const ordered =
    kind === 'briefing'
      ? command
      : command.option('--order <order>', `block order: ${ORDERS.join(', ')} (default litm)${kind === 'pack' ? '; bundles only' : ''}`);
  return ordered
    .option('--budget <tokens>', budgetHelp(kind))
    .option(
      '--format <format>',
      `context format: ${FORMATS.join(', ')} (default markdown; text shows code, logs and transcripts as written: only a line starting with [n] or = gets a backslash)`,
    )
    .option('--header <style>', `block headers: ${HEADER_STYLES.join(', ')} (default ${DEFAULT_HEADER}); the citations keep every field`)
    .option('--encoding <encoding>', `tokenizer encoding: ${ENCODINGS.join(', ')} (default o200k_base)`)
    .option('--max-per-source <n>', 'at most n items from one source')
    .option('--min-score <score>', 'drop candidates scoring below this')
    .option('--compress <mode>', 'sentences: keep only the sentences most relevant to the query (default none)')
    .option(
      '--rerank <url>',
      'rerank the pool with this endpoint (TEI /rerank or Cohere-style /v1/rerank; key from LITM_RERANK_API_KEY)',
      httpUrl('--rerank', 'http://localhost:8080/rerank'),
    )
    .addOption(new Option('--rerank-protocol <protocol>', 'rerank protocol (default: from the URL)').choices(['tei', 'cohere']))
    .option('--rerank-model <name>', 'model name the rerank service expects')
    .option(
      '--rerank-top-n <n>',
      `how many of the best candidates to rerank (default ${RERANK_STAGE.topN})`,
      integer('--rerank-top-n', { min: 1, max: RERANK_STAGE.maxTopN }),
    )
    .option(
      '--rerank-timeout <ms>',
      `give up on the reranker after this long and keep the retrieval order (default ${RERANK_STAGE.timeoutMs})`,
      integer('--rerank-timeout', { min: 1, max: RERANK_STAGE.maxTimeoutMs }),
    );
}

/** The service's packing parameters from the flags. */
export function packingParameters(flags: PackFlags): Record<string, unknown> {
  return {
    budget: numeric(flags.budget),
    format: flags.format,
    header: flags.header,
    order: flags.order,
    encoding: flags.encoding,
    max_per_source: numeric(flags.maxPerSource),
    min_score: numeric(flags.minScore),
    compress: flags.compress,
  };
}

/** The reranker the flags name, if any (`litm-pack serve` and `mcp` pass their --rerank-url as `rerank`). */
export function rerankStage(
  flags: Pick<PackFlags, 'rerank' | 'rerankProtocol' | 'rerankModel' | 'rerankTopN' | 'rerankTimeout'>,
  urlFlag = '--rerank',
): ParsedRerankStage | undefined {
  if (flags.rerank === undefined) {
    const stray = (
      [
        ['--rerank-protocol', flags.rerankProtocol],
        ['--rerank-model', flags.rerankModel],
        ['--rerank-top-n', flags.rerankTopN],
        ['--rerank-timeout', flags.rerankTimeout],
      ] as const
    ).filter(([, value]) => value !== undefined);
    if (stray.length > 0)
      throw new LitmPackError(
        'invalid_input',
        `${stray.map(([flag]) => flag).join(', ')} ${stray.length === 1 ? 'needs' : 'need'} ${urlFlag} URL`,
      );
    return undefined;
  }
  const apiKey = process.env.LITM_RERANK_API_KEY;
  const reranker = new HttpReranker({
    url: flags.rerank,
    ...(flags.rerankProtocol === undefined ? {} : { protocol: flags.rerankProtocol }),
    ...(flags.rerankModel === undefined ? {} : { model: flags.rerankModel }),
    ...(apiKey ? { apiKey } : {}),
  });
  return parseOrThrow(
    RerankStageSchema,
    {
      reranker,
      ...(flags.rerankTopN === undefined ? {} : { topN: flags.rerankTopN }),
      ...(flags.rerankTimeout === undefined ? {} : { timeoutMs: flags.rerankTimeout }),
    },
    'rerank flags',
  );
}

/**
 * `--store`, and for a qdrant:// store `--preset`, `--tenant` and `--tenancy`, folded into the store spec
 * (`qdrant://host:6333/docs?preset=langchain-js`) before the command runs, so every way a command opens its
 * store sees them.
 */
export function storeOption(command: Command): Command {
  return command
    .option('--store <path>', STORE_HELP, DEFAULT_STORE)
    .addOption(
      new Option('--preset <name>', 'qdrant:// only: the payload shape of a collection another tool wrote (default litm)').choices(
        PAYLOAD_PRESETS,
      ),
    )
    .option('--tenant <id>', 'qdrant:// only: the tenant whose chunks are read and written')
    .addOption(
      new Option('--tenancy <mode>', 'qdrant:// only, with --tenant: how the collection keeps tenants (default payload)').choices([
        'payload',
        'shard-key',
      ]),
    )
    .hook('preAction', (action) => {
      const { store, preset, tenant, tenancy } = action.opts<{ store: string; preset?: string; tenant?: string; tenancy?: string }>();
      action.setOptionValue('store', withQdrantSettings(store, { preset, tenant, tenancy }));
    });
}

/** `--idf-corpus visible`: BM25 scores that reveal nothing about chunks the caller may not read. */
export function idfCorpusOption(command: Command): Command {
  return command.addOption(
    new Option('--idf-corpus <corpus>', 'BM25 IDF over all chunks, or only those the principals may read (embedded store)').choices([
      'all',
      'visible',
    ]),
  );
}

/** Flags naming the embeddings server (OpenAI-compatible `POST /v1/embeddings`), also read from the environment. */
export interface EmbeddingsFlags {
  embeddings?: string;
  embedModel?: string;
}

export function embeddingsOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--embeddings <url>', 'OpenAI-compatible embeddings API (base URL ending in /v1, or its /embeddings endpoint)')
        .env('LITM_EMBEDDINGS_URL')
        .argParser(httpUrl('--embeddings', 'http://localhost:11434/v1')),
    )
    .addOption(new Option('--embed-model <name>', 'embedding model the server runs').env('LITM_EMBEDDINGS_MODEL'));
}

/**
 * The embeddings the flags name, or undefined when none. The API key comes from LITM_EMBEDDINGS_API_KEY only:
 * a key on the command line would be visible to other users and kept in shell history.
 */
export function embeddingsFrom(flags: EmbeddingsFlags): OpenAICompatibleEmbeddings | undefined {
  if (flags.embeddings === undefined && flags.embedModel === undefined) return undefined;
  if (flags.embeddings === undefined) {
    throw new LitmPackError(
      'invalid_input',
      '--embed-model needs --embeddings URL (or LITM_EMBEDDINGS_URL): the server that runs the model',
    );
  }
  if (flags.embedModel === undefined || flags.embedModel.trim() === '') {
    throw new LitmPackError(
      'invalid_input',
      '--embeddings needs --embed-model NAME (or LITM_EMBEDDINGS_MODEL): the model the server should run',
    );
  }
  const apiKey = process.env.LITM_EMBEDDINGS_API_KEY;
  return new OpenAICompatibleEmbeddings({
    url: flags.embeddings,
    model: flags.embedModel,
    ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
  });
}

/** Flags of every command that retrieves from a store before packing. */
export interface RetrieveFlags extends PackFlags, EmbeddingsFlags {
  store: string;
  mode?: string;
  limit?: string;
  principals?: string[];
  allPrincipals?: boolean;
  filter?: Record<string, unknown>;
  json?: boolean;
  diversity?: string;
  idfCorpus?: 'all' | 'visible';
}

export function retrieveOptions(command: Command, limits: ServiceLimits = DEFAULT_LIMITS): Command {
  return idfCorpusOption(embeddingsOptions(storeOption(command)))
    .option('--mode <mode>', `search mode: ${SEARCH_MODES.join(', ')} (default hybrid)`)
    .option('--limit <n>', `candidates to retrieve before packing (default ${limits.defaultPool}, at most ${limits.maxPool})`)
    .option(
      '--principals <list>',
      'comma-separated principals; only chunks they may read (or without an ACL) are searched (default: anonymous, documents without an ACL only)',
      list,
    )
    .option('--all-principals', "read every document, whatever its ACL (the store's owner)")
    .option('--filter <json>', 'Qdrant-style payload filter (JSON)', jsonFilter)
    .option('--diversity <x>', 'MMR in the store: 0 = pure relevance, 1 = maximum diversity (needs embeddings)')
    .option('--json', 'print the canonical JSON pack');
}

/** The service's retrieval parameters from the flags. */
export function retrievalParameters(flags: RetrieveFlags): Record<string, unknown> {
  return { mode: flags.mode, limit: numeric(flags.limit), filter: flags.filter, diversity: numeric(flags.diversity) };
}

/** `--principals` (only what they may read), `--all-principals` (everything), or neither: anonymous. */
export function principalsFrom(flags: { principals?: string[] | undefined; allPrincipals?: boolean | undefined }): string[] | 'all' {
  if (flags.allPrincipals === true) {
    if (flags.principals !== undefined)
      throw new LitmPackError('invalid_input', '--principals and --all-principals exclude each other: give one');
    return 'all';
  }
  return flags.principals ?? [];
}

/**
 * Whom a command acts for and against which store: the store the flags name (opened with their embeddings
 * and IDF corpus), the principals, the embeddings (sentence vectors, centroids) and the CLI's reranker.
 */
export async function serviceContext(flags: RetrieveFlags, store?: Store): Promise<ServiceContext> {
  const embeddings: EmbeddingsLike | undefined = embeddingsFrom(flags);
  const rerank = rerankStage(flags);
  const opened = store ?? (await openStore(flags.store, { embeddings, idfCorpus: flags.idfCorpus }));
  if (embeddings === undefined && store === undefined) noteUnusedVectors(opened);
  if (store === undefined) noteReindex(opened, flags.store);
  return {
    store: opened,
    principals: principalsFrom(flags),
    ...(embeddings === undefined ? {} : { embeddings }),
    ...(rerank === undefined ? {} : { rerank }),
  };
}
