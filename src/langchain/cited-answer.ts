import type { BaseMessage } from '@langchain/core/messages';
import { Runnable, type RunnableConfig } from '@langchain/core/runnables';
import { z } from 'zod';
import { invalidInput, parseOrThrow } from '../base/errors.js';
import type { CitablePack } from '../llm/anthropic.js';
import { resolveAnswer, type CitedAnswer } from '../llm/answer.js';
import { ResolveOptionsSchema } from '../llm/resolve.js';

/** What `CitedAnswerRunnable` takes: the model's message (or its text) and the pack its context came from. */
export interface CitedAnswerInput {
  message: BaseMessage | string;
  pack: CitablePack;
}

const FieldsSchema = ResolveOptionsSchema.extend({
  /** The pack to resolve against when the input is only a message. */
  pack: z.custom<CitablePack>((value) => typeof value === 'object' && value !== null, { message: 'pack must be a pack object' }).optional(),
});
export type CitedAnswerRunnableFields = z.input<typeof FieldsSchema>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A streamed message's content as Anthropic's text blocks. `@langchain/anthropic` streams text as plain strings
 * and each block's citations as a separate text part carrying the block's `index` and no text; concatenated,
 * a block's citations come right before its text. They are put back together: the text after a citations part
 * (up to the next part with an `index`) is that block's. The stream keeps no boundary between a cited block
 * and an uncited one after it, so such a block's text may run on; its citations are unaffected.
 */
function joinStreamedBlocks(content: unknown): unknown {
  if (!Array.isArray(content) || !content.some((part) => isRecord(part) && Array.isArray(part.citations) && typeof part.text !== 'string'))
    return content;
  const blocks: Record<string, unknown>[] = [];
  let open: Record<string, unknown> | undefined;
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && Array.isArray(part.citations) && typeof part.text !== 'string') {
      open = { type: 'text', text: '', citations: [...(part.citations as unknown[])] };
      blocks.push(open);
    } else if (part.type === 'text' && typeof part.text === 'string' && part.index === undefined && open !== undefined) {
      open.text = `${open.text as string}${part.text}`;
    } else {
      open = undefined;
      blocks.push(part);
    }
  }
  return blocks;
}

const isMessageLike = (value: unknown): value is BaseMessage =>
  typeof value === 'object' && value !== null && 'content' in value && !('pack' in value);

/**
 * Takes the chat model's message and returns the answer with its citations resolved against the pack:
 * Claude's citations of search results or documents (from `@langchain/anthropic`, whose `AIMessage.content` keeps
 * Anthropic's text blocks with their `citations`), or any model's `[n]` markers and quotes. The input is
 * `{ message, pack }` (so one chain serves every question), or a message alone when the pack was given here.
 *
 * Note: `@langchain/anthropic` turns a response of exactly one text block into a plain string and drops its
 * citations; such a message is read for `[n]` markers.
 *
 * @example
 * ```typescript
 * const chain = RunnableSequence.from([
 *   async (question: string) => ({ question, ...(await retriever.retrieveWithCitations(question)) }),
 *   RunnablePassthrough.assign({ message: async ({ question, pack }) =>
 *     model.invoke([new HumanMessage({ content: [...toAnthropicSearchResults(pack), { type: 'text', text: question }] })]) }),
 *   new CitedAnswerRunnable(),
 * ]);
 * const { text, blocks, verified } = await chain.invoke('How are refunds paid?');
 * ```
 */
export class CitedAnswerRunnable extends Runnable<CitedAnswerInput | BaseMessage | string, CitedAnswer> {
  lc_namespace = ['litm_pack', 'runnables'];

  static override lc_name(): string {
    return 'CitedAnswerRunnable';
  }

  readonly #pack: CitablePack | undefined;
  readonly #options: z.output<typeof ResolveOptionsSchema>;

  constructor(fields: CitedAnswerRunnableFields = {}) {
    super();
    const { pack, ...options } = parseOrThrow(FieldsSchema, fields, 'CitedAnswerRunnable options');
    this.#pack = pack;
    this.#options = options;
  }

  #resolve(input: CitedAnswerInput | BaseMessage | string): CitedAnswer {
    const withPack = typeof input === 'object' && input !== null && 'pack' in input ? input : undefined;
    const pack = withPack?.pack ?? this.#pack;
    if (pack === undefined)
      throw invalidInput('CitedAnswerRunnable needs a pack: give { message, pack } as input, or new CitedAnswerRunnable({ pack })', [
        'pack',
      ]);
    const message = withPack !== undefined ? withPack.message : input;
    if (typeof message !== 'string' && !isMessageLike(message))
      throw invalidInput('CitedAnswerRunnable takes a chat message, its text, or { message, pack }', ['message']);
    return resolveAnswer(pack, typeof message === 'string' ? message : { content: joinStreamedBlocks(message.content) }, this.#options);
  }

  override async invoke(input: CitedAnswerInput | BaseMessage | string, options?: Partial<RunnableConfig>): Promise<CitedAnswer> {
    return this._callWithConfig((value: CitedAnswerInput | BaseMessage | string) => Promise.resolve(this.#resolve(value)), input, options);
  }
}
