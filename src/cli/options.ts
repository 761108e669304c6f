// Flag parsers and the option groups several commands share. Messages name the flag as the user typed it.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { LitmPackError } from '../base/errors.js';
import { MAX_BUDGET_TOKENS, type PackFormat } from '../core/schemas.js';
import { OpenAICompatibleEmbeddings } from '../embeddings/openai-compatible.js';
import { SEARCH_MODES } from '../retrieve/schemas.js';
import type { Filter, SearchMode } from '../retrieve/types.js';
import type { EncodingName } from '../tokenize/types.js';

export const DEFAULT_STORE = '.litm-store';

/** Largest `--limit` (the stores' own bound on one search). */
export const MAX_SEARCH_LIMIT = 10_000;

/** A whole-number flag within bounds; messages name the flag (`--budget must be at least 1`). */
export function integer(flag: string, bounds: { min?: number; max?: number } = {}) {
  return (value: string) => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${flag} must be a whole number`);
    const parsed = Number(value);
    if (bounds.min !== undefined && parsed < bounds.min) throw new InvalidArgumentError(`${flag} must be at least ${bounds.min}`);
    if (bounds.max !== undefined && parsed > bounds.max) throw new InvalidArgumentError(`${flag} must be at most ${bounds.max}`);
    return parsed;
  };
}

export function number(flag: string) {
  return (value: string) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) throw new InvalidArgumentError(`${flag} must be a number`);
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
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError(`${flag} must be an http(s) URL, e.g. ${example}`);
    return value;
  };
}

export const list = (value: string) => value.split(',').map((v) => v.trim()).filter((v) => v !== '');

export function jsonFilter(value: string): Filter {
  try {
    return JSON.parse(value) as Filter;
  } catch {
    throw new InvalidArgumentError('filter must be JSON in Qdrant filter form, e.g. {"must":[{"key":"sourceId","match":{"value":"a.md"}}]}');
  }
}

/** Flags of every command that packs. */
export interface PackFlags {
  budget: number;
  kind?: 'bundle' | 'briefing';
  format: PackFormat;
  encoding: EncodingName;
  pins?: string[];
  maxPerSource?: number;
  minScore?: number;
  /** `sentences`: query-aware sentence selection (BM25, blended with the sentence vectors of --embeddings when given). */
  compress?: 'sentences';
  /** A rerank endpoint (TEI `/rerank` or Cohere-style `/v1/rerank`); the key comes from LITM_RERANK_API_KEY. */
  rerank?: string;
  rerankProtocol?: 'tei' | 'cohere';
  rerankModel?: string;
  rerankTopN?: number;
  rerankTimeout?: number;
}

/** Flags of every command that retrieves from a store before packing. */
export interface RetrieveFlags extends PackFlags, EmbeddingsFlags {
  store: string;
  mode: SearchMode;
  limit: number;
  principals?: string[];
  filter?: Filter;
  json?: boolean;
  diversity?: number;
  idfCorpus?: 'all' | 'visible';
}

export function packOptions(command: Command, defaults: { budget: number }): Command {
  return command
    .option('--budget <tokens>', 'token budget for the context', integer('--budget', { min: 1, max: MAX_BUDGET_TOKENS }), defaults.budget)
    .addOption(new Option('--format <format>', 'context format').choices(['markdown', 'xml', 'text']).default('markdown'))
    .addOption(new Option('--encoding <encoding>', 'tokenizer encoding').choices(['o200k_base', 'cl100k_base']).default('o200k_base'))
    .option('--max-per-source <n>', 'at most n items from one source', integer('--max-per-source', { min: 1 }))
    .option('--min-score <score>', 'drop candidates scoring below this', number('--min-score'))
    .addOption(new Option('--compress <mode>', 'keep only the sentences most relevant to the query').choices(['sentences']))
    .option('--rerank <url>', 'rerank the pool with this endpoint (TEI /rerank or Cohere-style /v1/rerank; key from LITM_RERANK_API_KEY)')
    .addOption(new Option('--rerank-protocol <protocol>', 'rerank protocol (default: from the URL)').choices(['tei', 'cohere']))
    .option('--rerank-model <name>', 'model name the rerank service expects')
    .option('--rerank-top-n <n>', 'how many of the best candidates to rerank (default 50)', integer('--rerank-top-n', { min: 1, max: 1000 }))
    .option('--rerank-timeout <ms>', 'give up on the reranker after this long and keep the retrieval order (default 10000)', integer('--rerank-timeout', { min: 1, max: 600_000 }));
}

export function storeOption(command: Command): Command {
  return command.option('--store <dir>', 'store directory, or qdrant://host:6333/collection', DEFAULT_STORE);
}

/** `--idf-corpus visible`: BM25 scores that reveal nothing about chunks the caller may not read. */
export function idfCorpusOption(command: Command): Command {
  return command.addOption(
    new Option('--idf-corpus <corpus>', 'BM25 IDF over all chunks, or only those the principals may read (embedded store)').choices(['all', 'visible']),
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
    throw new LitmPackError('invalid_input', '--embed-model needs --embeddings URL (or LITM_EMBEDDINGS_URL): the server that runs the model');
  }
  if (flags.embedModel === undefined || flags.embedModel.trim() === '') {
    throw new LitmPackError('invalid_input', '--embeddings needs --embed-model NAME (or LITM_EMBEDDINGS_MODEL): the model the server should run');
  }
  const apiKey = process.env.LITM_EMBEDDINGS_API_KEY;
  return new OpenAICompatibleEmbeddings({
    url: flags.embeddings,
    model: flags.embedModel,
    ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
  });
}

export function retrieveOptions(command: Command): Command {
  return idfCorpusOption(embeddingsOptions(storeOption(command)))
    .addOption(new Option('--mode <mode>', 'search mode').choices(SEARCH_MODES).default('hybrid'))
    .option('--limit <n>', 'candidates to retrieve before packing', integer('--limit', { min: 1, max: MAX_SEARCH_LIMIT }), 50)
    .option('--principals <list>', 'comma-separated principals; only chunks they may read are searched', list)
    .option('--filter <json>', 'Qdrant-style payload filter (JSON)', jsonFilter)
    .option('--diversity <x>', 'MMR in the store: 0 = pure relevance, 1 = maximum diversity (needs embeddings)', number('--diversity'))
    .option('--json', 'print the canonical JSON pack');
}
