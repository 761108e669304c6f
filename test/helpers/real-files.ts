// Files made by the tools that make them in the wild: PDFs written by pdf-lib and pdfkit, e-mails composed by
// nodemailer's MailComposer, mailboxes in the mboxrd format mail programs write. Used by the format tests and
// by scripts/make-mixed-corpus.ts (examples/mixed).
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import PDFKit from 'pdfkit';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

/** A PDF with one page per entry (each a list of paragraphs), written by pdf-lib. */
export async function makePdf(pages: readonly (readonly string[])[], title?: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  if (title !== undefined) doc.setTitle(title);
  doc.setCreationDate(new Date('2024-01-01T00:00:00Z'));
  doc.setModificationDate(new Date('2024-01-01T00:00:00Z'));
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const paragraphs of pages) {
    const page = doc.addPage([595, 842]);
    let y = 780;
    for (const paragraph of paragraphs) {
      // pdf-lib draws one line per call: wrap at about 80 characters.
      const words = paragraph.split(/\s+/u);
      let line = '';
      const lines: string[] = [];
      for (const word of words) {
        if ((line + ' ' + word).trim().length > 80) {
          lines.push(line.trim());
          line = word;
        } else line += ` ${word}`;
      }
      if (line.trim() !== '') lines.push(line.trim());
      for (const text of lines) {
        page.drawText(text, { x: 50, y, size: 11, font });
        y -= 14;
      }
      y -= 14; // a blank line between paragraphs
    }
  }
  return doc.save({ useObjectStreams: false });
}

/** A PDF whose pages hold drawings only (no text layer), as a scan without OCR has. */
export async function makeImageOnlyPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawRectangle({ x: 50, y: 600, width: 300, height: 150, color: rgb(0.2, 0.4, 0.8) });
  page.drawCircle({ x: 300, y: 300, size: 80, color: rgb(0.9, 0.3, 0.1) });
  return doc.save();
}

/** A password-protected PDF, written by pdfkit (pdf-lib cannot encrypt). */
export function makeEncryptedPdf(text: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const doc = new PDFKit({
      userPassword: 'secret',
      ownerPassword: 'owner',
      pdfVersion: '1.7',
      info: { CreationDate: new Date('2024-01-01T00:00:00Z') },
    });
    const parts: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => parts.push(chunk));
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(parts))));
    doc.on('error', reject);
    doc.text(text);
    doc.end();
  });
}

/** An RFC 5322 message composed by nodemailer's MailComposer. */
export function makeEmail(options: Mail.Options): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    new MailComposer(options).compile().build((error, message) => (error ? reject(error) : resolve(message)));
  });
}

/** An mbox (mboxrd) of messages: a `From ` line before each, `From ` lines in bodies escaped as `>From `. */
export function makeMbox(messages: readonly { from: string; date: Date; raw: Buffer | string }[]): string {
  return messages
    .map(({ from, date, raw }) => {
      const body = raw
        .toString()
        .replace(/\r\n/gu, '\n')
        .replace(/^(>*From )/gmu, '>$1');
      return `From ${from} ${date.toUTCString().replace(/,/u, '')}\n${body.endsWith('\n') ? body : `${body}\n`}\n`;
    })
    .join('');
}
