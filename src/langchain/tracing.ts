import { dispatchCustomEvent } from '@langchain/core/callbacks/dispatch/web';
import type { Callbacks } from '@langchain/core/callbacks/manager';
import { RunnableLambda, type RunnableConfig } from '@langchain/core/runnables';
import type { Candidate } from '../core/schemas.js';
import type { PipelineHooks } from '../pipeline/bundle.js';
import type { RetrieveRequest } from '../pipeline/retrieve.js';
import { summarizePack } from '../adapters/packing.js';
import { assembleBriefing, type Briefing, type BriefingRequest } from '../pipeline/briefing.js';

/** Name of the custom event that carries a `PackSummary` (budget, coverage, dropped counts). */
export const PACK_SUMMARY_EVENT = 'litm_pack_summary';
/** Run names of the child runs the retrievers and the compressor open. */
export const SEARCH_RUN_NAME = 'LitmSearch';
export const PACK_RUN_NAME = 'LitmPack';
const BRIEFING_RUN_NAME = 'LitmBriefing';

/**
 * The pipeline's hooks that run its steps as child runs, so the request, the candidate pool and the pack show
 * up in traces: retrieval as `LitmSearch` (the run config's abort signal is passed to the store), packing as
 * `LitmPack`, which also dispatches a `litm_pack_summary` custom event with the budget used, coverage and
 * dropped counts.
 */
export function childRunHooks(callbacks: { search?: Callbacks | undefined; pack?: Callbacks | undefined }): PipelineHooks {
  return {
    retrieve: (request, run) =>
      RunnableLambda.from((input: RetrieveRequest, config?: RunnableConfig) =>
        run(config?.signal === undefined ? input : { ...input, signal: config.signal }),
      )
        .withConfig({ runName: SEARCH_RUN_NAME })
        .invoke(request, { callbacks: callbacks.search }),
    pack: (input, run) =>
      RunnableLambda.from(async (_input: { query: string; candidates: Candidate[] }, config?: RunnableConfig) => {
        const pack = run();
        if (config !== undefined) await dispatchCustomEvent(PACK_SUMMARY_EVENT, summarizePack(pack), config);
        return pack;
      })
        .withConfig({ runName: PACK_RUN_NAME })
        .invoke(input, { callbacks: callbacks.pack }),
  };
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
