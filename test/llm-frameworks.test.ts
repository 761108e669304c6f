// The citation loop inside the frameworks: a real ChatAnthropic (its HTTP answered with the Messages API's
// documented JSON and event stream, no network) whose AIMessage goes through CitedAnswerRunnable; a LlamaIndex
// response over nodes LitmPostprocessor packed, resolved from its source nodes alone.
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, AIMessageChunk, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { EngineResponse, TextNode, type NodeWithScore } from '@llamaindex/core/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Pack } from '../src/core/schemas.js';
import { CitedAnswerRunnable } from '../src/langchain/index.js';
import { LitmPostprocessor, resolveResponseCitations } from '../src/llamaindex/index.js';
import { assertAnthropicRequest, toAnthropicSearchResults, type AnthropicSearchResultBlock } from '../src/llm/index.js';
import { loadCorpus, messageResponse, searchResultCitation, type Corpus } from './helpers/llm-packs.js';

let corpus: Corpus;
let pack: Pack;
let results: AnthropicSearchResultBlock[];
beforeAll(async () => {
  corpus = await loadCorpus();
  pack = await corpus.bundle('How are token budgets counted exactly?');
  results = toAnthropicSearchResults(pack);
});

/** A ChatAnthropic whose HTTP requests are answered by `answer` (the request body is kept). */
function chatModel(answer: (body: Record<string, unknown>) => Response) {
  const requests: Record<string, unknown>[] = [];
  const model = new ChatAnthropic({
    model: 'claude-sonnet-4-5-20250929',
    apiKey: 'sk-ant-test',
    maxRetries: 0,
    clientOptions: {
      fetch: (_url: unknown, init?: { body?: unknown }) => {
        const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
        requests.push(body);
        return Promise.resolve(answer(body));
      },
    },
  });
  return { model, requests };
}

const json = (value: unknown) =>
  new Response(JSON.stringify(value), { status: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_1' } });

/** The documented event stream of a response with cited text blocks (citations arrive as `citations_delta`). */
function eventStream(content: { text: string; citations: unknown[] | null }[]): Response {
  const events: [string, unknown][] = [
    [
      'message_start',
      {
        type: 'message_start',
        message: { ...messageResponse([]), content: [], stop_reason: null, usage: { input_tokens: 2095, output_tokens: 1 } },
      },
    ],
  ];
  content.forEach((block, index) => {
    events.push([
      'content_block_start',
      {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '', ...(block.citations === null ? {} : { citations: [] }) },
      },
    ]);
    for (const citation of block.citations ?? [])
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'citations_delta', citation } }]);
    events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push([
    'message_delta',
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 40 } },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);
  const body = events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('');
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

describe('LangChain: CitedAnswerRunnable', () => {
  const cited = () => [
    { type: 'text', text: 'Token counts are not additive: ', citations: null },
    { type: 'text', text: 'joining strings can change the count', citations: [searchResultCitation(results, 0, 0, 2)] },
    { type: 'text', text: ', and the budget is re-counted on the whole context.', citations: [searchResultCitation(results, 1, 0, 1)] },
  ];

  it('sends the search results through ChatAnthropic unchanged and resolves the AIMessage’s citations against the pack', async () => {
    const { model, requests } = chatModel(() => json(messageResponse(cited())));
    const message = await model.invoke([new HumanMessage({ content: [...results, { type: 'text', text: pack.query }] })]);
    expect(requests).toHaveLength(1);
    expect(assertAnthropicRequest(requests[0])).toEqual({ searchResults: results.length, documents: 0 });
    const sent = (requests[0]!.messages as { content: unknown[] }[])[0]!.content;
    expect(sent.slice(0, results.length)).toEqual(results);

    const answer = await new CitedAnswerRunnable().invoke({ message, pack });
    expect(answer.via).toBe('anthropic');
    expect(answer.text).toBe(
      cited()
        .map((b) => b.text)
        .join(''),
    );
    expect(answer.verified).toBe(true);
    const citations = answer.blocks.flatMap((b) => b.citations);
    expect(citations.map((c) => [c.ref, c.chunkId, c.textSha256])).toEqual([
      [1, pack.citations[0]!.chunkId, pack.citations[0]!.textSha256],
      [2, pack.citations[1]!.chunkId, pack.citations[1]!.textSha256],
    ]);
  });

  it('works in a chain with the pack given once, and resolves a streamed answer (citations_delta events) the same way', async () => {
    const { model } = chatModel((body) => (body.stream === true ? eventStream(cited()) : json(messageResponse(cited()))));
    const chain = RunnableLambda.from((question: string) => [new HumanMessage({ content: [...results, { type: 'text', text: question }] })])
      .pipe(model)
      .pipe(new CitedAnswerRunnable({ pack }));
    const viaChain = await chain.invoke(pack.query);
    expect(viaChain.verified).toBe(true);

    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await model.stream([new HumanMessage({ content: [...results, { type: 'text', text: pack.query }] })]))
      streamed = streamed === undefined ? chunk : streamed.concat(chunk);
    const fromStream = await new CitedAnswerRunnable({ pack }).invoke(streamed as BaseMessage);
    expect(fromStream.via).toBe('anthropic');
    expect(fromStream.blocks.flatMap((b) => b.citations).map((c) => [c.ref, c.verified])).toEqual([
      [1, true],
      [2, true],
    ]);
  });

  it('a forged cited_text from the model comes back unverified, not as an error', async () => {
    const forged = cited();
    (forged[1]!.citations as { cited_text: string }[])[0]!.cited_text = 'Budgets are summed per passage.';
    const { model } = chatModel(() => json(messageResponse(forged)));
    const answer = await new CitedAnswerRunnable({ pack }).invoke(await model.invoke('q'));
    expect(answer.verified).toBe(false);
    expect(answer.blocks[1]!.citations[0]).toMatchObject({ ref: 1, verified: false });
  });

  it('any other model’s [n] answer is checked instead (a plain AIMessage), and a missing pack is a typed error', async () => {
    const quote = pack.items[0]!.text.split('. ')[0]!;
    const answer = await new CitedAnswerRunnable({ pack }).invoke(new AIMessage(`Per the docs, "${quote}" [1].`));
    expect(answer.via).toBe('markers');
    expect(answer.check).toMatchObject({ ok: true, unknownRefs: [] });
    expect(answer.verified).toBe(true);
    await expect(new CitedAnswerRunnable().invoke(new AIMessage('x [1]'))).rejects.toThrow(/needs a pack/u);
  });
});

describe('LlamaIndex: resolveResponseCitations', () => {
  it('resolves a query engine response’s [n] citations from its packed source nodes alone', async () => {
    const input: NodeWithScore[] = pack.items.map((item, i) => ({
      node: new TextNode({ id_: `n${i}`, text: item.text, metadata: { source: pack.citations[i]!.sourceId } }),
      score: item.score,
    }));
    const { nodes, pack: packed } = await new LitmPostprocessor({ maxTokens: 600 }).postprocessWithCitations(input, pack.query);
    const first = packed.items[0]!;
    const quote = first.text.split(/(?<=\.)\s/u)[0]!.replace(/\.$/u, '');
    const response = EngineResponse.fromResponse(`It says "${quote}" [1]. Also "a sentence no source has" [2].`, false, nodes);
    const resolved = resolveResponseCitations(response);
    expect(resolved.via).toBe('markers');
    const [ok, invented] = resolved.blocks[0]!.citations;
    expect(ok).toMatchObject({ ref: 1, verified: true, chunkId: packed.citations[0]!.chunkId, citedText: quote });
    expect(invented).toMatchObject({ ref: 2, verified: false });
    // The same answer against the pack itself gives the same citations.
    expect(resolveResponseCitations(response, { pack: packed }).blocks).toEqual(resolved.blocks);
  });

  it('nodes without citations make no items (their [n] stay unresolved); nodes of two packs are refused, naming options.pack', async () => {
    const stray = EngineResponse.fromResponse('x [1]', false, [{ node: new TextNode({ text: 'loose' }), score: 1 }]);
    expect(resolveResponseCitations(stray).blocks[0]!.citations[0]).toMatchObject({ ref: null, verified: false });
    const processor = new LitmPostprocessor({ maxTokens: 600 });
    const a = await processor.postprocessNodes([{ node: new TextNode({ id_: 'a', text: 'Refunds take 14 days.' }), score: 1 }], 'refunds');
    const b = await processor.postprocessNodes([{ node: new TextNode({ id_: 'b', text: 'Shipping is free.' }), score: 1 }], 'shipping');
    const mixed = EngineResponse.fromResponse('x [1]', false, [...a, ...b]);
    expect(() => resolveResponseCitations(mixed)).toThrow(/not the items of one pack.*options\.pack/u);
  });
});
