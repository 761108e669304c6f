// Hostile files: each shape an adversarial pass found, read through the one ingest path (loadDocuments), on files
// made by the tools that make them. None may stall a load, abort it, or carry restricted text past its ACL: a bad
// file is skipped (or read in part) with the reason, the good files beside it are read, and what a file expands to
// is bounded. CPU claims are ratios against an ordinary file of the same size, measured in the same run.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkDocument, loadDocuments, MemoryHybridStore, type IngestDocument, type LoadWarning, type SkippedFile } from '../src/index.js';
import { makeBrokenTreePdf, makeFlatTreePdf, makeFlateBombPdf, makeNestedEmail } from './helpers/hostile-files.js';
import { makeEmail, makePdf } from './helpers/real-files.js';

const work = mkdtempSync(join(tmpdir(), 'litm-hostile-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

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

/** A folder of `name` holding the given files and a good one beside them. */
function folder(name: string, files: Record<string, string | Uint8Array>): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'good.md'), '# Good\n\nRefunds are issued within 14 days.\n');
  for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), content);
  return dir;
}

/** Median CPU seconds (user + system) of `runs` runs, after one to warm up. */
async function cpuOf(run: () => Promise<unknown>, runs = 3): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const before = process.cpuUsage();
    await run();
    const used = process.cpuUsage(before);
    times.push((used.user + used.system) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

const ids = (docs: readonly IngestDocument[]) => docs.map((doc) => doc.id);

describe('a bad file is skipped with the reason, and the files beside it are read', () => {
  it('HTML nested 20,000 elements deep (the reader runs out of stack): skipped, not a crash', async () => {
    const dir = folder('deep-html', { 'deep.html': `<html><body>${'<div>'.repeat(20_000)}deep${'</div>'.repeat(20_000)}</body></html>` });
    const { docs, skipped } = await load([dir]);
    expect(ids(docs)).toEqual(['deep-html/good.md']);
    expect(skipped).toMatchObject([
      { sourceId: 'deep-html/deep.html', reason: 'failed', message: expect.stringMatching(/nests too deeply/u) as unknown },
    ]);
  });

  it('a WebVTT hour of 400 digits (Infinity seconds): that cue left out with a warning, the others read', async () => {
    const vtt = `WEBVTT\n\n${'9'.repeat(400)}:00:01.000 --> ${'9'.repeat(400)}:00:02.000\nNever.\n\n00:00:03.000 --> 00:00:04.000\nThe cue that holds.\n`;
    const dir = folder('vtt-infinity', { 'talk.vtt': vtt });
    const { docs, skipped, warnings } = await load([dir]);
    expect(skipped).toEqual([]);
    expect(ids(docs)).toEqual(['vtt-infinity/good.md', 'vtt-infinity/talk.vtt']);
    expect(docs[1]!.text).toBe('The cue that holds.');
    expect(warnings.map((w) => w.message)).toEqual([
      `1 cue timing line could not be read and was left out (at line 3: ${JSON.stringify(`${'9'.repeat(400)}:00:01.000 --> ${'9'.repeat(400)}:00:02.000`.slice(0, 60))})`,
    ]);
  });

  it('records with metadata nested 1,000 levels deep: those records left out with a warning, the rest read', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1000; i += 1) deep = { deeper: deep };
    const lines = [
      { id: 'ok', text: 'A fine record.', tags: { team: 'ops' } },
      { id: 'deep', text: 'A record with deep metadata.', tags: deep },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n');
    const dir = folder('deep-records', { 'tickets.jsonl': lines });
    const { recordsLoader, defaultLoaders } = await import('../src/sources/index.js');
    const { docs, skipped, warnings } = await load([dir], { loaders: [...defaultLoaders(), recordsLoader({ metadataFields: ['tags'] })] });
    expect(skipped).toEqual([]);
    expect(ids(docs)).toEqual(['deep-records/good.md', 'deep-records/tickets.jsonl/ok']);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^left out deep-records\/tickets\.jsonl\/deep: .*MAX_METADATA_DEPTH/u),
    ]);
  });

  it('front matter `acl: []`: skipped with the reason (never read as public)', async () => {
    const dir = folder('empty-acl', { 'secret.md': '---\nacl: []\n---\n# Salaries\n\nThe 2024 salary bands.\n' });
    const { docs, skipped } = await load([dir]);
    expect(ids(docs)).toEqual(['empty-acl/good.md']);
    expect(skipped).toMatchObject([
      { reason: 'front-matter', message: expect.stringMatching(/acl must name at least one principal/u) as unknown },
    ]);
  });

  it('a YAML alias bomb in front matter: skipped with the reason, in no time', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i += 1)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      );
    const dir = folder('alias-bomb', { 'bomb.md': `---\n${levels.join('\n')}\n---\n# Bomb\n\nText.\n` });
    const { docs, skipped } = await load([dir]);
    expect(ids(docs)).toEqual(['alias-bomb/good.md']);
    expect(skipped).toMatchObject([{ reason: 'front-matter', message: expect.stringMatching(/alias/u) as unknown }]);
  });

  it('a file name that is not UTF-8: skipped naming it, the others read', async () => {
    const dir = folder('latin1-name', {});
    writeFileSync(
      Buffer.concat([Buffer.from(`${dir}/caf`), Buffer.from([0xe9]), Buffer.from('.md')]),
      '# Café\n\nNot reachable by a text id.\n',
    );
    const { docs, skipped } = await load([dir]);
    expect(ids(docs)).toEqual(['latin1-name/good.md']);
    expect(skipped).toMatchObject([{ reason: 'bad-name', path: expect.stringContaining('caf') as unknown }]);
  });

  it('a PDF whose pages cannot be read is unreadable (damaged), never "run OCR"; a drawing without text still is', async () => {
    const dir = folder('damaged-pdf', { 'broken.pdf': await makeBrokenTreePdf() });
    const { docs, skipped } = await load([dir]);
    expect(ids(docs)).toEqual(['damaged-pdf/good.md']);
    expect(skipped).toMatchObject([{ reason: 'unreadable', message: expect.stringMatching(/damaged/u) as unknown }]);
    expect(skipped[0]!.message).not.toMatch(/OCR on it/u);
  });

  it('e-mail headers of 60,000 recipients (metadata over 1 MiB): that message left out with a warning, the mailbox read', async () => {
    const crowd = Array.from({ length: 60_000 }, (_, i) => `person${i}@example.com`).join(', ');
    const big = `From: eve@example.com\r\nTo: ${crowd}\r\nSubject: Everyone\r\nMessage-ID: <crowd@example.com>\r\n\r\nHello all.\r\n`;
    const small = await makeEmail({
      from: 'sam@example.com',
      to: 'ops@example.com',
      subject: 'Webhooks',
      messageId: '<w1@example.com>',
      text: 'Retry webhooks eight times.',
    });
    const mbox = `From eve@example.com Mon Apr  1 10:00:00 2024\n${big.replace(/\r\n/gu, '\n')}\nFrom sam@example.com Mon Apr  1 11:00:00 2024\n${small.toString().replace(/\r\n/gu, '\n')}\n`;
    const dir = folder('crowd', { 'inbox.mbox': mbox });
    const { docs, skipped, warnings } = await load([dir]);
    expect(skipped).toEqual([]);
    expect(ids(docs)).toEqual(['crowd/good.md', 'crowd/inbox.mbox/w1@example.com']);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^message 1 could not be parsed and was left out: .*header size/u),
    ]);
  });

  it('a message with 500 recipients keeps the first 100 in its metadata, and the count', async () => {
    const to = Array.from({ length: 500 }, (_, i) => `p${i}@example.com`);
    const dir = folder('many-recipients', {
      'all.eml': await makeEmail({
        from: 'a@example.com',
        to,
        subject: 'All hands',
        messageId: '<all@example.com>',
        text: 'Meeting at noon.',
      }),
    });
    const { docs } = await load([dir]);
    const email = (docs[0]!.metadata as { email: { to: string[]; toCount: number } }).email;
    expect(email.to).toHaveLength(100);
    expect(email.toCount).toBe(500);
    expect(docs[0]!.title).toContain('p0@example.com +499');
  });
});

describe('what one file may expand to is bounded', () => {
  it('a subject of 200 KB: titles keep 200 characters of it and metadata 998, not the whole of it on every chunk', async () => {
    const subject = `Renewal ${'terms '.repeat(35_000)}`;
    const raw = `From: a@example.com\r\nTo: b@example.com\r\nSubject: ${subject}\r\nMessage-ID: <long@example.com>\r\n\r\n${'Body text of the message. '.repeat(2000)}\r\n`;
    const dir = folder('long-subject', { 'long.eml': raw });
    const { docs } = await load([dir]);
    const message = docs.find((d) => d.id === 'long-subject/long.eml')!;
    expect(message.title!.length).toBeLessThan(300);
    expect(JSON.stringify(message.metadata).length).toBeLessThan(2_000);
  });

  it('messages forwarded inside messages 40 deep: attachments read 3 deep (maxAttachmentDepth), with a warning', async () => {
    for (const disposition of ['attachment', 'inline'] as const) {
      const dir = folder(`nested-${disposition}`, { 'chain.eml': await makeNestedEmail(40, disposition) });
      const { docs, warnings } = await load([dir]);
      const chain = docs.filter((doc) => doc.id.startsWith(`nested-${disposition}/chain.eml`));
      expect(chain.length, disposition).toBeGreaterThan(0);
      expect(chain.length, disposition).toBeLessThanOrEqual(4);
      // Nothing read is more than four levels of the chain: the text stored stays within a few times the file.
      const stored = chain.reduce((sum, doc) => sum + doc.text.length, 0);
      expect(stored).toBeLessThan(4 * (await makeNestedEmail(40, disposition)).length);
      if (disposition === 'attachment') expect(warnings.some((w) => /maxAttachmentDepth/u.test(w.message))).toBe(true);
    }
  });

  it("a message's attachments expand to at most maxExpandedBytes; the rest are left out with a warning", async () => {
    const note = (n: number) => ({ filename: `note-${n}.txt`, content: `Note ${n}. ${'word '.repeat(2000)}`, contentType: 'text/plain' });
    const dir = folder('expanded', {
      'notes.eml': await makeEmail({
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'Notes',
        messageId: '<notes@example.com>',
        text: 'Five notes.',
        attachments: [1, 2, 3, 4, 5].map(note),
      }),
    });
    const { docs, warnings } = await load([dir], { maxExpandedBytes: 25_000 });
    expect(ids(docs).filter((id) => id.includes('note-'))).toEqual(['expanded/notes.eml/note-1.txt', 'expanded/notes.eml/note-2.txt']);
    expect(warnings.filter((w) => /maxExpandedBytes/u.test(w.message))).toHaveLength(3);
  });

  it('a file of 40,000 one-line functions: tiny definitions share chunks (a minimum chunk size), named after them', async () => {
    const source = Array.from({ length: 40_000 }, (_, i) => `export function f${i}(): number { return ${i}; }`).join('\n');
    const dir = folder('one-liners', { 'many.ts': source });
    const { docs } = await load([dir]);
    const doc = docs.find((d) => d.id === 'one-liners/many.ts')!;
    const chunks = chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z' });
    // One chunk per definition would be 40,000.
    expect(chunks.length).toBeLessThan(40_000 / 5);
    expect(chunks[0]!.section[0]).toMatch(/^f0, f1, f2, f3, f4 \+\d+$/u);
    for (const chunk of chunks.slice(0, 50)) expect(doc.text.slice(chunk.span.start, chunk.span.end)).toBe(chunk.text);
  });

  it('a markdown file of 80,000 one-line sections gives at most maxChunksPerFile chunks, with a warning', async () => {
    const text = Array.from({ length: 80_000 }, (_, i) => `# S${i}\nx\n`).join('');
    const dir = folder('sections', { 'many.md': text });
    const { docs, warnings } = await load([dir]);
    const doc = docs.find((d) => d.id === 'sections/many.md')!;
    expect(chunkDocument(doc, { indexedAt: '2024-01-01T00:00:00Z' }).length).toBe(50_000);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^read the first 50000 of at least 80000 .*\(maxChunksPerFile\)$/u),
    ]);
  });

  it('a flate bomb PDF (a page stream inflating to 512 MiB) is skipped before pdf.js reads it, at the CPU of an ordinary PDF its size', async () => {
    const bomb = await makeFlateBombPdf(512 * 1024 * 1024);
    // An ordinary PDF of about the same size: pages of text.
    const page = (p: number) => [`Page ${p + 1}.`, 'Refunds are issued within fourteen days of a return being received. '.repeat(20)];
    const sample = await makePdf(Array.from({ length: 10 }, (_, p) => page(p)));
    const ordinaryPdf = await makePdf(Array.from({ length: Math.ceil((10 * bomb.length) / sample.length) }, (_, p) => page(p)));
    const dir = folder('bomb', { 'bomb.pdf': bomb });
    writeFileSync(join(work, 'ordinary.pdf'), ordinaryPdf);
    const { docs, skipped } = await load([dir]);
    expect(ids(docs)).toEqual(['bomb/good.md']);
    expect(skipped).toMatchObject([{ reason: 'too-large', message: expect.stringMatching(/decode to over 67108864 bytes/u) as unknown }]);
    const ordinary = await cpuOf(() => load([join(work, 'ordinary.pdf')]));
    const hostile = await cpuOf(() => load([join(dir, 'bomb.pdf')]));
    expect(hostile / Math.max(ordinary, 0.01)).toBeLessThan(10);
  }, 120_000);

  it('a page tree listing one page 100,000 times: read in part with a warning, at the CPU of an ordinary PDF its size', async () => {
    const flat = await makeFlatTreePdf(100_000);
    const dir = folder('flat-tree', { 'flat.pdf': flat });
    const { docs, warnings } = await load([dir]);
    const doc = docs.find((d) => d.id === 'flat-tree/flat.pdf')!;
    expect(doc.regions!.length).toBe(200);
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^read the first 200 of 100000 pages/u)]);
    // pdf.js walks the whole list for every page it looks up: 2,000 pages of it were 2,000 walks of 100,000.
    const page = (p: number) => [`Page ${p + 1}.`, 'Refunds are issued within fourteen days of a return being received. '.repeat(20)];
    const sample = await makePdf(Array.from({ length: 10 }, (_, p) => page(p)));
    writeFileSync(
      join(work, 'ordinary-long.pdf'),
      await makePdf(Array.from({ length: Math.ceil((10 * flat.length) / sample.length) }, (_, p) => page(p))),
    );
    const ordinary = await cpuOf(() => load([join(work, 'ordinary-long.pdf')]), 1);
    const hostile = await cpuOf(() => load([join(dir, 'flat.pdf')]), 1);
    expect(hostile / Math.max(ordinary, 0.01)).toBeLessThan(10);
  }, 300_000);
});

describe('containment: what a container holds is read by no one its readers are not', () => {
  async function renewal(attachmentFrontMatter: string | null) {
    const notes = `${attachmentFrontMatter === null ? '' : `---\n${attachmentFrontMatter}\n---\n`}# Settlement notes\n\nThe settlement is 85k.\n`;
    return makeEmail({
      from: 'hr@acme.com',
      to: 'legal@acme.com',
      subject: 'FW: termination of J. Smith',
      messageId: '<termination@acme.com>',
      text: 'See the notes attached.',
      attachments: [{ filename: 'notes.md', content: notes, contentType: 'text/markdown' }],
    });
  }

  it("an attachment's front matter cannot widen its message's ACL: `acl: [everyone]` under --acl hr leaves it out", async () => {
    const dir = join(work, 'acl-widen');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'fw.eml'), await renewal('acl: [everyone]'));
    const { docs, warnings } = await load([dir], { acl: ['hr'] });
    expect(docs.map((d) => [d.id, d.acl])).toEqual([['acl-widen/fw.eml', ['hr']]]);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/left out acl-widen\/fw\.eml\/notes\.md: its acl names none of the readers/u),
    ]);
    // As a principal without access, nothing of the message or its headers is found.
    const store = new MemoryHybridStore();
    await store.addDocuments(docs);
    expect(await store.search({ text: 'settlement termination Smith', mode: 'lexical', limit: 10, principals: ['everyone'] })).toEqual([]);
  });

  it("it can narrow it: `acl: [hr, legal]` under --acl hr is hr; none of its own inherits the message's", async () => {
    const dir = join(work, 'acl-narrow');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'narrow.eml'), await renewal('acl: [hr, legal]'));
    writeFileSync(join(dir, 'plain.eml'), (await renewal(null)).toString().replace(/termination@acme\.com/gu, 'plain@acme.com'));
    const { docs } = await load([dir], { acl: ['hr'] });
    expect(docs.map((d) => [d.id, d.acl])).toEqual([
      ['acl-narrow/narrow.eml', ['hr']],
      ['acl-narrow/narrow.eml/notes.md', ['hr']],
      ['acl-narrow/plain.eml', ['hr']],
      ['acl-narrow/plain.eml/notes.md', ['hr']],
    ]);
    // A public message's attachment may be narrower than the message (its own readers only).
    const open = await load([join(dir, 'narrow.eml')]);
    expect(open.docs.map((d) => [d.id, d.acl])).toEqual([
      ['acl-narrow/narrow.eml', undefined],
      ['acl-narrow/narrow.eml/notes.md', ['hr', 'legal']],
    ]);
  });
});

describe('identity cannot be forged across files', () => {
  it('a forged Message-ID in one mailbox never hides the real message of another', async () => {
    const real = await makeEmail({
      from: 'ceo@acme.com',
      to: 'all@acme.com',
      subject: 'Q3 results',
      messageId: '<q3@acme.com>',
      text: 'Revenue grew 12% in Q3.',
    });
    const forged = await makeEmail({
      from: 'eve@evil.example',
      to: 'all@acme.com',
      subject: 'Q3 results',
      messageId: '<q3@acme.com>',
      text: 'Nothing to see.',
    });
    const dir = join(work, 'forged');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'a-spam.mbox'),
      `From eve@evil.example Mon Apr  1 10:00:00 2024\n${forged.toString().replace(/\r\n/gu, '\n')}\n`,
    );
    writeFileSync(join(dir, 'b-inbox.mbox'), `From ceo@acme.com Mon Apr  1 11:00:00 2024\n${real.toString().replace(/\r\n/gu, '\n')}\n`);
    const { docs, skipped } = await load([dir]);
    expect(skipped).toEqual([]);
    expect(ids(docs)).toEqual(['forged/a-spam.mbox/q3@acme.com', 'forged/b-inbox.mbox/q3@acme.com']);
    expect(docs[1]!.text).toBe('Revenue grew 12% in Q3.');
  });
});
