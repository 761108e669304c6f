import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import type { Pack } from '../../core/schemas.js';
import { preparePacking, retrieveCandidates } from '../../pipeline/retrieve.js';
import type { Store } from '../../retrieve/types.js';
import { printPack } from '../io.js';
import { embeddingsFrom, packOptions, retrieveOptions, type RetrieveFlags } from '../options.js';
import { noteUnusedVectors, openStore } from '../stores.js';
import { compressStage } from '../../refine/stages.js';
import { packWith, rerankStage } from './pack.js';

/** Retrieves from the store the flags name and packs (bundle or briefing, by `flags.kind`). */
export async function retrieveAndPack(query: string, flags: RetrieveFlags): Promise<Pack> {
  if (query.trim() === '') throw new LitmPackError('invalid_input', 'The query must not be empty');
  const embeddings = embeddingsFrom(flags);
  if (flags.mode === 'dense' && embeddings === undefined) {
    throw new LitmPackError('invalid_input', '--mode dense needs --embeddings URL --embed-model NAME (or LITM_EMBEDDINGS_URL and LITM_EMBEDDINGS_MODEL)');
  }
  const store = await openStore(flags.store, { embeddings, idfCorpus: flags.idfCorpus });
  if (embeddings === undefined && flags.mode === 'hybrid') noteUnusedVectors(store);
  return retrieveAndPackFrom(store, query, flags, embeddings);
}

/** Retrieves from an open store and packs. */
export async function retrieveAndPackFrom(store: Store, query: string, flags: RetrieveFlags, embeddings = embeddingsFrom(flags)): Promise<Pack> {
  const retrieved = await retrieveCandidates(store, {
    text: query,
    mode: flags.mode,
    limit: flags.limit,
    filter: flags.filter,
    principals: flags.principals,
    diversity: flags.diversity,
    rerank: rerankStage(flags),
  });
  const inputs = await preparePacking(query, retrieved, compressStage(flags.compress, embeddings, 'compress flag'));
  return packWith(flags, query, retrieved.candidates, inputs);
}

export function registerBundle(program: Command): void {
  retrieveOptions(packOptions(program.command('bundle').description('retrieve and print a LITM bundle with citations').argument('<query>'), { budget: 2000 })).action(
    async (query: string, flags: RetrieveFlags) => {
      printPack(await retrieveAndPack(query, { ...flags, kind: 'bundle' }), flags.json === true);
    },
  );
}
