import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { getTokenizer } from '../src/index.js';
import { CL100K_PATTERN, O200K_PATTERN } from '../src/tokenize/pretokenize.js';
import { decodeRankTableFile, encodeRankTableFile, vocabularyFromTiktoken } from '../src/tokenize/rank-table.js';
import { countBySegments, countingSegments, loadTiktokenRanks, tokenizerFromVocabulary, vocabularySource } from '../src/tokenize/tiktoken.js';

const require = createRequire(import.meta.url);
const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
const reference = {
  o200k_base: new Tiktoken(require('js-tiktoken/ranks/o200k_base')),
  cl100k_base: new Tiktoken(require('js-tiktoken/ranks/cl100k_base')),
};

// Runs of 64+ non-space characters take the fast merge path; everything else goes to js-tiktoken as is.
const longRuns = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', minLength: 60, maxLength: 400 }).map((s) => s.replace(/\s/g, '')),
  fc.string({ unit: 'grapheme', minLength: 60, maxLength: 300 }),
  fc.constantFrom('x'.repeat(300), 'ab'.repeat(200), 'aGVsbG8gd29ybGQ='.repeat(20), '😀'.repeat(80), '東京'.repeat(90)),
);
// Text where the written-out ASCII split has to agree with the pattern: every character class the
// patterns distinguish, contractions, line breaks, runs, and a few non-ASCII letters, digits and spaces.
const asciiHeavy = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...'aZ0 \t\n\r\v\f.,;\'"/-_()[]#\u0000\u001f\u007f') },
      { weight: 3, arbitrary: fc.constantFrom("'s", "'S", "'re", "'Ve", "'ll", "'LL", "'d", "'x", "n't", 'Hello', 'HELLO', 'hELLO', 'abc123', '1234567', '\r\n', ' \n ', '  ', ' /', '.\n/', 'x/\n') },
      { weight: 1, arbitrary: fc.constantFrom('é', 'É', '٣', '\u00a0', '\u2028', '—', '\u0301', '日本', '😀', '\ud800') },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 6 }) },
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

const mixed = fc.array(fc.oneof(longRuns, fc.lorem({ maxCount: 20 }), fc.constantFrom(' ', '\n\n', '<|endoftext|>')), { maxLength: 5 }).map((p) => p.join(' '));

describe.each(['o200k_base', 'cl100k_base'] as const)('%s tokenizer', (encoding) => {
  const tokenizer = getTokenizer(encoding);

  it('counts exactly what js-tiktoken encodes, including long runs without spaces', () => {
    fc.assert(
      fc.property(mixed, (text) => {
        expect(tokenizer.count(text)).toBe(reference[encoding].encode(text, [], []).length);
      }),
      { numRuns: 150 },
    );
  });

  it('splits text into the same pieces as the encoding\'s own pattern', () => {
    const pattern = new RegExp(encoding === 'o200k_base' ? O200K_PATTERN : CL100K_PATTERN, 'gu');
    const split = (text: string) => (tokenizer as unknown as { pieces(text: string): string[] }).pieces(text);
    fc.assert(
      fc.property(fc.oneof(asciiHeavy, mixed), (text) => {
        expect(split(text)).toEqual(text.match(pattern) ?? []);
      }),
      { numRuns: 3000 },
    );
    expect(reference[encoding].encode('x', [], []).length).toBe(1);
  });

  it('counts text heavy in ASCII punctuation, contractions and line breaks exactly', () => {
    fc.assert(
      fc.property(asciiHeavy, (text) => {
        expect(tokenizer.count(text)).toBe(reference[encoding].encode(text, [], []).length);
      }),
      { numRuns: 500 },
    );
  });

  it('counts a text as the sum of its line segments, as the exact fit recounts contexts (property)', () => {
    const line = fc.oneof(asciiHeavy, mixed, fc.constantFrom('[12] Title (source: a.md)', '</document>', '/path', ' indented', '\tx', '', '.', '...', '\u00a0nbsp', '😀'));
    const text = fc.array(fc.tuple(line, fc.constantFrom('\n', '\n\n', '\r\n', '.\n', ' \n', '\n/', '\n\n\n')), { maxLength: 12 }).map((parts) => parts.map(([l, sep]) => l + sep).join(''));
    fc.assert(
      fc.property(text, (t) => {
        const exact = reference[encoding].encode(t, [], []).length;
        expect(countingSegments(t).join('')).toBe(t);
        expect(countingSegments(t).reduce((sum, segment) => sum + tokenizer.count(segment), 0)).toBe(exact);
        expect(countBySegments(tokenizer, t, new Map())).toBe(exact);
      }),
      { numRuns: 400 },
    );
  });

  it('has a lower bound that never exceeds the count', () => {
    fc.assert(
      fc.property(fc.oneof(mixed, fc.string({ unit: 'binary', maxLength: 200 })), (text) => {
        expect(tokenizer.lowerBound!(text)).toBeLessThanOrEqual(tokenizer.count(text));
      }),
      { numRuns: 300 },
    );
  });

  it('counts special-token strings as ordinary text instead of throwing', () => {
    expect(tokenizer.count('before <|endoftext|> after')).toBeGreaterThan(3);
  });
});

describe('the rank table file (written by the build, read on first use)', () => {
  it.each(['o200k_base', 'cl100k_base'] as const)('holds every rank of js-tiktoken’s %s and counts the same', (encoding) => {
    const ranks = loadTiktokenRanks(encoding);
    const file = encodeRankTableFile(encoding, vocabularyFromTiktoken(ranks));
    const vocabulary = decodeRankTableFile(file, encoding);
    expect(vocabulary.patStr).toBe(ranks.pat_str);
    const referenceRanks = (reference[encoding] as unknown as { rankMap: Map<string, number> }).rankMap;
    let tokens = 0;
    for (let rank = 0; rank < vocabulary.table.size; rank += 1) if (vocabulary.table.tokenBytes(rank).length > 0) tokens += 1;
    expect(tokens).toBe(referenceRanks.size);
    let mismatches = 0;
    for (const [key, rank] of referenceRanks) {
      const bytes = Uint8Array.from(key.split(',').map(Number));
      if (vocabulary.table.rank(bytes, 0, bytes.length) !== rank) mismatches += 1;
    }
    expect(mismatches).toBe(0);
    const fromFile = tokenizerFromVocabulary(encoding, vocabulary);
    fc.assert(
      fc.property(mixed, (text) => {
        expect(fromFile.count(text)).toBe(reference[encoding].encode(text, [], []).length);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a damaged file, a truncated one and one for another encoding', () => {
    const file = encodeRankTableFile('cl100k_base', vocabularyFromTiktoken(loadTiktokenRanks('cl100k_base')));
    const damaged = file.slice();
    damaged[damaged.length - 10] = damaged[damaged.length - 10]! ^ 0xff;
    expect(() => decodeRankTableFile(damaged, 'cl100k_base')).toThrow(/damaged/);
    expect(() => decodeRankTableFile(file.subarray(0, file.length - 1), 'cl100k_base')).toThrow(/truncated/);
    expect(() => decodeRankTableFile(file, 'o200k_base')).toThrow(/cl100k_base/);
    expect(() => decodeRankTableFile(new TextEncoder().encode('not a table'), 'cl100k_base')).toThrow(/not a rank table/);
  });
});

describe('tokenizer lifecycle', () => {
  it('reads js-tiktoken’s rank module when running from source (no built table beside it)', () => {
    getTokenizer('o200k_base');
    expect(vocabularySource('o200k_base')).toBe('js-tiktoken');
  });

  it('is built once per encoding', () => {
    expect(getTokenizer('o200k_base')).toBe(getTokenizer('o200k_base'));
  });

  it('is not built when the package root is imported', () => {
    const script = [
      "const m = await import('./src/index.ts');",
      "const t = await import('./src/tokenize/tiktoken.ts');",
      "console.log(JSON.stringify({ o200k: t.isTokenizerLoaded('o200k_base'), cl100k: t.isTokenizerLoaded('cl100k_base'), exports: typeof m.packBundle }));",
    ].join('\n');
    const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout.trim())).toEqual({ o200k: false, cl100k: false, exports: 'function' });
  });

  it('has a tight lower bound (the piece count)', () => {
    const tokenizer = getTokenizer('o200k_base');
    const prose = 'The refund is issued within fourteen days of the return being received.';
    expect(tokenizer.lowerBound!(prose)).toBe(tokenizer.count(prose));
    expect(tokenizer.lowerBound!('')).toBe(0);
  });
});
