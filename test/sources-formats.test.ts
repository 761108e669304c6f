// The format loaders through the one ingest path (loadDocuments → MemoryHybridStore → packBundle), on files
// made by the tools that make them: PDFs written by pdf-lib and pdfkit, e-mails composed by nodemailer,
// mailboxes in mboxrd, source files in the style of well-known projects, WebVTT and SRT transcripts.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryHybridStore,
  chunkDocument,
  fromLangChainDocuments,
  fromLlamaIndexDocuments,
  loadDocuments,
  packBundle,
  toCanonicalJson,
  verifyCitations,
  type IngestDocument,
  type LoadWarning,
  type SkippedFile,
} from '../src/index.js';
import { makeEmail, makeEncryptedPdf, makeImageOnlyPdf, makeMbox, makePdf } from './helpers/real-files.js';

const work = mkdtempSync(join(tmpdir(), 'litm-formats-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const MIXED = join(__dirname, '../examples/mixed');

interface Loaded {
  docs: IngestDocument[];
  skipped: SkippedFile[];
  warnings: LoadWarning[];
}

async function load(paths: string[], options: Parameters<typeof loadDocuments>[1] = {}): Promise<Loaded> {
  const skipped: SkippedFile[] = [];
  const warnings: LoadWarning[] = [];
  const docs = await loadDocuments(paths, {
    base: work,
    allowEmpty: true,
    onSkip: (s) => skipped.push(s),
    onWarning: (w) => warnings.push(w),
    ...options,
  });
  return { docs, skipped, warnings };
}

const byId = (docs: readonly IngestDocument[], id: string) => {
  const doc = docs.find((d) => d.id === id);
  if (doc === undefined) throw new Error(`no document ${id} in ${docs.map((d) => d.id).join(', ')}`);
  return doc;
};

async function storeOf(docs: IngestDocument[], chunkTokens?: number): Promise<MemoryHybridStore> {
  const store = new MemoryHybridStore(chunkTokens === undefined ? {} : { chunkTokens });
  await store.addDocuments(docs);
  return store;
}

describe('PDF (pdf.js), on PDFs written by pdf-lib and pdfkit', () => {
  beforeAll(async () => {
    const dir = join(work, 'pdf');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'manual.pdf'),
      await makePdf(
        [
          ['Getting started', 'Install the agent on every host.'],
          ['Refunds', 'Refunds are paid within 14 days of approval.', 'A second paragraph about chargebacks.'],
          ['Appendix', 'Glossary of terms.'],
        ],
        'Agent manual',
      ),
    );
    writeFileSync(join(work, 'encrypted.pdf'), await makeEncryptedPdf('Salaries for 2024.'));
    writeFileSync(join(work, 'scan.pdf'), await makeImageOnlyPdf());
    const whole = await makePdf([['A page that will be cut short.']]);
    writeFileSync(join(work, 'truncated.pdf'), whole.slice(0, Math.floor(whole.length / 3)));
  });

  it('reads the text of every page into a region with its page number, and chunks never cross pages', async () => {
    const { docs, skipped } = await load([join(work, 'pdf')]);
    expect(skipped).toEqual([]);
    const doc = byId(docs, 'pdf/manual.pdf');
    expect(doc.title).toBe('Agent manual');
    expect(doc.regions?.map((r) => r.page)).toEqual([1, 2, 3]);
    const page2 = doc.text.slice(doc.regions![1]!.start, doc.regions![1]!.end);
    expect(page2).toBe('Refunds\n\nRefunds are paid within 14 days of approval.\n\nA second paragraph about chargebacks.');
    const chunks = chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z' });
    expect(chunks.map((c) => c.locator?.page)).toEqual([1, 2, 3]);
    for (const chunk of chunks) expect(doc.text.slice(chunk.span.start, chunk.span.end)).toBe(chunk.text);
  });

  it('a bundle cites the page; the header shows it compactly and the citation carries it', async () => {
    const { docs } = await load([join(work, 'pdf')]);
    const store = await storeOf(docs);
    const candidates = await store.search({ text: 'refunds paid within 14 days', mode: 'lexical', limit: 5 });
    const pack = packBundle({ query: 'refunds', candidates, maxTokens: 300 });
    expect(pack.context.split('\n')[0]).toMatch(/^\[1\] Agent manual \(p\. 2\)$/u);
    expect(pack.citations[0]!.locator).toEqual({ page: 2 });
    expect(toCanonicalJson(pack)).toContain('"locator":{"page":2}');
    const xml = packBundle({ query: 'refunds', candidates, maxTokens: 300, format: 'xml' });
    expect(xml.context).toContain('<locator>p. 2</locator>');
    const checks = await verifyCitations({ store, pack });
    expect(checks.map((c) => c.status)).toEqual(pack.citations.map(() => 'current'));
  });

  it('skips an encrypted PDF, one without a text layer and a truncated one, each with its reason, and reads the rest', async () => {
    writeFileSync(join(work, 'ok.md'), '# Fine\n\nA readable file beside the bad ones.\n');
    const { docs, skipped } = await load([
      join(work, 'encrypted.pdf'),
      join(work, 'scan.pdf'),
      join(work, 'truncated.pdf'),
      join(work, 'ok.md'),
    ]);
    expect(docs.map((d) => d.id)).toEqual(['ok.md']);
    const reasons = Object.fromEntries(skipped.map((s) => [s.path.split('/').pop(), s.reason]));
    expect(reasons).toEqual({ 'encrypted.pdf': 'encrypted', 'scan.pdf': 'no-text', 'truncated.pdf': 'unreadable' });
    expect(skipped.find((s) => s.reason === 'encrypted')!.message).toMatch(/password/u);
    expect(skipped.find((s) => s.reason === 'no-text')!.message).toMatch(/OCR/u);
  });

  it('reads at most maxPages pages, with a warning', async () => {
    const { docs, warnings } = await load([join(work, 'pdf/manual.pdf')], { maxPages: 2 });
    expect(docs[0]!.regions?.map((r) => r.page)).toEqual([1, 2]);
    expect(warnings.map((w) => w.message)).toEqual(['read the first 2 of 3 pages (maxPages)']);
  });
});

describe('source code (tree-sitter), on files in the style of well-known projects', () => {
  it('one region per top-level definition, with its doc comment, its symbol path and exact lines; imports join the first', async () => {
    const { docs } = await load([join(MIXED, 'code')], { base: MIXED });
    const ts = byId(docs, 'code/retry.ts');
    const lines = ts.text.split('\n');
    const chunks = chunkDocument(ts, { indexedAt: '2024-01-01T00:00:00Z' });
    const bySection = new Map(chunks.map((c) => [c.section.join(' > '), c] as const));
    expect([...bySection.keys()]).toEqual([
      'computeBackoff',
      'BreakerState',
      'CircuitBreaker',
      'CircuitBreaker.constructor',
      'CircuitBreaker.allows',
      'CircuitBreaker.record',
      'CircuitBreaker.transition',
    ]);
    for (const chunk of chunks) {
      const [from, to] = chunk.locator!.lines!;
      // The lines are exact: the chunk is those lines of the file, whitespace at its ends aside.
      expect(
        lines
          .slice(from - 1, to)
          .join('\n')
          .trim(),
      ).toBe(chunk.text);
    }
    expect(bySection.get('computeBackoff')!.text).toMatch(
      /^import \{ EventEmitter \}[\s\S]*\/\*\*\n \* Delay before retry[\s\S]*export function computeBackoff/u,
    );
    expect(bySection.get('CircuitBreaker.record')!.text).toMatch(
      /^\/\*\* Records the outcome of a call[\s\S]*record\(ok: boolean\): void \{/u,
    );
  });

  it('a definition that fits stays whole; the member split happens only when it does not fit', async () => {
    const { docs } = await load([join(MIXED, 'code/retry.ts')], { base: MIXED });
    const wide = chunkDocument(docs[0]!, { indexedAt: '2024-01-01T00:00:00Z', maxTokens: 2000 });
    expect(wide.map((c) => c.section[0])).toEqual(['computeBackoff', 'BreakerState', 'CircuitBreaker']);
    expect(wide[2]!.text).toMatch(/^\/\*\*\n \* Stops calling[\s\S]*\n\}$/u);
  });

  it('finds the symbols of Python, Go, Rust and Java: classes and their methods, Go receivers, Rust impls', async () => {
    const { docs, warnings } = await load([join(MIXED, 'code')], { base: MIXED });
    expect(warnings).toEqual([]);
    const sections = (id: string, maxTokens = 60) =>
      chunkDocument(byId(docs, id), { indexedAt: '2024-01-01T00:00:00Z', maxTokens }).map((c) => c.section.join(''));
    expect(new Set(sections('code/cache.py'))).toEqual(
      new Set(['LRUCache', 'LRUCache.__init__', 'LRUCache.get', 'LRUCache.put', 'cached']),
    );
    expect(sections('code/ratelimit.go', 1000)).toEqual(['Limiter', 'NewLimiter', 'Limiter.Allow']);
    expect(new Set(sections('code/backoff.rs'))).toEqual(new Set(['Backoff', 'Backoff.new', 'Backoff.next_delay', 'Backoff.reset']));
    expect(new Set(sections('code/RetryPolicy.java'))).toEqual(
      new Set(['RetryPolicy', 'RetryPolicy.RetryPolicy', 'RetryPolicy.allowsRetry', 'RetryPolicy.delay']),
    );
  });

  it('chunks a language without a grammar by lines, with line numbers; skips a binary blob with a code extension', async () => {
    const dir = join(work, 'other-code');
    mkdirSync(dir, { recursive: true });
    const ruby = [
      '# frozen_string_literal: true',
      '',
      'module Billing',
      '  def self.refund(order)',
      '    order.refund!',
      '  end',
      'end',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'billing.rb'), ruby);
    writeFileSync(join(dir, 'blob.ts'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)));
    const { docs, skipped } = await load([dir]);
    expect(skipped.map((s) => [s.path.split('/').pop(), s.reason])).toEqual([['blob.ts', 'binary']]);
    const doc = byId(docs, 'other-code/billing.rb');
    // Blank-line-separated blocks merged up to the bound; the leading comment is code, not a markdown heading.
    expect(chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z' }).map((c) => [c.locator?.lines, c.text])).toEqual([
      [[1, 7], ruby.trim()],
    ]);
    const narrow = chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z', maxTokens: 10 });
    expect(narrow.length).toBeGreaterThan(2);
    const lines = ruby.split('\n');
    for (const chunk of narrow)
      expect(
        lines
          .slice(chunk.locator!.lines![0] - 1, chunk.locator!.lines![1])
          .join('\n')
          .trim(),
      ).toBe(chunk.text);
  });
});

describe('HTML (parse5)', () => {
  it('keeps the main content, drops scripts, navigation, the page header and footer, decodes entities, and makes headings sections', async () => {
    const { docs } = await load([join(MIXED, 'runbook.html')], { base: MIXED });
    const doc = docs[0]!;
    expect(doc.title).toBe('Deploy runbook · Platform docs');
    expect(doc.text).not.toMatch(/analytics|font-family|Guides|Search|Privacy|helpful/u);
    expect(doc.text).toContain('Run make rollback VERSION=<previous tag> from the release host.');
    expect(doc.text).toContain('never on Fridays');
    const chunks = chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z' });
    expect(chunks.map((c) => c.section)).toEqual([
      ['Deploy runbook'],
      ['Deploy runbook', 'Rolling back'],
      ['Deploy runbook', 'Rolling back', 'When to roll back'],
      ['Deploy runbook', 'Feature flags'],
    ]);
    expect(chunks[2]!.text).toBe(
      '- The error rate stays above 2% for five minutes after the deploy.\n\n- p99 latency doubles on any public endpoint.',
    );
  });

  it('reads broken markup as a browser would, and skips binary content named .html', async () => {
    writeFileSync(
      join(work, 'broken.html'),
      '<html><body><div><p>Unclosed paragraph <b>bold <i>both</b> tail\n<table><tr><td>cell one<td>cell two</table><h2>Later</h2><p>More &amp; more',
    );
    writeFileSync(join(work, 'image.html'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]));
    const { docs, skipped } = await load([join(work, 'broken.html'), join(work, 'image.html')]);
    expect(skipped.map((s) => s.reason)).toEqual(['binary']);
    expect(docs[0]!.text).toBe('Unclosed paragraph bold both tail\n\ncell one cell two\n\nLater\n\nMore & more');
    expect(docs[0]!.regions?.map((r) => r.section ?? [])).toEqual([[], ['Later']]);
  });
});

describe('e-mail (postal-mime), on messages composed by nodemailer', () => {
  beforeAll(async () => {
    const dir = join(work, 'mail');
    mkdirSync(dir, { recursive: true });
    const terms = await makePdf([['The renewal runs for 24 months.', 'Prices rise by 3%.']], 'Renewal terms');
    writeFileSync(
      join(dir, 'renewal.eml'),
      await makeEmail({
        from: 'Alice <alice@acme.com>',
        to: 'you@example.com',
        subject: 'Contract renewal',
        date: new Date('2024-03-15T09:30:00Z'),
        messageId: '<renewal@acme.com>',
        text: 'Hi,\n\nthe renewal terms are attached.\n\n# 1 thing: sign by Friday.\n\nAlice',
        attachments: [
          { filename: 'terms.pdf', content: Buffer.from(terms), contentType: 'application/pdf' },
          { filename: 'logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), contentType: 'image/png' },
        ],
      }),
    );
    const first = await makeEmail({
      from: 'sam@example.com',
      to: 'ops@example.com',
      subject: 'Webhooks',
      date: new Date('2024-04-02T14:00:00Z'),
      messageId: '<w1@example.com>',
      text: 'How often do we retry webhooks?\nFrom now on, answer here.',
    });
    const reply = await makeEmail({
      from: 'dana@example.com',
      to: 'sam@example.com',
      subject: 'Re: Webhooks',
      date: new Date('2024-04-02T15:00:00Z'),
      messageId: '<w2@example.com>',
      inReplyTo: '<w1@example.com>',
      references: ['<w1@example.com>'],
      text: 'Eight times, with jitter.',
    });
    writeFileSync(
      join(dir, 'inbox.mbox'),
      makeMbox([
        { from: 'sam@example.com', date: new Date('2024-04-02T14:00:00Z'), raw: first },
        { from: 'dana@example.com', date: new Date('2024-04-02T15:00:00Z'), raw: reply },
        // The same message delivered twice, and a block of junk that is no message.
        { from: 'dana@example.com', date: new Date('2024-04-02T15:00:00Z'), raw: reply },
        { from: 'nobody', date: new Date('2024-04-03T00:00:00Z'), raw: '\u0001\u0002 not a message at all' },
      ]),
    );
  });

  it('one source per message with its headers; a readable attachment is its own source linked by parentId; the rest is named', async () => {
    const { docs, warnings } = await load([join(work, 'mail/renewal.eml')]);
    expect(warnings).toEqual([]);
    expect(docs.map((d) => [d.id, d.parentId])).toEqual([
      ['mail/renewal.eml', undefined],
      ['mail/renewal.eml/terms.pdf', 'mail/renewal.eml'],
    ]);
    const [message, attachment] = docs as [IngestDocument, IngestDocument];
    expect(message.title).toBe('Email — alice@acme.com → you@example.com — 2024-03-15 — subject: Contract renewal');
    expect(message.timestamp).toBe('2024-03-15T09:30:00.000Z');
    expect(message.metadata).toEqual({
      email: {
        from: 'alice@acme.com',
        to: ['you@example.com'],
        cc: [],
        subject: 'Contract renewal',
        date: '2024-03-15T09:30:00.000Z',
        messageId: 'renewal@acme.com',
        thread: 'renewal@acme.com',
        attachments: ['terms.pdf', 'logo.png'],
      },
      messageId: 'renewal@acme.com',
    });
    expect(attachment.regions?.[0]?.page).toBe(1);
    // Every chunk of the message and of its attachments names the message.
    expect(attachment.metadata?.messageId).toBe('renewal@acme.com');
    // A body line starting with "#" is text, not a heading.
    expect(chunkDocument(message, { indexedAt: '2024-01-01T00:00:00Z' })[0]!.text).toContain('# 1 thing: sign by Friday.');
  });

  it('cites a message and its attachment once, keeping the attachment, with a dropped reason that says why', async () => {
    const { docs } = await load([join(work, 'mail/renewal.eml')]);
    const store = await storeOf(docs);
    const candidates = await store.search({ text: 'renewal terms attached 24 months', mode: 'lexical', limit: 10 });
    expect(new Set(candidates.map((c) => c.sourceId))).toEqual(new Set(['mail/renewal.eml', 'mail/renewal.eml/terms.pdf']));
    const pack = packBundle({ query: 'renewal terms', candidates, maxTokens: 1000 });
    expect(pack.citations.map((c) => [c.sourceId, c.parentId, c.locator])).toEqual([
      ['mail/renewal.eml/terms.pdf', 'mail/renewal.eml', { page: 1 }],
    ]);
    const message = candidates.find((c) => c.sourceId === 'mail/renewal.eml')!;
    expect(pack.dropped).toEqual([{ id: message.id, reason: 'attachment-preferred', duplicateOf: pack.items[0]!.id }]);
    // Pinned, the message is kept all the same (a pin is never dropped by the rule).
    const { packBriefing } = await import('../src/index.js');
    const briefing = packBriefing({ query: 'renewal', candidates, maxTokens: 1000, pins: ['mail/renewal.eml'] });
    expect(new Set(briefing.citations.map((c) => c.sourceId))).toEqual(new Set(['mail/renewal.eml', 'mail/renewal.eml/terms.pdf']));
  });

  it('reads an mbox message by message: ids from Message-ID, threads, From_ unescaped; a repeat and junk are left out with warnings', async () => {
    const { docs, warnings } = await load([join(work, 'mail/inbox.mbox')]);
    expect(docs.map((d) => d.id)).toEqual(['mail/inbox.mbox/w1@example.com', 'mail/inbox.mbox/w2@example.com']);
    expect(docs[0]!.text).toBe('How often do we retry webhooks?\nFrom now on, answer here.');
    expect((docs[1]!.metadata as { email: { thread: string; inReplyTo: string } }).email).toMatchObject({
      thread: 'w1@example.com',
      inReplyTo: 'w1@example.com',
    });
    expect(warnings.map((w) => w.message)).toEqual([
      'message 3 repeats the Message-ID w2@example.com and was left out',
      'message 4 has no headers and no text (not a message) and was left out',
    ]);
  });

  it('reads a message found in two files once (the same Message-ID, sender and body)', async () => {
    const dir = join(work, 'mail-twice');
    mkdirSync(dir, { recursive: true });
    const raw = readFileSync(join(work, 'mail/renewal.eml'));
    writeFileSync(join(dir, 'a.eml'), raw);
    writeFileSync(join(dir, 'b.eml'), raw);
    const { docs, skipped } = await load([dir]);
    expect(docs.map((d) => d.id)).toEqual(['mail-twice/a.eml', 'mail-twice/a.eml/terms.pdf']);
    expect(skipped.map((s) => [s.path.split('/').pop(), s.reason, s.message])).toEqual([
      ['b.eml', 'duplicate', 'the message (Message-ID renewal@acme.com) is a copy of mail-twice/a.eml, read already, and was left out'],
    ]);
  });

  it('reads at most maxMessages messages of a mailbox, with a warning', async () => {
    const { docs, warnings } = await load([join(work, 'mail/inbox.mbox')], { maxMessages: 1 });
    expect(docs.map((d) => d.id)).toEqual(['mail/inbox.mbox/w1@example.com']);
    expect(warnings[0]!.message).toBe('read the first 1 of 4 messages (maxMessages)');
  });
});

describe('transcripts: WebVTT and SRT', () => {
  it('merges cues into segments up to the chunk bound, each with its start and end time; kind segment', async () => {
    const cues = Array.from({ length: 40 }, (_, i) => {
      const at = (s: number) => `00:${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}.000`;
      return `${i + 1}\n${at(i * 5)} --> ${at(i * 5 + 5)}\nSpeaker ${i % 2 === 0 ? 'one' : 'two'} talks about topic number ${i} with some words.\n`;
    });
    writeFileSync(join(work, 'talk.vtt'), `WEBVTT\n\n${cues.join('\n')}`);
    writeFileSync(join(work, 'talk.srt'), cues.join('\n').replace(/\.000/gu, ',000'));
    const { docs } = await load([join(work, 'talk.vtt'), join(work, 'talk.srt')]);
    for (const doc of docs) {
      expect(doc.kind).toBe('segment');
      const chunks = chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z', maxTokens: 64 });
      expect(chunks.length).toBeGreaterThan(3);
      expect(chunks[0]!.locator!.time![0]).toBe(0);
      expect(chunks.at(-1)!.locator!.time![1]).toBe(200);
      for (let i = 1; i < chunks.length; i += 1) expect(chunks[i]!.locator!.time![0]).toBe(chunks[i - 1]!.locator!.time![1]);
      for (const chunk of chunks) expect(chunk.kind).toBe('segment');
    }
    expect(chunkDocument(docs[0]!, { indexedAt: 'x', maxTokens: 64 }).map((c) => c.text)).toEqual(
      chunkDocument(docs[1]!, { indexedAt: 'x', maxTokens: 64 }).map((c) => c.text),
    );
  });

  it('a bundle cites a transcript time compactly', async () => {
    const { docs } = await load([join(MIXED, 'podcast.vtt')], { base: MIXED });
    expect(docs[0]!.title).toBe('Reliability Weekly, episode 12: retries');
    const store = await storeOf(docs, 64);
    const pack = packBundle({
      query: 'jitter',
      candidates: await store.search({ text: 'jitter backoff window', mode: 'lexical', limit: 1 }),
      maxTokens: 200,
    });
    expect(pack.context.split('\n')[0]).toMatch(/ \(0\d:\d\d–0\d:\d\d\)$/u);
    expect(pack.citations[0]!.locator!.time).toEqual([expect.any(Number), expect.any(Number)]);
    expect(pack.items[0]!.text).toContain('Dana: So the fix is jitter');
  });
});

describe('records: JSON Lines and JSON arrays with a field mapping', () => {
  it('maps id, text, title and metadata fields; each record is a source under its file', async () => {
    const { recordsLoader, defaultLoaders } = await import('../src/sources/index.js');
    const loaders = [
      ...defaultLoaders(),
      recordsLoader({ idField: 'key', textField: 'description', titleField: 'summary', metadataFields: ['status', 'priority'] }),
    ];
    const { docs } = await load([join(MIXED, 'tickets.jsonl')], { base: MIXED, loaders });
    expect(docs.map((d) => [d.id, d.title, d.metadata])).toEqual([
      ['tickets.jsonl/OPS-101', 'Refund webhook retries flood the queue', { status: 'open', priority: 'high' }],
      ['tickets.jsonl/OPS-102', 'Rollback took 20 minutes', { status: 'done', priority: 'medium' }],
      ['tickets.jsonl/OPS-103', 'Rate limiter allows bursts above the limit', { status: 'wontfix', priority: 'low' }],
    ]);
  });

  it('leaves out bad lines and records with warnings naming them; a JSON file that holds no records is skipped', async () => {
    writeFileSync(join(work, 'export.jsonl'), '{"id":1,"text":"First record."}\nnot json\n{"id":1,"text":"Same id."}\n{"id":2}\n[1,2]\n');
    writeFileSync(join(work, 'package.json'), '{"name":"x","version":"1.0.0"}');
    writeFileSync(
      join(work, 'array.json'),
      JSON.stringify([
        { id: 'a', text: 'Alpha.' },
        { id: 'b', text: 'Beta.' },
      ]),
    );
    const { docs, skipped, warnings } = await load([join(work, 'export.jsonl'), join(work, 'package.json'), join(work, 'array.json')]);
    expect(docs.map((d) => d.id)).toEqual(['export.jsonl/1', 'array.json/a', 'array.json/b']);
    expect(warnings.map((w) => w.message)).toEqual([
      'line 2 is not JSON and was left out',
      'line 3 repeats the id 1 and was left out',
      'line 5 is not an object and was left out',
      '1 record has no text in "text" and was left out',
    ]);
    expect(skipped.map((s) => [s.path.split('/').pop(), s.reason])).toEqual([['package.json', 'not-records']]);
  });
});

describe('bad input: limits and skips, never a crash', () => {
  it('skips a file over maxFileBytes unread (a 50 MB file by default), naming the limit', async () => {
    const big = join(work, 'huge.txt');
    writeFileSync(big, '');
    truncateSync(big, 50 * 1024 * 1024);
    const { skipped } = await load([big]);
    expect(skipped).toEqual([
      {
        path: big,
        sourceId: 'huge.txt',
        reason: 'too-large',
        message: '52428800 bytes, over the limit of 26214400 (maxFileBytes; --max-file-bytes)',
      },
    ]);
    const small = await load([join(MIXED, 'handbook.md')], { base: MIXED, maxFileBytes: 100 });
    expect(small.skipped.map((s) => s.reason)).toEqual(['too-large']);
  });
});

describe('locators leave markdown as it was', () => {
  it('markdown chunks have no locator and their packs no locator field', async () => {
    const { docs } = await load([join(MIXED, 'handbook.md')], { base: MIXED });
    const chunks = chunkDocument(docs[0]!, { indexedAt: '2024-01-01T00:00:00Z' });
    expect(chunks.every((c) => c.locator === undefined && c.parentId === undefined)).toBe(true);
    const store = await storeOf(docs);
    const pack = packBundle({
      query: 'on call',
      candidates: await store.search({ text: 'on call pages', mode: 'lexical', limit: 3 }),
      maxTokens: 300,
    });
    expect(toCanonicalJson(pack)).not.toMatch(/locator|parentId/u);
  });
});

describe('framework documents in', () => {
  it('LangChain documents of one PDF (one per page) become one source with a region per page', async () => {
    const docs = fromLangChainDocuments([
      { pageContent: 'Install the agent.', metadata: { source: 'manual.pdf', loc: { pageNumber: 1 }, pdf: { totalPages: 2 } } },
      { pageContent: 'Refunds take 14 days.', metadata: { source: 'manual.pdf', loc: { pageNumber: 2 }, pdf: { totalPages: 2 } } },
      { pageContent: 'line ten\nline eleven', metadata: { source: 'notes.txt', loc: { lines: { from: 10, to: 11 } } } },
    ]);
    expect(docs.map((d) => [d.id, d.regions?.map((r) => [r.page, r.line])])).toEqual([
      [
        'manual.pdf',
        [
          [1, undefined],
          [2, undefined],
        ],
      ],
      ['notes.txt', [[undefined, 10]]],
    ]);
    expect(docs[0]!.metadata).toEqual({ pdf: { totalPages: 2 } });
    const store = await storeOf(docs);
    const hits = await store.search({ text: 'refunds', mode: 'lexical', limit: 1 });
    expect(hits[0]!.locator).toEqual({ page: 2 });
    const lines = await store.search({ text: 'eleven', mode: 'lexical', limit: 1 });
    expect(lines[0]!.locator).toEqual({ lines: [10, 11] });
  });

  it('LlamaIndex documents and nodes keep their page labels', async () => {
    const { Document } = await import('@llamaindex/core/schema');
    const docs = fromLlamaIndexDocuments([
      new Document({ id_: 'doc-1', text: 'First page text.', metadata: { file_path: 'guide.pdf', page_label: '1' } }),
      new Document({ id_: 'doc-2', text: 'Second page text.', metadata: { file_path: 'guide.pdf', page_label: '2' } }),
    ]);
    expect(docs.map((d) => [d.id, d.regions?.map((r) => r.page)])).toEqual([['guide.pdf', [1, 2]]]);
  });

  it("a printed page label beside the physical page (roman front matter) becomes the locator's label", async () => {
    const { Document } = await import('@llamaindex/core/schema');
    const fromLlama = fromLlamaIndexDocuments([
      new Document({ id_: 'p1', text: 'Preface text.', metadata: { file_path: 'book.pdf', page_number: 3, page_label: 'iii' } }),
      new Document({
        id_: 'p2',
        text: 'Refunds take fourteen days.',
        metadata: { file_path: 'book.pdf', page_number: 11, page_label: '1' },
      }),
      new Document({ id_: 'p3', text: 'Same number.', metadata: { file_path: 'book.pdf', page_number: 12, page_label: '12' } }),
    ]);
    expect(fromLlama[0]!.regions?.map((r) => [r.page, r.pageLabel])).toEqual([
      [3, 'iii'],
      [11, '1'],
      [12, undefined],
    ]);
    // Python LangChain's PDF readers write a 0-based page and the printed label.
    const fromLangChain = fromLangChainDocuments(
      [{ pageContent: 'Index entries.', metadata: { source: 'book.pdf', page: 40, page_label: 'A-3' } }],
      { zeroBasedPage: true },
    );
    expect(fromLangChain[0]!.regions?.map((r) => [r.page, r.pageLabel])).toEqual([[41, 'A-3']]);
    const store = await storeOf(fromLlama);
    const hits = await store.search({ text: 'refunds', mode: 'lexical', limit: 1 });
    expect(hits[0]!.locator).toEqual({ page: 11, label: '1' });
  });
});
