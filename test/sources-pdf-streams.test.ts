// Counting what a PDF's streams decode to, before pdf.js decodes them: each filter an attacker can wrap a bomb in
// is counted (zlib, zlib in zlib, zlib behind ASCIIHex or ASCII85, LZW), the count stops past the budget without
// holding what it counted, and pdf.js reads what the counting let through, as it would have.
import { deflateSync } from 'node:zlib';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { pdfLoader } from '../src/sources/pdf.js';
import { decodedBytes, lzwLength } from '../src/sources/pdf-streams.js';
import { deflatedRun } from './helpers/hostile-files.js';
import { makePdf } from './helpers/real-files.js';

/** A PDF object holding a stream with this dictionary and data (the shape the scan reads). */
const streamObject = (dictionary: string, data: Uint8Array) =>
  Buffer.concat([
    Buffer.from(`4 0 obj\n<< ${dictionary} /Length ${data.length} >>\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream\nendobj\n', 'latin1'),
  ]);

const pdfOf = (...objects: Buffer[]) => new Uint8Array(Buffer.concat([Buffer.from('%PDF-1.7\n'), ...objects, Buffer.from('%%EOF\n')]));

/** PDF's LZW (early change 1): codes from 9 to 12 bits, a clear code when the table is full. */
function lzw(input: Uint8Array): Uint8Array {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  const emit = (code: number, width: number) => {
    buffer = (buffer << width) | code;
    bits += width;
    while (bits >= 8) {
      out.push((buffer >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
    buffer &= (1 << bits) - 1;
  };
  let table = new Map<string, number>();
  let next = 258;
  // One code early (EarlyChange 1): the reader widens when the table it has built is one short of the next power of two.
  const width = () => (next < 512 ? 9 : next < 1024 ? 10 : next < 2048 ? 11 : 12);
  emit(256, 9);
  let current = '';
  for (const byte of input) {
    const extended = current + String.fromCharCode(byte);
    if (extended.length === 1 || table.has(extended)) {
      current = extended;
      continue;
    }
    emit(current.length === 1 ? current.charCodeAt(0) : table.get(current)!, width());
    table.set(extended, next++);
    if (next >= 4094) {
      emit(256, width());
      table = new Map();
      next = 258;
    }
    current = String.fromCharCode(byte);
  }
  if (current !== '') emit(current.length === 1 ? current.charCodeAt(0) : table.get(current)!, width());
  emit(257, width());
  if (bits > 0) out.push((buffer << (8 - bits)) & 0xff);
  return new Uint8Array(out);
}

describe('decodedBytes', () => {
  const text = Buffer.from('BT /F1 12 Tf 72 712 Td (Refunds are issued within 14 days.) Tj ET\n'.repeat(2000));

  it('counts zlib data whatever its dictionary says, zlib inside zlib, and zlib behind ASCIIHex and ASCII85', async () => {
    const flate = deflateSync(text);
    expect(await decodedBytes(pdfOf(streamObject('/Filter /FlateDecode', flate)), 1e9)).toBe(text.length);
    // A dictionary that claims an image, or no filter at all: the data is still zlib data pdf.js may inflate.
    expect(await decodedBytes(pdfOf(streamObject('/Subtype /Image', flate)), 1e9)).toBe(text.length);
    expect(await decodedBytes(pdfOf(streamObject('/Filter [/FlateDecode /FlateDecode]', deflateSync(flate))), 1e9)).toBe(text.length);
    const hex = Buffer.from(`${flate.toString('hex').replace(/(.{64})/gu, '$1\n')}>`, 'latin1');
    expect(await decodedBytes(pdfOf(streamObject('/Filter [/ASCIIHexDecode /FlateDecode]', hex)), 1e9)).toBe(text.length);
    const a85 = Buffer.from(`${ascii85(flate)}~>`, 'latin1');
    expect(await decodedBytes(pdfOf(streamObject('/Filter [/A85 /Fl]', a85)), 1e9)).toBe(text.length);
  });

  it('counts LZW from its code table', () => {
    for (const input of [text, Buffer.alloc(200_000, 0x20), Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7919) % 251))]) {
      expect(lzwLength(lzw(input), 1e9)).toBe(input.length);
    }
  });

  it('the LZW written here is what pdf.js reads: a page whose content is LZW data', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const page = doc.addPage([595, 842]);
    page.drawText('placeholder', { x: 50, y: 780, size: 11, font });
    const name = page.node
      .Resources()!
      .lookup(PDFName.of('Font'))!
      .toString()
      .match(/\/(\w+)/u)![1];
    const ops = Buffer.from(`BT /${name} 12 Tf 72 712 Td (Refunds are issued within fourteen days.) Tj ET\n`, 'latin1');
    page.node.set(PDFName.of('Contents'), doc.context.register(doc.context.stream(lzw(ops), { Filter: 'LZWDecode' })));
    const bytes = await doc.save({ useObjectStreams: false });
    expect(await decodedBytes(bytes, 1e9)).toBeGreaterThanOrEqual(ops.length);
    const result = await pdfLoader.load({ path: 'lzw.pdf', sourceId: 'lzw.pdf', extension: '.pdf', bytes }, {});
    expect('documents' in result && result.documents[0]!.text).toBe('Refunds are issued within fourteen days.');
  });

  it('stops past the budget: a bomb of 512 MiB is counted to just past 64 MiB, without holding it', async () => {
    const bomb = await deflatedRun(512 * 1024 ** 2, 0);
    const budget = 64 * 1024 ** 2;
    const rssBefore = process.memoryUsage().rss;
    const counted = await decodedBytes(pdfOf(streamObject('/Filter /FlateDecode', bomb)), budget);
    expect(counted).toBeGreaterThan(budget);
    expect(counted).toBeLessThan(budget + 4 * 1024 ** 2);
    // Pieces are counted and dropped: holding what was counted would take the budget itself (64 MiB) and more; the
    // bound is the budget, not less, because pieces already dropped wait for the collector on a busy machine.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(budget);
  }, 60_000);

  it('a real PDF decodes to about what pdf-lib compressed, and the loader reads it unchanged', async () => {
    const pdf = await makePdf([['Refunds are issued within 14 days.'], ['Gift cards are never refunded.']]);
    const counted = await decodedBytes(pdf, 1e9);
    expect(counted).toBeGreaterThan(0);
    expect(counted).toBeLessThan(1e6);
  });
});

/** ASCII85 of `bytes` (the PDF filter's alphabet, `z` for four zero bytes). */
function ascii85(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const chunk = [0, 1, 2, 3].map((k) => bytes[i + k] ?? 0);
    const n = bytes.length - i;
    let value = ((chunk[0]! << 24) | (chunk[1]! << 16) | (chunk[2]! << 8) | chunk[3]!) >>> 0;
    if (value === 0 && n >= 4) {
      out += 'z';
      continue;
    }
    const digits: string[] = [];
    for (let d = 0; d < 5; d += 1) {
      digits.unshift(String.fromCharCode((value % 85) + 33));
      value = Math.floor(value / 85);
    }
    out += digits.join('').slice(0, Math.min(5, n + 1));
  }
  return out;
}
