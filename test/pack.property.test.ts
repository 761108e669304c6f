import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  getTokenizer,
  packBriefing,
  packBundle,
  PackSchema,
  toCanonicalJson,
  type CandidateInput,
  type Pack,
  type PackFormat,
  type Tokenizer,
} from '../src/index.js';
import { compareCandidates } from '../src/core/finish.js';
import { sha256Hex, canonicalStringify } from '../src/base/canonical.js';
import { candidateSetArb } from './helpers/candidates.js';

const tokenizer = getTokenizer('o200k_base');
const formats = fc.constantFrom<PackFormat>('markdown', 'xml', 'text');
const budgets = fc.integer({ min: 1, max: 600 });
const RUNS = { numRuns: 120 };

function checkInvariants(pack: Pack, candidates: readonly CandidateInput[], maxTokens: number) {
  // Rule 1: exact budget, counted on the final context.
  const counted = tokenizer.count(pack.context);
  expect(counted).toBeLessThanOrEqual(maxTokens);
  expect(pack.budget.usedTokens).toBe(counted);
  // Rule 3: extractive — each item's text is its candidate's text or a prefix of it.
  for (const item of pack.items) {
    const sources = candidates.filter((c) => c.id === item.id).map((c) => c.text);
    expect(sources.some((t) => (item.truncated ? t.startsWith(item.text) : t === item.text))).toBe(true);
  }
  // Rule 2: every candidate is kept or dropped with a reason, once.
  expect(pack.items.length + pack.dropped.length).toBe(candidates.length);
  const accounted = [...pack.items.map((i) => i.id), ...pack.dropped.map((d) => d.id)].sort();
  expect(accounted).toEqual(candidates.map((c) => c.id).sort());
  // refs are positions; citations belong to items.
  pack.items.forEach((item, index) => {
    expect(item.ref).toBe(index + 1);
    expect(pack.citations[index]?.ref).toBe(item.ref);
    expect(pack.citations[index]?.chunkId).toBe(item.id);
  });
  expect(PackSchema.parse(pack)).toBeTruthy();
  // packHash: the canonical JSON without the hash, index times written as null (they are not hashed).
  const { packHash, ...rest } = pack;
  expect(sha256Hex(canonicalStringify({ ...rest, coverage: { ...rest.coverage, newestIndexedAt: null } }))).toBe(packHash);
}

/** Rule 9: the block markers in the context are exactly 1..n, in order, whatever the content held. */
function markers(pack: Pack): number[] {
  if (pack.format === 'xml') {
    return [...pack.context.matchAll(/<document index="(\d+)">/g)].map((m) => Number(m[1]));
  }
  return [...pack.context.matchAll(/^\[(\d+)\] /gm)].map((m) => Number(m[1]));
}

describe('packBundle properties', () => {
  it('keeps the budget, stays extractive, accounts for every candidate, renders unforgeable blocks', () => {
    fc.assert(
      fc.property(candidateSetArb, budgets, formats, (candidates, maxTokens, format) => {
        const pack = packBundle({ query: 'what matters?', candidates, maxTokens, format });
        checkInvariants(pack, candidates, maxTokens);
        expect(markers(pack)).toEqual(pack.items.map((i) => i.ref));
        if (format === 'xml') {
          expect(pack.context.split('</document>').length - 1).toBe(pack.items.length);
        }
      }),
      RUNS,
    );
  });

  it('gives the same bytes for any input order (rule 7)', () => {
    fc.assert(
      fc.property(
        candidateSetArb.chain((c) => fc.tuple(fc.constant(c), fc.shuffledSubarray(c, { minLength: c.length, maxLength: c.length }))),
        budgets,
        ([candidates, shuffled], maxTokens) => {
          const a = toCanonicalJson(packBundle({ query: 'q', candidates, maxTokens }));
          const b = toCanonicalJson(packBundle({ query: 'q', candidates: shuffled, maxTokens }));
          expect(b).toBe(a);
        },
      ),
      RUNS,
    );
  });

  it('places ranks in Lost-in-the-Middle order: odd ranks from the front, even from the back (rule 5)', () => {
    fc.assert(
      fc.property(candidateSetArb, budgets, (candidates, maxTokens) => {
        const pack = packBundle({ query: 'q', candidates, maxTokens });
        const n = pack.items.length;
        expect(pack.items.map((i) => i.rank).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        for (const item of pack.items) {
          const expected = item.rank % 2 === 1 ? (item.rank - 1) / 2 : n - item.rank / 2;
          expect(item.ref - 1).toBe(expected);
        }
        // rank follows score (desc) then id
        const byRank = [...pack.items].sort((a, b) => a.rank - b.rank);
        for (let i = 1; i < byRank.length; i += 1) {
          const prev = byRank[i - 1]!;
          const cur = byRank[i]!;
          expect(prev.score > cur.score || (prev.score === cur.score && prev.id < cur.id)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('never lets a wrong token hint break the budget', () => {
    fc.assert(
      fc.property(candidateSetArb, budgets, fc.nat({ max: 5 }), (candidates, maxTokens, wrong) => {
        const hinted = candidates.map((c) => ({ ...c, tokens: wrong }));
        const pack = packBundle({ query: 'q', candidates: hinted, maxTokens });
        checkInvariants(pack, hinted, maxTokens);
      }),
      { numRuns: 60 },
    );
  });
});

describe('rule 2: the fill keeps rank faithfulness', () => {
  /** The candidates as the packer ranks them: one per id (the best), score descending, then id. */
  function ranked(candidates: readonly CandidateInput[]): CandidateInput[] {
    const best = new Map<string, CandidateInput>();
    for (const c of candidates) {
      const previous = best.get(c.id);
      if (previous === undefined || compareCandidates(c, previous) < 0) best.set(c.id, c);
    }
    return [...best.values()].sort(compareCandidates);
  }

  // Whole items: sentence selection shares the budget among sentences by relevance across the pool (a lower
  // candidate's sentence may be worth more than a better one's), so it is not a rule of items there.
  it('never drops one of the three best that reach the budget for lower ones (packing without them would not keep it either)', () => {
    fc.assert(
      fc.property(candidateSetArb, budgets, formats, (candidates, maxTokens, format) => {
        const options = { query: 'alpha budget', maxTokens, format };
        const pack = packBundle({ ...options, candidates });
        const order = ranked(candidates);
        const reasons = new Map(pack.dropped.map((d) => [d.id, d.reason] as const));
        const kept = new Set(pack.items.map((i) => i.id));
        const survivors = order.filter((c) => kept.has(c.id) || reasons.get(c.id) === 'budget');
        for (const top of survivors.slice(0, 3)) {
          if (reasons.get(top.id) !== 'budget') continue;
          const position = order.indexOf(top);
          const alone = packBundle({ ...options, candidates: order.slice(0, position + 1) });
          expect(
            alone.items.some((i) => i.id === top.id),
            `${top.id} dropped for lower ones`,
          ).toBe(false);
        }
      }),
      {
        numRuns: 400,
        // Found by a run (seed 595008378): a copy of the best, set aside beside it, took one of the three places,
        // so the fourth best was dropped while a lower empty candidate was kept.
        examples: [
          JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'fill-copy-of-best.json'), 'utf8')) as [
            CandidateInput[],
            number,
            'markdown',
          ],
        ],
      },
    );
  });
});

describe('packing long runs without spaces', () => {
  // A tokenizer the packer does not know, with the shipped one's counts (and lower bound): the packer then
  // counts every prefix a cut measures in full, with none of the shortcuts (no length bound, no count that
  // stops at the budget). The packs must be the same bytes.
  const plain: Tokenizer = {
    name: 'o200k_base',
    count: (t) => tokenizer.count(t),
    lowerBound: (t, limit) => tokenizer.lowerBound!(t, limit),
  };
  const unit = fc.constantFrom('a', '=', 'Ab', '東京', '😀', 'aGVsbG8gd29ybGQ=', 'https://example.com/a/b?c=d&', '数据。', 'x.');
  const run = fc
    .tuple(unit, fc.integer({ min: 50, max: 4000 }))
    .map(([u, length]) => u.repeat(Math.ceil(length / u.length)).slice(0, length));
  const text = fc
    .array(fc.oneof(run, fc.constantFrom('Intro words. ', 'One sentence here. Another one.', '\n\n', ' ')), { minLength: 1, maxLength: 4 })
    .map((parts) => parts.join(''));
  const candidates = fc
    .array(text, { minLength: 1, maxLength: 3 })
    .map((texts) => texts.map((t, i) => ({ id: `c${i}`, text: t, score: 1 - i / 10 })));

  it('cuts them as counting every prefix in full does, within the budget (property)', () => {
    fc.assert(
      fc.property(candidates, fc.integer({ min: 1, max: 600 }), formats, fc.boolean(), (pool, maxTokens, format, compress) => {
        const options = {
          query: 'words sentence',
          candidates: pool,
          maxTokens,
          format,
          ...(compress ? { compress: { mode: 'sentences' as const } } : {}),
        };
        const pack = packBundle(options);
        // (Under selection an item shows sentences, not a prefix: the extractive check here is for prefixes.)
        if (compress) expect(tokenizer.count(pack.context)).toBeLessThanOrEqual(maxTokens);
        else checkInvariants(pack, pool, maxTokens);
        expect(toCanonicalJson(packBundle({ ...options, tokenizer: plain }))).toBe(toCanonicalJson(pack));
        const briefing = packBriefing({ ...options, pins: ['c1'] });
        expect(tokenizer.count(briefing.context)).toBeLessThanOrEqual(maxTokens);
        expect(toCanonicalJson(packBriefing({ ...options, pins: ['c1'], tokenizer: plain }))).toBe(toCanonicalJson(briefing));
      }),
      { numRuns: 60 },
    );
  });
});

describe('packBriefing properties', () => {
  it('keeps the budget and the accounting, with pins and any format', () => {
    fc.assert(
      fc.property(candidateSetArb, fc.integer({ min: 1, max: 900 }), formats, fc.boolean(), (candidates, maxTokens, format, pin) => {
        const pins = pin && candidates[0] ? [candidates[0].sourceId ?? candidates[0].id] : [];
        const pack = packBriefing({ query: 'brief me', candidates, maxTokens, format, pins });
        checkInvariants(pack, candidates, maxTokens);
        expect(markers(pack)).toEqual(pack.items.map((i) => i.ref));
        // zones: all grounding items come before all evidence items
        const roles = pack.items.map((i) => i.role);
        expect(roles.indexOf('evidence') === -1 || roles.lastIndexOf('grounding') < roles.indexOf('evidence')).toBe(true);
        if (pack.caveats !== null)
          expect(pack.context.endsWith(format === 'xml' ? `${pack.caveats}\n</briefing>` : pack.caveats)).toBe(true);
      }),
      RUNS,
    );
  });

  it('gives the same bytes for any input order', () => {
    fc.assert(
      fc.property(
        candidateSetArb.chain((c) => fc.tuple(fc.constant(c), fc.shuffledSubarray(c, { minLength: c.length, maxLength: c.length }))),
        fc.integer({ min: 50, max: 900 }),
        ([candidates, shuffled], maxTokens) => {
          const a = toCanonicalJson(packBriefing({ query: 'q', candidates, maxTokens, pins: ['src-b'] }));
          const b = toCanonicalJson(packBriefing({ query: 'q', candidates: shuffled, maxTokens, pins: ['src-b'] }));
          expect(b).toBe(a);
        },
      ),
      { numRuns: 60 },
    );
  });
});
