// The loaders on files shaped like the ones real corpora hold: transcripts written by Windows tools (UTF-16 with a
// byte order mark) and by Teams (unpadded hours), PDFs with running headers, footers, hyphenation and page labels
// (written by pdfkit and pdf-lib), HTML as Sphinx, rustdoc and an old DocBook generator write it, and e-mail
// citations that name the message.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LocatorSchema,
  MemoryHybridStore,
  chunkDocument,
  loadDocuments,
  packBundle,
  type IngestDocument,
  type LoadWarning,
  type SkippedFile,
} from '../src/index.js';
import { dropRunningLines, joinHyphenation, type PageLine } from '../src/sources/pdf-layout.js';
import { pageText } from '../src/sources/pdf.js';
import { decodeText } from '../src/sources/text.js';
import {
  MANUAL_PAGES,
  docbookPage,
  labelledBookPdf,
  nodeDocsPage,
  runningHeadersPdf,
  rustdocPage,
  sphinxPage,
  teamsVtt,
  utf16Vtt,
  withPageLabels,
} from './helpers/corpus-files.js';
import { cleanHeading, isBoilerplateLine } from '../src/sources/html-main.js';
import { makeEmail } from './helpers/real-files.js';

const work = mkdtempSync(join(tmpdir(), 'litm-corpora-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Loaded {
  docs: IngestDocument[];
  skipped: SkippedFile[];
  warnings: LoadWarning[];
}

async function load(files: Record<string, string | Uint8Array>, folder: string): Promise<Loaded> {
  const dir = join(work, folder);
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const skipped: SkippedFile[] = [];
  const warnings: LoadWarning[] = [];
  const docs = await loadDocuments([dir], {
    base: work,
    allowEmpty: true,
    onSkip: (s) => skipped.push(s),
    onWarning: (w) => warnings.push(w),
  });
  return { docs, skipped, warnings };
}

const chunksOf = (doc: IngestDocument, maxTokens = 400) => chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z', maxTokens });

describe('text decoded by its byte order mark', () => {
  const text = 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nCafé, naïve — 東京 🚆\n';
  it('UTF-8, UTF-16 and UTF-32 (either byte order) decode to the same text, the mark dropped', () => {
    const utf16be = Buffer.from(text, 'utf16le').swap16();
    const utf32 = (littleEndian: boolean) => {
      const points = [0xfeff, ...Array.from(text, (c) => c.codePointAt(0)!)];
      const out = Buffer.alloc(points.length * 4);
      points.forEach((p, i) => (littleEndian ? out.writeUInt32LE(p, i * 4) : out.writeUInt32BE(p, i * 4)));
      return out;
    };
    expect(decodeText(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]))).toEqual({ text });
    expect(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]))).toEqual({ text });
    expect(decodeText(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be]))).toEqual({ text });
    expect(decodeText(utf32(true))).toEqual({ text });
    expect(decodeText(utf32(false))).toEqual({ text });
  });

  it('still refuses binary and invalid text: UTF-16 without a mark is binary, a bad UTF-32 code point is not text', () => {
    expect(decodeText(Buffer.from(text, 'utf16le'))).toEqual({ problem: 'binary' });
    expect(decodeText(Buffer.from([0xff, 0xfe, 0x00, 0x00, 0x00, 0x00, 0x11, 0x00]))).toEqual({ problem: 'not-utf8' });
    // A lone surrogate in UTF-16 is invalid; NULs inside UTF-16 text mean binary.
    expect(decodeText(Buffer.from([0xff, 0xfe, 0x00, 0xd8, 0x41, 0x00]))).toEqual({ problem: 'not-utf8' });
    expect(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\u0000b', 'utf16le')]))).toEqual({ problem: 'binary' });
  });
});

describe('transcripts as real tools write them', () => {
  it('a UTF-16 WebVTT with a byte order mark (as Windows tools save it) is read, not skipped as binary', async () => {
    const { docs, skipped } = await load({ 'standup.vtt': utf16Vtt() }, 'vtt-utf16');
    expect(skipped).toEqual([]);
    expect(docs).toHaveLength(1);
    expect(docs[0]!.title).toBe('Stand-up');
    expect(docs[0]!.text).toBe('Alice: Bonjour à tous, the café opens at nine.\nBob: 東京 office joins at ten.');
    expect(chunksOf(docs[0]!).map((c) => c.locator)).toEqual([{ time: [1, 6.5] }]);
  });

  it('Teams cues (unpadded hours, ids above the timing, voice tags) and comma decimals are read; a bad cue is left out with a warning naming its line, the rest kept', async () => {
    const { docs, skipped, warnings } = await load({ 'meeting.vtt': teamsVtt() }, 'vtt-teams');
    expect(skipped).toEqual([]);
    const doc = docs[0]!;
    expect(doc.text.split('\n')).toEqual([
      'Alice Smith: Welcome to the quarterly planning call.',
      'Bob Jones: Thanks, I will share the roadmap.',
      'Alice Smith: The launch moves to March.',
      'Bob Jones: Then the beta closes in February.',
    ]);
    expect(doc.regions!.map((r) => r.time)).toEqual([
      [1, 4.25],
      [4.25, 9.5],
      [3725.04, 3730],
      [3731.5, 3735.123],
    ]);
    expect(warnings.map((w) => w.message)).toEqual([
      '1 cue timing line could not be read and was left out (at line 15: "0:00:75.000 --> 0:01:02.000")',
    ]);
  });
});

/** The text of each page as pdf.js reads it, nothing dropped or joined (what the loader starts from). */
async function rawPages(bytes: Uint8Array): Promise<string[]> {
  const lib = (await import('pdfjs-dist/legacy/build/pdf.mjs')) as unknown as {
    getDocument(o: object): {
      promise: Promise<{
        numPages: number;
        getPage(n: number): Promise<{ getTextContent(): Promise<{ items: Parameters<typeof pageText>[0] }> }>;
        destroy(): Promise<void>;
      }>;
    };
  };
  const pdf = await lib.getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
  const out: string[] = [];
  for (let n = 1; n <= pdf.numPages; n += 1) out.push(pageText((await (await pdf.getPage(n)).getTextContent()).items));
  await pdf.destroy();
  return out;
}

describe('PDF: running headers and footers, hyphenation, printed page labels', () => {
  it('drops the running header (its page number normalised) and the footer from every page, keeps the chapter heading and the contents line', async () => {
    const bytes = await runningHeadersPdf();
    const raw = await rawPages(bytes);
    // What pdf.js reads: the header with each page's printed number, the footer with it too.
    expect(raw[2]).toContain('Chapter 4: Function reference 1');
    expect(raw[3]).toContain('Chapter 4: Function reference 2');
    expect(raw[3]).toContain('Acme Agent Manual 2');
    const { docs } = await load({ 'manual.pdf': bytes }, 'pdf-running');
    const doc = docs[0]!;
    expect(doc.text).not.toMatch(/Function reference \d/u);
    expect(doc.text).not.toMatch(/Acme Agent Manual (?:\d|i)/u);
    expect(doc.text).toContain('Chapter 4: Function reference . . . . . 1');
    const pages = doc.regions!.map((r) => doc.text.slice(r.start, r.end));
    expect(pages[0]).toBe('Acme Agent Manual\nVersion 2.1, for operators');
    expect(pages[2]!.split('\n\n')[0]).toBe('Chapter 4: Function reference');
    // Every page of the chapter ends in its own last sentence, not a footer or a page number.
    pages.slice(2).forEach((page, i) => expect(page.endsWith(MANUAL_PAGES[i]!.at(-1)!.at(-1)!)).toBe(true));
    for (const chunk of chunksOf(doc, 64))
      expect(chunk.text).not.toMatch(/^(?:Chapter 4: Function reference \d+|Acme Agent Manual \w+|\d+)$/mu);
  });

  it('joins words hyphenated at line ends and keeps compounds, deciding with the words of the document', async () => {
    const { docs } = await load({ 'manual.pdf': await runningHeadersPdf() }, 'pdf-hyphens');
    const text = docs[0]!.text;
    // manip-/ulation: `manipulation` is written whole on another page; coordi-/nator: neither half is a word.
    expect(text).toContain('applies the manipulation of settings');
    expect(text).toContain('The coordinator keeps');
    // well-/known: `well-known` is written elsewhere; read-/only: `read` and `only` are words of the document; non-/English: a capital.
    expect(text).toContain('extend the agent with a well-known interface');
    expect(text).toContain('is a read-only view');
    expect(text).toContain('A non-English catalogue');
    expect(text).not.toMatch(/\w-\n/u);
  });

  it('the hyphenation rule, line by line', () => {
    const page = (...texts: string[]): PageLine[] => texts.map((text, i) => ({ text, y: 700 - 14 * i, sep: '\n' }));
    const joined = (pages: PageLine[][]) => joinHyphenation(pages).pages.map((p) => p.map((l) => l.text));
    // Evidence from another page wins either way; a tie joins.
    expect(joined([page('the data-', 'base is'), page('a database')])).toEqual([['the database is'], ['a database']]);
    expect(joined([page('the data-', 'base is'), page('a data-base')])).toEqual([['the data-base is'], ['a data-base']]);
    expect(joined([page('the data-', 'base is'), page('a data-base and a database')])).toEqual([
      ['the database is'],
      ['a data-base and a database'],
    ]);
    // No evidence: both halves words of the document keep the hyphen, otherwise joined.
    expect(joined([page('the data-', 'base is'), page('data on a base')])).toEqual([['the data-base is'], ['data on a base']]);
    expect(joined([page('the synchro-', 'nisation of data')])).toEqual([['the synchronisation of data']]);
    // A soft hyphen always joins (and inside a line it is dropped); a capital keeps; a blank line is no break.
    expect(joined([page('the data\u00ad', 'base is a data\u00adbase')])).toEqual([['the database is a database']]);
    expect(joined([page('pre-', 'Raphaelite')])).toEqual([['pre-Raphaelite']]);
    const paragraphs: PageLine[] = [
      { text: 'ends in a dash -', y: 700, sep: '\n' },
      { text: 'next paragraph-', y: 670, sep: '\n\n' },
      { text: 'starts here', y: 656, sep: '\n\n' },
    ];
    expect(joinHyphenation([paragraphs]).pages[0]!.map((l) => l.text)).toEqual(['ends in a dash -', 'next paragraph-', 'starts here']);
    const counted = joinHyphenation([page('the synchro-', 'nisation of data'), page('the data-', 'base is'), page('data on a base')]);
    expect([counted.joined, counted.kept]).toEqual([1, 1]);
  });

  it('the running-line rule: on at least 3 pages and half the pages of its range, at the top or the bottom only; short documents untouched', () => {
    const page = (n: number, ...body: string[]): PageLine[] => [
      { text: `Guide ${n}`, y: 800, sep: '\n' },
      ...body.map((text, i): PageLine => ({ text, y: 700 - 14 * i, sep: i === 0 ? '\n\n' : '\n' })),
      { text: `Page ${n} of 9`, y: 40, sep: '\n\n' },
    ];
    const kept = (pages: PageLine[][]) => dropRunningLines(pages).pages.map((p) => p.map((l) => l.text));
    expect(kept([page(1, 'one'), page(2, 'two'), page(3, 'three')])).toEqual([['one'], ['two'], ['three']]);
    expect(kept([page(1, 'one'), page(2, 'two')])).toEqual([
      ['Guide 1', 'one', 'Page 1 of 9'],
      ['Guide 2', 'two', 'Page 2 of 9'],
    ]);
    // A line repeated in the middle of pages is text, not a header.
    const middle = (n: number): PageLine[] => [
      { text: `Intro ${n}`, y: 800, sep: '\n' },
      ...['first', 'second', 'Note: see above.', 'third', 'fourth'].map((text, i): PageLine => ({
        text: text.startsWith('Note') ? text : `${text} ${'w'.repeat(n)}`,
        y: 700 - 100 * i,
        sep: '\n\n',
      })),
      { text: `Outro ${n}`, y: 40, sep: '\n\n' },
    ];
    expect(dropRunningLines([middle(1), middle(2), middle(3), middle(4)]).dropped).toBe(8);
    expect(kept([middle(1), middle(2), middle(3), middle(4)])[0]).toEqual([
      'first w',
      'second w',
      'Note: see above.',
      'third w',
      'fourth w',
    ]);
    // A header on 3 of 10 pages spread out is not running; odd-page headers (every other page) are.
    const plain = (n: number, top: string): PageLine[] => [
      { text: top, y: 800, sep: '\n' },
      { text: `body ${'q'.repeat(n)}`, y: 600, sep: '\n\n' },
      { text: `more ${'y'.repeat(n)}`, y: 500, sep: '\n\n' },
    ];
    const sparse = Array.from({ length: 10 }, (_, i) => plain(i, [0, 5, 9].includes(i) ? 'Special' : `top ${'z'.repeat(i)}`));
    expect(dropRunningLines(sparse).dropped).toBe(0);
    // A line that is its page's only line on most pages is the text, even when pages repeat it (numbers aside).
    const single = Array.from({ length: 5 }, (_, i): PageLine[] => [{ text: `Figure ${i + 1}`, y: 400, sep: '\n' }]);
    single[2] = [...single[2]!, { text: 'A caption under figure 3.', y: 380, sep: '\n' }];
    expect(dropRunningLines(single).dropped).toBe(0);
    const odd = Array.from({ length: 10 }, (_, i) => plain(i, i % 2 === 0 ? 'Chapter 4 — Odd header' : `top ${'z'.repeat(i)}`));
    expect(dropRunningLines(odd).dropped).toBe(5);
  });

  it('records the printed page label beside the physical page (decimal, roman, letters, prefixes, start values); a label equal to the page number is left out', async () => {
    const book = await withPageLabels(await labelledBookPdf(12), [
      { from: 0, style: 'r' },
      { from: 3, style: 'D' },
      { from: 6, style: 'A', prefix: 'App. ' },
      { from: 8, style: 'D', prefix: 'A-', start: 5 },
      { from: 10, style: 'a', start: 26 },
    ]);
    const plain = await withPageLabels(await labelledBookPdf(3), [{ from: 0, style: 'D' }]);
    const { docs } = await load({ 'book.pdf': book, 'plain.pdf': plain, 'unlabelled.pdf': await labelledBookPdf(2) }, 'pdf-labels');
    const labels = (id: string) => docs.find((d) => d.id === id)!.regions!.map((r) => [r.page, r.pageLabel]);
    expect(labels('pdf-labels/book.pdf')).toEqual([
      [1, 'i'],
      [2, 'ii'],
      [3, 'iii'],
      [4, '1'],
      [5, '2'],
      [6, '3'],
      [7, 'App. A'],
      [8, 'App. B'],
      [9, 'A-5'],
      [10, 'A-6'],
      [11, 'z'],
      [12, 'aa'],
    ]);
    expect(labels('pdf-labels/plain.pdf')).toEqual([
      [1, undefined],
      [2, undefined],
      [3, undefined],
    ]);
    expect(labels('pdf-labels/unlabelled.pdf')).toEqual([
      [1, undefined],
      [2, undefined],
    ]);
    const chunks = chunksOf(docs.find((d) => d.id === 'pdf-labels/book.pdf')!);
    expect(chunks.map((c) => c.locator)).toContainEqual({ page: 7, label: 'App. A' });
    expect(
      chunkDocument(
        docs.find((d) => d.id === 'pdf-labels/plain.pdf')!,
        { indexedAt: 'x' },
      ).map((c) => c.locator),
    ).toEqual([{ page: 1 }, { page: 2 }, { page: 3 }]);
  });

  it('a bundle shows the printed page and the physical one in the header, and the citation carries both', async () => {
    const bytes = await withPageLabels(await runningHeadersPdf(), [
      { from: 0, style: 'r' },
      { from: 2, style: 'D' },
    ]);
    const { docs } = await load({ 'manual.pdf': bytes }, 'pdf-label-pack');
    const store = new MemoryHybridStore();
    await store.addDocuments(docs);
    const candidates = await store.search({ text: 'plugins folder disabled warning', mode: 'lexical', limit: 1 });
    const pack = packBundle({ query: 'plugins', candidates, maxTokens: 300 });
    expect(pack.context.split('\n')[0]).toBe('[1] Acme Agent Manual (p. 5, PDF p. 7)');
    expect(pack.citations[0]!.locator).toEqual({ page: 7, label: '5' });
    expect(packBundle({ query: 'plugins', candidates, maxTokens: 300, format: 'xml' }).context).toContain(
      '<locator>p. 5, PDF p. 7</locator>',
    );
  });

  it('old locators still validate; a label a header could not show as it is is refused', () => {
    expect(LocatorSchema.parse({ page: 3 })).toEqual({ page: 3 });
    expect(LocatorSchema.parse({ page: 3, label: 'iv' })).toEqual({ page: 3, label: 'iv' });
    for (const label of ['', ' iv', 'a]b', 'x\ny', '[2] forged', '<b>', 'x'.repeat(33)])
      expect(LocatorSchema.safeParse({ page: 3, label }).success).toBe(false);
  });
});

describe('HTML as documentation generators write it', () => {
  const sectionsOf = (doc: IngestDocument) => chunksOf(doc).map((c) => c.section);

  it('Sphinx: no `¶` in headings, section paths or text, with role="main" and without (Sphinx 1.x); the sidebar, related bar and footer left out', async () => {
    const { docs } = await load({ 'idle.html': sphinxPage(), 'idle-old.html': sphinxPage({ role: false }) }, 'html-sphinx');
    expect(docs).toHaveLength(2);
    for (const doc of docs) {
      expect(doc.text).not.toContain('¶');
      expect(doc.text).not.toMatch(/Table of Contents|Show Source|Copyright|modules|General Index/u);
      expect(sectionsOf(doc)).toEqual([
        ['IDLE'],
        ['IDLE', 'Menus'],
        ['IDLE', 'Menus', 'File menu (Shell and Editor)'],
        ['IDLE', 'Menus', 'Edit menu (Shell and Editor)'],
        ['IDLE', 'Editing and Navigation'],
      ]);
      expect(doc.text).toContain('idlelib.run.main()\n\nStart the execution server');
    }
    // Both shapes read the same: the landmark and the main-content pass find the same text.
    expect(docs[0]!.text).toBe(docs[1]!.text);
  });

  it('rustdoc: no chunk is only `Source§`, no `§` in section paths, no `Expand description`, `Read more` or copy button', async () => {
    const { docs } = await load({ 'struct.RingBuffer.html': rustdocPage(24, 10) }, 'html-rustdoc');
    const chunks = chunksOf(docs[0]!, 64);
    expect(docs[0]!.text).not.toMatch(/§|Expand description|Copy item path|Read more/u);
    for (const chunk of chunks) {
      expect(chunk.text).not.toMatch(/^(?:[\d.]+ (?:\(const: [\d.]+\) )?· )?Source$/mu);
      for (const part of chunk.section ?? []) expect(part).not.toMatch(/[§¶#]/u);
    }
    // One chunk per documented item: the struct, its example, 24 methods and 10 trait methods.
    expect(chunks).toHaveLength(36);
    expect(chunks[0]!.section).toEqual(['Struct ring::buffer::RingBuffer']);
    expect(chunks[1]!.section).toEqual(['Struct ring::buffer::RingBuffer', 'Examples']);
    expect(chunks[2]!.section?.at(-1)).toBe('pub fn op0(&mut self, n: usize) -> usize');
    expect(chunks.at(-1)!.text).toBe('Runs hook 9 of the trait.');
  });

  it('an old generator page without landmarks (DocBook, as the Valgrind manual): navigation tables and the table of contents left out, every section kept; the TOC never ranks first', async () => {
    const { docs } = await load({ 'manual-core.html': docbookPage() }, 'html-docbook');
    const doc = docs[0]!;
    expect(doc.title).toBe('2. Using and understanding the Valgrind core');
    expect(doc.text).not.toMatch(/Table of Contents|Valgrind User Manual|1\. Introduction|Advanced Topics|Home|Up\b/u);
    expect(doc.text).not.toContain('2.6.3. Error-related Options');
    const chunks = chunksOf(doc);
    expect(chunks.map((c) => c.section?.at(-1))).toEqual([
      '2. Using and understanding the Valgrind core',
      '2.1. What Valgrind does with your program',
      '2.2. Getting started',
      '2.3. The Commentary',
      '2.4. Reporting of errors',
      '2.5. Suppressing errors',
      '2.6. Core Command-line Options',
      '2.7. Support for Threads',
      '2.8. Handling of Signals',
    ]);
    // Words a TOC is full of (section titles): read with the TOC, it ranked first for them; now prose does.
    const store = new MemoryHybridStore();
    await store.addDocuments(docs);
    for (const query of ['command-line options', 'valgrind core command-line options error-related options']) {
      const hits = await store.search({ text: query, mode: 'lexical', limit: 3 });
      expect(hits[0]!.text).toMatch(/^(?:This chapter describes|As mentioned above)/u);
      for (const hit of hits) expect(hit.text).not.toMatch(/Table of Contents|2\.1\. What Valgrind does/u);
    }
    const tool = await store.search({ text: 'tool-specific command-line options', mode: 'lexical', limit: 1 });
    expect(tool[0]!.section?.at(-1)).toBe('2.6. Core Command-line Options');
  });

  it('modern pages keep working: Node.js API docs lose the `#` marks, `C#` keeps its own; the runbook example is unchanged', async () => {
    const { docs } = await load({ 'fs.html': nodeDocsPage() }, 'html-node');
    expect(sectionsOf(docs[0]!)).toEqual([['File system'], ['File system', 'Callback API'], ['File system', 'Interop with C#']]);
    expect(docs[0]!.text).not.toMatch(/system#|API#/u);
  });

  it('heading glyphs and chrome lines, one by one', () => {
    expect(
      ['IDLE¶', '§Examples', 'File system #', '# Install', 'Setup 🔗', 'Anchor ⚓︎', 'C#', 'F# and C#', '#hashtags', '¶'].map(cleanHeading),
    ).toEqual(['IDLE', 'Examples', 'File system', 'Install', 'Setup', 'Anchor', 'C#', 'F# and C#', '#hashtags', '']);
    expect(
      [
        'Source',
        'Source§',
        '1.0.0 · Source',
        '1.0.0 (const: 1.39.0) · Source',
        '[src]',
        '[−]',
        '§',
        'Expand description',
        'Edit on GitHub',
      ].every(isBoilerplateLine),
    ).toBe(true);
    expect(['Source code: Lib/idlelib/', '1.0.0', '}', 'Open source software', '', 'Sources'].some(isBoilerplateLine)).toBe(false);
  });
});

describe('e-mail: every chunk names its message', () => {
  it('metadata.messageId on every chunk of a message and of its attachments, the same as metadata.email.messageId; a forwarded message keeps its own', async () => {
    const forwarded = await makeEmail({
      from: 'dana@example.com',
      to: 'sam@example.com',
      subject: 'Terms',
      messageId: '<terms@example.com>',
      date: new Date('2024-03-01T10:00:00Z'),
      text: 'The terms are attached.',
      attachments: [{ filename: 'terms.txt', content: 'Refunds within 30 days.', contentType: 'text/plain' }],
    });
    const outer = await makeEmail({
      from: 'sam@example.com',
      to: 'ops@example.com',
      subject: 'Fwd: Terms',
      messageId: '<fwd@example.com>',
      date: new Date('2024-03-02T10:00:00Z'),
      text: 'See the forwarded message.',
      attachments: [
        { filename: 'notes.md', content: '# Notes\n\nRenewal in April.', contentType: 'text/markdown' },
        { filename: 'forwarded.eml', content: forwarded, contentType: 'message/rfc822', contentDisposition: 'attachment' },
      ],
    });
    const anonymous = await makeEmail({
      from: 'a@example.com',
      to: 'b@example.com',
      subject: 'No id',
      text: 'Sent without a Message-ID.',
      attachments: [{ filename: 'a.txt', content: 'Attached.', contentType: 'text/plain' }],
    });
    const stripped = anonymous.toString().replace(/^Message-ID:.*\r\n/imu, '');
    const { docs } = await load({ 'fwd.eml': outer, 'anonymous.eml': stripped }, 'mail-ids');
    const byId = Object.fromEntries(docs.map((d) => [d.id.replace('mail-ids/', ''), d]));
    const ids = (id: string) => {
      const doc = byId[id]!;
      const chunks = chunksOf(doc);
      expect(chunks.length).toBeGreaterThan(0);
      const email = doc.metadata?.email as { messageId: string | null };
      for (const chunk of chunks) expect(chunk.metadata?.messageId).toBe(email.messageId ?? undefined);
      return [doc.metadata?.messageId, email.messageId, (doc.metadata?.attachment as { filename?: string } | undefined)?.filename];
    };
    expect(Object.keys(byId).sort(), JSON.stringify(Object.keys(byId))).toEqual([
      'anonymous.eml',
      'anonymous.eml/a.txt',
      'fwd.eml',
      'fwd.eml/forwarded.eml',
      'fwd.eml/forwarded.eml/terms.txt',
      'fwd.eml/notes.md',
    ]);
    expect(ids('fwd.eml')).toEqual(['fwd@example.com', 'fwd@example.com', undefined]);
    expect(ids('fwd.eml/notes.md')).toEqual(['fwd@example.com', 'fwd@example.com', 'notes.md']);
    expect(ids('fwd.eml/forwarded.eml')).toEqual(['terms@example.com', 'terms@example.com', 'forwarded.eml']);
    expect(ids('fwd.eml/forwarded.eml/terms.txt')).toEqual(['terms@example.com', 'terms@example.com', 'terms.txt']);
    // No Message-ID: none is invented.
    expect(ids('anonymous.eml')).toEqual([undefined, null, undefined]);
    expect(ids('anonymous.eml/a.txt')).toEqual([undefined, null, 'a.txt']);
  });
});
