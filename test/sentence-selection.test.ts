import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  getTokenizer,
  isLitmPackError,
  packBriefing,
  packBundle,
  PackSchema,
  toCanonicalJson,
  tokenizeBm25,
  type CandidateInput,
  type Pack,
  type PackFormat,
  chunkDocument,
  splitSentences,
} from '../src/index.js';
import { sha256Hex } from '../src/base/canonical.js';
import { chunkToCandidate } from '../src/store/chunk.js';
import { ELISION, sentenceKey } from '../src/core/sentences.js';
import { candidateSetArb } from './helpers/candidates.js';

const tokenizer = getTokenizer('o200k_base');
const formats = fc.constantFrom<PackFormat>('markdown', 'xml', 'text');
const RUNS = { numRuns: Number(process.env.LITM_RUNS ?? 100) };

const words = [
  'refund',
  'refunds',
  'policy',
  'days',
  'receipt',
  'shipping',
  'cat',
  'box',
  'café',
  '東京',
  'naïve',
  'Dr',
  'U.S',
  'e.g',
  '😀',
  'budget',
];
const sentenceArb = fc
  .tuple(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 10 }), fc.constantFrom('.', '!', '?', '…', '."', '.)', ''))
  .map(([ws, end]) => `${ws.join(' ')}${end}`);
const separatorArb = fc.constantFrom(' ', '  ', '\n', '\n\n', ' \n ', '\t');
const paragraphArb = fc
  .array(fc.tuple(sentenceArb, separatorArb), { minLength: 1, maxLength: 7 })
  .map((parts) => parts.map(([s, sep]) => s + sep).join(''));
/** A markdown source: headings, paragraphs, blank lines and odd whitespace. */
const sourceArb = fc
  .array(
    fc.oneof({ weight: 4, arbitrary: paragraphArb }, { weight: 1, arbitrary: fc.constantFrom('# Refunds\n', '## Shipping\n', '\n') }),
    {
      minLength: 1,
      maxLength: 8,
    },
  )
  .map((blocks) => blocks.join('\n'));
const queryArb = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }).map((ws) => ws.join(' '));
const compressArb = fc.record({
  mode: fc.constant('sentences' as const),
  minRelevance: fc.double({ min: 0, max: 1, noNaN: true }),
  window: fc.integer({ min: 0, max: 2 }),
  minSentences: fc.integer({ min: 1, max: 3 }),
});

/** Candidates from chunking `source` (exact spans), with arbitrary scores. */
function chunksOf(source: string, scores: number[]): CandidateInput[] {
  const records = chunkDocument({ id: 'doc.md', text: source }, { maxTokens: 24, indexedAt: '2026-01-01T00:00:00.000Z' });
  return records.map((record, i) => chunkToCandidate(record, scores[i % scores.length] ?? 0));
}

/**
 * Rule 3 under selection: the item's text is its citation's spans, read from the source, in order, each
 * joined to the next by the source's own whitespace (neighbours) or the elision marker.
 */
function checkSpans(pack: Pack, source: string, candidates: readonly CandidateInput[]) {
  pack.items.forEach((item, index) => {
    const citation = pack.citations[index]!;
    const candidate = candidates.find((c) => c.id === item.id)!;
    expect(citation.textSha256).toBe(sha256Hex(candidate.text));
    expect(citation.keptTextSha256).toBe(sha256Hex(item.text));
    const spans = citation.spans!;
    if (item.pointer) {
      expect(spans).toEqual([]);
      return;
    }
    expect(spans.length).toBeGreaterThan(0);
    let at = 0;
    spans.forEach((span, n) => {
      expect(span.start).toBeGreaterThanOrEqual(candidate.span!.start);
      expect(span.end).toBeLessThanOrEqual(candidate.span!.end);
      expect(span.end).toBeGreaterThan(span.start);
      if (n > 0) {
        const previous = spans[n - 1]!;
        expect(span.start).toBeGreaterThanOrEqual(previous.end);
        const gap = source.slice(previous.end, span.start);
        if (item.text.startsWith(ELISION, at)) at += ELISION.length;
        else {
          expect(gap.trim()).toBe('');
          expect(item.text.startsWith(gap, at)).toBe(true);
          at += gap.length;
        }
      }
      const sentence = source.slice(span.start, span.end);
      expect(item.text.startsWith(sentence, at)).toBe(true);
      at += sentence.length;
    });
    expect(at).toBe(item.text.length);
  });
}

function checkBudget(pack: Pack, maxTokens: number) {
  const counted = tokenizer.count(pack.context);
  expect(counted).toBeLessThanOrEqual(maxTokens);
  expect(pack.budget.usedTokens).toBe(counted);
}

describe('splitSentences', () => {
  it('gives ordered, trimmed, non-empty ranges that cover every non-space character', () => {
    fc.assert(
      fc.property(fc.oneof(sourceArb, fc.string({ unit: 'grapheme', maxLength: 200 })), (text) => {
        const ranges = splitSentences(text);
        let covered = 0;
        ranges.forEach((range, i) => {
          const sentence = text.slice(range.start, range.end);
          expect(sentence.length).toBeGreaterThan(0);
          expect(sentence.trim()).toBe(sentence);
          if (i > 0) {
            expect(range.start).toBeGreaterThanOrEqual(ranges[i - 1]!.end);
            expect(text.slice(ranges[i - 1]!.end, range.start).trim()).toBe('');
          }
          covered += sentence.replace(/\s/gu, '').length;
        });
        expect(covered).toBe(text.replace(/\s/gu, '').length);
      }),
      RUNS,
    );
  });

  it('splits at terminal punctuation and line breaks, not after initials or abbreviations', () => {
    const text = 'Dr. Smith met J. R. Tolkien in the U.S. in 1950. They talked!\nA new line? Yes… "Quoted." (Bracketed.) approx. five.';
    expect(splitSentences(text).map((r) => text.slice(r.start, r.end))).toEqual([
      'Dr. Smith met J. R. Tolkien in the U.S. in 1950.',
      'They talked!',
      'A new line?',
      'Yes…',
      '"Quoted."',
      '(Bracketed.) approx. five.',
    ]);
  });
});

describe('sentence selection in packs', () => {
  const policy =
    'Our shop sells many things. Refunds are issued within 14 days of a return. The cafe opens at nine. ' +
    'Shipping is free over fifty euros. A receipt is needed for every refund. Cats are welcome in the shop.';

  it('keeps the sentences that answer the query, in order, joined by an elision marker', () => {
    const pack = packBundle({
      query: 'how fast are refunds issued with a receipt?',
      maxTokens: 400,
      compress: { mode: 'sentences' },
      candidates: [{ id: 'policy', text: policy, score: 1 }],
    });
    expect(pack.items[0]?.text).toBe(`Refunds are issued within 14 days of a return.${ELISION}A receipt is needed for every refund.`);
    expect(pack.items[0]?.truncated).toBe(false);
    const first = policy.indexOf('Refunds are');
    const second = policy.indexOf('A receipt');
    expect(pack.citations[0]?.spans).toEqual([
      { start: first, end: first + 'Refunds are issued within 14 days of a return.'.length },
      { start: second, end: second + 'A receipt is needed for every refund.'.length },
    ]);
    expect(pack.citations[0]?.textSha256).toBe(sha256Hex(policy));
  });

  it('keeps neighbours with `window` and joins adjacent sentences with their own whitespace', () => {
    const candidates = [{ id: 'policy', text: policy.replace('. ', '.\n'), score: 1 }];
    const pack = packBundle({
      query: 'refunds issued',
      maxTokens: 400,
      compress: { mode: 'sentences', window: 1, minRelevance: 0.9, minSentences: 1 },
      candidates,
    });
    expect(pack.items[0]?.text).toBe('Our shop sells many things.\nRefunds are issued within 14 days of a return. The cafe opens at nine.');
    const apart = packBundle({ query: 'cafe cats', maxTokens: 400, compress: { mode: 'sentences', minSentences: 1 }, candidates });
    expect(apart.items[0]?.text).toBe(`The cafe opens at nine.${ELISION}Cats are welcome in the shop.`);
  });

  it('keeps at least `minSentences` per candidate, even when nothing matches the query', () => {
    const pack = packBundle({
      query: 'zebra',
      maxTokens: 400,
      compress: { mode: 'sentences', minSentences: 2 },
      candidates: [{ id: 'policy', text: policy, score: 1 }],
    });
    expect(pack.items[0]?.text).toBe('Our shop sells many things. Refunds are issued within 14 days of a return.');
  });

  it('never gives up the only sentence mentioning a query term for a better-scoring one that repeats another term', () => {
    // "refund" is in three short sentences; "warranty" only in the long one, which scores lower.
    const text =
      'Refund rules apply. Refund forms are online. Refund requests are answered. ' +
      'The warranty of every product sold in any of our many shops across the country lasts for two full years from the day of delivery.';
    const query = 'refund warranty';
    const candidates = [{ id: 'a', text, score: 1 }];
    const compress = { mode: 'sentences' as const, minSentences: 1, minRelevance: 0.3 };
    const whole = packBundle({ query, maxTokens: 400, compress, candidates });
    expect(whole.items[0]?.text).toContain('The warranty of every product');
    // A budget that holds about two of the sentences: the warranty sentence stays, a repeated "refund" goes.
    const header = tokenizer.count('[1] a\n');
    const warranty = tokenizer.count(text.slice(text.indexOf('The warranty')));
    const tight = packBundle({ query, maxTokens: header + warranty + 12, compress, candidates });
    expect(tight.items[0]?.text).toContain('The warranty of every product');
    expect(tight.items[0]?.truncated).toBe(true);
    expect(tight.items[0]?.text).not.toContain('Refund requests are answered');
  });

  it('does not repeat a sentence a better-ranked candidate already shows, even behind a title', () => {
    const pack = packBundle({
      query: 'refunds days receipt',
      maxTokens: 400,
      compress: { mode: 'sentences', minSentences: 1, minRelevance: 0.2 },
      dedupe: false,
      candidates: [
        { id: 'paragraph', text: 'Refunds are issued within 14 days of a return. The cafe opens at nine.', score: 1 },
        {
          id: 'chunk',
          text: 'Refund policy Refunds are issued within 14 days of a return. A receipt is needed for every refund.',
          score: 0.5,
        },
      ],
    });
    expect(pack.items.find((i) => i.id === 'paragraph')?.text).toBe('Refunds are issued within 14 days of a return.');
    expect(pack.items.find((i) => i.id === 'chunk')?.text).toBe('A receipt is needed for every refund.');
  });

  it('leaves out a later sentence that repeats a shown one behind a title, at word boundaries only', () => {
    const options = {
      query: 'refunds days receipt',
      maxTokens: 400,
      compress: { mode: 'sentences' as const, minSentences: 1, minRelevance: 0.2 },
      dedupe: false as const,
      candidates: [
        { id: 'titled', text: 'Refund policy Refunds are issued within 14 days of a return. The cafe opens at nine.', score: 1 },
        // Repeats the first sentence above without its title: left out.
        { id: 'plain', text: 'Refunds are issued within 14 days of a return. A receipt is needed for every refund.', score: 0.5 },
        // The first sentence above ends like this one, but not at a word boundary ("pol-icy"): not a repeat.
        { id: 'other', text: 'Icy refunds are issued within 14 days of a return. Receipts vary.', score: 0.25 },
      ],
    };
    const pack = packBundle(options);
    expect(pack.items.find((i) => i.id === 'titled')?.text).toBe('Refund policy Refunds are issued within 14 days of a return.');
    expect(pack.items.find((i) => i.id === 'plain')?.text).toBe('A receipt is needed for every refund.');
    expect(pack.items.find((i) => i.id === 'other')?.text).toContain('Icy refunds are issued within 14 days of a return.');
    // Packed again (the texts now analysed and remembered): the same bytes.
    expect(toCanonicalJson(packBundle(options))).toBe(toCanonicalJson(pack));
  });

  it('blends dense similarity when sentence vectors are given', () => {
    const text = 'Money comes back after two weeks at the shop. The shop has a red door.';
    const vectors = {
      query: [1, 0],
      sentences: new Map([
        [sentenceKey('Money comes back after two weeks at the shop.'), [0.9, 0.1]],
        [sentenceKey('The shop has a red door.'), [0, 1]],
      ]),
    };
    const withoutVectors = packBundle({
      query: 'refund shop',
      maxTokens: 400,
      compress: { mode: 'sentences', minRelevance: 0.9, minSentences: 1 },
      candidates: [{ id: 'a', text, score: 1 }],
    });
    expect(withoutVectors.items[0]?.text).toBe('The shop has a red door.');
    const blended = packBundle({
      query: 'refund shop',
      maxTokens: 400,
      compress: { mode: 'sentences', vectors, weights: { lexical: 0.3, dense: 0.7 }, minRelevance: 0.9, minSentences: 1 },
      candidates: [{ id: 'a', text, score: 1 }],
    });
    expect(blended.items[0]?.text).toBe('Money comes back after two weeks at the shop.');
  });

  it("keeps a briefing's pins whole and reports the degraded stages in its caveats", () => {
    const pack = packBriefing({
      query: 'refund receipt',
      maxTokens: 600,
      pins: ['pinned'],
      compress: { mode: 'sentences' },
      degraded: [{ stage: 'rerank', code: 'timeout' }],
      candidates: [
        { id: 'pinned', text: policy, score: 0.1 },
        { id: 'other', text: 'Refunds take a week here. Our parking lot is large. Bring the receipt along.', score: 1 },
      ],
    });
    expect(pack.items.find((i) => i.id === 'pinned')?.text).toBe(policy);
    expect(pack.items.find((i) => i.id === 'other')?.text).toContain(ELISION);
    expect(pack.caveats).toContain('Degraded: the rerank stage failed (timeout) and was bypassed.');
    expect(pack.degraded).toEqual([{ stage: 'rerank', code: 'timeout' }]);
  });

  it('rejects bad compress options with invalid_input', () => {
    for (const compress of [
      { mode: 'tokens' },
      { mode: 'sentences', minRelevance: 2 },
      { mode: 'sentences', window: -1 },
      { mode: 'sentences', weights: { lexical: 0, dense: 0 } },
      { mode: 'sentences', embeddings: {} },
    ]) {
      let error: unknown;
      try {
        packBundle({ query: 'q', maxTokens: 100, candidates: [], compress: compress as never });
      } catch (e) {
        error = e;
      }
      expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    }
  });
});

describe('sentence selection properties', () => {
  it('spans give every kept sentence back byte for byte, offset by the chunk span; budget and hashes hold', () => {
    fc.assert(
      fc.property(
        sourceArb,
        queryArb,
        compressArb,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 400 }),
        formats,
        (source, query, compress, scores, maxTokens, format) => {
          const candidates = chunksOf(source, scores);
          const pack = packBundle({ query, candidates, maxTokens, format, compress });
          checkBudget(pack, maxTokens);
          checkSpans(pack, source, candidates);
          expect(pack.items.length + pack.dropped.length).toBe(candidates.length);
          expect(PackSchema.parse(JSON.parse(toCanonicalJson(pack)))).toEqual(pack);
        },
      ),
      RUNS,
    );
  });

  it('briefings keep the budget and exact spans under selection, pins included', () => {
    fc.assert(
      // From 120 tokens: below that a caveats block alone can overrun the budget, with or without selection
      // (the reservation probe's confidence line is not the longest one); that is the briefing layout's matter.
      fc.property(
        sourceArb,
        queryArb,
        compressArb,
        fc.integer({ min: 120, max: 500 }),
        formats,
        fc.nat(),
        (source, query, compress, maxTokens, format, pin) => {
          const candidates = chunksOf(source, [1, 0.5, 0.25]);
          const pins = candidates.length > 0 ? [candidates[pin % candidates.length]!.id] : [];
          const pack = packBriefing({ query, candidates, maxTokens, format, compress, pins });
          checkBudget(pack, maxTokens);
          checkSpans(pack, source, candidates);
        },
      ),
      RUNS,
    );
  });

  it('gives the same bytes for any input order (rule 7), arbitrary candidates included', () => {
    fc.assert(
      fc.property(candidateSetArb, queryArb, compressArb, fc.integer({ min: 1, max: 600 }), (candidates, query, compress, maxTokens) => {
        const forward = packBundle({ query, candidates, maxTokens, compress });
        const backward = packBundle({ query, candidates: [...candidates].reverse(), maxTokens, compress });
        expect(toCanonicalJson(backward)).toBe(toCanonicalJson(forward));
        checkBudget(forward, maxTokens);
      }),
      RUNS,
    );
  });

  it("a kept, uncut item always shows the pool's only sentence mentioning a query term", () => {
    fc.assert(
      fc.property(sourceArb, queryArb, compressArb, (source, query, compress) => {
        const candidates = chunksOf(source, [1, 0.7, 0.4]);
        const pack = packBundle({ query, candidates, maxTokens: 100_000, compress });
        const terms = new Set(tokenizeBm25(query));
        const mentions = new Map<string, { id: string; sentence: string }[]>();
        for (const candidate of candidates) {
          for (const range of splitSentences(candidate.text)) {
            const sentence = candidate.text.slice(range.start, range.end);
            for (const stem of new Set(tokenizeBm25(sentence))) {
              if (!terms.has(stem)) continue;
              mentions.set(stem, [...(mentions.get(stem) ?? []), { id: candidate.id, sentence }]);
            }
          }
        }
        for (const [, list] of mentions) {
          if (list.length !== 1) continue;
          const item = pack.items.find((i) => i.id === list[0]!.id);
          if (item === undefined || item.truncated) continue;
          expect(item.text).toContain(list[0]!.sentence);
        }
      }),
      RUNS,
    );
  });
});

describe('sentence selection at scale', () => {
  it('handles a pool of many thousand sentences', () => {
    const text = Array.from({ length: 200 }, (_, i) => `Sentence ${i} talks about refunds and item ${i % 7}.`).join(' ');
    const candidates = Array.from({ length: 600 }, (_, i) => ({ id: `c${i}`, text: `${text} Unique ${i}.`, score: 1 - i / 1000 }));
    const pack = packBundle({ query: 'refunds item 3', candidates, maxTokens: 500, compress: { mode: 'sentences' } });
    expect(pack.items.length).toBeGreaterThan(0);
    expect(tokenizer.count(pack.context)).toBeLessThanOrEqual(500);
  });
});
