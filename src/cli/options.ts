// Flag parsers and the option groups several commands share. Messages name the flag as the user typed it.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { PackFormat } from '../core/schemas.js';
import type { Filter, SearchMode } from '../retrieve/types.js';
import type { EncodingName } from '../tokenize/types.js';

export const DEFAULT_STORE = '.litm-store';

export function integer(name: string) {
  return (value: string) => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${name} must be a whole number`);
    return Number(value);
  };
}

export function number(name: string) {
  return (value: string) => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) throw new InvalidArgumentError(`${name} must be a number`);
    return parsed;
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
}

/** Flags of every command that retrieves from a store before packing. */
export interface RetrieveFlags extends PackFlags {
  store: string;
  mode: SearchMode;
  limit: number;
  principals?: string[];
  filter?: Filter;
  json?: boolean;
  idfCorpus?: 'all' | 'visible';
}

export function packOptions(command: Command, defaults: { budget: number }): Command {
  return command
    .option('--budget <tokens>', 'token budget for the context', integer('budget'), defaults.budget)
    .addOption(new Option('--format <format>', 'context format').choices(['markdown', 'xml', 'text']).default('markdown'))
    .addOption(new Option('--encoding <encoding>', 'tokenizer encoding').choices(['o200k_base', 'cl100k_base']).default('o200k_base'))
    .option('--max-per-source <n>', 'at most n items from one source', integer('max-per-source'))
    .option('--min-score <score>', 'drop candidates scoring below this', number('min-score'));
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

export function retrieveOptions(command: Command): Command {
  return idfCorpusOption(storeOption(command))
    .addOption(new Option('--mode <mode>', 'search mode').choices(['hybrid', 'dense', 'lexical']).default('hybrid'))
    .option('--limit <n>', 'candidates to retrieve before packing', integer('limit'), 50)
    .option('--principals <list>', 'comma-separated principals; only chunks they may read are searched', list)
    .option('--filter <json>', 'Qdrant-style payload filter (JSON)', jsonFilter)
    .option('--json', 'print the canonical JSON pack');
}
