import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  getTokenizer,
  isLitmPackError,
  LitmPackError,
  orderForLongContext,
  packBriefing,
  packBundle,
  toCanonicalJson,
  type Tokenizer,
} from '../src/index.js';
import { sampleCandidates } from './helpers/candidates.js';

const o200k = getTokenizer('o200k_base');

describe('rule 2: greedy by relevance', () => {
  it('keeps the best items first and lets a smaller later item fill the gap', () => {
    const big = 'Big item sentence that goes on. '.repeat(40).trim();
    const candidates = [
      { id: 'a', text: 'Alpha is the best match.', score: 0.9 },
      { id: 'b', text: big, score: 0.8 },
      { id: 'c', text: 'Gamma is small.', score: 0.7 },
    ];
    const pack = packBundle({ query: 'q', candidates, maxTokens: 60, minTruncatedTokens: 1000 });
    expect(pack.items.map((i) => i.id).sort()).toEqual(['a', 'c']);
    expect(pack.dropped).toEqual([{ id: 'b', reason: 'budget' }]);
    expect(pack.truncated).toBe(true);
  });

  const long = (name: string) => Array.from({ length: 40 }, (_, i) => `${name} sentence ${i} carries one more fact.`).join(' ');
  const WORDS = [
    'amber',
    'basil',
    'cedar',
    'delta',
    'ember',
    'fjord',
    'garnet',
    'harbor',
    'indigo',
    'juniper',
    'kelp',
    'lumen',
    'maple',
    'nectar',
    'onyx',
    'pollen',
  ];
  // Distinct words, so no two short items are near duplicates of each other.
  const short = (id: string, score: number) => {
    const at = [...id].reduce((n, c) => n + c.charCodeAt(0), 0);
    return { id, text: `${WORDS[at % 16]} ${WORDS[(at * 7 + 3) % 16]} ${id} ${WORDS[(at * 5 + 1) % 16]} fact.`, score };
  };

  it('tries later whole items before cutting one that does not fit whole, then cuts it into what is left', () => {
    const candidates = [short('a', 0.9), { id: 'b', text: long('Bravo'), score: 0.8 }, short('c', 0.7), short('d', 0.6), short('e', 0.5)];
    const pack = packBundle({ query: 'q', candidates, maxTokens: 200 });
    const byId = new Map(pack.items.map((i) => [i.id, i]));
    expect([...byId.keys()].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    for (const id of ['a', 'c', 'd', 'e']) expect(byId.get(id)?.truncated, id).toBe(false);
    expect(byId.get('b')?.truncated).toBe(true);
    expect(long('Bravo').startsWith(byId.get('b')!.text)).toBe(true);
    // Ranks and the LITM order are unchanged by the fill: b is still rank 2, last in the context.
    expect(byId.get('b')?.rank).toBe(2);
    expect(pack.items.at(-1)?.id).toBe('b');
    expect(o200k.count(pack.context)).toBeLessThanOrEqual(200);
  });

  it('cuts the best item left over while budget remains; the rest is dropped for budget', () => {
    const candidates = [
      short('a', 0.9),
      short('b', 0.8),
      short('c', 0.7),
      { id: 'd', text: long('Delta'), score: 0.6 },
      { id: 'e', text: long('Echo'), score: 0.5 },
      short('f', 0.4),
    ];
    const pack = packBundle({ query: 'q', candidates, maxTokens: 160 });
    expect(
      pack.items
        .filter((i) => !i.truncated)
        .map((i) => i.id)
        .sort(),
    ).toEqual(['a', 'b', 'c', 'f']);
    expect(pack.items.filter((i) => i.truncated).map((i) => i.id)).toEqual(['d']);
    expect(pack.dropped).toEqual([{ id: 'e', reason: 'budget' }]);
  });

  it('lets none of the three best be crowded out by lower items: each set aside holds room for its shortest cut', () => {
    const smalls = Array.from({ length: 12 }, (_, i) => short(`s${String(i).padStart(2, '0')}`, 0.5 - i / 100));
    const candidates = [
      short('a', 0.9),
      { id: 'b', text: long('Bravo'), score: 0.8 },
      { id: 'c', text: long('Charlie'), score: 0.7 },
      ...smalls,
    ];
    for (const maxTokens of [120, 160, 200, 260]) {
      const pack = packBundle({ query: 'q', candidates, maxTokens });
      const ids = pack.items.map((i) => i.id);
      expect(ids, `at ${maxTokens}`).toEqual(expect.arrayContaining(['a', 'b', 'c']));
      for (const id of ['b', 'c']) expect(pack.items.find((i) => i.id === id)?.truncated, `${id} at ${maxTokens}`).toBe(true);
      expect(ids.length, `smaller items fill the rest at ${maxTokens}`).toBeGreaterThan(3);
    }
  });

  it("cuts a briefing's pin where it stands, before later items", () => {
    const candidates = [{ id: 'pin', sourceId: 'pinned.md', text: long('Pinned'), score: 0.1 }, short('a', 0.9), short('b', 0.8)];
    const pack = packBriefing({ query: 'q', candidates, pins: ['pinned.md'], maxTokens: 200 });
    const pin = pack.items.find((i) => i.id === 'pin');
    expect(pin?.truncated).toBe(true);
    expect(pin?.pointer).toBe(false);
    expect(pack.items.some((i) => i.id === 'a' || i.id === 'b')).toBe(false);
  });

  it('cuts an item that does not fit whole at a sentence boundary, ending in an ellipsis', () => {
    const text = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} is here.`).join(' ');
    const pack = packBundle({ query: 'q', candidates: [{ id: 'a', text, score: 1 }], maxTokens: 80 });
    const [item] = pack.items;
    expect(item?.truncated).toBe(true);
    expect(item?.text.endsWith('is here.')).toBe(true);
    expect(text.startsWith(item!.text)).toBe(true);
    expect(pack.context.endsWith(`${item!.text} …`)).toBe(true);
    expect(o200k.count(pack.context)).toBeLessThanOrEqual(80);
  });

  it('cuts a long text with no sentence end at a word boundary', () => {
    const text = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const pack = packBundle({ query: 'q', candidates: [{ id: 'a', text, score: 1 }], maxTokens: 100 });
    expect(pack.items[0]?.truncated).toBe(true);
    expect(text.startsWith(`${pack.items[0]!.text} `)).toBe(true);
  });

  it('uses the budget well: a 4k pack of ~60-token items fills most of it', () => {
    const pack = packBundle({ query: 'q', candidates: sampleCandidates(200, { sentences: 4 }), maxTokens: 4000 });
    expect(pack.budget.usedTokens).toBeGreaterThan(3800);
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(4000);
  });
});

describe('rule 4: dedupe', () => {
  it('merges the same id keeping the best score', () => {
    const pack = packBundle({
      query: 'q',
      maxTokens: 500,
      candidates: [
        { id: 'x', text: 'low copy', score: 0.1 },
        { id: 'x', text: 'high copy', score: 0.9 },
      ],
    });
    expect(pack.items.map((i) => [i.id, i.text])).toEqual([['x', 'high copy']]);
    expect(pack.dropped).toEqual([{ id: 'x', reason: 'duplicate', duplicateOf: 'x' }]);
  });

  it('drops the worse-ranked copy of the same normalised text (NFKC, case, whitespace)', () => {
    const pack = packBundle({
      query: 'q',
      maxTokens: 500,
      candidates: [
        { id: 'a', text: 'Ｔhe  Quick\nbrown fox.', score: 0.5 },
        { id: 'b', text: 'the quick brown FOX.', score: 0.9 },
      ],
    });
    expect(pack.items.map((i) => i.id)).toEqual(['b']);
    expect(pack.dropped).toEqual([{ id: 'a', reason: 'duplicate', duplicateOf: 'b' }]);
  });

  it('drops near duplicates by word 5-gram Jaccard at the threshold, and not below it', () => {
    const base = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    const near = `${base} tail`; // 36 of 37 shingles shared
    const candidates = [
      { id: 'a', text: base, score: 0.9 },
      { id: 'b', text: near, score: 0.8 },
    ];
    expect(packBundle({ query: 'q', maxTokens: 1000, candidates }).dropped).toEqual([
      { id: 'b', reason: 'near-duplicate', duplicateOf: 'a' },
    ]);
    const strict = packBundle({
      query: 'q',
      maxTokens: 1000,
      candidates,
      dedupe: { nearDuplicateThreshold: 0.99, containmentThreshold: 1 },
    });
    expect(strict.items).toHaveLength(2);
    expect(packBundle({ query: 'q', maxTokens: 1000, candidates, dedupe: false }).items).toHaveLength(2);
  });

  it('drops a text contained in a kept one (overlap coefficient), though their Jaccard is low', () => {
    const paragraph = Array.from({ length: 30 }, (_, i) => `p${i}`).join(' ');
    const chunk = `${Array.from({ length: 40 }, (_, i) => `before${i}`).join(' ')} ${paragraph} ${Array.from({ length: 40 }, (_, i) => `after${i}`).join(' ')}`;
    const candidates = [
      { id: 'chunk', text: chunk, score: 0.9 },
      { id: 'paragraph', text: paragraph, score: 0.8 },
      { id: 'other', text: 'An unrelated sentence about something else entirely.', score: 0.7 },
    ];
    const pack = packBundle({ query: 'q', maxTokens: 2000, candidates });
    expect(pack.items.map((i) => i.id).sort()).toEqual(['chunk', 'other']);
    expect(pack.dropped).toEqual([{ id: 'paragraph', reason: 'near-duplicate', duplicateOf: 'chunk' }]);
    const off = packBundle({ query: 'q', maxTokens: 2000, candidates, dedupe: { containmentThreshold: 1 } });
    expect(off.items).toHaveLength(3);
  });
});

describe('selection options', () => {
  it('caps items per source and drops below the minimum score', () => {
    const candidates = [
      { id: 'a1', sourceId: 'A', text: 'one.', score: 0.9 },
      { id: 'a2', sourceId: 'A', text: 'two.', score: 0.8 },
      { id: 'b1', sourceId: 'B', text: 'three.', score: 0.7 },
      { id: 'c1', sourceId: 'C', text: 'four.', score: 0.1 },
    ];
    const pack = packBundle({ query: 'q', maxTokens: 500, candidates, maxPerSource: 1, minScore: 0.2 });
    expect(pack.items.map((i) => i.id).sort()).toEqual(['a1', 'b1']);
    expect(pack.dropped).toEqual([
      { id: 'a2', reason: 'source-cap' },
      { id: 'c1', reason: 'below-min-score' },
    ]);
  });
});

describe('rule 5: LITM order', () => {
  it('puts rank 1 first and rank 2 last for every n', () => {
    for (let n = 1; n <= 9; n += 1) {
      const order = orderForLongContext(Array.from({ length: n }, (_, i) => i + 1));
      expect(order[0]).toBe(1);
      if (n > 1) expect(order[n - 1]).toBe(2);
    }
    expect(orderForLongContext([1, 2, 3, 4, 5, 6])).toEqual([1, 3, 5, 6, 4, 2]);
  });
});

describe('rule 8: coverage signal', () => {
  const base = [
    { id: 'a', text: 'a.', score: 3, similarity: 0.6 },
    { id: 'b', text: 'b.', score: 2, similarity: 0.3 },
    { id: 'c', text: 'c.', score: 1, similarity: 0.2, timestamp: '2024-05-01T00:00:00Z' },
  ];
  it('is strong at >= 0.55 with >= 3 items, partial at >= 0.40, weak below, unknown without similarity', () => {
    expect(packBundle({ query: 'q', maxTokens: 500, candidates: base }).coverage.confidence).toBe('strong');
    expect(packBundle({ query: 'q', maxTokens: 500, candidates: base.slice(0, 2) }).coverage.confidence).toBe('partial');
    const weak = base.map((c) => ({ ...c, similarity: 0.1 }));
    expect(packBundle({ query: 'q', maxTokens: 500, candidates: weak }).coverage.confidence).toBe('weak');
    const none = base.map(({ similarity: _s, ...c }) => c);
    const unknown = packBundle({ query: 'q', maxTokens: 500, candidates: none }).coverage;
    expect(unknown).toMatchObject({ confidence: 'unknown', topSimilarity: -1 });
  });
  it('reports counts, p50 and the date range of what was kept, with configurable thresholds', () => {
    const coverage = packBundle({ query: 'q', maxTokens: 500, candidates: base, coverage: { strong: 0.9, partial: 0.5 } }).coverage;
    expect(coverage).toEqual({
      itemCount: 3,
      distinctSourceCount: 3,
      topSimilarity: 0.6,
      confidence: 'partial',
      scoreP50: 2,
      dateRange: { from: '2024-05-01T00:00:00Z', to: '2024-05-01T00:00:00Z' },
      denseAvailable: true,
      newestIndexedAt: null,
    });
  });
});

describe('rule 9: empty input and safe rendering', () => {
  it('packs nothing into an empty, valid pack', () => {
    const pack = packBundle({ query: 'q', candidates: [], maxTokens: 100 });
    expect(pack).toMatchObject({ context: '', items: [], citations: [], dropped: [], truncated: false });
    expect(pack.budget.usedTokens).toBe(0);
    expect(pack.coverage.confidence).toBe('unknown');
  });
});

describe('citations', () => {
  it('pins each item to source, version, span and the sha256 of the full original text', () => {
    const text = 'Refunds are issued within 14 days. Contact support to start one.';
    const pack = packBundle({
      header: 'full',
      query: 'refunds',
      maxTokens: 500,
      candidates: [
        {
          id: 'policy#0',
          sourceId: 'policy.md',
          version: 'v3',
          title: 'Refunds',
          url: 'https://example.com/policy',
          section: ['Policy', 'Refunds'],
          span: { start: 10, end: 74 },
          text,
          score: 1,
        },
      ],
    });
    expect(pack.citations).toEqual([
      {
        ref: 1,
        sourceId: 'policy.md',
        chunkId: 'policy#0',
        version: 'v3',
        title: 'Refunds',
        url: 'https://example.com/policy',
        section: ['Policy', 'Refunds'],
        span: { start: 10, end: 74 },
        textSha256: createHash('sha256').update(text).digest('hex'),
      },
    ]);
    expect(pack.citations[0]?.textSha256).toBe(createHash('sha256').update(text).digest('hex'));
    expect(pack.context.startsWith('[1] Refunds (source: policy.md, version: v3, section: Policy > Refunds)\n')).toBe(true);
  });
});

describe('rule 10: bad input throws a typed error', () => {
  const ok = { query: 'q', candidates: [{ id: 'a', text: 't', score: 1 }], maxTokens: 10 };
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['empty query', { ...ok, query: '  ' }, /query/],
    ['non-finite score', { ...ok, candidates: [{ id: 'a', text: 't', score: Number.NaN }] }, /candidates\.0\.score/],
    ['infinite score', { ...ok, candidates: [{ id: 'a', text: 't', score: Infinity }] }, /score/],
    ['budget zero', { ...ok, maxTokens: 0 }, /maxTokens/],
    ['budget too large', { ...ok, maxTokens: 10_000_000 }, /maxTokens/],
    ['fractional budget', { ...ok, maxTokens: 10.5 }, /maxTokens/],
    ['unknown encoding', { ...ok, encoding: 'p50k_base' }, /encoding/],
    ['unknown format', { ...ok, format: 'html' }, /format/],
    ['missing id', { ...ok, candidates: [{ text: 't', score: 1 }] }, /candidates\.0\.id/],
  ];
  for (const [name, input, pattern] of cases) {
    it(`rejects ${name}`, () => {
      let caught: unknown;
      try {
        packBundle(input as never);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(LitmPackError);
      expect(isLitmPackError(caught, 'invalid_input')).toBe(true);
      expect((caught as LitmPackError).issues.length).toBeGreaterThan(0);
      expect((caught as Error).message).toMatch(pattern);
    });
  }
  it('rejects unknown modes in briefing options too', () => {
    expect(() => packBriefing({ ...ok, pins: [''] })).toThrow(LitmPackError);
  });
});

describe('tokenizers', () => {
  it('supports cl100k_base and reports the encoding', () => {
    const candidates = sampleCandidates(50);
    const pack = packBundle({ query: 'q', candidates, maxTokens: 700, encoding: 'cl100k_base' });
    expect(pack.budget.encoding).toBe('cl100k_base');
    expect(getTokenizer('cl100k_base').count(pack.context)).toBe(pack.budget.usedTokens);
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(700);
  });

  it('accepts a custom tokenizer and keeps its budget exactly', () => {
    const chars: Tokenizer = { name: 'chars', count: (t) => [...t].length };
    const pack = packBundle({ query: 'q', candidates: sampleCandidates(30), maxTokens: 900, tokenizer: chars });
    expect(pack.budget).toEqual({ maxTokens: 900, usedTokens: [...pack.context].length, encoding: 'chars' });
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(900);
    expect(pack.budget.usedTokens).toBeGreaterThan(800);
  });

  it('uses per-encoding token hints and ignores hints for other encodings', () => {
    const candidates = sampleCandidates(20).map((c) => ({ ...c, tokens: { cl100k_base: 1 } }));
    const pack = packBundle({ query: 'q', candidates, maxTokens: 300 });
    expect(pack.items.every((i) => i.tokens > 1)).toBe(true);
    const exact = sampleCandidates(20).map((c) => ({ ...c, tokens: { o200k_base: o200k.count(c.text) } }));
    expect(toCanonicalJson(packBundle({ query: 'q', candidates: exact, maxTokens: 300 }))).toBe(toCanonicalJson(pack));
  });
});

describe('briefing', () => {
  const candidates = [
    { id: 'i1', sourceId: 'notes', kind: 'insight', text: 'Insight: churn rose after the price change.', score: 0.5, similarity: 0.5 },
    {
      id: 's1',
      sourceId: 'call-1',
      kind: 'segment',
      text: 'Customer said the new price is too high.',
      score: 0.9,
      similarity: 0.7,
      timestamp: '2024-03-01',
    },
    {
      id: 's2',
      sourceId: 'call-2',
      kind: 'segment',
      text: 'Another customer asked for a discount.',
      score: 0.8,
      similarity: 0.6,
      timestamp: '2024-04-15',
    },
    {
      id: 's3',
      sourceId: 'call-3',
      kind: 'segment',
      text: 'A third call was about onboarding.',
      score: 0.7,
      similarity: 0.4,
      timestamp: '2023-12-01',
    },
    { id: 'p1', sourceId: 'contract', kind: 'segment', text: 'The contract renews yearly.', score: 0.1 },
  ];

  it('orders pins, then insights, then evidence, and ends with computed caveats', () => {
    const pack = packBriefing({
      query: 'why churn?',
      candidates,
      maxTokens: 1000,
      pins: ['contract', 'missing-doc'],
      groundingCount: 1,
      gaps: ['No data for Q2'],
      entity: 'Acme',
    });
    expect(pack.kind).toBe('briefing');
    expect(pack.items.map((i) => [i.id, i.role])).toEqual([
      ['p1', 'grounding'],
      ['i1', 'grounding'],
      ['s1', 'evidence'],
      ['s2', 'evidence'],
      ['s3', 'evidence'],
    ]);
    expect(pack.briefing).toEqual({ entity: 'Acme', contradictions: [], gaps: ['No data for Q2'], missingPins: ['missing-doc'] });
    expect(pack.caveats).not.toBeNull();
    expect(pack.context.endsWith(pack.caveats!)).toBe(true);
    expect(pack.caveats).toContain('Coverage: 5 items from 5 sources; confidence strong (top similarity 0.7).');
    expect(pack.caveats).toContain('Evidence dates: 2023-12-01 to 2024-04-15.');
    expect(pack.caveats).toContain('Scores: min 0.1, p50 0.7, max 0.9.');
    expect(pack.caveats).toContain('Gap: No data for Q2');
    expect(pack.caveats).toContain('Pinned but not found: missing-doc.');
    expect(pack.context.indexOf('## Grounding')).toBeLessThan(pack.context.indexOf('## Evidence'));
  });

  it('degrades a pin that does not fit to a one-line pointer citing it', () => {
    const longPin = { id: 'big', sourceId: 'manual', text: 'A long manual sentence. '.repeat(300), score: 0.2 };
    const pack = packBriefing({
      query: 'q',
      candidates: [longPin, ...candidates],
      maxTokens: 400,
      pins: ['manual'],
      minTruncatedTokens: 1000,
    });
    const first = pack.items[0]!;
    expect(first).toMatchObject({ id: 'big', pointer: true, text: '', role: 'grounding' });
    expect(pack.citations[0]).toMatchObject({ chunkId: 'big', sourceId: 'manual' });
    expect(pack.context.split('\n').find((l) => l.startsWith('[1] '))).toMatch(/pinned; not shown in full/);
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(400);
  });

  it('counts what did not fit in the caveats', () => {
    const many = sampleCandidates(60, { sentences: 4 });
    const pack = packBriefing({ query: 'q', candidates: many, maxTokens: 500 });
    const budgetDropped = pack.dropped.filter((d) => d.reason === 'budget').length;
    expect(budgetDropped).toBeGreaterThan(0);
    expect(pack.caveats).toContain(`Not included: ${budgetDropped} relevant items did not fit the budget;`);
  });

  it('leaves the caveats out when they alone would not fit', () => {
    const pack = packBriefing({ query: 'q', candidates: [{ id: 'a', text: 'Tiny.', score: 1 }], maxTokens: 20 });
    expect(pack.caveats).toBeNull();
    expect(pack.items).toHaveLength(1);
  });
});
