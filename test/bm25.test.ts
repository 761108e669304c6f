import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import fc from 'fast-check';
import { stem } from 'porter2';
import { describe, expect, it } from 'vitest';

import { isLitmPackError, type SparseVector } from '../src/index.js';
import { bm25TokenId, encodeBm25Document, encodeBm25Query, tokenizeBm25 } from '../src/tokenize/bm25.js';
import { ENGLISH_STOPWORDS } from '../src/tokenize/stopwords.js';

// Produced by scripts/bm25-golden.py with fastembed's own Qdrant/bm25 code.
interface GoldenLine {
  text: string;
  tokens: string[];
  doc: { indices: number[]; values: number[] };
  query: { indices: number[] };
}

const golden: GoldenLine[] = readFileSync(new URL('./fixtures/bm25-golden.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as GoldenLine);

function label(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

function expectSortedUnique(vector: SparseVector): void {
  expect(vector.values).toHaveLength(vector.indices.length);
  for (let i = 1; i < vector.indices.length; i++) {
    expect(vector.indices[i] as number).toBeGreaterThan(vector.indices[i - 1] as number);
  }
}

function expectFloat32Close(actual: readonly number[], expected: readonly number[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, i) => {
    const want = expected[i] as number;
    expect(Math.abs(value - want)).toBeLessThanOrEqual(1e-6 * Math.abs(want));
  });
}

describe('BM25 encoder (Qdrant/bm25 compatible)', () => {
  it('reproduces the known vector', () => {
    const doc = encodeBm25Document('Recipe for baking chocolate chip cookies');
    expect(doc.indices).toEqual([112174620, 177304315, 662344706, 771857363, 1617337648]);
    for (const value of doc.values) expect(Math.fround(value)).toBe(Math.fround(1.6697302));
    expect(encodeBm25Query('Recipe for baking chocolate chip cookies')).toEqual({
      indices: [112174620, 177304315, 662344706, 771857363, 1617337648],
      values: [1, 1, 1, 1, 1],
    });
  });

  it('has a golden fixture of at least 500 texts', () => {
    expect(golden.length).toBeGreaterThanOrEqual(500);
  });

  describe.each(golden.map((line, n) => ({ ...line, name: `${n + 1}: ${label(line.text)}` })))('$name', (line) => {
    it('tokens, document and query vectors match fastembed', () => {
      expect(tokenizeBm25(line.text)).toEqual(line.tokens);
      const doc = encodeBm25Document(line.text);
      expect(doc.indices).toEqual(line.doc.indices);
      expectFloat32Close(doc.values, line.doc.values);
      const query = encodeBm25Query(line.text);
      expect(query.indices).toEqual(line.query.indices);
      expect(query.values.every((v) => v === 1)).toBe(true);
    });
  });

  it('is deterministic and always returns sorted, unique indices', () => {
    for (const { text } of golden) {
      const doc = encodeBm25Document(text);
      expect(encodeBm25Document(text)).toEqual(doc);
      expectSortedUnique(doc);
      expectSortedUnique(encodeBm25Query(text));
    }
  });

  it('gives empty vectors for empty, blank, punctuation-only and stopword-only text', () => {
    for (const text of ['', '   ', '\n\t', '?!.,;', 'the and of it', ...ENGLISH_STOPWORDS]) {
      expect(encodeBm25Document(text)).toEqual({ indices: [], values: [] });
      expect(encodeBm25Query(text)).toEqual({ indices: [], values: [] });
    }
  });

  it('keeps one entry per id when two stems hash to the same index', () => {
    // zq50984 and zq98319 have the same murmur3 hash; fastembed keeps the weight of the stem seen last.
    expect(bm25TokenId('zq50984')).toBe(bm25TokenId('zq98319'));
    const doc = encodeBm25Document('zq50984 zq50984 zq50984 zq98319');
    const single = encodeBm25Document('zq98319 other words here');
    expect(doc.indices).toEqual([bm25TokenId('zq50984')]);
    expect(doc.values[0]).toBeLessThan(single.values[0] as number);
    expect(encodeBm25Query('zq50984 zq98319').indices).toEqual([bm25TokenId('zq50984')]);
  });

  it('hashes like murmurhash3js-revisited, read as signed and made absolute', () => {
    const require = createRequire(import.meta.url);
    const reference = require('murmurhash3js-revisited') as {
      x86: { hash32(bytes: Uint8Array, seed: number): number };
    };
    const encoder = new TextEncoder();
    const samples = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'café', '日本語', '😀', 'x'.repeat(161)];
    for (let n = 0; n < 200; n++) {
      const codePoints = Array.from({ length: n % 23 }, (_, i) => 33 + ((n * 31 + i * 7919) % 0x2fff));
      samples.push(String.fromCodePoint(...codePoints));
    }
    for (const s of samples) {
      expect(bm25TokenId(s)).toBe(Math.abs(reference.x86.hash32(encoder.encode(s), 0) | 0));
    }
  });

  it('weights repeated terms by BM25 saturation and document length', () => {
    const once = encodeBm25Document('cat');
    const twice = encodeBm25Document('cat cat');
    expect(twice.values[0] as number).toBeGreaterThan(once.values[0] as number);
    expect(twice.values[0] as number).toBeLessThan(2.2); // k + 1
    const custom = encodeBm25Document('cat', { k: 1.5, b: 0, avgLen: 100 });
    expect(custom.values[0]).toBeCloseTo(1, 12); // b = 0, tf = 1: (k+1)/(1+k)
  });

  it('tokenises mixed ASCII and other scripts as fastembed does, however often words repeat (property)', () => {
    // fastembed's steps on the whole text: non-word characters to spaces, lower-case, word runs, drop, stem.
    // (No characters outside the BMP here: those take the stemmer's code-point path, covered by the fixture.)
    const stopwords = new Set(ENGLISH_STOPWORDS);
    const reference = (text: string) =>
      (
        text
          .replace(/[^\p{L}\p{N}_]/gu, ' ')
          .toLowerCase()
          .match(/[\p{L}\p{N}_]+/gu) ?? []
      )
        .filter((token) => token !== '_' && !stopwords.has(token) && [...token].length <= 40)
        .map((token) => stem(token))
        .filter((stemmed) => stemmed !== '');
    const piece = fc.oneof(
      fc.constantFrom(
        'The',
        'cells',
        'CELL',
        'running',
        'ΑΣ',
        'Σ',
        'ΑΣ.Β',
        'İstanbul',
        'naïve',
        'café',
        'x_y',
        '_',
        'R2D2',
        'α-helix',
        'a'.repeat(41),
      ),
      fc.constantFrom(' ', '  ', '.', '-', '\n', '—', '\u00a0', '\u0301', ',', '’'),
      fc.string({ unit: 'grapheme-ascii', maxLength: 8 }),
      fc.string({ unit: fc.constantFrom(...'aéΣσİıßǅ1٣_'), maxLength: 6 }),
    );
    const text = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, (t) => {
        expect(tokenizeBm25(t)).toEqual(reference(t));
        expect(tokenizeBm25(t)).toEqual(reference(t));
      }),
      { numRuns: 1500 },
    );
  });

  it('gives the same vectors after its remembered vocabulary is forgotten', () => {
    const text = 'Mitochondrial proteins in CELLS, cells and α-helices: naïve ΑΣ models.';
    const before = encodeBm25Document(text);
    // More distinct words than the encoder remembers, so it forgets and starts over.
    const filler = Array.from({ length: 210_000 }, (_, i) => `w${i.toString(36)}`).join(' ');
    encodeBm25Query(filler);
    expect(encodeBm25Document(text)).toEqual(before);
    expect(tokenizeBm25(text)).toEqual(tokenizeBm25(text));
  });

  it('rejects options outside their range', () => {
    for (const options of [{ k: -1 }, { b: 1.5 }, { b: -0.1 }, { avgLen: 0 }, { avgLen: Number.NaN }]) {
      let caught: unknown;
      try {
        encodeBm25Document('text', options);
      } catch (error) {
        caught = error;
      }
      expect(isLitmPackError(caught, 'invalid_input')).toBe(true);
    }
  });
});
