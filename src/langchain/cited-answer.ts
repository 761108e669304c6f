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

const isMessageLike = (value: unknown): value is BaseMessage => typeof value === 'object' && value !== null && 'content' in value && !('pack' in value);

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
    if (pack === undefined) throw invalidInput('CitedAnswerRunnable needs a pack: give { message, pack } as input, or new CitedAnswerRunnable({ pack })', ['pack']);
    const message = withPack !== undefined ? withPack.message : input;
    if (typeof message !== 'string' && !isMessageLike(message)) throw invalidInput('CitedAnswerRunnable takes a chat message, its text, or { message, pack }', ['message']);
    return resolveAnswer(pack, typeof message === 'string' ? message : { content: message.content }, this.#options);
  }

  override async invoke(input: CitedAnswerInput | BaseMessage | string, options?: Partial<RunnableConfig>): Promise<CitedAnswer> {
    return this._callWithConfig((value: CitedAnswerInput | BaseMessage | string) => Promise.resolve(this.#resolve(value)), input, options);
  }
}
