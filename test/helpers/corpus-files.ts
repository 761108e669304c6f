// Files shaped like those real corpora hold, made the way the tools that make them do: subtitles saved as UTF-16
// with a byte order mark (Windows tools), Teams meeting transcripts, manuals written by pdfkit with running
// headers, footers and hyphenated line ends, PDFs with printed page labels (pdf-lib), and HTML pages as Sphinx,
// rustdoc and an old DocBook generator write them. Used by test/sources-corpora.test.ts and bench/real-corpora.ts.
import PDFKit from 'pdfkit';
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';

/** A WebVTT file saved as UTF-16 little-endian with a byte order mark (what Notepad and many Windows tools write). */
export function utf16Vtt(): Uint8Array {
  const text = 'WEBVTT - Stand-up\r\n\r\n00:00:01.000 --> 00:00:03.500\r\n<v Alice>Bonjour à tous, the café opens at nine.</v>\r\n\r\n00:00:03.500 --> 00:00:06.500\r\n<v Bob>東京 office joins at ten.</v>\r\n';
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
}

/**
 * A Teams meeting transcript: a cue id line above each timing, hours unpadded (`0:00:01.000`), voice tags; one
 * cue written by another tool with unpadded minutes and seconds and a comma, one with more than three decimals,
 * and one whose seconds read 75 (a bad cue: left out, the others kept).
 */
export function teamsVtt(): string {
  return [
    'WEBVTT',
    '',
    '6c4f1a2e-8b1d-4c53-9f0e-1a2b3c4d5e6f/12-0',
    '0:00:01.000 --> 0:00:04.250',
    '<v Alice Smith>Welcome to the quarterly planning call.</v>',
    '',
    '6c4f1a2e-8b1d-4c53-9f0e-1a2b3c4d5e6f/13-0',
    '0:00:04.250 --> 0:00:09.500',
    '<v Bob Jones>Thanks, I will share the roadmap.</v>',
    '',
    '6c4f1a2e-8b1d-4c53-9f0e-1a2b3c4d5e6f/14-0',
    '1:2:5,04 --> 1:2:10,0',
    '<v Alice Smith>The launch moves to March.</v>',
    '',
    '0:00:75.000 --> 0:01:02.000',
    '<v Bob Jones>This cue has no valid time.</v>',
    '',
    '1:02:11.5000000 --> 1:02:15.1234567',
    '<v Bob Jones>Then the beta closes in February.</v>',
    '',
  ].join('\n');
}


/**
 * The body of a chapter as a typesetter set it: lines as they are broken, words hyphenated at line ends where it
 * fell. Paragraphs are lists of lines. `manip-`/`ulation` is written whole elsewhere (`manipulation`), so is
 * `well-known` (hyphenated), `read-`/`only` and `coordi-`/`nator` nowhere, `non-`/`English` before a capital.
 */
export const MANUAL_PAGES: readonly (readonly (readonly string[])[])[] = [
  [
    ['Chapter 4: Function reference'],
    ['This chapter lists the functions of the agent. Each function takes a context', 'and returns a promise; errors are typed and carry a code.'],
    ['The configure function accepts a path and applies the manip-', 'ulation of settings in order, one file at a time, and reports what changed.'],
  ],
  [
    ['Every host runs the agent as a service. The coordi-', 'nator keeps the inventory of hosts and their last report.'],
    ['The inventory is a read-', 'only view: writes go through the configure function and never to the file.'],
  ],
  [
    ['Settings follow a well-known layout: one key per line, sections in brackets.', 'Comments start with a hash and run to the end of the line.'],
    ['Remote manipulation of settings needs the admin role; the agent logs every', 'change with the user who made it and the time.'],
  ],
  [
    ['Messages are translated where a catalogue exists. A non-', 'English catalogue falls back to the built-in strings for any key it lacks.'],
    ['The status function reports the state of one host: running, stopped or', 'unknown when the host has not reported for ten minutes.'],
  ],
  [
    ['Plugins extend the agent with a well-', 'known interface: a name, a version and a function per event.'],
    ['The agent loads plugins from its plugin folder at start and again when the', 'folder changes; a plugin that throws is disabled with a warning.'],
  ],
  [
    ['The shutdown function stops the agent after the reports in flight are sent,', 'waiting at most thirty seconds before it exits anyway.'],
    ['Read the only copy of the log before you rotate it: rotation deletes the', 'oldest file for good.'],
  ],
];

/** pdfkit's output as bytes. */
function pdfkitBytes(doc: PDFKit.PDFDocument): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => parts.push(chunk));
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(parts))));
    doc.on('error', reject);
    doc.end();
  });
}

/**
 * A manual written by pdfkit: a title page, a contents page, then `MANUAL_PAGES` with a running header
 * (`Chapter 4: Function reference 3`, the printed page number at its end) and a footer (`Acme Agent Manual` and
 * the page number), drawn after the body as pdfkit's documented header/footer recipe does (buffered pages).
 * Printed numbers start at 1 on the first chapter page (physical page 3); the title and contents pages print
 * `i` and `ii`.
 */
export async function runningHeadersPdf(): Promise<Uint8Array> {
  const doc = new PDFKit({ size: 'A4', margins: { top: 72, bottom: 72, left: 72, right: 72 }, bufferPages: true, info: { Title: 'Acme Agent Manual', CreationDate: new Date('2024-01-01T00:00:00Z') } });
  doc.font('Helvetica-Bold').fontSize(24).text('Acme Agent Manual', 72, 300, { lineBreak: false });
  doc.font('Helvetica').fontSize(12).text('Version 2.1, for operators', 72, 340, { lineBreak: false });
  doc.addPage();
  doc.font('Helvetica-Bold').fontSize(16).text('Contents', 72, 90, { lineBreak: false });
  doc.font('Helvetica').fontSize(11).text('Chapter 4: Function reference . . . . . 1', 72, 130, { lineBreak: false });
  for (const paragraphs of MANUAL_PAGES) {
    doc.addPage();
    let y = 90;
    for (const lines of paragraphs) {
      for (const line of lines) {
        doc.font('Helvetica').fontSize(11).text(line, 72, y, { lineBreak: false });
        y += 14;
      }
      y += 14;
    }
  }
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i += 1) {
    doc.switchToPage(i);
    const printed = i < 2 ? ['i', 'ii'][i]! : String(i - 1);
    // Drawing in the bottom margin would start a new page: pdfkit's recipe lifts the margin while it draws.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.font('Helvetica').fontSize(9);
    if (i >= 2) doc.text(`Chapter 4: Function reference ${printed}`, 72, 40, { lineBreak: false });
    doc.text('Acme Agent Manual', 72, doc.page.height - 50, { lineBreak: false });
    doc.text(printed, doc.page.width - 100, doc.page.height - 50, { lineBreak: false });
    doc.page.margins.bottom = bottom;
  }
  return pdfkitBytes(doc);
}

/** One range of page labels (PDF 32000-1 §12.4.2): from a 0-based page, a style, a prefix, a start value. */
export interface LabelRange {
  from: number;
  style?: 'D' | 'r' | 'R' | 'A' | 'a';
  prefix?: string;
  start?: number;
}

/** The PDF with a /PageLabels number tree set in its catalogue by pdf-lib (as PDF editors write it). */
export async function withPageLabels(bytes: Uint8Array, ranges: readonly LabelRange[]): Promise<Uint8Array> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const nums: unknown[] = [];
  for (const range of ranges) {
    const label: Record<string, unknown> = {};
    if (range.style !== undefined) label.S = PDFName.of(range.style);
    if (range.prefix !== undefined) label.P = PDFString.of(range.prefix);
    if (range.start !== undefined) label.St = range.start;
    nums.push(range.from, doc.context.obj(label as never));
  }
  doc.catalog.set(PDFName.of('PageLabels'), doc.context.obj({ Nums: nums as never }));
  return doc.save({ useObjectStreams: false });
}

/** A book written by pdf-lib: one page per entry, each a line of text naming the page. */
export async function labelledBookPdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Labelled book');
  doc.setCreationDate(new Date('2024-01-01T00:00:00Z'));
  doc.setModificationDate(new Date('2024-01-01T00:00:00Z'));
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n += 1) {
    const page = doc.addPage([595, 842]);
    page.drawText(`This is physical page ${n} of the labelled book, with its own words.`, { x: 50, y: 700, size: 11, font });
  }
  return doc.save({ useObjectStreams: false });
}
