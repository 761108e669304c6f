/**
 * How many bytes a PDF's compressed streams decode to, counted before pdf.js reads the file: pdf.js decodes a
 * stream whole when it reads it, so a stream of a few kilobytes that inflates to gigabytes (a flate bomb) costs
 * that much memory and time, and `maxFileBytes` bounds only the file. Each stream is decoded here a piece at a
 * time and thrown away, until the total passes the budget: zlib data (FlateDecode, whatever the dictionary
 * claims: a bomb's can claim anything), zlib data inside zlib data, zlib data behind ASCIIHex or ASCII85, and LZW
 * (counted from its code table, nothing kept).
 *
 * Written here rather than with a PDF library: no PDF parser on npm bounds decoding either, and what is needed is
 * the keywords that delimit a stream's data, zlib (Node's own) and the short ASCII and LZW decoders below.
 */
import { Readable } from 'node:stream';
import { constants, createInflate } from 'node:zlib';

const STREAM = Buffer.from('stream');
const END = Buffer.from('endstream');
const OBJ = Buffer.from('obj');
/** Layers of zlib inside zlib followed (a PDF writer never nests more than two). */
const MAX_LAYERS = 4;

/** Whether `bytes` at `at` start zlib data as PDF writers write it (deflate, a valid header check). */
function zlibHeaderAt(bytes: Uint8Array, at: number): boolean {
  if (at + 2 > bytes.length) return false;
  const cmf = bytes[at]!;
  const flg = bytes[at + 1]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/** The inflated pieces of zlib data; data that turns corrupt ends them (pdf.js stops there too). */
async function* inflated(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const input = Readable.from(source);
  const inflate = createInflate({ finishFlush: constants.Z_SYNC_FLUSH });
  input.on('error', () => inflate.destroy());
  input.pipe(inflate);
  try {
    for await (const piece of inflate) yield piece as Uint8Array;
  } catch {
    // Corrupt or truncated data: what was inflated so far is what a reader gets.
  } finally {
    inflate.destroy();
    input.destroy();
  }
}

/** `source` as it is, or inflated again while it starts with a zlib header (zlib inside zlib). */
async function* unwrapped(source: AsyncIterable<Uint8Array>, layer: number): AsyncGenerator<Uint8Array> {
  const pieces = source[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let length = 0;
  while (length < 2) {
    const next = await pieces.next();
    if (next.done === true) break;
    head.push(next.value);
    length += next.value.length;
  }
  const all = (async function* () {
    yield* head;
    for (;;) {
      const next = await pieces.next();
      if (next.done === true) return;
      yield next.value;
    }
  })();
  if (layer < MAX_LAYERS && zlibHeaderAt(Buffer.concat(head), 0)) yield* unwrapped(inflated(all), layer + 1);
  else yield* all;
}

/** The bytes zlib data decodes to (through every zlib layer), stopping once past `limit`. */
async function zlibLength(data: Uint8Array, limit: number): Promise<number> {
  let total = 0;
  for await (const piece of unwrapped(inflated([data]), 1)) {
    total += piece.length;
    if (total > limit) break;
  }
  return total;
}

/**
 * The bytes LZW data (PDF's LZWDecode, early change 1) decodes to, from the lengths of its code table alone,
 * stopping once past `limit`.
 */
export function lzwLength(data: Uint8Array, limit: number): number {
  const lengths = new Uint16Array(4096).fill(1, 0, 256);
  let bits = 0;
  let cached = 0;
  let at = 0;
  let codeLength = 9;
  let nextCode = 258;
  let previous = -1;
  let total = 0;
  for (;;) {
    while (bits < codeLength) {
      if (at >= data.length) return total;
      cached = ((cached & 0xfff) << 8) | data[at++]!;
      bits += 8;
    }
    bits -= codeLength;
    const code = (cached >>> bits) & ((1 << codeLength) - 1);
    if (code === 256) {
      codeLength = 9;
      nextCode = 258;
      previous = -1;
      continue;
    }
    if (code === 257) return total;
    let length: number;
    if (code < 256 || (code >= 258 && code < nextCode)) length = lengths[code]!;
    else if (code === nextCode && previous !== -1) length = lengths[previous]! + 1;
    else return total;
    if (previous !== -1 && nextCode < 4096) lengths[nextCode++] = Math.min(4096, lengths[previous]! + 1);
    previous = code;
    total += length;
    if (total > limit) return total;
    codeLength = nextCode + 1 < 512 ? 9 : nextCode + 1 < 1024 ? 10 : nextCode + 1 < 2048 ? 11 : 12;
  }
}

const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c || byte === 0x00;

/** ASCIIHex data decoded (up to `>`), or null when `data` is not hex digits and spaces. */
function fromHex(data: Uint8Array): Uint8Array | null {
  const out = new Uint8Array(Math.ceil(data.length / 2));
  let length = 0;
  let high = -1;
  for (const byte of data) {
    if (isSpace(byte)) continue;
    if (byte === 0x3e) break;
    const digit = byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66 ? (byte | 0x20) - 0x57 : -1;
    if (digit === -1) return null;
    if (high === -1) high = digit;
    else {
      out[length++] = (high << 4) | digit;
      high = -1;
    }
  }
  if (high !== -1) out[length++] = high << 4;
  return out.subarray(0, length);
}

/** ASCII85 data decoded (up to `~>`), or null when `data` is not ASCII85. */
function fromAscii85(data: Uint8Array): Uint8Array | null {
  let out = new Uint8Array(Math.ceil((data.length * 4) / 5) + 4);
  let length = 0;
  // `z` stands for four zero bytes: room is made as it comes.
  const room = (bytes: number) => {
    if (length + bytes <= out.length) return;
    const larger = new Uint8Array(Math.max(out.length * 2, length + bytes));
    larger.set(out.subarray(0, length));
    out = larger;
  };
  let group = 0;
  let count = 0;
  let at = data[0] === 0x3c && data[1] === 0x7e ? 2 : 0;
  for (; at < data.length; at += 1) {
    const byte = data[at]!;
    if (isSpace(byte)) continue;
    if (byte === 0x7e) break;
    if (byte === 0x7a && count === 0) {
      room(4);
      length += 4;
      continue;
    }
    if (byte < 0x21 || byte > 0x75) return null;
    group = group * 85 + (byte - 0x21);
    count += 1;
    if (count === 5) {
      room(4);
      out[length++] = (group >>> 24) & 0xff;
      out[length++] = (group >>> 16) & 0xff;
      out[length++] = (group >>> 8) & 0xff;
      out[length++] = group & 0xff;
      group = 0;
      count = 0;
    }
  }
  if (count > 1) {
    for (let pad = count; pad < 5; pad += 1) group = group * 85 + 84;
    for (let k = 0; k < count - 1; k += 1) out[length++] = (group >>> (24 - 8 * k)) & 0xff;
  }
  return out.subarray(0, length);
}

/** The bytes one stream's data decodes to (0 for data none of the counted filters reads), stopping past `limit`. */
async function decodedLength(data: Uint8Array, dictionary: string, limit: number): Promise<number> {
  let bytes: Uint8Array | null = data;
  if (/ASCIIHexDecode|\/AHx/u.test(dictionary)) bytes = fromHex(data);
  else if (/ASCII85Decode|\/A85/u.test(dictionary)) bytes = fromAscii85(data);
  if (bytes === null) return 0;
  if (/LZWDecode|\/LZW/u.test(dictionary)) return lzwLength(bytes, limit);
  return zlibHeaderAt(bytes, 0) ? zlibLength(bytes, limit) : 0;
}

/**
 * The total decoded size of the PDF's streams, or a number past `budget` as soon as it is clear the total is (the
 * rest is not decoded). A stream's data runs from the line after its `stream` keyword to the next `endstream` (or
 * the end of the file), as pdf.js recovers it when a stream's length is wrong; its dictionary is what lies between
 * the `obj` keyword before it and the data.
 */
export async function decodedBytes(pdf: Uint8Array, budget: number): Promise<number> {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  let total = 0;
  let from = 0;
  let dictionaryFrom = 0;
  for (;;) {
    const keyword = bytes.indexOf(STREAM, from);
    if (keyword === -1) return total;
    from = keyword + STREAM.length;
    // `endstream` ends in `stream`: not a start.
    if (keyword >= 3 && bytes[keyword - 3] === 0x65 && bytes[keyword - 2] === 0x6e && bytes[keyword - 1] === 0x64) continue;
    // The data starts on the next line, as pdf.js reads it (whatever precedes the line end on this one).
    let start = from;
    while (start < bytes.length && bytes[start] !== 0x0a && bytes[start] !== 0x0d) start += 1;
    if (bytes[start] === 0x0d) start += 1;
    if (bytes[start] === 0x0a) start += 1;
    // Looked for since the last stream only, so the whole scan stays linear in the file.
    const object = bytes.subarray(dictionaryFrom, keyword).lastIndexOf(OBJ);
    const dictionary = bytes.toString('latin1', object === -1 ? dictionaryFrom : dictionaryFrom + object, keyword);
    const end = bytes.indexOf(END, start);
    const data = bytes.subarray(start, end === -1 ? bytes.length : end);
    total += await decodedLength(data, dictionary, budget - total);
    if (total > budget) return total;
    from = end === -1 ? bytes.length : end + END.length;
    dictionaryFrom = from;
  }
}
