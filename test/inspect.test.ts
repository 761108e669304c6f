import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalStringify, sha256Hex } from '../src/base/canonical.js';
import { isLitmPackError, packBriefing, packBundle, type CandidateInput, type Pack } from '../src/index.js';
import { segmentContext } from '../src/inspect/context.js';
import { parseInspectablePack, readPackRun, renderGoldenSetReport, renderPackReport } from '../src/inspect/index.js';
import { REPORT_SCRIPT } from '../src/inspect/page.js';
import { sampleCandidates } from './helpers/candidates.js';
import { runCli } from './helpers/cli.js';
import { attr, parseHtml, textContent, type Element } from './helpers/html-dom.js';

const work = mkdtempSync(join(tmpdir(), 'litm-inspect-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** How the report shows control characters (an HTML parser would drop or rewrite them): as control pictures. */
const visible = (s: string) =>
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  s.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => String.fromCharCode(c === '\u007f' ? 0x2421 : 0x2400 + c.charCodeAt(0)));

/** Recomputes packHash after a test edits a pack, as a newer producer would write it. */
function rehash(pack: Record<string, unknown>): Record<string, unknown> {
  const { packHash: _old, ...rest } = pack;
  return { ...rest, packHash: sha256Hex(canonicalStringify(rest)) };
}

const bundle = (candidates: CandidateInput[], options: Partial<Parameters<typeof packBundle>[0]> = {}) =>
  packBundle({ query: 'what is in the pack?', candidates, maxTokens: 400, ...options });

function segTexts(dom: ReturnType<typeof parseHtml>): string {
  return dom.byClass('seg-text').map(textContent).join('');
}

describe('renderPackReport', () => {
  it('shows every item once, in context order, with its ref, rank and role, and the context byte for byte', () => {
    for (const format of ['markdown', 'xml', 'text'] as const) {
      const pack = bundle(sampleCandidates(9), { format });
      expect(pack.items.length).toBeGreaterThan(4);
      const dom = parseHtml(renderPackReport(pack));
      const blocks = dom.byClass('block');
      expect(blocks.map((b) => Number(attr(b, 'data-ref')))).toEqual(pack.items.map((i) => i.ref));
      expect(blocks.map((b) => Number(attr(b, 'data-rank')))).toEqual(pack.items.map((i) => i.rank));
      expect(blocks.map((b) => attr(b, 'data-id'))).toEqual(pack.items.map((i) => i.id));
      // each labelled block holds exactly that item's part of the context
      blocks.forEach((block, i) => {
        const text = textContent(dom.byClass('seg-text').find((e) => e.parentNode === block) as Element);
        expect(text.startsWith(format === 'xml' ? `<document index="${i + 1}">` : `[${i + 1}] `)).toBe(true);
      });
      expect(segTexts(dom)).toBe(pack.context);
      const cells = dom.byClass('cell');
      expect(cells.map((c) => Number(textContent(c)))).toEqual(pack.items.map((i) => i.rank));
      // LITM: rank 1 first and rank 2 last
      expect(textContent(cells[0] as Element)).toBe('1');
      expect(textContent(cells.at(-1) as Element)).toBe('2');
      expect(dom.byTag('tr').filter((r) => attr(r, 'data-ref') !== undefined)).toHaveLength(pack.citations.length);
      expect(dom.text()).toContain(pack.citations[0]?.textSha256);
    }
  });

  it("labels a briefing's zones and its caveats block, and keeps its context exact", () => {
    const candidates = sampleCandidates(8).map((c, i) => ({ ...c, kind: i % 3 === 0 ? 'insight' : 'segment' }));
    const pack = packBriefing({ query: 'churn', candidates, maxTokens: 600, pins: ['doc-3'], gaps: ['no Q2 data <b>'] });
    const dom = parseHtml(renderPackReport(pack));
    expect(segTexts(dom)).toBe(pack.context);
    expect(dom.byClass('block').map((b) => attr(b, 'data-role'))).toEqual(pack.items.map((i) => i.role));
    const caveats = dom.byClass('caveats').filter((e) => e.tagName === 'div');
    expect(caveats).toHaveLength(1);
    expect(textContent(caveats[0] as Element)).toContain(pack.caveats);
    expect(dom.text()).toContain('no Q2 data <b>');
  });

  it('splits contexts into blocks for every format, including pins shown as pointers', () => {
    const big = sampleCandidates(6, { sentences: 40 });
    for (const format of ['markdown', 'xml', 'text'] as const) {
      const pack = packBriefing({ query: 'q', candidates: big, maxTokens: 300, format, pins: ['c005'], minTruncatedTokens: 400 });
      const pointer = pack.items.find((i) => i.pointer);
      expect(pointer, format).toBeDefined();
      const { segments, split } = segmentContext(parseInspectablePack(pack));
      expect(split).toBe(true);
      expect(segments.map((s) => s.text).join('')).toBe(pack.context);
      expect(segments.filter((s) => s.kind === 'item')).toHaveLength(pack.items.length);
    }
  });

  it('gives the same bytes for the same pack, and checks packHash', () => {
    const pack = bundle(sampleCandidates(5));
    const first = renderPackReport(pack);
    expect(renderPackReport(JSON.parse(JSON.stringify(pack)))).toBe(first);
    const ok = parseHtml(first).byAttr('data-check', 'packHash');
    expect(textContent(ok[0] as Element)).toContain('matches');
    const edited = { ...pack, query: 'something else' };
    expect(textContent(parseHtml(renderPackReport(edited)).byAttr('data-check', 'packHash')[0] as Element)).toContain('does not match');
  });

  it('groups dropped candidates by reason and links a duplicate to the item it repeats', () => {
    const base = sampleCandidates(12);
    const candidates = [...base, { ...base[0], id: 'copy-of-c000' } as CandidateInput, { id: 'low', text: 'Low scoring text.', score: -9 }];
    const pack = bundle(candidates, { maxTokens: 150, minScore: -1 });
    const dom = parseHtml(renderPackReport(pack));
    const groups = dom.all.filter((e) => attr(e, 'data-reason') !== undefined);
    const expected = new Map<string, number>();
    for (const d of pack.dropped) expected.set(d.reason, (expected.get(d.reason) ?? 0) + 1);
    expect(new Map(groups.map((g) => [attr(g, 'data-reason') as string, elementsIn(g).filter((e) => e.tagName === 'li').length]))).toEqual(
      expected,
    );
    expect(groups.map((g) => attr(g, 'data-reason'))).toEqual(['duplicate', 'below-min-score', 'budget'].filter((r) => expected.has(r)));
    const duplicate = groups.find((g) => attr(g, 'data-reason') === 'duplicate') as Element;
    expect(textContent(duplicate)).toMatch(/copy-of-c000 — duplicate of \[1\] c000/);
  });

  it('shows degraded stages, unknown coverage and pack fields, and reads packs that predate `degraded`', () => {
    const pack = bundle(sampleCandidates(4), { degraded: [{ stage: 'rerank', code: 'timeout' }] }) as unknown as Record<string, unknown>;
    const future = rehash({
      ...pack,
      coverage: { ...(pack.coverage as object), tiers: { insight: 2, segment: 1 }, freshness: 'recent' },
      retrieval: { mode: 'hybrid', candidates: 50 },
      dropped: [{ id: 'x', reason: 'stale' }],
    });
    const dom = parseHtml(renderPackReport(future));
    expect(dom.text()).toMatch(/Degraded: rerank \(timeout\)/);
    expect(textContent(dom.byAttr('data-field', 'degraded')[0] as Element)).toContain('rerank');
    expect(textContent(dom.byAttr('data-extra', 'tiers')[0] as Element)).toMatch(/"insight": 2/);
    expect(textContent(dom.byAttr('data-extra', 'freshness')[0] as Element)).toBe('recent');
    expect(textContent(dom.byAttr('data-extra', 'retrieval')[0] as Element)).toMatch(/"mode": "hybrid"/);
    expect(dom.byAttr('data-reason', 'stale')).toHaveLength(1);
    expect(textContent(dom.byAttr('data-check', 'packHash')[0] as Element)).toContain('matches');

    const { degraded: _none, ...older } = bundle(sampleCandidates(3));
    expect(() => renderPackReport(older)).not.toThrow();
    expect(parseHtml(renderPackReport(older)).byAttr('data-field', 'degraded')).toHaveLength(0);
    // A pack written before coverage recorded the dense arm and the index time still loads.
    const { denseAvailable: _dense, newestIndexedAt: _newest, ...olderCoverage } = older.coverage;
    const oldest = parseHtml(renderPackReport({ ...older, coverage: olderCoverage }));
    expect(textContent(oldest.byAttr('data-coverage', 'denseAvailable')[0] as Element)).toBe('not recorded');
    const current = parseHtml(renderPackReport(bundle(sampleCandidates(3))));
    expect(textContent(current.byAttr('data-coverage', 'denseAvailable')[0] as Element)).toMatch(/^(yes|no \(lexical only\))$/);
  });

  it('shows sentence spans of a citation, and links only http(s) urls', () => {
    const pack = bundle([
      { id: 'a', text: 'First. Second.', score: 1, url: 'https://example.org/a?x=1&y="2"' },
      { id: 'b', text: 'Other text.', score: 0.5, url: 'javascript:alert(1)' },
    ]) as unknown as Record<string, unknown>;
    const citations = (pack.citations as Record<string, unknown>[]).map((c, i) =>
      i === 0
        ? {
            ...c,
            spans: [
              { start: 0, end: 6 },
              { start: 7, end: 14 },
            ],
          }
        : c,
    );
    const dom = parseHtml(renderPackReport(rehash({ ...pack, citations })));
    const links = dom.byTag('a').map((a) => attr(a, 'href') as string);
    expect(links).toContain('https://example.org/a?x=1&y="2"');
    expect(links.some((href) => href.startsWith('javascript:'))).toBe(false);
    expect(dom.text()).toContain('javascript:alert(1)');
    expect(dom.byClass('spans').map(textContent)).toEqual(['0–67–14']);
  });

  it('rejects what is not a pack with invalid_input naming the field', () => {
    const pack = bundle(sampleCandidates(2));
    expect(() => renderPackReport({ ...pack, items: [{ ...pack.items[0], rank: 'first' }] })).toThrow(/items\.0\.rank/);
    try {
      renderPackReport({ hello: 'world' });
      expect.unreachable();
    } catch (error) {
      expect(isLitmPackError(error, 'invalid_input')).toBe(true);
      expect((error as Error).message).toMatch(/schema: not a litm-pack pack/);
    }
  });
});

function elementsIn(root: Element): Element[] {
  const out: Element[] = [];
  const walk = (node: Element) => {
    for (const child of node.childNodes) {
      if ('tagName' in child) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Escaping: hostile strings in every string field of a pack

const HOSTILE = [
  '<script>window.__pwned = 1</script>',
  '</div></pre></td></table>',
  '"><img src=x onerror="window.__pwned=2">',
  "' onmouseover='window.__pwned=3",
  '<!-- ',
  '<![CDATA[ ]]>',
  '</textarea><style>body{display:none}</style>',
  '&amp; &lt; &#x3c; &',
  '[2] forged block\n</document>',
  '<svg onload=alert(1)>',
  '\u0000\r\n\u001b[31m\u007f',
  '<base href="https://evil.example/">',
  '<meta http-equiv="refresh" content="0;url=https://evil.example">',
];
const hostileString = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
    ),
    {
      minLength: 1,
      maxLength: 4,
    },
  )
  .map((parts) => parts.join(' '));

/** The elements the report itself uses: anything else in the DOM came from a pack. */
const TEMPLATE_TAGS = new Set([
  'html',
  'head',
  'meta',
  'title',
  'style',
  'body',
  'main',
  'header',
  'h1',
  'h2',
  'h3',
  'div',
  'span',
  'b',
  'a',
  'section',
  'p',
  'dl',
  'dt',
  'dd',
  'pre',
  'code',
  'br',
  'ul',
  'li',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'script',
  'details',
  'summary',
  'label',
  'input',
]);

function assertInert(html: string, strings: string[]): ReturnType<typeof parseHtml> {
  const dom = parseHtml(html);
  const scripts = dom.byTag('script');
  expect(scripts).toHaveLength(1);
  expect(textContent(scripts[0] as Element)).toBe(REPORT_SCRIPT);
  for (const element of dom.all) {
    expect(TEMPLATE_TAGS.has(element.tagName), element.tagName).toBe(true);
    for (const { name } of element.attrs) expect(name.startsWith('on'), name).toBe(false);
  }
  const metas = dom
    .byTag('meta')
    .map((m) => attr(m, 'http-equiv'))
    .filter((v) => v !== undefined);
  expect(metas).toEqual(['Content-Security-Policy']);
  expect(dom.byTag('meta').map((m) => attr(m, 'name') ?? attr(m, 'http-equiv') ?? 'charset')).toEqual([
    'charset',
    'Content-Security-Policy',
    'viewport',
    'referrer',
  ]);
  const text = dom.text();
  for (const s of strings) expect(text).toContain(visible(s));
  return dom;
}

describe('escaping (property)', () => {
  it('a pack whose every string is hostile renders as text: no element, attribute or script of its own', () => {
    fc.assert(
      fc.property(
        fc.record({
          query: hostileString.filter((q) => q.trim() !== ''),
          texts: fc.array(hostileString, { minLength: 1, maxLength: 4 }),
          title: hostileString,
          sourceId: hostileString.filter((s) => s !== ''),
          version: hostileString,
          section: hostileString,
          url: hostileString,
          stage: hostileString.filter((s) => s !== ''),
          extra: hostileString,
          format: fc.constantFrom('markdown' as const, 'xml' as const, 'text' as const),
        }),
        (h) => {
          const candidates = h.texts.map((text, i) => ({
            id: `${h.sourceId}#${i}`,
            sourceId: h.sourceId,
            text: `${text} sentence ${i}.`,
            score: 1 - i / 10,
            title: h.title,
            version: h.version,
            section: [h.section],
            url: h.url,
          }));
          const pack = packBundle({
            query: h.query,
            candidates,
            maxTokens: 2000,
            format: h.format,
            degraded: [{ stage: h.stage, code: h.extra || 'x' }],
          });
          const future = rehash({
            ...(pack as unknown as Record<string, unknown>),
            coverage: { ...pack.coverage, [h.extra || 'k']: h.extra, nested: { [h.extra]: [h.query] } },
            [`x-${h.extra}`]: h.extra,
            dropped: [{ id: h.extra || 'd', reason: h.extra || 'r', duplicateOf: h.query }],
          });
          const dom = assertInert(renderPackReport(future), [h.query, h.title, h.sourceId, h.version, h.url, h.stage, h.extra]);
          expect(dom.byClass('seg-text').map(textContent).join('')).toBe(visible(pack.context));
          expect(dom.byClass('block')).toHaveLength(pack.items.length);
          expect(textContent(dom.byClass('query')[0] as Element)).toBe(visible(h.query));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('golden-set pages escape queries and ids the same way', () => {
    fc.assert(
      fc.property(
        hostileString.filter((q) => q.trim() !== ''),
        hostileString.filter((s) => s !== ''),
        (query, id) => {
          const a = packBundle({ query, candidates: [{ id, text: `${id}.`, score: 1 }], maxTokens: 200 });
          const b = packBundle({ query, candidates: [{ id: `${id}-2`, text: `${query}.`, score: 1 }], maxTokens: 200 });
          const dom = assertInert(renderGoldenSetReport([a], [b], { labels: [id, query] }), [query, id]);
          expect(dom.byClass('row')).toHaveLength(1);
        },
      ),
      { numRuns: 60 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Golden sets

function goldenRuns() {
  const queries = ['refund window', 'shipping cost', 'warranty terms', 'gift cards'];
  const candidates = sampleCandidates(10);
  const runA = queries.map((query) => packBundle({ query, candidates, maxTokens: 200 }));
  const runB = queries.map((query, i) =>
    i === 1
      ? packBundle({ query, candidates, maxTokens: 260 })
      : i === 2
        ? packBundle({ query, candidates: candidates.slice(1), maxTokens: 200 })
        : packBundle({ query, candidates, maxTokens: 200 }),
  );
  runB.splice(3, 1); // 'gift cards' only in A
  runB.push(packBundle({ query: 'store credit', candidates, maxTokens: 200 }));
  return { runA, runB };
}

describe('renderGoldenSetReport', () => {
  it('one run: a row per query with items, tokens and confidence, and a detail section per pack', () => {
    const { runA } = goldenRuns();
    const dom = parseHtml(renderGoldenSetReport(runA));
    const rows = dom.byClass('row');
    expect(rows.map((r) => attr(r, 'data-query'))).toEqual(runA.map((p) => p.query));
    rows.forEach((row, i) => {
      const cells = elementsIn(row)
        .filter((e) => e.tagName === 'td')
        .map(textContent);
      expect(cells[2]).toBe(String(runA[i]?.items.length));
      expect(cells[3]).toBe(`${runA[i]?.budget.usedTokens} / 200`);
    });
    const details = dom.byClass('detail');
    expect(details).toHaveLength(runA.length);
    const links = dom.byClass('detail-link').map((a) => attr(a, 'href'));
    expect(links).toEqual(details.map((d) => `#${attr(d, 'id')}`));
  });

  it('two runs: which packs changed, items added and removed, and packs only in one run', () => {
    const { runA, runB } = goldenRuns();
    const dom = parseHtml(renderGoldenSetReport(runA, runB, { labels: ['before', 'after'] }));
    const rows = dom.byClass('row');
    expect(rows.map((r) => [attr(r, 'data-query'), attr(r, 'data-status')])).toEqual([
      ['refund window', 'same'],
      ['shipping cost', 'changed'],
      ['warranty terms', 'changed'],
      ['gift cards', 'only-a'],
      ['store credit', 'only-b'],
    ]);
    const ids = (p: Pack) => new Set(p.items.map((i) => i.id));
    const expectedAdded = [...ids(runB[1] as Pack)].filter((id) => !ids(runA[1] as Pack).has(id)).length;
    expect(expectedAdded).toBeGreaterThan(0);
    const added = (row: Element) => Number(attr(elementsIn(row).find((e) => attr(e, 'data-added') !== undefined) as Element, 'data-added'));
    const removed = (row: Element) =>
      Number(attr(elementsIn(row).find((e) => attr(e, 'data-removed') !== undefined) as Element, 'data-removed'));
    expect(added(rows[1] as Element)).toBe(expectedAdded);
    expect(removed(rows[2] as Element)).toBeGreaterThan(0); // c000 left the candidates
    expect(textContent(rows[2] as Element)).toMatch(/removed: c000/);
    expect(textContent(dom.byAttr('data-field', 'counts')[0] as Element)).toMatch(
      /5 queries: 2 changed, 1 identical, 1 only in before, 1 only in after/,
    );
    expect(dom.byClass('detail')).toHaveLength(runA.length + runB.length);
  });

  it('names the run and the line of a pack that is not one', () => {
    const { runA } = goldenRuns();
    const text = `${JSON.stringify(runA[0])}\n\n${JSON.stringify({ ...runA[1], budget: null })}\n`;
    const run = readPackRun(text, 'run.jsonl');
    expect(run.map((r) => r.where)).toEqual(['line 1', 'line 3']);
    expect(() => renderGoldenSetReport(run)).toThrow(/^Invalid pack at A line 3: budget/);
    expect(() => readPackRun('{"a":1}\n{oops\n', 'x.jsonl')).toThrow(/x\.jsonl line 2: not valid JSON/);
    expect(readPackRun(JSON.stringify(runA), 'array.json').map((r) => r.where)).toEqual(['entry 1', 'entry 2', 'entry 3', 'entry 4']);
  });
});

// ---------------------------------------------------------------------------------------------
// CLI

describe('litm-pack inspect', () => {
  it('writes a pack report, and a golden-set comparison from two JSON lines files', async () => {
    const { runA, runB } = goldenRuns();
    const packFile = join(work, 'pack.json');
    writeFileSync(packFile, `${JSON.stringify(runA[0])}\n`);
    const out = join(work, 'pack.html');
    const single = await runCli(['inspect', packFile, '-o', out]);
    expect(single.stderr).toBe('');
    expect(single.code).toBe(0);
    expect(single.stdout).toMatch(/^Wrote .*pack\.html \(\d+ bytes\)\n$/);
    expect(parseHtml(readFileSync(out, 'utf8')).byClass('block')).toHaveLength(runA[0]?.items.length as number);

    const a = join(work, 'before.jsonl');
    const b = join(work, 'after.jsonl');
    writeFileSync(a, runA.map((p) => JSON.stringify(p)).join('\n'));
    writeFileSync(b, runB.map((p) => JSON.stringify(p)).join('\n'));
    const golden = await runCli(['inspect', a, b]);
    expect(golden.code).toBe(0);
    const dom = parseHtml(golden.stdout);
    expect(dom.byClass('row').map((r) => attr(r, 'data-status'))).toEqual(['same', 'changed', 'changed', 'only-a', 'only-b']);
    expect(dom.text()).toContain('before.jsonl');

    // a one-pack run read as a golden set on request, from stdin
    const forced = await runCli(['inspect', '--golden', '-'], `${JSON.stringify(runA[0])}\n`);
    expect(forced.code).toBe(0);
    expect(parseHtml(forced.stdout).byClass('row')).toHaveLength(1);
  });

  it('exits 2 with one line naming the file and line of a bad pack', async () => {
    const { runA } = goldenRuns();
    const bad = join(work, 'bad.jsonl');
    writeFileSync(bad, `${JSON.stringify(runA[0])}\n${JSON.stringify({ ...runA[1], items: 'none' })}\n`);
    const out = await runCli(['inspect', bad]);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(/Invalid pack at bad\.jsonl line 2: items/);
    const missing = await runCli(['inspect', join(work, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Cannot read .*nope\.json: ENOENT/);
  });
});

describe('the truncated flag', () => {
  const texts = (dom: ReturnType<typeof parseHtml>) => dom.byClass('flag').map(textContent);
  const long = (i: number): CandidateInput => ({
    id: `c${i}`,
    sourceId: `s${i}.md`,
    score: 1 - i / 10,
    text: `Passage ${i}. ${'Words that fill the budget quickly. '.repeat(20)}`,
  });

  it('is not shown when every item is whole and only candidates did not fit; the page says how many did not fit', () => {
    const pack = packBundle({ query: 'q', candidates: [long(1), long(2), long(3)], maxTokens: 200, minTruncatedTokens: 10_000 });
    expect(pack.items.every((item) => !item.truncated)).toBe(true);
    expect(pack.truncated).toBe(true);
    const flags = texts(parseHtml(renderPackReport(pack)));
    expect(flags).not.toContain('truncated');
    expect(flags).toContain(`${pack.dropped.filter((d) => d.reason === 'budget').length} did not fit`);
  });

  it('is shown when an item was cut', () => {
    const pack = packBundle({ query: 'q', candidates: [long(1)], maxTokens: 120 });
    expect(pack.items[0]?.truncated).toBe(true);
    expect(texts(parseHtml(renderPackReport(pack)))).toContain('truncated');
  });
});
