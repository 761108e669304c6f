import { dispatchCustomEvent } from '@langchain/core/callbacks/dispatch/web';
import type { Callbacks } from '@langchain/core/callbacks/manager';
import { RunnableLambda, type RunnableConfig } from '@langchain/core/runnables';
import type { Candidate, Pack } from '../core/schemas.js';
import { retrieveCandidates, type RetrieveRequest, type Retrieved } from '../pipeline/retrieve.js';
import type { Store } from '../retrieve/types.js';
import { summarizePack } from '../adapters/packing.js';
import { assembleBriefing, type Briefing, type BriefingRequest } from '../pipeline/briefing.js';

/** Name of the custom event that carries a `PackSummary` (budget, coverage, dropped counts). */
export const PACK_SUMMARY_EVENT = 'litm_pack_summary';
/** Run names of the child runs the retrievers and the compressor open. */
export const SEARCH_RUN_NAME = 'LitmSearch';
export const PACK_RUN_NAME = 'LitmPack';
export const BRIEFING_RUN_NAME = 'LitmBriefing';

interface PackRunInput {
  query: string;
  candidates: Candidate[];
}

/**
 * Runs retrieval (the pipeline every surface shares) as a child run (`LitmSearch`) so the request and the
 * candidate pool show up in traces. The run config's abort signal is passed to the store.
 */
export function searchAsChildRun(store: Store, request: RetrieveRequest, callbacks: Callbacks | undefined): Promise<Retrieved> {
  const search = RunnableLambda.from((input: RetrieveRequest, config?: RunnableConfig) =>
    retrieveCandidates(store, config?.signal === undefined ? input : { ...input, signal: config.signal }),
  ).withConfig({ runName: SEARCH_RUN_NAME });
  return search.invoke(request, { callbacks });
}

/**
 * Runs the (synchronous, pure) packer as a child run (`LitmPack`): its output is the whole pack, and it
 * dispatches a `litm_pack_summary` custom event with the budget used, coverage and dropped counts.
 */
export function packAsChildRun(
  query: string,
  candidates: Candidate[],
  pack: (query: string, candidates: Candidate[]) => Pack,
  callbacks: Callbacks | undefined,
): Promise<Pack> {
  const packRun = RunnableLambda.from(async (input: PackRunInput, config?: RunnableConfig) => {
    const result = pack(input.query, input.candidates);
    if (config !== undefined) await dispatchCustomEvent(PACK_SUMMARY_EVENT, summarizePack(result), config);
    return result;
  }).withConfig({ runName: PACK_RUN_NAME });
  return packRun.invoke({ query, candidates }, { callbacks });
}

/**
 * Runs `assembleBriefing` (pin and cluster reads, the prompt's search, packing) as a child run
 * (`LitmBriefing`) and dispatches the `litm_pack_summary` event for its pack.
 */
export function briefingAsChildRun(request: BriefingRequest, callbacks: Callbacks | undefined): Promise<Briefing> {
  const run = RunnableLambda.from(async (input: BriefingRequest, config?: RunnableConfig) => {
    const signal = input.signal ?? config?.signal;
    const briefing = await assembleBriefing(signal === undefined ? input : { ...input, signal });
    if (config !== undefined) await dispatchCustomEvent(PACK_SUMMARY_EVENT, summarizePack(briefing.pack), config);
    return briefing;
  }).withConfig({ runName: BRIEFING_RUN_NAME });
  return run.invoke(request, { callbacks });
}
