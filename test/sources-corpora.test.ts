// The loaders on files shaped like the ones real corpora hold: transcripts written by Windows tools (UTF-16 with a
// byte order mark) and by Teams (unpadded hours), PDFs with running headers, footers, hyphenation and page labels
// (written by pdfkit and pdf-lib), HTML as Sphinx, rustdoc and an old DocBook generator write it, and e-mail
// citations that name the message.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkDocument, loadDocuments, type IngestDocument, type LoadWarning, type SkippedFile } from '../src/index.js';
import { decodeText } from '../src/sources/text.js';
import { teamsVtt, utf16Vtt } from './helpers/corpus-files.js';

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
  const docs = await loadDocuments([dir], { base: work, allowEmpty: true, onSkip: (s) => skipped.push(s), onWarning: (w) => warnings.push(w) });
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
    expect(warnings.map((w) => w.message)).toEqual(['1 cue timing line could not be read and was left out (at line 15: "0:00:75.000 --> 0:01:02.000")']);
  });
});
