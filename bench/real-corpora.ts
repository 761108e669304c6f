/**
 * The loaders on files shaped like real corpora, before and after: a manual written by pdfkit with running headers,
 * footers, hyphenated line ends and page labels; HTML as Sphinx (with and without role="main"), rustdoc (69 `Source`
 * links, as on a large struct page), a DocBook manual chapter (the Valgrind shape: navigation tables and a table of
 * contents, no landmarks) and Node.js's docs write it; a UTF-16 WebVTT with a byte order mark and a Teams transcript.
 *
 *   npx tsx bench/real-corpora.ts [--before DIR] [--budget 600]
 *
 * `--before DIR` runs the same files through another checkout of the package (e.g. `git worktree add /tmp/before
 * main` with node_modules linked, or the main checkout itself), for a before/after table in the same run. For each
 * file: files skipped, chunks, characters in chunks, boilerplate chunks (chunks that are only chrome), chunks whose section path holds a
 * permalink glyph, words still split by a line-end hyphen, chunks with a printed page label. Then packs of `--budget`
 * tokens over one store of every file, for queries a reader of each file would ask: tokens spent on chrome.
 *
 * What is chrome is decided here, from what the file makers put in as chrome (the header and footer lines, `Source`
 * links, `§`/`¶` glyphs, the table of contents and navigation lines), not by the loaders' own rules. Prints markdown.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  docbookPage,
  nodeDocsPage,
  runningHeadersPdf,
  rustdocPage,
  sphinxPage,
  teamsVtt,
  utf16Vtt,
  withPageLabels,
} from '../test/helpers/corpus-files.js';
import { loadNote } from './lib/report.js';
import { markdownTable } from './lib/table.js';

const { values: args } = parseArgs({ options: { before: { type: 'string' }, budget: { type: 'string', default: '600' } } });
const budget = Number(args.budget);

// The few shapes of the package read here (either checkout's).
interface Chunk {
  text: string;
  section?: string[];
  locator?: { page?: number; label?: string };
}
interface Doc {
  id: string;
}
interface Package {
  loadDocuments(paths: string[], options: Record<string, unknown>): Promise<Doc[]>;
  chunkDocument(doc: Doc, options: Record<string, unknown>): Chunk[];
  MemoryHybridStore: new () => {
    addDocuments(docs: Doc[]): Promise<unknown>;
    search(request: Record<string, unknown>): Promise<unknown[]>;
  };
  packBundle(options: Record<string, unknown>): { budget: { usedTokens: number }; items: Array<{ text: string }> };
  getTokenizer(encoding: string): { count(text: string): number };
}

async function packageAt(root: string): Promise<Package> {
  return (await import(pathToFileURL(join(root, 'src/index.ts')).href)) as Package;
}

// -------------------------------------------------------------------------------------------------
// The files, written once.

const work = mkdtempSync(join(tmpdir(), 'litm-real-corpora-'));
const files: Record<string, string | Uint8Array> = {
  'manual.pdf': await withPageLabels(await runningHeadersPdf(), [
    { from: 0, style: 'r' },
    { from: 2, style: 'D' },
  ]),
  'sphinx-idle.html': sphinxPage(),
  'sphinx1-idle.html': sphinxPage({ role: false }),
  'rustdoc-struct.html': rustdocPage(45, 23),
  'docbook-manual-core.html': docbookPage(),
  'node-fs.html': nodeDocsPage(),
  'standup-utf16.vtt': utf16Vtt(),
  'teams-meeting.vtt': teamsVtt(),
};
const dir = join(work, 'corpus');
mkdirSync(dir);
for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);

/** Lines the file makers put in as chrome. */
const CHROME_LINES = [
  /^Chapter 4: Function reference \d+$/u, // the PDF's running header
  /^Acme Agent Manual (?:\d+|[ivx]+)$/u, // its footer
  /^(?:\d+|[ivx]+)$/u, // a page number alone
  /^(?:[\d.]+(?: \(const: [\d.]+\))? · )?Source§?$/u, // rustdoc
  /^(?:§|¶|Expand description)$/u,
  /^Table of Contents$/u, // the DocBook TOC and its entries, and its navigation
  /^2\.\d+(?:\.\d+)*\. /u,
  /^(?:<< ?1\. Introduction|Up|Home|Valgrind User Manual|3\. Using and understanding the Valgrind core: Advanced Topics ?>>)$/u,
];
/** Glyphs the makers put in as permalinks (`#` is not counted: `C#` is a word). */
const GLYPHS = /[¶§]/gu;

const isChromeLine = (line: string) => CHROME_LINES.some((pattern) => pattern.test(line.trim()));
/** A chunk's text without its chrome: chrome lines and permalink glyphs left out. */
const withoutChrome = (text: string) =>
  text
    .split('\n')
    .filter((line) => !isChromeLine(line))
    .join('\n')
    .replace(GLYPHS, '')
    .replace(/Read more$/gmu, '')
    .trim();

interface Side {
  skipped: Map<string, string>;
  rows: Map<string, { chunks: number; chars: number; chrome: number; glyphSections: number; split: number; labelled: number }>;
  packs: Array<{ query: string; used: number; chrome: number; items: number }>;
}

const QUERIES = [
  'valgrind core command-line options',
  'ring buffer read cursor slots',
  'IDLE editor window shell',
  'agent plugins folder warning',
  'manipulation of settings configure',
  'launch moves to March beta',
  'café opens at nine',
];

async function measure(pkg: Package): Promise<Side> {
  const skipped = new Map<string, string>();
  const docs = await pkg.loadDocuments([dir], {
    base: work,
    allowEmpty: true,
    onSkip: (s: { path: string; reason: string }) => skipped.set(s.path.split('/').pop()!, s.reason),
  });
  const rows: Side['rows'] = new Map();
  for (const name of Object.keys(files)) {
    const own = docs.filter((doc) => doc.id === `corpus/${name}`);
    const chunks = own.flatMap((doc) => pkg.chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z' }));
    rows.set(name, {
      chunks: chunks.length,
      chrome: chunks.filter((chunk) => withoutChrome(chunk.text) === '').length,
      // `File system#` or `Setup #` but not `C#`.
      glyphSections: chunks.filter((chunk) => (chunk.section ?? []).some((part) => /[¶§]|(?:\s|\p{Ll}{2})#$/u.test(part))).length,
      chars: chunks.reduce((sum, chunk) => sum + chunk.text.length, 0),
      split: chunks.reduce((sum, chunk) => sum + (chunk.text.match(/\p{Ll}-\n\p{Ll}/gu)?.length ?? 0), 0),
      labelled: chunks.filter((chunk) => chunk.locator?.label !== undefined).length,
    });
  }
  const store = new pkg.MemoryHybridStore();
  await store.addDocuments(docs);
  const tokens = pkg.getTokenizer('o200k_base');
  const packs: Side['packs'] = [];
  for (const query of QUERIES) {
    const candidates = await store.search({ text: query, mode: 'lexical', limit: 50 });
    const pack = pkg.packBundle({ query, candidates, maxTokens: budget });
    // Tokens of chrome: an item's tokens less those of its text without chrome (the pack's encoding, item by item).
    let chrome = 0;
    for (const item of pack.items) chrome += tokens.count(item.text) - tokens.count(withoutChrome(item.text));
    packs.push({ query, used: pack.budget.usedTokens, chrome, items: pack.items.length });
  }
  return { skipped, rows, packs };
}

const after = await measure(await packageAt(resolve(import.meta.dirname, '..')));
const before = args.before === undefined ? undefined : await measure(await packageAt(resolve(args.before)));
rmSync(work, { recursive: true, force: true });

const pair = (a: number | string | undefined, b: number | string) => (a === undefined ? String(b) : `${a} → ${b}`);
console.log(`# Real-corpora loaders${before ? ' (before → after)' : ''}\n`);
console.log(`${loadNote()}; packs of ${budget} tokens (o200k_base) over one store of every file, lexical search, pool 50.\n`);
console.log(
  markdownTable(
    [
      'file',
      'skipped',
      'chunks',
      'characters in chunks',
      'chrome-only chunks',
      'sections with ¶/§/#',
      'words split by a hyphen',
      'chunks with a page label',
    ],
    Object.keys(files).map((name) => {
      const a = after.rows.get(name)!;
      const b = before?.rows.get(name);
      return [
        name,
        pair(before ? (before.skipped.get(name) ?? 'no') : undefined, after.skipped.get(name) ?? 'no'),
        pair(b?.chunks, a.chunks),
        pair(b?.chars, a.chars),
        pair(b?.chrome, a.chrome),
        pair(b?.glyphSections, a.glyphSections),
        pair(b?.split, a.split),
        pair(b?.labelled, a.labelled),
      ];
    }),
  ),
);
console.log('');
console.log(
  markdownTable(
    ['query', 'items', 'tokens used', 'tokens on chrome'],
    after.packs.map((p, i) => {
      const b = before?.packs[i];
      return [p.query, pair(b?.items, p.items), pair(b?.used, p.used), pair(b?.chrome, p.chrome)];
    }),
  ),
);
const total = (side: Side | undefined) => side?.packs.reduce((sum, p) => sum + p.chrome, 0);
const totalUsed = (side: Side | undefined) => side?.packs.reduce((sum, p) => sum + p.used, 0);
console.log(
  `\nAll packs: ${pair(before ? `${total(before)} of ${totalUsed(before)}` : undefined, `${total(after)} of ${totalUsed(after)}`)} tokens on chrome.`,
);
