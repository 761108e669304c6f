// Hostile files as an attacker makes them: with the tools that make real ones (pdf-lib's object model, nodemailer),
// bent where the format lets them be bent: a page stream that inflates a thousandfold, a page tree listing one page
// a hundred thousand times, messages forwarded inside messages, a page tree that points at nothing.
import { PassThrough } from 'node:stream';
import { createDeflate } from 'node:zlib';
import { PDFArray, PDFDocument, PDFName, PDFNumber, StandardFonts } from 'pdf-lib';
import { makeEmail } from './real-files.js';

/** zlib data of `bytes` bytes of `fill`, made without holding them (a stream fed one block at a time). */
export async function deflatedRun(bytes: number, fill = 0x20): Promise<Uint8Array> {
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  const collected = new Promise<void>((done, fail) => {
    deflate.on('data', (piece: Buffer) => out.push(piece));
    deflate.on('end', done);
    deflate.on('error', fail);
  });
  const block = Buffer.alloc(1 << 20, fill);
  const source = new PassThrough();
  source.pipe(deflate);
  for (let left = bytes; left > 0; left -= block.length) {
    if (!source.write(left >= block.length ? block : block.subarray(0, left))) await new Promise((done) => source.once('drain', done));
  }
  source.end();
  await collected;
  return new Uint8Array(Buffer.concat(out));
}

/** A one-page PDF (pdf-lib) whose page content is a FlateDecode stream of `inflated` bytes of spaces, then a line of text. */
export async function makeFlateBombPdf(inflated: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText('A page of a flate bomb.', { x: 50, y: 780, size: 11, font });
  const bomb = doc.context.stream(await deflatedRun(inflated), { Filter: 'FlateDecode' });
  page.node.set(PDFName.of('Contents'), doc.context.register(bomb));
  return doc.save({ useObjectStreams: false });
}

/** A PDF (pdf-lib) whose page tree lists its one page `count` times: `count` pages, found by walking the list. */
export async function makeFlatTreePdf(count: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText('The one page, listed many times.', { x: 50, y: 780, size: 11, font });
  const pages = doc.catalog.lookup(PDFName.of('Pages')) as unknown as {
    lookup(name: PDFName, type: typeof PDFArray): PDFArray;
    set(name: PDFName, value: PDFNumber): void;
  };
  const kids = pages.lookup(PDFName.of('Kids'), PDFArray);
  const ref = kids.get(0);
  for (let i = 1; i < count; i += 1) kids.push(ref);
  pages.set(PDFName.of('Count'), PDFNumber.of(count));
  return doc.save({ useObjectStreams: false });
}

/** A PDF (pdf-lib) whose page tree lists a number where its page should be: pdf.js opens it, no page can be read. */
export async function makeBrokenTreePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([595, 842]).drawText('Text no reader will reach.', { x: 50, y: 780, size: 11, font });
  const pages = doc.catalog.lookup(PDFName.of('Pages')) as unknown as { lookup(name: PDFName, type: typeof PDFArray): PDFArray };
  const kids = pages.lookup(PDFName.of('Kids'), PDFArray);
  kids.set(0, PDFNumber.of(7));
  return doc.save({ useObjectStreams: false });
}

/**
 * A message (nodemailer) forwarded as an attachment `levels` times over: each level's message carries the one
 * before as `forwarded-N.eml`. `disposition` `inline` makes the parser read nested messages in place.
 */
export async function makeNestedEmail(levels: number, disposition: 'attachment' | 'inline' = 'attachment'): Promise<Buffer> {
  let message = await makeEmail({
    from: 'eve@example.com',
    to: 'you@example.com',
    subject: 'level 0',
    messageId: '<level-0@example.com>',
    text: 'The innermost message.',
  });
  for (let level = 1; level <= levels; level += 1) {
    message = await makeEmail({
      from: 'eve@example.com',
      to: 'you@example.com',
      subject: `level ${level}`,
      messageId: `<level-${level}@example.com>`,
      text: `Forwarding level ${level}.`,
      attachments: [
        { filename: `forwarded-${level - 1}.eml`, content: message, contentType: 'message/rfc822', contentDisposition: disposition },
      ],
    });
  }
  return message;
}
