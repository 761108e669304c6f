import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isLitmPackError, CandidateSchema, type ChunkRecord, type IngestDocument, getTokenizer } from '../src/index.js';
import { chunkDocument, chunkToCandidate, parseHeading, parseIngestDocuments } from '../src/store/chunk.js';

const indexedAt = '2025-01-02T03:04:05.000Z';
const o200k = getTokenizer('o200k_base');
const cl100k = getTokenizer('cl100k_base');
const maxCount = (text: string) => Math.max(o200k.count(text), cl100k.count(text));

function checkInvariants(doc: IngestDocument, chunks: ChunkRecord[], maxTokens: number) {
  let previousEnd = 0;
  for (const chunk of chunks) {
    expect(doc.text.slice(chunk.span.start, chunk.span.end)).toBe(chunk.text);
    expect(chunk.text.length).toBeGreaterThan(0);
    expect(chunk.text).toBe(chunk.text.trim());
    expect(chunk.span.start).toBeGreaterThanOrEqual(previousEnd);
    previousEnd = chunk.span.end;
    const singleCodePoint = [...chunk.text].length === 1;
    if (!singleCodePoint) expect(maxCount(chunk.text)).toBeLessThanOrEqual(maxTokens);
    expect(chunk.textSha256).toBe(createHash('sha256').update(chunk.text, 'utf8').digest('hex'));
    expect(chunk.tokens).toEqual({ o200k_base: o200k.count(chunk.text), cl100k_base: cl100k.count(chunk.text) });
  }
  expect(new Set(chunks.map((c) => c.id)).size).toBe(chunks.length);
}

const handbook = [
  '# Handbook',
  '',
  'Welcome to the team.',
  '',
  '## Leave',
  '',
  'Parental leave is sixteen weeks.',
  '',
  'Ask HR for the form.',
  '',
  '### Sick leave ###',
  'Call in before nine.',
  '',
  '```md',
  '# not a heading',
  '',
  'still code',
  '```',
  '',
  '## Pay',
  'Salaries are paid monthly.',
].join('\n');

describe('chunkDocument', () => {
  it('turns headings into section paths and merges paragraphs of one section', () => {
    const chunks = chunkDocument({ id: 'handbook.md', text: handbook }, { indexedAt });
    expect(chunks.map((c) => [c.section, c.text])).toEqual([
      [['Handbook'], 'Welcome to the team.'],
      [['Handbook', 'Leave'], 'Parental leave is sixteen weeks.\n\nAsk HR for the form.'],
      [['Handbook', 'Leave', 'Sick leave'], 'Call in before nine.\n\n```md\n# not a heading\n\nstill code\n```'],
      [['Handbook', 'Pay'], 'Salaries are paid monthly.'],
    ]);
    checkInvariants({ id: 'handbook.md', text: handbook }, chunks, 256);
  });

  it('copies document fields to every chunk and lifts a string metadata.kind', () => {
    const doc: IngestDocument = {
      id: 'a.md',
      text: 'One.\n\nTwo.',
      version: 'v1',
      title: 'A',
      url: 'https://example.com/a',
      timestamp: '2024-05-01',
      metadata: { lang: 'en', kind: 'insight' },
      acl: ['hr'],
    };
    const [chunk] = chunkDocument(doc, { indexedAt });
    expect(chunk).toMatchObject({
      sourceId: 'a.md',
      version: 'v1',
      title: 'A',
      url: 'https://example.com/a',
      timestamp: '2024-05-01',
      kind: 'insight',
      acl: ['hr'],
      metadata: { lang: 'en', kind: 'insight' },
      indexedAt,
      section: [],
    });
  });

  it('handles plain text, CRLF line endings and empty input', () => {
    const text = 'First line\r\nsame paragraph\r\n\r\nSecond paragraph\r\n';
    const chunks = chunkDocument({ id: 'p.txt', text }, { indexedAt, maxTokens: 4 });
    checkInvariants({ id: 'p.txt', text }, chunks, 4);
    expect(chunks.every((c) => c.section.length === 0)).toBe(true);
    expect(chunkDocument({ id: 'e', text: '' }, { indexedAt })).toEqual([]);
    expect(chunkDocument({ id: 'e', text: ' \n\n\t\n' }, { indexedAt })).toEqual([]);
  });

  it('splits an over-long paragraph at sentences, then words, then characters', () => {
    const sentences = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} is here.`).join(' ');
    const longWord = 'x'.repeat(400);
    const text = `${sentences}\n\n${'word '.repeat(300)}\n\n${longWord}`;
    const chunks = chunkDocument({ id: 'long', text }, { indexedAt, maxTokens: 32 });
    checkInvariants({ id: 'long', text }, chunks, 32);
    // sentence splits end on a full stop
    const firstParagraph = chunks.filter((c) => c.span.end <= sentences.length);
    expect(firstParagraph.length).toBeGreaterThan(1);
    expect(firstParagraph.every((c) => c.text.endsWith('.'))).toBe(true);
    // the word without spaces is cut into verbatim pieces that join back to it
    const pieces = chunks.filter((c) => c.text.startsWith('x'));
    expect(pieces.map((c) => c.text).join('')).toBe(longWord);
  });

  it('uses a given tokenizer for the bound', () => {
    const words = { name: 'words', count: (t: string) => (t.match(/\S+/g) ?? []).length };
    const text = 'a b c d e f g h i j';
    const chunks = chunkDocument({ id: 'w', text }, { indexedAt, maxTokens: 3, tokenizer: words });
    expect(chunks.map((c) => c.text)).toEqual(['a b c', 'd e f', 'g h i', 'j']);
  });

  it('is deterministic: the same document gives the same chunks', () => {
    const a = chunkDocument({ id: 'h', text: handbook, version: '1' }, { indexedAt });
    const b = chunkDocument({ id: 'h', text: handbook, version: '1' }, { indexedAt });
    expect(b).toEqual(a);
  });

  it('keys chunks by content: an inserted paragraph does not change the ids of the others', () => {
    const maxTokens = 8;
    const before = chunkDocument({ id: 'h', text: handbook }, { indexedAt, maxTokens });
    const edited = handbook.replace('Welcome to the team.', 'A brand new opening paragraph here.\n\nWelcome to the team.');
    const after = chunkDocument({ id: 'h', text: edited }, { indexedAt, maxTokens });
    const beforeIds = new Set(before.map((c) => c.id));
    const kept = after.filter((c) => beforeIds.has(c.id));
    expect(kept.length).toBe(before.length);
    expect(after.length).toBe(before.length + 1);
  });

  it('gives repeated identical paragraphs distinct ids, and ids depend on the source', () => {
    const text = 'Same.\n\n# A\n\nSame.\n\n# B\n\nSame.';
    const chunks = chunkDocument({ id: 's', text }, { indexedAt });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(3);
    const other = chunkDocument({ id: 't', text }, { indexedAt });
    expect(other.map((c) => c.id)).not.toEqual(chunks.map((c) => c.id));
  });

  it('keeps spans exact and the bound respected on random markdown (property)', () => {
    const word = fc.constantFrom(
      'alpha',
      'beta',
      'Gamma',
      'δέλτα',
      '数据',
      '🙂',
      'x'.repeat(30),
      'end.',
      'why?',
      'wow!',
      '"quoted."',
      'a-b',
      'ÿ',
      '#tag',
      '1.',
      '**bold**',
    );
    const sentence = fc.array(word, { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));
    const paragraph = fc.array(sentence, { minLength: 1, maxLength: 6 }).map((s) => s.join(' '));
    const heading = fc.tuple(fc.integer({ min: 1, max: 6 }), sentence).map(([level, title]) => `${'#'.repeat(level)} ${title}`);
    const fence = paragraph.map((p) => `\`\`\`\n${p}\n\n# inside\n\`\`\``);
    const block = fc.oneof(paragraph, paragraph, heading, fence, fc.constant('   '));
    const separator = fc.constantFrom('\n\n', '\n', '\r\n\r\n', '\n\n\n', '\n \n');
    const doc = fc.array(fc.tuple(block, separator), { minLength: 0, maxLength: 10 }).map((parts) => parts.map(([b, s]) => b + s).join(''));
    fc.assert(
      fc.property(doc, fc.integer({ min: 8, max: 64 }), (text, maxTokens) => {
        const source: IngestDocument = { id: 'prop', text };
        const chunks = chunkDocument(source, { indexedAt, maxTokens });
        checkInvariants(source, chunks, maxTokens);
        expect(chunkDocument(source, { indexedAt, maxTokens })).toEqual(chunks);
      }),
      { numRuns: 40 },
    );
  });

  it('loses no text of a document without headings (property)', () => {
    const word = fc.constantFrom('one', 'two.', 'Three!', '数据', '🙂', 'y'.repeat(50), 'ok?');
    const paragraph = fc.array(word, { minLength: 1, maxLength: 40 }).map((w) => w.join(' '));
    const doc = fc.array(paragraph, { maxLength: 8 }).map((ps) => ps.join('\n\n'));
    fc.assert(
      fc.property(doc, fc.integer({ min: 8, max: 40 }), (text, maxTokens) => {
        const chunks = chunkDocument({ id: 'plain', text }, { indexedAt, maxTokens });
        const squash = (t: string) => t.replace(/\s+/gu, '');
        expect(chunks.map((c) => squash(c.text)).join('')).toBe(squash(text));
      }),
      { numRuns: 40 },
    );
  });

  it('chunks long runs without spaces as counting every range in full does (property)', () => {
    // A tokenizer the chunker does not know (so it counts every range it asks about in full, with none of
    // the shortcuts) that bounds what the default bounds: the larger count of the two shipped encodings.
    const plain = { name: 'plain', count: maxCount };
    const unit = fc.constantFrom('a', '=', 'Ab', '東京', '😀', 'aGVsbG8gd29ybGQ=', 'https://example.com/a/b?c=d&', '数据。', 'é');
    const run = fc
      .tuple(unit, fc.integer({ min: 50, max: 3000 }))
      .map(([u, length]) => u.repeat(Math.ceil(length / u.length)).slice(0, length));
    const part = fc.oneof(run, fc.constantFrom('Some words here.', 'word '.repeat(120), 'Short.', '# Heading', 'end.\nnext'));
    const doc = fc
      .array(fc.tuple(part, fc.constantFrom(' ', '\n', '\n\n', '')), { minLength: 1, maxLength: 4 })
      .map((parts) => parts.map(([p, s]) => p + s).join(''));
    fc.assert(
      fc.property(doc, fc.integer({ min: 8, max: 200 }), (text, maxTokens) => {
        const source: IngestDocument = { id: 'run', text };
        const chunks = chunkDocument(source, { indexedAt, maxTokens });
        checkInvariants(source, chunks, maxTokens);
        expect(chunks).toEqual(chunkDocument(source, { indexedAt, maxTokens, tokenizer: plain }));
      }),
      { numRuns: 60 },
    );
  });

  it('reads headings as the heading pattern does, without its backtracking (property)', () => {
    const pattern = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
    const character = fc.constantFrom('#', ' ', '\t', 'a', 'Z', '\r', '\u2028', '\u00a0', 'é', '\\');
    fc.assert(
      fc.property(fc.array(character, { maxLength: 16 }), (characters) => {
        const line = characters.join('');
        const match = pattern.exec(line);
        expect(parseHeading(line)).toEqual(match ? { level: match[1]!.length, title: (match[2] ?? '').trim() } : null);
      }),
      { numRuns: 20_000 },
    );
    // The pattern backtracks over a run of spaces: this line took it seconds.
    expect(parseHeading(`# x${' '.repeat(200_000)}y`)).toEqual({ level: 1, title: `x${' '.repeat(200_000)}y` });
  });

  it('rejects a non-positive maxTokens', () => {
    expect(() => chunkDocument({ id: 'a', text: 'x' }, { indexedAt, maxTokens: 0 })).toThrow(/maxTokens/);
  });
});

describe('chunkToCandidate', () => {
  it('maps a record to a valid candidate with per-encoding tokens, without the ACL', () => {
    const [record] = chunkDocument(
      {
        id: 'a.md',
        text: '# T\n\nBody text.',
        version: 'v1',
        timestamp: '2024-05-01T10:00:00Z',
        metadata: { kind: 'segment', lang: 'en' },
        acl: ['hr'],
      },
      { indexedAt },
    );
    const candidate = chunkToCandidate(record!, 0.7, 0.42);
    expect(CandidateSchema.parse(candidate)).toEqual(candidate);
    expect(candidate).toEqual({
      id: record!.id,
      text: 'Body text.',
      score: 0.7,
      similarity: 0.42,
      sourceId: 'a.md',
      version: 'v1',
      section: ['T'],
      span: record!.span,
      kind: 'segment',
      timestamp: '2024-05-01T10:00:00Z',
      indexedAt,
      tokens: record!.tokens,
      metadata: { kind: 'segment', lang: 'en' },
    });
    expect(chunkToCandidate(record!, 0).similarity).toBeUndefined();
  });
});

describe('parseIngestDocuments', () => {
  it.each([
    [
      [
        { id: 'a', text: 'x' },
        { id: 'a', text: 'y' },
      ],
      'more than once',
    ],
    [[{ id: 'a', text: 'x', acl: [] }], 'acl'],
    [[{ id: 'a', text: 'x', timestamp: 'yesterday' }], 'timestamp'],
    [[{ id: '', text: 'x' }], 'id'],
    [[{ id: 'a', text: 'x', metadata: { when: new Date() } }], 'metadata'],
    [[{ id: 'a', text: 'x', extra: 1 }], 'extra'],
  ])('rejects %j', (docs, what) => {
    try {
      parseIngestDocuments(docs);
      throw new Error('expected a throw');
    } catch (error) {
      expect(isLitmPackError(error, 'invalid_input')).toBe(true);
      expect((error as Error).message).toContain(what);
    }
  });
});
