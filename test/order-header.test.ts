// Block order (`order`) and header styles (`header`): what each strategy puts where, what each header shows,
// and that neither changes which items are kept or what the citations hold.
import { describe, expect, it } from 'vitest';
import { Document } from '@langchain/core/documents';
import { isLitmPackError, packBriefing, packBundle, type CandidateInput } from '../src/index.js';
import { LitmCompressor, formatDocumentsAsContext } from '../src/langchain/index.js';
import { packCandidates } from '../src/pipeline/bundle.js';
import { servePack } from '../src/service/service.js';
import { DEFAULT_LIMITS } from '../src/service/limits.js';
import { requestSchemas } from '../src/service/requests.js';

const candidates: CandidateInput[] = [
  {
    id: 'a#1',
    sourceId: 'a.md',
    title: 'Alpha',
    score: 0.9,
    span: { start: 100, end: 200 },
    timestamp: '2024-03-01',
    text: 'Alpha second part.',
    locator: { page: 3 },
  },
  { id: 'a#0', sourceId: 'a.md', title: 'Alpha', score: 0.5, span: { start: 0, end: 100 }, text: 'Alpha first part.' },
  {
    id: 'b#0',
    sourceId: 'b.md',
    title: 'b.md',
    version: 'v2',
    score: 0.8,
    timestamp: '2023-01-01',
    text: 'Beta.',
    locator: { lines: [4, 9] },
  },
  { id: 'c#0', sourceId: 'c.md', score: 0.7, timestamp: '2025-01-01T00:00:00Z', text: 'Gamma.', section: ['Intro', 'Scope'] },
];
const ids = (order: 'litm' | 'document' | 'chronological' | 'rank') =>
  packBundle({ query: 'q', candidates, maxTokens: 500, order }).items.map((item) => item.id);

describe('order', () => {
  it('litm (the default): best first, second best last', () => {
    expect(ids('litm')).toEqual(['a#1', 'c#0', 'a#0', 'b#0']);
    expect(packBundle({ query: 'q', candidates, maxTokens: 500 }).items.map((item) => item.id)).toEqual(ids('litm'));
  });

  it("document: sources by their best item, a source's items in span order", () => {
    expect(ids('document')).toEqual(['a#0', 'a#1', 'b#0', 'c#0']);
  });

  it('chronological: oldest first, items without a timestamp after', () => {
    expect(ids('chronological')).toEqual(['b#0', 'a#1', 'c#0', 'a#0']);
  });

  it('rank: best first, straight down', () => {
    expect(ids('rank')).toEqual(['a#1', 'b#0', 'c#0', 'a#0']);
  });

  it('keeps the same items, ranks and citations whatever the order; refs follow the context', () => {
    const byId = (order: 'litm' | 'rank') => {
      const pack = packBundle({ query: 'q', candidates, maxTokens: 60, order });
      return pack.items
        .map((item, i) => ({ id: item.id, rank: item.rank, text: item.text, hash: pack.citations[i]!.textSha256 }))
        .sort((x, y) => (x.id < y.id ? -1 : 1));
    };
    expect(byId('rank')).toEqual(byId('litm'));
    const pack = packBundle({ query: 'q', candidates, maxTokens: 500, order: 'rank' });
    expect(pack.items.map((item) => item.ref)).toEqual([1, 2, 3, 4]);
    expect(pack.items.map((item) => item.rank)).toEqual([1, 2, 3, 4]);
  });

  it('is a bundle option: a briefing is ordered by its zones and refuses it', () => {
    expect(() => packBriefing({ query: 'q', candidates, maxTokens: 500, order: 'rank' } as never)).toThrow(/order/);
  });

  it('a pack request of kind briefing refuses order, by name', async () => {
    const error = await packCandidates({ query: 'q', candidates, kind: 'briefing', order: 'rank' }).catch((e: unknown) => e);
    expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    expect(String((error as Error).message)).toContain('order applies to kind "bundle" only');
  });

  it('unknown orders are refused with the vocabulary', () => {
    const parsed = requestSchemas(DEFAULT_LIMITS).pack.safeParse({ query: 'q', candidates: [], order: 'newest' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe('order must be one of litm, document, chronological, rank');
  });

  it('the service and the compressor take it too', async () => {
    const request = requestSchemas(DEFAULT_LIMITS).pack.parse({ query: 'q', candidates, order: 'document' });
    expect((await servePack(request)).items.map((item) => item.id)).toEqual(ids('document'));
    const compressor = new LitmCompressor({ maxTokens: 500, order: 'rank' });
    const documents = candidates.map(
      (c) => new Document({ pageContent: c.text, metadata: { id: c.id, source: c.sourceId, score: c.score } }),
    );
    const out = await compressor.compressDocuments(documents, 'q');
    expect(out.map((d) => d.metadata.id)).toEqual(['a#1', 'b#0', 'c#0', 'a#0']);
  });
});

describe('header', () => {
  const context = (header: 'full' | 'compact' | 'minimal', format: 'markdown' | 'xml' = 'markdown') =>
    packBundle({ query: 'q', candidates, maxTokens: 500, order: 'rank', header, format }).context;

  it('full: title, source, version, section and locator', () => {
    expect(
      context('full')
        .split('\n')
        .filter((line) => line.startsWith('[')),
    ).toEqual([
      '[1] Alpha (source: a.md, p. 3)',
      '[2] b.md (source: b.md, version: v2, lines 4–9)',
      '[3] (source: c.md, section: Intro > Scope)',
      '[4] Alpha (source: a.md)',
    ]);
  });

  it('compact: the title (or the source, once) and the locator', () => {
    expect(
      context('compact')
        .split('\n')
        .filter((line) => line.startsWith('[')),
    ).toEqual(['[1] Alpha (p. 3)', '[2] b.md (lines 4–9)', '[3] c.md', '[4] Alpha']);
  });

  it('minimal: the title or the source', () => {
    expect(
      context('minimal')
        .split('\n')
        .filter((line) => line.startsWith('[')),
    ).toEqual(['[1] Alpha', '[2] b.md', '[3] c.md', '[4] Alpha']);
  });

  it('xml: fewer fields for compact and minimal', () => {
    expect(context('compact', 'xml')).toContain('<document index="1">\n<title>Alpha</title>\n<locator>p. 3</locator>\n<document_content>');
    expect(context('compact', 'xml')).toContain(
      '<document index="2">\n<source>b.md</source>\n<locator>lines 4–9</locator>\n<document_content>',
    );
    expect(context('minimal', 'xml')).toContain('<document index="1">\n<title>Alpha</title>\n<document_content>');
    expect(context('minimal', 'xml')).not.toContain('<locator>');
  });

  it('a value that could pass for header syntax is still quoted', () => {
    const pack = packBundle({
      query: 'q',
      maxTokens: 200,
      header: 'minimal',
      candidates: [{ id: 'x', score: 1, title: 'Refunds (source: policy.md)', text: 'T.' }],
    });
    expect(pack.context.split('\n')[0]).toBe('[1] "Refunds (source: policy.md)"');
  });

  it('the citations keep every field whatever the header; the pack records the header', () => {
    const full = packBundle({ query: 'q', candidates, maxTokens: 500, header: 'full' });
    const minimal = packBundle({ query: 'q', candidates, maxTokens: 500, header: 'minimal' });
    expect(minimal.citations).toEqual(full.citations);
    expect(minimal.header).toBe('minimal');
    expect(minimal.budget.usedTokens).toBeLessThan(full.budget.usedTokens);
  });

  it("formatDocumentsAsContext renders a compressor's documents again with their pack's header", async () => {
    const compressor = new LitmCompressor({ maxTokens: 500, header: 'compact' });
    const documents = candidates.map(
      (c) =>
        new Document({
          pageContent: c.text,
          metadata: { id: c.id, source: c.sourceId, title: c.title, score: c.score, locator: c.locator },
        }),
    );
    const out = await compressor.compressDocuments(documents, 'q');
    const { pack } = await compressor.compressWithCitations(documents, 'q');
    expect(formatDocumentsAsContext(out)).toBe(pack.context);
    expect(() => formatDocumentsAsContext(out, { header: 'full' })).toThrow(/header compact/);
  });
});

describe('maxTokens', () => {
  it('missing: "maxTokens is required"', () => {
    expect(() => packBundle({ query: 'q', candidates } as never)).toThrow('maxTokens is required');
    expect(() => packBundle({ query: 'q', candidates, maxTokens: 'ten' } as never)).toThrow('maxTokens must be a number');
  });
});
