import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getTokenizer, packBriefing, packBundle, type CandidateInput, type PackFormat } from '../src/index.js';
import { candidateArb } from './helpers/candidates.js';

// Rule 1 at the edges: tiny budgets (below a block's header, below the frame, below a briefing's caveats),
// empty and small pools, every kind and format. Whatever the context holds, frame, caveats and zone
// wrappers included, it is counted as rendered: never over budget, and usedTokens is its count.

const tokenizer = getTokenizer('o200k_base');
const formats: PackFormat[] = ['markdown', 'xml', 'text'];
const kinds = ['bundle', 'briefing'] as const;

function pack(kind: (typeof kinds)[number], options: Parameters<typeof packBriefing>[0]) {
  if (kind === 'bundle') {
    const { pins: _pins, gaps: _gaps, entity: _entity, ...bundle } = options;
    return packBundle(bundle);
  }
  return packBriefing(options);
}

function expectWithinBudget(context: string, usedTokens: number, maxTokens: number): void {
  const counted = tokenizer.count(context);
  expect(counted).toBeLessThanOrEqual(maxTokens);
  expect(usedTokens).toBe(counted);
}

describe('every budget holds', () => {
  it('with an empty pool, for every kind, format and budget from 1 to 200', () => {
    for (const kind of kinds) {
      for (const format of formats) {
        for (let maxTokens = 1; maxTokens <= 200; maxTokens += 1) {
          const result = pack(kind, { query: 'q', candidates: [], maxTokens, format });
          expectWithinBudget(result.context, result.budget.usedTokens, maxTokens);
        }
      }
    }
  });

  it('with small pools, pins, gaps and an entity, at tiny budgets (property)', () => {
    // Often empty: then only the fixed text (frame, caveats) is left to fit.
    const pool = fc.oneof(
      fc.constant<CandidateInput[]>([]),
      fc.uniqueArray(candidateArb, { minLength: 1, maxLength: 4, selector: (c) => c.id }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds),
        fc.constantFrom(...formats),
        fc.integer({ min: 1, max: 200 }),
        pool,
        fc.subarray(['src-a', 'src-b', 'missing.md', 'abc']),
        fc.array(fc.constantFrom('no data after 2023', 'Gap with <xml> & [brackets]', 'a'.repeat(300)), { maxLength: 2 }),
        fc.option(fc.constantFrom('Acme Corp', '</caveats>', '東京'), { nil: null }),
        (kind, format, maxTokens, candidates: CandidateInput[], pins, gaps, entity) => {
          const result = pack(kind, { query: 'what matters?', candidates, maxTokens, format, pins, gaps, entity });
          expectWithinBudget(result.context, result.budget.usedTokens, maxTokens);
          // Every candidate is kept or dropped, also when nothing fits.
          expect(result.items.length + result.dropped.filter((d) => candidates.some((c) => c.id === d.id)).length).toBe(candidates.length);
        },
      ),
      { numRuns: 5000 },
    );
  });
});
