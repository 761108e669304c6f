import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { getTokenizer } from '../src/index.js';
import { CL100K_PATTERN, O200K_PATTERN } from '../src/tokenize/pretokenize.js';
import { decodeRankTableFile, encodeRankTableFile, vocabularyFromTiktoken } from '../src/tokenize/rank-table.js';
import {
  countBySegments,
  countUpTo,
  countingSegments,
  loadTiktokenRanks,
  runLimit,
  splitsAt,
  tokenizerFromVocabulary,
  vocabularySource,
} from '../src/tokenize/tiktoken.js';

const require = createRequire(import.meta.url);
const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
const reference = {
  o200k_base: new Tiktoken(require('js-tiktoken/ranks/o200k_base') as import('js-tiktoken/lite').TiktokenBPE),
  cl100k_base: new Tiktoken(require('js-tiktoken/ranks/cl100k_base') as import('js-tiktoken/lite').TiktokenBPE),
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
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          "'s",
          "'S",
          "'re",
          "'Ve",
          "'ll",
          "'LL",
          "'d",
          "'x",
          "n't",
          'Hello',
          'HELLO',
          'hELLO',
          'abc123',
          '1234567',
          '\r\n',
          ' \n ',
          '  ',
          ' /',
          '.\n/',
          'x/\n',
        ),
      },
      { weight: 1, arbitrary: fc.constantFrom('é', 'É', '٣', '\u00a0', '\u2028', '—', '\u0301', '日本', '😀', '\ud800') },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 6 }) },
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

const mixed = fc
  .array(fc.oneof(longRuns, fc.lorem({ maxCount: 20 }), fc.constantFrom(' ', '\n\n', '<|endoftext|>')), { maxLength: 5 })
  .map((p) => p.join(' '));

// One pre-tokenised piece of up to 400 characters: a repeated unit (the worst case for a merge: 'a' and
// '=' have tokens of many lengths), or random characters of one kind. Long enough to take the prefix-count
// path (more than 64 bytes), short enough for js-tiktoken's quadratic merge to check it.
const units = ['a', '=', '-', 'ab', 'Ab', '東京', '😀', '.', '_', 'é', 'aé', '٣', 'ʰ'];
const unitRuns = fc
  .tuple(fc.constantFrom(...units), fc.integer({ min: 40, max: 400 }))
  .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length));
const randomRuns = fc
  .tuple(
    fc.constantFrom(
      'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/',
      'abcdefghijklmnopqrstuvwxyz',
      '!@#$%^&*()-=+[]{};:,.<>?~`|',
      '東京都日本語中文字漢字カナかな한국어',
      '😀😃😄🀄🎉',
      'еёжзийклмнопрстуфхцчшщ',
    ),
    fc.array(fc.nat(), { minLength: 40, maxLength: 300 }),
  )
  .map(([alphabet, picks]) => {
    const characters = [...alphabet];
    return picks.map((p) => characters[p % characters.length]).join('');
  });
const runs = fc.oneof(unitRuns, randomRuns);

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

  it("splits text into the same pieces as the encoding's own pattern", () => {
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
    const line = fc.oneof(
      asciiHeavy,
      mixed,
      fc.constantFrom('[12] Title (source: a.md)', '</document>', '/path', ' indented', '\tx', '', '.', '...', '\u00a0nbsp', '😀'),
    );
    const text = fc
      .array(fc.tuple(line, fc.constantFrom('\n', '\n\n', '\r\n', '.\n', ' \n', '\n/', '\n\n\n')), { maxLength: 12 })
      .map((parts) => parts.map(([l, sep]) => l + sep).join(''));
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

  it('counts long runs without spaces, and every prefix of them, exactly (property)', () => {
    fc.assert(
      fc.property(runs, fc.array(fc.nat(), { minLength: 3, maxLength: 3 }), (run, cuts) => {
        expect(tokenizer.count(run)).toBe(reference[encoding].encode(run, [], []).length);
        // Prefixes of a run counted before read its counts, longer ones carry them on: both stay exact.
        for (const cut of cuts) {
          const prefix = run.slice(0, 1 + (cut % run.length));
          expect(tokenizer.count(prefix)).toBe(reference[encoding].encode(prefix, [], []).length);
        }
        const longer = `${run}${run.slice(0, 50)}`;
        expect(tokenizer.count(longer)).toBe(reference[encoding].encode(longer, [], []).length);
      }),
      { numRuns: 60 },
    );
  });

  it('counts longer runs as js-tiktoken merges them (sampled)', () => {
    // js-tiktoken merges a piece in time quadratic in its length: these take it up to a second each.
    for (const run of ['a'.repeat(2000), '='.repeat(1000), 'Ab'.repeat(600), '東京'.repeat(200), '😀'.repeat(300)]) {
      expect(tokenizer.count(run)).toBe(reference[encoding].encode(run, [], []).length);
    }
  });

  it('counts up to a limit: exact at or under it, above it otherwise (property)', () => {
    fc.assert(
      fc.property(fc.oneof(runs, mixed, asciiHeavy), fc.integer({ min: 0, max: 400 }), (text, limit) => {
        const exact = reference[encoding].encode(text, [], []).length;
        const upTo = countUpTo(tokenizer, text, limit);
        if (exact <= limit) expect(upTo).toBe(exact);
        else expect(upTo).toBeGreaterThan(limit);
      }),
      { numRuns: 200 },
    );
  });

  it('bounds a run from its start: every text that long from there has more tokens than the limit (property)', () => {
    // The reference here is the tokenizer's own count (checked against js-tiktoken above): runs of up to
    // 5,000 characters are out of js-tiktoken's reach in a test.
    let bounded = 0;
    const longer = fc
      .tuple(
        fc.constantFrom(...units, 'aB1', 'x.y', 'a-b'),
        fc.integer({ min: 200, max: 5000 }),
        fc.constantFrom('', ' tail', '1', 'x', 'Q', "'s", '.'),
      )
      .map(([unit, length, tail]) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length) + tail);
    fc.assert(
      fc.property(
        fc.oneof(
          longer,
          fc.tuple(randomRuns, randomRuns).map(([a, b]) => a + b + a),
        ),
        fc.integer({ min: 1, max: 400 }),
        fc.nat(),
        (text, limit, at) => {
          const k = runLimit(tokenizer, text, 0, limit);
          if (k === Infinity) return;
          bounded += 1;
          for (const end of [k, k + (at % (text.length - k + 1)), text.length]) {
            expect(tokenizer.count(text.slice(0, end))).toBeGreaterThan(limit);
          }
        },
      ),
      { numRuns: 200 },
    );
    expect(bounded).toBeGreaterThan(20);
    expect(runLimit(tokenizer, 'a'.repeat(10_000), 0, 100)).toBeLessThan(2000);
    expect(runLimit(tokenizer, 'word '.repeat(2000), 0, 100)).toBe(Infinity);
  });

  it('adds the counts of the two sides of a split point (property)', () => {
    const shortRuns = unitRuns.map((run) => run.slice(0, 80));
    const part = fc.oneof(
      asciiHeavy,
      shortRuns,
      fc.constantFrom('word', 'end.', 'x)', 'ǅa', '漢A', "can'", 'a\u0301', '٣٣٣', '1234', '😀'),
    );
    const gap = fc.constantFrom(' ', '  ', '\n', '\n\n', '\r\n', ' \n', '\t', '\u00a0', '\u3000', ' /');
    fc.assert(
      fc.property(part, gap, part, (left, space, right) => {
        const text = `${left}${space}${right}`;
        const at = left.length;
        if (!splitsAt(text, at)) return;
        const whole = reference[encoding].encode(text, [], []).length;
        expect(tokenizer.count(text.slice(0, at)) + tokenizer.count(text.slice(at))).toBe(whole);
      }),
      { numRuns: 1000 },
    );
    expect(splitsAt('end.\nNext', 4)).toBe(false);
    expect(splitsAt('word next', 4)).toBe(true);
  });

  it('has a lower bound that never exceeds the count', () => {
    fc.assert(
      fc.property(fc.oneof(mixed, runs, fc.string({ unit: 'binary', maxLength: 200 })), (text) => {
        expect(tokenizer.lowerBound!(text)).toBeLessThanOrEqual(tokenizer.count(text));
      }),
      { numRuns: 300 },
    );
  });

  it('counts special-token strings as ordinary text instead of throwing', () => {
    expect(tokenizer.count('before <|endoftext|> after')).toBeGreaterThan(3);
  });
});

describe('the pre-tokenising patterns', () => {
  // What `runLimit` rests on: when a piece matched in the first k characters of a text takes all k, the
  // piece the pattern matches in the whole text is at least k - 1 characters long.
  it.each([
    ['o200k_base', O200K_PATTERN],
    ['cl100k_base', CL100K_PATTERN],
  ])('%s: a piece that fills a head of the text is, in the whole text, at most one character shorter (property)', (_name, source) => {
    const pattern = new RegExp(source, 'uy');
    const firstPiece = (text: string) => {
      pattern.lastIndex = 0;
      return pattern.test(text) ? pattern.lastIndex : -1;
    };
    const character = fc.constantFrom(
      ...'aZ0 \t\n\r.,\'"/-_()漢字カナ한ÉéßʰǅⅠ٣\u0301\u00a0\u2028sStTmMdDlLrRvVeE😀🀄'.split(/(?:)/u),
      "'s",
      "'ll",
      "'re",
      "'VE",
    );
    let filled = 0;
    fc.assert(
      fc.property(fc.array(character, { minLength: 1, maxLength: 24 }), fc.nat(), (characters, at) => {
        const text = characters.join('');
        const k = 1 + (at % text.length);
        if (firstPiece(text.slice(0, k)) !== k) return;
        filled += 1;
        expect(firstPiece(text)).toBeGreaterThanOrEqual(k - 1);
      }),
      { numRuns: 20_000 },
    );
    expect(filled).toBeGreaterThan(1000);
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
