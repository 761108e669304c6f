// The provider-neutral path ([n] markers and quotes checked against the pack), evaluation samples in rank
// order with each harness's documented field names, and the pack as the AI SDK's source-document parts
// (checked by the AI SDK itself).
import { createUIMessageStream, readUIMessageStream, validateUIMessages, type UIMessage } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { packBundle } from '../src/core/bundle.js';
import type { Pack } from '../src/core/schemas.js';
import {
  checkAnswerCitations,
  citationInstructions,
  resolveAnswer,
  toAiSdkSources,
  toDeepEvalTestCase,
  toEvalSample,
  toPromptfooTestCase,
  toRagasSample,
} from '../src/llm/index.js';
import { loadCorpus, type Corpus } from './helpers/llm-packs.js';

/** Four items ranked 1..4 by score; LITM order puts them at refs 1, 4, 2, 3 ([1] rank 1, [2] rank 3, [3] rank 4, [4] rank 2). */
const pack: Pack = packBundle({
  query: 'How are refunds paid?',
  candidates: [
    {
      id: 'refunds',
      text: 'Refunds are paid to the original payment method within 14 days. Store credit is never forced on a customer.',
      score: 0.9,
      sourceId: 'refunds.md',
      span: { start: 100, end: 209 },
    },
    { id: 'returns', text: 'Returns are accepted within 30 days with the receipt.', score: 0.8, sourceId: 'returns.md' },
    { id: 'gift', text: 'Gift cards are never refunded and do not expire.', score: 0.7, sourceId: 'giftcards.md' },
    { id: 'loyalty', text: 'Loyalty points are removed when an order is refunded.', score: 0.6, sourceId: 'loyalty.md' },
  ],
  maxTokens: 400,
});

describe('checkAnswerCitations', () => {
  it('the pack is laid out as the test assumes (LITM: rank 1 first, rank 2 last)', () => {
    expect(pack.items.map((i) => [i.ref, i.id, i.rank])).toEqual([
      [1, 'refunds', 1],
      [2, 'gift', 3],
      [3, 'loyalty', 4],
      [4, 'returns', 2],
    ]);
  });

  it('accepts a well-cited answer: known refs, quotes found in the cited item (quote marks, case and whitespace aside)', () => {
    const answer =
      'Refunds go back to the card: “paid to the original  payment method” [1]. Gift cards are an exception, "never refunded" [2]. Returns need a receipt [4].';
    const check = checkAnswerCitations(pack, answer);
    expect(check).toEqual({
      refs: [
        { ref: 1, known: true },
        { ref: 2, known: true },
        { ref: 4, known: true },
      ],
      unknownRefs: [],
      quotes: [
        { text: 'paid to the original  payment method', ref: 1, found: true },
        { text: 'never refunded', ref: 2, found: true },
      ],
      uncitedSentences: [],
      ok: true,
    });
  });

  it('catches unknown refs, a quote that is in another item but not the cited one, an invented quote, uncited sentences', () => {
    const answer = [
      'Refunds are paid within 14 days [1].',
      'Gift cards "do not expire" [3].', // in item 2, not item 3
      'The shop "refunds twice the price" [1].', // in no item
      'Points are kept forever.', // cites nothing
      'See also the warranty [7, 9].',
    ].join(' ');
    const check = checkAnswerCitations(pack, answer);
    expect(check.refs).toEqual([
      { ref: 1, known: true },
      { ref: 3, known: true },
      { ref: 7, known: false },
      { ref: 9, known: false },
    ]);
    expect(check.unknownRefs).toEqual([7, 9]);
    expect(check.quotes).toEqual([
      { text: 'do not expire', ref: 3, found: false },
      { text: 'refunds twice the price', ref: 1, found: false },
    ]);
    expect(check.uncitedSentences).toEqual(['Points are kept forever.']);
    expect(check.ok).toBe(false);
  });

  it('reads [1][2], [1-3] and a marker after the full stop; quotes with an ellipsis match their parts in order; links and footnotes are no markers', () => {
    const check = checkAnswerCitations(
      pack,
      'Refunds "are paid … within 14 days" [1][4]. Several rules apply. [2-3] See [the policy](https://x.example) and note[^1].',
    );
    expect(check.refs.map((r) => r.ref)).toEqual([1, 4, 2, 3]);
    expect(check.quotes).toEqual([{ text: 'are paid … within 14 days', ref: 1, found: true }]);
    expect(check.uncitedSentences).toEqual(['See [the policy](https://x.example) and note[^1].']);
  });

  it('a quote with several refs belongs to the first item that has it', () => {
    expect(checkAnswerCitations(pack, 'Receipts: "accepted within 30 days" [1, 4].').quotes).toEqual([
      { text: 'accepted within 30 days', ref: 4, found: true },
    ]);
  });

  it('rejects a non-string answer and a non-pack with a typed error', () => {
    expect(() => checkAnswerCitations(pack, 42 as never)).toThrow(/the answer must be a string/u);
    expect(() => checkAnswerCitations({} as never, 'x')).toThrow(/Invalid pack/u);
  });
});

describe('citationInstructions', () => {
  it('asks for [n] after each sentence and exact quotes, naming the range of refs of this pack', () => {
    const text = citationInstructions(pack);
    expect(text).toContain('[1] to [4]');
    expect(text).toMatch(/"the exact words" \[2\]/u);
    expect(text).toMatch(/say so instead of answering from memory/u);
    const xml = citationInstructions(
      packBundle({ query: 'q', candidates: [{ id: 'a', text: 'A.', score: 1 }], maxTokens: 100, format: 'xml' }),
    );
    expect(xml).toContain('<document index="n">');
    expect(citationInstructions(packBundle({ query: 'q', candidates: [], maxTokens: 100 }))).toMatch(/No sources were found/u);
  });
});

describe('resolveAnswer with [n] markers', () => {
  it('one citation per ref of each marker, narrowed to its quote in the source; unverified ones say why', () => {
    const answer = resolveAnswer(pack, 'They are "paid to the original payment method" [1]. Points "vanish" [3]. Unknown [8].');
    expect(answer.via).toBe('markers');
    expect(answer.verified).toBe(false);
    const [quoted, invented, unknown] = answer.blocks[0]!.citations;
    const quote = 'paid to the original payment method';
    const at = pack.items[0]!.text.indexOf(quote);
    expect(quoted).toMatchObject({
      type: 'marker',
      ref: 1,
      verified: true,
      citedText: quote,
      chunkId: 'refunds',
      itemRange: { start: at, end: at + quote.length },
    });
    // The chunk starts at offset 100 of its source.
    expect(quoted!.spans).toEqual([{ start: 100 + at, end: 100 + at + quote.length }]);
    expect(invented).toMatchObject({ ref: 3, verified: false, problem: "the quote is not in item 3's text" });
    expect(unknown).toMatchObject({ ref: null, verified: false });
  });

  it('an answer without citations is not verified', () => {
    expect(resolveAnswer(pack, 'Refunds take two weeks.').verified).toBe(false);
  });
});

describe('evaluation samples', () => {
  let corpus: Corpus;
  beforeAll(async () => {
    corpus = await loadCorpus();
  });

  it('toEvalSample lists contexts in rank order (not the LITM order of the context) with their chunk ids and refs', () => {
    const sample = toEvalSample(pack, { answer: 'Refunds take 14 days [1].', reference: 'Within 14 days, to the original method.' });
    expect(sample.question).toBe('How are refunds paid?');
    expect(sample.contextIds).toEqual(['refunds', 'returns', 'gift', 'loyalty']);
    expect(sample.contextRefs).toEqual([1, 4, 2, 3]);
    expect(sample.contexts).toEqual(sample.contextRefs.map((ref) => pack.items[ref - 1]!.text));
    expect(sample.packHash).toBe(pack.packHash);
  });

  it('on a real pack, rank order differs from context order and is sorted by rank', async () => {
    const real = await corpus.bundle('How are token budgets counted exactly?');
    const sample = toEvalSample(real, { question: 'How are token budgets counted?' });
    const ranks = sample.contextRefs.map((ref) => real.items[ref - 1]!.rank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(sample.contextRefs).not.toEqual(real.items.map((i) => i.ref));
    expect(sample.question).toBe('How are token budgets counted?');
  });

  it('the shapers write RAGAS 0.4, DeepEval and promptfoo field names', () => {
    const sample = toEvalSample(pack, { answer: 'A [1].', reference: 'R' });
    expect(toRagasSample(sample)).toEqual({
      user_input: 'How are refunds paid?',
      retrieved_contexts: sample.contexts,
      retrieved_context_ids: ['refunds', 'returns', 'gift', 'loyalty'],
      response: 'A [1].',
      reference: 'R',
    });
    expect(toDeepEvalTestCase(sample)).toEqual({
      input: 'How are refunds paid?',
      actual_output: 'A [1].',
      expected_output: 'R',
      retrieval_context: sample.contexts,
    });
    expect(toPromptfooTestCase(sample)).toEqual({
      description: 'How are refunds paid?',
      vars: { query: 'How are refunds paid?', context: sample.contexts, context_ids: sample.contextIds, answer: 'A [1].', reference: 'R' },
      options: { disableVarExpansion: true },
    });
    // Without an answer, no output fields at all (not empty strings a harness would score).
    const bare = toEvalSample(pack);
    expect(Object.keys(toRagasSample(bare)).sort()).toEqual(['retrieved_context_ids', 'retrieved_contexts', 'user_input']);
    expect(Object.keys(toDeepEvalTestCase(bare)).sort()).toEqual(['input', 'retrieval_context']);
  });
});

describe('toAiSdkSources', () => {
  it('gives source-document parts the AI SDK streams into a UI message and validates', async () => {
    const sources = toAiSdkSources(pack);
    expect(sources).toHaveLength(pack.items.length);
    expect(sources[0]).toMatchObject({ type: 'source-document', mediaType: 'text/plain', title: 'refunds.md' });
    expect(sources[0]!.providerMetadata.litm).toEqual(JSON.parse(JSON.stringify(pack.citations[0])));
    expect(new Set(sources.map((s) => s.sourceId)).size).toBe(sources.length);

    const stream = createUIMessageStream({
      execute: ({ writer }) => {
        for (const part of sources) writer.write(part);
        writer.write({ type: 'text-start', id: 't' });
        writer.write({ type: 'text-delta', id: 't', delta: 'Refunds take 14 days [1].' });
        writer.write({ type: 'text-end', id: 't' });
      },
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream })) last = message;
    const parts = last!.parts.filter((part) => part.type === 'source-document');
    expect(parts).toEqual(sources);
    await expect(validateUIMessages({ messages: [{ ...last!, role: 'assistant' }] })).resolves.toHaveLength(1);
  });
});
