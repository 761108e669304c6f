import fc from 'fast-check';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { getTokenizer, packBriefing, packBundle, type CandidateInput, type Pack } from '../src/index.js';

// Token hints are the caller's claim; the budget (rule 1) must hold whatever they say, and a hint that cannot
// be right must not make packing quadratic (a pack with 1,200 hints of 0 once recounted the whole context per
// item it removed). How long packing takes is measured by `npm run bench:pack`; these tests check outcomes.

const require = createRequire(import.meta.url);
const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
const reference = new Tiktoken(require('js-tiktoken/ranks/o200k_base') as import('js-tiktoken/lite').TiktokenBPE);
const o200k = getTokenizer('o200k_base');

const words =
  'cells protein phosphatidylinositol 37 mitochondrial kinase hydroxychloroquine were increased in Xqzvbnm; ratio 1.8e-3 (n=12)'.split(' ');
function prose(seed: number, length: number): string {
  const out: string[] = [];
  for (let i = 0; i < length; i += 1) out.push(words[(seed * 7 + i * i * 13 + i) % words.length]!);
  return `${out.join(' ')}.`;
}

const candidates: CandidateInput[] = Array.from({ length: 300 }, (_, i) => ({
  id: `c${String(i).padStart(3, '0')}`,
  sourceId: `s${i % 50}`,
  text: prose(i, 40 + (i % 90)),
  score: 1 - i / 300,
}));

function expectWithinBudget(pack: Pack, maxTokens: number): void {
  const exact = reference.encode(pack.context, [], []).length;
  expect(exact).toBeLessThanOrEqual(maxTokens);
  expect(pack.budget.usedTokens).toBe(exact);
  expect(pack.items.length + pack.dropped.length).toBe(candidates.length);
}

describe('token hints that lie', () => {
  it('hints of 0 keep the budget and give the pack that no hints give', () => {
    const plain = packBundle({ query: 'q', candidates, maxTokens: 8000 });
    for (const tokens of [0, { o200k_base: 0 }]) {
      const lying = packBundle({ query: 'q', candidates: candidates.map((c) => ({ ...c, tokens })), maxTokens: 8000 });
      expectWithinBudget(lying, 8000);
      expect(lying.items).toEqual(plain.items);
      expect(lying.dropped).toEqual(plain.dropped);
      expect(lying.context).toBe(plain.context);
    }
  });

  it('hints that are wrong only from the middle of the pool on keep the budget, the earlier items recounted', () => {
    const hinted = candidates.map((c, i) => ({ ...c, tokens: i < 40 ? o200k.count(c.text) : 1 }));
    for (const format of ['markdown', 'xml', 'text'] as const) {
      const pack = packBundle({ query: 'q', candidates: hinted, maxTokens: 6000, format });
      expectWithinBudget(pack, 6000);
      expect(pack.items.map((i) => i.id)).toEqual(packBundle({ query: 'q', candidates, maxTokens: 6000, format }).items.map((i) => i.id));
    }
  });

  it('hints too low to be caught by the piece count still keep the budget (the exact fit removes the excess)', () => {
    // The piece count is a lower bound, so a hint equal to it cannot be told from the truth by the bound.
    const hinted = candidates.map((c) => ({ ...c, tokens: o200k.lowerBound!(c.text) }));
    expect(hinted.some((c, i) => c.tokens < o200k.count(candidates[i]!.text))).toBe(true);
    for (const maxTokens of [500, 3000, 12000]) {
      expectWithinBudget(packBundle({ query: 'q', candidates: hinted, maxTokens }), maxTokens);
      expectWithinBudget(packBriefing({ query: 'q', candidates: hinted, maxTokens, pins: ['s3'] }), maxTokens);
    }
  });

  it('any mix of honest, low and high hints keeps the budget (property)', () => {
    const hintArb = fc.array(fc.constantFrom('honest', 'zero', 'low', 'high', 'none'), { minLength: 300, maxLength: 300 });
    fc.assert(
      fc.property(hintArb, fc.integer({ min: 50, max: 9000 }), (kinds, maxTokens) => {
        const hinted = candidates.map((c, i) => {
          const exact = o200k.count(c.text);
          const kind = kinds[i]!;
          if (kind === 'none') return c;
          const tokens = kind === 'honest' ? exact : kind === 'zero' ? 0 : kind === 'low' ? Math.floor(exact / 2) : exact * 3;
          return { ...c, tokens };
        });
        expectWithinBudget(packBundle({ query: 'q', candidates: hinted, maxTokens }), maxTokens);
      }),
      { numRuns: 25 },
    );
  });
});
