// A large segment of a store file is opened before all of it is read: every page but those holding only texts and
// f32 vectors is read and checked at load, the rest when a read first needs it or in the background after the load,
// each page against its own CRC-32. The store answers as the one saved, a damaged page is `corrupt` for every read
// that needs it (never served), and files without page checksums (written before them) are read whole as before.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLitmPackError } from '../src/base/errors.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { Segment, type SegmentShape } from '../src/memory/segment.js';
import type { IngestDocument } from '../src/store/schemas.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';

const NOW = () => new Date('2025-01-01T00:00:00.000Z');
const words = ['harbour', 'lantern', 'invoice', 'refund', 'oven', 'rota', 'tea', 'leave', 'ledger', 'anchor', 'quarry', 'meadow'];

const filler = 'Every entry is kept in the ledger by the harbour office, read again at the end of each week, and signed.';

/** 900 one-chunk documents with 384-d vectors: one segment of about 2 MiB, past the size read lazily. */
function docs(): IngestDocument[] {
  return Array.from({ length: 900 }, (_, i) => ({
    id: `doc-${String(i).padStart(4, '0')}.md`,
    title: `Note ${i}`,
    ...(i % 4 === 0 ? { acl: ['hr'] } : {}),
    text: `${i === 450 ? 'MIDMARKER ' : ''}${i === 899 ? 'LASTMARKER ' : ''}Note ${i} on ${words[i % words.length]} and ${words[(i * 5) % words.length]}, then ${words[(i * 7) % words.length]} for the ${words[(i * 11) % words.length]} team. ${filler}`,
  }));
}

interface Manifest {
  segments: { id: string; contents: { offset: number; length: number; crc32: number }; pages?: { size: number; crc32: string } }[];
}

function manifestOf(bytes: Buffer): { manifest: Manifest; offset: number } {
  const trailer = bytes.subarray(bytes.length - 24);
  const offset = Number(trailer.readBigUInt64LE(0));
  const length = trailer.readUInt32LE(8);
  return { manifest: JSON.parse(bytes.subarray(offset, offset + length).toString('utf8')) as Manifest, offset };
}

/** `bytes` with its manifest replaced (trailer and manifest checksum made right). */
function withManifest(bytes: Buffer, manifest: Manifest, offset: number): Buffer {
  const json = Buffer.from(JSON.stringify(manifest), 'utf8');
  const trailer = Buffer.alloc(24);
  trailer.writeBigUInt64LE(BigInt(offset), 0);
  trailer.writeUInt32LE(json.length, 8);
  trailer.writeUInt32LE(crc32(json), 12);
  Buffer.from('LITMEND\n', 'latin1').copy(trailer, 16);
  return Buffer.concat([bytes.subarray(0, offset), json, trailer]);
}

async function saved(): Promise<{ path: string; store: MemoryHybridStore; embeddings: FakeEmbeddings; bytes: Buffer }> {
  const embeddings = new FakeEmbeddings({ dimension: 384 });
  const store = new MemoryHybridStore({ embeddings, now: NOW });
  await store.addDocuments(docs());
  const path = join(await mkdtemp(join(tmpdir(), 'litm-lazy-')), 'store.json');
  await store.save(path);
  return { path, store, embeddings, bytes: await readFile(path) };
}

async function answers(store: MemoryHybridStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
    for (const text of ['harbour lantern', 'refund ledger meadow', 'quarry tea']) {
      out.push(await store.search({ text, mode, limit: 20, principals: 'all' }));
      out.push(await store.search({ text, mode, limit: 20 }));
    }
  }
  out.push(await store.getChunks({ sourceIds: docs().map((d) => d.id), principals: 'all' }));
  return out;
}

const flipped = (bytes: Buffer, at: number) => {
  const copy = Buffer.from(bytes);
  copy[at] = copy[at]! ^ 0x20;
  return copy;
};

describe('a large segment read page by page', () => {
  it('records a CRC-32 per 16 KiB page of every segment, and loads back answering exactly as the store saved', async () => {
    const { path, store, embeddings, bytes } = await saved();
    const { manifest } = manifestOf(bytes);
    expect(manifest.segments).toHaveLength(1);
    const [segment] = manifest.segments;
    expect(segment!.contents.length).toBeGreaterThan(2 ** 20);
    expect(segment!.pages?.size).toBe(16_384);
    const table = Buffer.from(segment!.pages!.crc32, 'base64');
    expect(table.length).toBe(Math.ceil(segment!.contents.length / 16_384) * 4);
    // Each entry is the CRC-32 of its page of the file.
    const page = 3;
    const at = segment!.contents.offset + page * 16_384;
    expect(table.readUInt32LE(page * 4)).toBe(crc32(bytes.subarray(at, at + 16_384)));

    const loaded = await MemoryHybridStore.load(path, { embeddings, now: NOW });
    expect(await answers(loaded)).toEqual(await answers(store));
    // Saved elsewhere (every page read in), it is the same file byte for byte.
    const copy = join(path, '..', 'copy.json');
    await (await MemoryHybridStore.load(path, { embeddings, now: NOW })).save(copy);
    expect((await readFile(copy)).equals(bytes)).toBe(true);
  });

  it('a damaged page of texts alone does not stop the load; every read that needs it is corrupt, the rest is served', async () => {
    const { path, embeddings, bytes } = await saved();
    const damaged = join(path, '..', 'damaged.json');
    await writeFile(damaged, flipped(bytes, bytes.indexOf('MIDMARKER') + 2));
    // The damaged page holds texts only: the load (which reads and checks everything else) succeeds.
    const loaded = await MemoryHybridStore.load(damaged, { embeddings, now: NOW });
    const first = await loaded.getChunks({ sourceIds: ['doc-0450.md'], principals: 'all' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isLitmPackError(first, 'corrupt'), String(first)).toBe(true);
    expect((first as Error).message).toMatch(/does not match its checksum \(page \d+, bytes \d+ to \d+\)/);
    expect((first as Error).message).toContain(damaged);
    // A chunk whose text lies on another page reads as saved.
    const [last] = await loaded.getChunks({ sourceIds: ['doc-0899.md'], principals: 'all' });
    expect(last?.text).toContain('LASTMARKER');
    // After the background read has passed it, still corrupt, and a save of the store refuses rather than copy it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(loaded.getChunks({ sourceIds: ['doc-0450.md'], principals: 'all' })).rejects.toMatchObject({ code: 'corrupt' });
    await expect(loaded.search({ text: 'MIDMARKER harbour', mode: 'lexical', limit: 5, principals: 'all' })).rejects.toMatchObject({
      code: 'corrupt',
    });
    await expect(loaded.save(join(path, '..', 'again.json'))).rejects.toMatchObject({ code: 'corrupt' });
  });

  it('any single damaged byte is corrupt at load or at the first read of its page, never served: a full read or save finds it', async () => {
    const { path, embeddings, bytes } = await saved();
    const damaged = join(path, '..', 'damaged.json');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), async (at, flip) => {
        const copy = Buffer.from(bytes);
        copy[at] = copy[at]! ^ flip;
        await writeFile(damaged, copy);
        const outcome = await MemoryHybridStore.load(damaged, { embeddings, now: NOW })
          .then(
            // Loaded: every chunk read back, then the whole store copied, must stop on the damage.
            async (loaded) => {
              await loaded.getChunks({ sourceIds: docs().map((d) => d.id), principals: 'all' });
              await loaded.save(join(path, '..', 'copy.json'));
              return null;
            },
            (error: unknown) => error,
          )
          .catch((error: unknown) => error);
        expect(isLitmPackError(outcome, 'corrupt'), `byte ${at}: ${String(outcome)}`).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('a posting row out of range, in a file whose every checksum is right, is corrupt when a query first reads its list', async () => {
    const { path, embeddings, bytes } = await saved();
    const { manifest, offset } = manifestOf(bytes);
    const entry = manifest.segments[0]! as Manifest['segments'][number] & { shape: SegmentShape };
    // Where the segment's lists live, as the reader lays its memory out: texts, vectors, then each class's postings.
    const [, , firstPostings] = Segment.prepare(entry.shape).lazyRanges;
    const at = entry.contents.offset + firstPostings![0];
    const forged = Buffer.from(bytes);
    forged.writeInt32LE(-1, at);
    const size = entry.pages!.size;
    const table = Buffer.from(entry.pages!.crc32, 'base64');
    const page = Math.floor((at - entry.contents.offset) / size);
    const from = entry.contents.offset + page * size;
    table.writeUInt32LE(crc32(forged.subarray(from, Math.min(from + size, entry.contents.offset + entry.contents.length))), page * 4);
    entry.pages!.crc32 = table.toString('base64');
    entry.contents.crc32 = crc32(forged.subarray(entry.contents.offset, entry.contents.offset + entry.contents.length));
    const file = join(path, '..', 'forged.json');
    await writeFile(file, withManifest(forged, manifest, offset));
    const loaded = await MemoryHybridStore.load(file, { embeddings, now: NOW });
    // Every term of the corpus (titles and their numbers too): the query reads every list, the forged one too.
    const everyWord = [...new Set(docs().flatMap((d) => `${d.title} ${d.text}`.toLowerCase().match(/[a-z0-9]+/g) ?? []))].join(' ');
    const error = await loaded.search({ text: everyWord, mode: 'lexical', limit: 5, principals: 'all' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isLitmPackError(error, 'corrupt'), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/names a row out of range/);
    expect((error as Error).message).toContain(file);
    // Read whole (the page checksums removed), the same file is corrupt at load, as before.
    for (const segment of manifest.segments) delete segment.pages;
    await writeFile(file, withManifest(forged, manifest, offset));
    await expect(MemoryHybridStore.load(file)).rejects.toThrow(/names a row out of range/);
  });

  it('a damaged page of what a query scans (not texts or vectors) is corrupt at load', async () => {
    const { path, bytes } = await saved();
    const { manifest } = manifestOf(bytes);
    const damaged = join(path, '..', 'damaged.json');
    // The first bytes of the memory section are the text offsets, read at load.
    await writeFile(damaged, flipped(bytes, manifest.segments[0]!.contents.offset + 9));
    const error = await MemoryHybridStore.load(damaged).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isLitmPackError(error, 'corrupt'), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/does not match its checksum \(page 0,/);
  });

  it('a file written before page checksums (none in its manifest) is read whole and checked as before', async () => {
    const { path, store, embeddings, bytes } = await saved();
    const { manifest, offset } = manifestOf(bytes);
    for (const segment of manifest.segments) delete segment.pages;
    const older = join(path, '..', 'older.json');
    await writeFile(older, withManifest(bytes, manifest, offset));
    expect(await answers(await MemoryHybridStore.load(older, { embeddings, now: NOW }))).toEqual(await answers(store));
    const text = bytes.indexOf('MIDMARKER') + 2;
    await writeFile(older, withManifest(flipped(bytes, text), manifest, offset));
    await expect(MemoryHybridStore.load(older)).rejects.toMatchObject({ code: 'corrupt' });
    // A page table of the wrong length is corrupt too.
    const short = structuredClone(manifestOf(bytes).manifest);
    short.segments[0]!.pages!.crc32 = Buffer.alloc(8).toString('base64');
    await writeFile(older, withManifest(bytes, short, offset));
    await expect(MemoryHybridStore.load(older)).rejects.toThrow(/page checksums for \d+ pages/);
  });
});
