// Packs as Anthropic search results and documents, and Claude's citations mapped back: responses in the
// Messages API's documented JSON shape (no network), resolved against the sidecar, every narrowed range read
// back from the loaded source text.
import type Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { isLitmPackError } from '../src/base/errors.js';
import { packBriefing } from '../src/core/briefing.js';
import { packBundle } from '../src/core/bundle.js';
import type { Pack } from '../src/core/schemas.js';
import {
  assertAnthropicRequest,
  resolveAnthropicCitations,
  toAnthropicDocuments,
  toAnthropicSearchResults,
  type AnthropicSearchResultBlock,
  type ResolvedCitation,
} from '../src/llm/index.js';
import { loadCorpus, messageResponse, searchResultCitation, type Corpus } from './helpers/llm-packs.js';

let corpus: Corpus;
beforeAll(async () => {
  corpus = await loadCorpus();
});

const joined = (result: { content: { text: string }[] }) => result.content.map((block) => block.text).join('');

/** Every citation of a response that cites, for each result, its first block, its last block and (when it has three) blocks 1..3. */
function citeEverything(results: readonly AnthropicSearchResultBlock[]) {
  const content: unknown[] = [];
  results.forEach((result, index) => {
    const n = result.content.length;
    const ranges: [number, number][] = [
      [0, 1],
      [n - 1, n],
    ];
    if (n >= 3) ranges.push([1, 3]);
    content.push({ type: 'text', text: `Claim ${index + 1}: `, citations: null });
    content.push({
      type: 'text',
      text: 'what the sources say',
      citations: ranges.map(([s, e]) => searchResultCitation(results, index, s, e)),
    });
  });
  return messageResponse(content);
}

/** The cited units' text read back from the source through the resolved spans equals the blocks' text, trimmed, gaps aside. */
function expectSpansReadBack(
  pack: Pack,
  citation: ResolvedCitation,
  results: readonly AnthropicSearchResultBlock[],
  range: [number, number],
) {
  const source = corpus.sources.get(citation.sourceId!)!;
  const item = pack.items[citation.ref! - 1]!;
  expect(citation.spans.length).toBeGreaterThan(0);
  for (const span of citation.spans) expect(item.text).toContain(source.slice(span.start, span.end));
  const cited = results[citation.ref! - 1]!.content.slice(range[0], range[1])
    .map((b) => b.text)
    .join('');
  const fromSource = citation.spans.map((span) => source.slice(span.start, span.end)).join(' … ');
  // A block ends with what follows its unit: whitespace, or the elision marker before the next kept sentence.
  const normalise = (text: string) =>
    text
      .replace(/\s*…\s*/gu, ' … ')
      .replace(/\s+/gu, ' ')
      .trim()
      .replace(/ …$/u, '');
  expect(normalise(fromSource)).toBe(normalise(cited));
}

describe('toAnthropicSearchResults', () => {
  it('gives one search_result per item in context order, whose blocks joined are the item text exactly', async () => {
    const pack = await corpus.bundle('How are token budgets counted exactly?');
    const results = toAnthropicSearchResults(pack);
    expect(results).toHaveLength(pack.items.length);
    results.forEach((result, i) => {
      const citation = pack.citations[i]!;
      expect(result.type).toBe('search_result');
      expect(result.citations).toEqual({ enabled: true });
      expect(joined(result)).toBe(pack.items[i]!.text);
      expect(result.source).toBe(
        `litm://sources/${encodeURIComponent(citation.sourceId)}?chunk=${encodeURIComponent(citation.chunkId)}&version=${citation.version}`,
      );
      expect(result.title).toBe(citation.title);
      for (const block of result.content) expect(block.text).toMatch(/\S/u);
      // One block per sentence: a prose item of several sentences gives several blocks.
      expect(result.content.length).toBeGreaterThan(1);
    });
    // The documented request type of the Anthropic SDK accepts the blocks as they are (checked by the compiler).
    const content: Anthropic.ContentBlockParam[] = [...results, { type: 'text', text: pack.query }];
    expect(content).toHaveLength(results.length + 1);
  });

  it('uses the citation URL as source when there is one, and the locator unit for transcripts (cues) and code (lines)', async () => {
    const withUrl = packBundle({
      query: 'refund',
      candidates: [
        { id: 'a', text: 'Refunds take 14 days. They go to the card.', score: 1, url: 'https://shop.example/refunds', title: 'Refunds' },
      ],
      maxTokens: 200,
    });
    expect(toAnthropicSearchResults(withUrl)[0]!.source).toBe('https://shop.example/refunds');

    const transcript = await corpus.bundle('retries backoff jitter', { only: (id) => id.endsWith('.vtt') });
    const cueResults = toAnthropicSearchResults(transcript);
    transcript.items.forEach((item, i) => {
      const lines = item.text.split('\n').filter((line) => line.trim() !== '');
      expect(cueResults[i]!.content.map((b) => b.text.replace(/\n$/u, ''))).toEqual(lines);
      expect(cueResults[i]!.title).toMatch(/\(\d\d:\d\d–\d\d:\d\d\)$/u);
    });

    const code = await corpus.bundle('retry backoff attempts', { only: (id) => id.endsWith('.ts') });
    const lineResults = toAnthropicSearchResults(code);
    expect(joined(lineResults[0]!)).toBe(code.items[0]!.text);
    // Each block is one non-blank line (blank lines ride with the line before them).
    for (const block of lineResults[0]!.content) expect(block.text.trimEnd().split('\n')).toHaveLength(1);
  });

  it('drops the ellipsis the context shows after a cut item (it is not part of the item text)', () => {
    const long = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} explains another detail of the refund policy.`).join(' ');
    const pack = packBundle({
      query: 'refund policy',
      candidates: [{ id: 'long', text: long, score: 1, span: { start: 0, end: long.length } }],
      maxTokens: 120,
    });
    expect(pack.items[0]!.truncated).toBe(true);
    expect(pack.context).toContain(`${pack.items[0]!.text} …`);
    const [result] = toAnthropicSearchResults(pack);
    expect(joined(result!)).toBe(pack.items[0]!.text);
    expect(joined(result!).endsWith('…')).toBe(false);
  });

  it('rejects bad options and a pack that is not one with a typed error', async () => {
    const pack = await corpus.bundle('How are token budgets counted exactly?');
    expect(() => toAnthropicSearchResults(pack, { granularity: 'word' as never })).toThrow(
      /granularity must be one of sentence, line, cue, item/,
    );
    try {
      toAnthropicSearchResults({ items: 'nope' } as never);
      expect.unreachable();
    } catch (error) {
      expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    }
  });
});

describe('resolveAnthropicCitations round trip', () => {
  for (const [name, compress] of [
    ['whole chunks', false],
    ['sentence selection', true],
  ] as const) {
    it(`${name}: each citation resolves to its sidecar entry, narrowed to the cited units, read back from the source`, async () => {
      const pack = await corpus.bundle('How are token budgets counted exactly?', { compress });
      const results = toAnthropicSearchResults(pack);
      const response = citeEverything(results);
      const resolved = resolveAnthropicCitations(pack, response);
      expect(resolved.map((b) => b.text)).toEqual(response.content.map((b) => (b as { text: string }).text));
      const cited = resolved.filter((b) => b.citations.length > 0);
      expect(cited).toHaveLength(pack.items.length);
      cited.forEach((block, index) => {
        const entry = pack.citations[index]!;
        const ranges = (response.content[2 * index + 1] as { citations: { start_block_index: number; end_block_index: number }[] })
          .citations;
        block.citations.forEach((citation, k) => {
          expect(citation.verified, citation.problem).toBe(true);
          expect({
            ref: citation.ref,
            chunkId: citation.chunkId,
            sourceId: citation.sourceId,
            version: citation.version,
            textSha256: citation.textSha256,
          }).toEqual({
            ref: entry.ref,
            chunkId: entry.chunkId,
            sourceId: entry.sourceId,
            version: entry.version,
            textSha256: entry.textSha256,
          });
          expectSpansReadBack(pack, citation, results, [ranges[k]!.start_block_index, ranges[k]!.end_block_index]);
        });
      });
    });
  }

  it('with sentence selection, a one-block citation is exactly the span sentence selection recorded for that sentence', async () => {
    const pack = await corpus.bundle('How are token budgets counted exactly?', { compress: true });
    const results = toAnthropicSearchResults(pack);
    const index = pack.citations.findIndex((c) => (c.spans?.length ?? 0) >= 2);
    expect(index).toBeGreaterThanOrEqual(0);
    const spans = pack.citations[index]!.spans!;
    expect(results[index]!.content).toHaveLength(spans.length);
    const content = spans.map((_, k) => ({ type: 'text', text: 'x', citations: [searchResultCitation(results, index, k, k + 1)] }));
    const resolved = resolveAnthropicCitations(pack, messageResponse(content));
    resolved.forEach((block, k) => {
      expect(block.citations[0]!.verified).toBe(true);
      expect(block.citations[0]!.spans).toEqual([spans[k]]);
    });
  });

  it('narrows a code item to the cited lines (line numbers counted in the source file)', async () => {
    const pack = await corpus.bundle('retry backoff attempts', { only: (id) => id.endsWith('.ts') });
    const results = toAnthropicSearchResults(pack);
    const source = corpus.sources.get('examples/mixed/code/retry.ts')!;
    const resolved = resolveAnthropicCitations(
      pack,
      messageResponse([{ type: 'text', text: 'x', citations: [searchResultCitation(results, 0, 4, 6)] }]),
    );
    const [citation] = resolved[0]!.citations;
    expect(citation!.verified).toBe(true);
    const lineOf = (offset: number) => source.slice(0, offset).split('\n').length;
    expect(citation!.locator!.lines).toEqual([lineOf(citation!.span!.start), lineOf(citation!.span!.end - 1)]);
    const [first, last] = citation!.locator!.lines!;
    expect(last - first).toBe(1);
    expect(source.slice(citation!.span!.start, citation!.span!.end)).toBe(
      results[0]!.content
        .slice(4, 6)
        .map((b) => b.text)
        .join('')
        .trimEnd(),
    );
  });

  it('a transcript citation keeps the chunk time (the pack records no time per cue) and its cue range in the source', async () => {
    const pack = await corpus.bundle('retries backoff jitter', { only: (id) => id.endsWith('.vtt') });
    const results = toAnthropicSearchResults(pack);
    const [citation] = resolveAnthropicCitations(
      pack,
      messageResponse([{ type: 'text', text: 'x', citations: [searchResultCitation(results, 0, 2, 3)] }]),
    )[0]!.citations;
    expect(citation!.verified).toBe(true);
    expect(citation!.locator).toEqual(pack.citations[0]!.locator);
    expect(corpus.sources.get('examples/mixed/podcast.vtt')!.slice(citation!.span!.start, citation!.span!.end)).toBe(
      results[0]!.content[2]!.text.trimEnd(),
    );
  });
});

describe('what resolveAnthropicCitations catches (never a throw for the model)', () => {
  let pack: Pack;
  let results: AnthropicSearchResultBlock[];
  beforeAll(async () => {
    pack = await corpus.bundle('How are token budgets counted exactly?');
    results = toAnthropicSearchResults(pack);
  });
  const resolveOne = (citation: unknown, options = {}) =>
    resolveAnthropicCitations(pack, messageResponse([{ type: 'text', text: 'x', citations: [citation] }]), options)[0]!.citations[0]!;

  it('a forged cited_text', () => {
    const citation = { ...searchResultCitation(results, 0, 0, 1), cited_text: 'Token counts are always additive across joins.' };
    const resolved = resolveOne(citation);
    expect(resolved).toMatchObject({ verified: false, ref: 1, chunkId: pack.citations[0]!.chunkId });
    expect(resolved.problem).toMatch(/cited_text is not the text of blocks 0\.\.1 of item 1/u);
  });

  it('an out-of-range search_result_index, block range or a source that is not the result’s', () => {
    const outOfRange = resolveOne({ ...searchResultCitation(results, 0, 0, 1), search_result_index: results.length + 3 });
    expect(outOfRange).toMatchObject({ verified: false, ref: null, chunkId: null, spans: [] });
    expect(outOfRange.problem).toMatch(/names no item of this pack/u);
    expect(resolveOne({ ...searchResultCitation(results, 0, 0, 1), search_result_index: -1 }).ref).toBeNull();
    const badBlocks = resolveOne({ ...searchResultCitation(results, 0, 0, 1), start_block_index: 2, end_block_index: 999 });
    expect(badBlocks).toMatchObject({ verified: false, ref: 1 });
    expect(badBlocks.problem).toMatch(/not a range of item 1/u);
    expect(
      resolveOne({
        ...searchResultCitation(results, 0, 0, 1),
        source: results[1]!.source === results[0]!.source ? 'https://elsewhere.example' : results[1]!.source,
      }).verified,
    ).toBe(false);
  });

  it('counts search results of the request that came before the pack’s (searchResultOffset)', () => {
    const shifted = searchResultCitation(results, 1, 0, 1, 2);
    expect(resolveOne(shifted).verified).toBe(false);
    expect(resolveOne(shifted, { searchResultOffset: 2 })).toMatchObject({ verified: true, ref: 2 });
  });

  it('another tool’s citation or a malformed one is reported, not thrown; content that is not a response is the caller’s error', () => {
    const web = resolveOne({
      type: 'web_search_result_location',
      url: 'https://x.example',
      title: 'X',
      encrypted_index: 'abc',
      cited_text: 'x',
    });
    expect(web).toMatchObject({ verified: false, ref: null, type: 'web_search_result_location' });
    expect(resolveOne({ type: 'search_result_location', cited_text: 'x' }).problem).toMatch(/without the fields the API documents/u);
    expect(() => resolveAnthropicCitations(pack, 'not a response')).toThrow(/response content array/u);
  });

  it('a citation of a pin pointer (an item showing no text) is never verified', () => {
    const big = Array.from({ length: 60 }, (_, i) => `Pinned sentence ${i} about shipping rules and parcels.`).join(' ');
    const briefing = packBriefing({
      query: 'shipping',
      candidates: [
        { id: 'pin', text: big, score: 0.5 },
        { id: 'b', text: 'Shipping is free above 50 euros.', score: 0.9 },
      ],
      pins: ['pin'],
      maxTokens: 40,
    });
    const pointer = briefing.items.findIndex((item) => item.pointer);
    expect(pointer).toBeGreaterThanOrEqual(0);
    const briefingResults = toAnthropicSearchResults(briefing);
    expect(briefingResults[pointer]!.content).toHaveLength(1);
    expect(briefingResults[pointer]!.content[0]!.text).toMatch(/pinned; not shown in full/u);
    const [citation] = resolveAnthropicCitations(
      briefing,
      messageResponse([{ type: 'text', text: 'x', citations: [searchResultCitation(briefingResults, pointer, 0, 1)] }]),
    )[0]!.citations;
    expect(citation).toMatchObject({ verified: false, ref: pointer + 1 });
  });
});

describe('assertAnthropicRequest', () => {
  let results: AnthropicSearchResultBlock[];
  beforeAll(async () => {
    results = toAnthropicSearchResults(await corpus.bundle('How are token budgets counted exactly?'));
  });

  it('accepts a request whose search results all have citations on, top level or in tool results', () => {
    const request = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [
        { role: 'user', content: [...results.slice(0, 2), { type: 'text', text: 'question' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: results.slice(2) }] },
      ],
    } satisfies Anthropic.MessageCreateParamsNonStreaming;
    expect(assertAnthropicRequest(request)).toEqual({ searchResults: results.length, documents: 0 });
  });

  it('catches a request that mixes search results with citations on and off, naming the ones that are off', () => {
    const off = { ...results[1]!, citations: { enabled: false } };
    const request = {
      messages: [
        { role: 'user', content: [results[0], { type: 'tool_result', tool_use_id: 't', content: [off] }, { type: 'text', text: 'q' }] },
      ],
    };
    expect(() => assertAnthropicRequest(request)).toThrow(
      /every search result of a request or on none.*1 of 2 have them off \(messages\[0\]\.content\[1\]\.content\[0\]\)/u,
    );
    const noField = { ...results[1]!, citations: undefined };
    expect(() => assertAnthropicRequest({ messages: [{ role: 'user', content: [results[0], noField] }] })).toThrow(/on none/u);
  });

  it('catches citations combined with JSON-schema structured output', () => {
    const request = {
      messages: [{ role: 'user', content: [results[0]] }],
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
    };
    expect(() => assertAnthropicRequest(request)).toThrow(/structured output/u);
  });
});

describe('toAnthropicDocuments', () => {
  it('custom-content documents are cited as content_block_location and resolve like search results', async () => {
    const pack = await corpus.bundle('How are token budgets counted exactly?');
    const documents = toAnthropicDocuments(pack);
    const asParams: Anthropic.DocumentBlockParam[] = documents;
    expect(asParams).toHaveLength(pack.items.length);
    const doc = documents[0]!;
    if (doc.source.type !== 'content') throw new Error('expected a content document');
    expect(doc.source.content.map((b) => b.text).join('')).toBe(pack.items[0]!.text);
    expect(doc.context).toContain(`source: ${pack.citations[0]!.sourceId}`);
    const cited = doc.source.content
      .slice(1, 3)
      .map((b) => b.text)
      .join('');
    const response = messageResponse([
      {
        type: 'text',
        text: 'x',
        citations: [
          {
            type: 'content_block_location',
            cited_text: cited,
            document_index: 0,
            document_title: doc.title,
            start_block_index: 1,
            end_block_index: 3,
            file_id: null,
          },
        ],
      },
    ]);
    const [citation] = resolveAnthropicCitations(pack, response)[0]!.citations;
    expect(citation).toMatchObject({ verified: true, ref: 1, chunkId: pack.citations[0]!.chunkId, type: 'content_block_location' });
    const source = corpus.sources.get(citation!.sourceId!)!;
    expect(source.slice(citation!.span!.start, citation!.span!.end)).toBe(cited.trimEnd());
  });

  it('plain-text documents are cited as char_location and narrowed to the cited characters', async () => {
    const pack = await corpus.bundle('How are token budgets counted exactly?');
    const documents = toAnthropicDocuments(pack, { form: 'text' });
    const doc = documents[1]!;
    if (doc.source.type !== 'text') throw new Error('expected a text document');
    expect(doc.source.data).toBe(pack.items[1]!.text);
    const start = doc.source.data.indexOf(' ') + 1;
    const end = doc.source.data.indexOf('.', start) + 1;
    const cited = doc.source.data.slice(start, end);
    const char = (cited_text: string) => ({
      type: 'char_location',
      cited_text,
      document_index: 1,
      document_title: doc.title,
      start_char_index: start,
      end_char_index: end,
      file_id: null,
    });
    const [ok, forged] = resolveAnthropicCitations(
      pack,
      messageResponse([{ type: 'text', text: 'x', citations: [char(cited), char('Something else entirely.')] }]),
    )[0]!.citations;
    expect(ok).toMatchObject({ verified: true, ref: 2 });
    expect(corpus.sources.get(ok!.sourceId!)!.slice(ok!.span!.start, ok!.span!.end)).toBe(cited.trim());
    expect(forged).toMatchObject({ verified: false, ref: 2 });
  });
});
