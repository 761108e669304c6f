import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Deduper, type NearDuplicateSettings } from '../src/core/dedupe.js';
import { normalizeText, shingleHashes } from '../src/core/text.js';

// Rule 4 as written: normalise, shingle with a regular expression and a Set, compare with every kept text in
// the order kept. The packer's index-based dedupe must give exactly these verdicts.
const plainNormalize = (text: string) => text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();

function plainShingles(normalised: string, size: number): Uint32Array {
  const words = normalised.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return new Uint32Array(0);
  const out = new Set<number>();
  for (let i = 0; i < Math.max(1, words.length - size + 1); i += 1) {
    let hash = 0x811c9dc5;
    for (let w = i; w < Math.min(words.length, i + size); w += 1) {
      for (const unit of words[w]!.split('')) hash = Math.imul(hash ^ unit.charCodeAt(0), 0x01000193);
      hash = Math.imul(hash ^ 0x20, 0x01000193);
    }
    out.add(hash >>> 0);
  }
  return Uint32Array.from(out).sort();
}

function plainShared(a: Uint32Array, b: Uint32Array): number {
  const set = new Set(b);
  return a.filter((x) => set.has(x)).length;
}

type Verdict = { kind: 'duplicate' | 'near-duplicate'; of: number } | { kind: 'new' };

/** Verdicts for `texts` in order; a new text is kept when `keepNew[i]` (the packer drops some for budget). */
function plainVerdicts(texts: string[], keepNew: boolean[], settings: NearDuplicateSettings): Verdict[] {
  const kept: Array<{ index: number; normalised: string; shingles: Uint32Array }> = [];
  return texts.map((text, i) => {
    const normalised = plainNormalize(text);
    const exact = kept.find((k) => k.normalised === normalised);
    if (exact) return { kind: 'duplicate', of: exact.index };
    const shingles = plainShingles(normalised, settings.shingleSize);
    if (settings.nearThreshold !== null || settings.containmentThreshold !== null) {
      for (const other of kept) {
        const shared = plainShared(shingles, other.shingles);
        const union = shingles.length + other.shingles.length - shared;
        const smaller = Math.min(shingles.length, other.shingles.length);
        if (
          (settings.nearThreshold !== null && (union === 0 || shared / union >= settings.nearThreshold)) ||
          (settings.containmentThreshold !== null && smaller > 0 && shared / smaller >= settings.containmentThreshold)
        ) {
          return { kind: 'near-duplicate', of: other.index };
        }
      }
    }
    if (keepNew[i]) kept.push({ index: i, normalised, shingles });
    return { kind: 'new' };
  });
}

function fastVerdicts(texts: string[], keepNew: boolean[], settings: NearDuplicateSettings): Verdict[] {
  const deduper = new Deduper<number>(settings);
  return texts.map((text, i) => {
    const verdict = deduper.check(text);
    if (verdict.kind !== 'new') return { kind: verdict.kind, of: verdict.of };
    if (keepNew[i]) deduper.keep(verdict, i);
    return { kind: 'new' };
  });
}

// Pools like the ones dedupe exists for: a few base paragraphs from a small vocabulary and many copies of
// them, exact, re-cased, re-spaced, quoted, trimmed, shifted or with words changed; plus words beyond ASCII.
const vocabulary = ['the', 'cell', 'protein', 'Gene', 'levels', 'of', 'and', 'in', 'café', 'ΣΊΣΥΦΟΣ', 'ﬁle', '42', 'x'];
const paragraph = fc.oneof(
  fc.array(fc.constantFrom(...vocabulary), { minLength: 0, maxLength: 40 }).map((w) => w.join(' ')),
  fc.array(fc.constantFrom('...', '—', '!!', '*'), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')), // no words
);
const edit = fc.oneof(
  fc.constant((t: string) => t),
  fc.constant((t: string) => t.toUpperCase()),
  fc.constant((t: string) => `  ${t.replace(/ /g, '\n ')} `),
  fc.constant((t: string) => `On Monday someone wrote:\n> ${t.replace(/\. /g, '.\n> ')}`),
  fc.integer({ min: 1, max: 8 }).map((n) => (t: string) => t.split(' ').slice(n).join(' ')),
  fc.integer({ min: 1, max: 8 }).map((n) => (t: string) => t.split(' ').slice(0, -n).join(' ')),
  fc.tuple(fc.nat(), fc.constantFrom(...vocabulary)).map(([at, word]) => (t: string) => {
    const words = t.split(' ');
    words[at % Math.max(1, words.length)] = word;
    return words.join(' ');
  }),
);
const pool = fc
  .tuple(fc.array(paragraph, { minLength: 1, maxLength: 5 }), fc.array(fc.tuple(fc.nat(), edit), { maxLength: 30 }))
  .map(([bases, copies]) => [...bases, ...copies.map(([i, change]) => change(bases[i % bases.length]!))]);
const threshold = fc.option(fc.double({ min: 0.05, max: 0.99, noNaN: true }), { nil: null });
const settings = fc.record({ nearThreshold: threshold, containmentThreshold: threshold, shingleSize: fc.integer({ min: 1, max: 6 }) });

describe('dedupe (rule 4)', () => {
  it('gives the verdicts of the pairwise definition on duplicate-heavy pools (property)', () => {
    fc.assert(
      fc.property(pool, settings, fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), (texts, s, keep) => {
        const keepNew = texts.map((_, i) => keep[i % keep.length]!);
        expect(fastVerdicts(texts, keepNew, s)).toEqual(plainVerdicts(texts, keepNew, s));
      }),
      { numRuns: 400 },
    );
  });

  it('normalises and shingles exactly as the written rule (property)', () => {
    const text = fc.oneof(
      pool.map((texts) => texts.join(' ')),
      fc.string({ unit: 'grapheme', maxLength: 80 }),
      fc.string({ unit: 'binary', maxLength: 80 }),
    );
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 8 }), (t, size) => {
        const normalised = normalizeText(t);
        expect(normalised).toBe(plainNormalize(t));
        expect(shingleHashes(normalised, size)).toEqual(plainShingles(normalised, size));
      }),
      { numRuns: 1000 },
    );
  });
});
