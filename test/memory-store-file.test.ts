// The store file `litm-pack/memory-store@3`: its documented layout (magic, sections, manifest, trailer), a load that
// gives back the same store (ACL classes, dead rows, empty sources, every search and read), any damage or cut caught
// as `corrupt` before anything is served, saves that append what changed to a copy of the previous file (and write
// afresh once most of it would be garbage), and a served store that reloads only the segments it lacks.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 as crc32Of } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLitmPackError } from '../src/base/errors.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { ReloadingStore, type ReloadInfo } from '../src/memory/reloading-store.js';
import type { IngestDocument } from '../src/store/schemas.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';

const NOW = () => new Date('2025-01-01T00:00:00.000Z');

interface Manifest {
  schema: string;
  chunkTokens: number;
  dimension: number | null;
  embeddingModel: string | null;
  indexedText: string;
  encodings: string[];
  sources: number;
  chunks: number;
  acl: string[][];
  emptySources: { sourceId: string; version?: string }[];
  segments: {
    id: string;
    shape: { rows: number };
    contents: { offset: number; length: number };
    heap: { offset: number; length: number };
    dead: string | null;
    live: number;
  }[];
}

/** The file read as its layout is documented (file.ts), independently of the reader under test. */
function layout(bytes: Buffer): { manifest: Manifest; manifestOffset: number; sectionsEnd: number } {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x4c, 0x49, 0x54, 0x4d, 0x0d, 0x0a, 0x1a]);
  const trailer = bytes.subarray(bytes.length - 24);
  expect(trailer.subarray(16).toString('latin1')).toBe('LITMEND\n');
  const manifestOffset = Number(trailer.readBigUInt64LE(0));
  const length = trailer.readUInt32LE(8);
  expect(manifestOffset + length + 24).toBe(bytes.length);
  const manifest = JSON.parse(bytes.subarray(manifestOffset, manifestOffset + length).toString('utf8')) as Manifest;
  const sectionsEnd = Math.max(
    8,
    ...manifest.segments.flatMap((s) => [s.contents.offset + s.contents.length, s.heap.offset + s.heap.length]),
  );
  return { manifest, manifestOffset, sectionsEnd };
}

const topics = ['refunds', 'invoices', 'leave', 'harbour', 'lanterns', 'ovens', 'tea', 'rotas'];
function docs(from: number, to: number, version = '1'): IngestDocument[] {
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    return {
      id: `doc-${String(i).padStart(3, '0')}.md`,
      version,
      title: `Note ${i}`,
      ...(i % 5 === 0 ? { acl: ['hr'] } : i % 7 === 0 ? { acl: ['finance', 'board'] } : {}),
      ...(i % 3 === 0 ? { metadata: { team: topics[i % topics.length]!, n: i } } : {}),
      text: `# Part ${i}\n\n${topics[i % topics.length]} and ${topics[(i * 3) % topics.length]} in note ${i}, version ${version}.\n\n## More\n\nA second paragraph about ${topics[(i + 1) % topics.length]}.`,
    };
  });
}

async function answers(store: MemoryHybridStore): Promise<unknown[]> {
  const out: unknown[] = [store.sources(), store.size];
  for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
    for (const principals of [[], ['hr'], ['board'], 'all'] as const) {
      out.push(
        await store.search({
          text: 'refunds harbour tea leave',
          mode,
          limit: 30,
          principals: principals === 'all' ? 'all' : [...principals],
        }),
      );
    }
  }
  out.push(await store.getChunks({ principals: 'all', filter: { must: [{ key: 'metadata.n', range: { gte: 0 } }] } }));
  return out;
}

async function withFile(): Promise<{ path: string; store: MemoryHybridStore; embeddings: FakeEmbeddings }> {
  const embeddings = new FakeEmbeddings({ dimension: 12 });
  const store = new MemoryHybridStore({ embeddings, now: NOW, chunkTokens: 32 });
  // Several ingests: several segments.
  await store.addDocuments(docs(0, 40));
  await store.addDocuments(docs(40, 60));
  await store.addDocuments([{ id: 'empty.md', version: '3', text: '   ' }]);
  await store.deleteSources(['doc-041.md']);
  const path = join(await mkdtemp(join(tmpdir(), 'litm-file-')), 'store.json');
  await store.save(path);
  return { path, store, embeddings };
}

async function corruptOf(path: string): Promise<string> {
  const error = await MemoryHybridStore.load(path).then(
    () => null,
    (e: unknown) => e,
  );
  expect(isLitmPackError(error, 'corrupt'), String(error)).toBe(true);
  return (error as Error).message;
}

describe('the store file @3', () => {
  it('has the documented layout: magic, sections, a manifest with counts, model, dimension, recipe and encodings, a trailer', async () => {
    const { path, store } = await withFile();
    const { manifest } = layout(await readFile(path));
    expect(manifest).toMatchObject({
      schema: 'litm-pack/memory-store@3',
      chunkTokens: 32,
      dimension: 12,
      embeddingModel: null,
      indexedText: 'title-headings@1',
      encodings: ['cl100k_base', 'o200k_base'],
      sources: store.sources().length,
      chunks: store.size,
      acl: [['hr'], ['finance', 'board']],
      emptySources: [{ sourceId: 'empty.md', version: '3' }],
    });
    expect(manifest.segments.reduce((sum, s) => sum + s.live, 0)).toBe(store.size);
  });

  it('loads back the same store: sources, ACL classes, dead rows, every search and read', async () => {
    const { path, store, embeddings } = await withFile();
    const loaded = await MemoryHybridStore.load(path, { embeddings, now: NOW });
    expect(await answers(loaded)).toEqual(await answers(store));
    // And keeps working as a store: an ingest into the loaded one and into the original agree.
    await loaded.addDocuments(docs(10, 15, '2'));
    await store.addDocuments(docs(10, 15, '2'));
    expect(await answers(loaded)).toEqual(await answers(store));
  });

  it('any single damaged byte is caught as corrupt, naming what does not match', async () => {
    const { path } = await withFile();
    const bytes = await readFile(path);
    const damaged = join(path, '..', 'damaged.json');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), async (at, flip) => {
        const copy = Buffer.from(bytes);
        copy[at] = copy[at]! ^ flip;
        await writeFile(damaged, copy);
        await corruptOf(damaged);
      }),
      { numRuns: 150 },
    );
    const { manifest } = layout(bytes);
    const segment = manifest.segments[0]!;
    const at = (offset: number) => {
      const copy = Buffer.from(bytes);
      copy[offset] = copy[offset]! ^ 0x40;
      return copy;
    };
    await writeFile(damaged, at(segment.contents.offset + 3));
    expect(await corruptOf(damaged)).toMatch(new RegExp(`segment ${segment.id} does not match its checksum`));
    await writeFile(damaged, at(segment.heap.offset + 3));
    expect(await corruptOf(damaged)).toMatch(/strings of segment .* do not match their checksum/);
    await writeFile(damaged, at(bytes.length - 40));
    expect(await corruptOf(damaged)).toMatch(/manifest does not match its checksum/);
  });

  it('a file cut anywhere, or with bytes after its end, is corrupt (never half-read)', async () => {
    const { path } = await withFile();
    const bytes = await readFile(path);
    const cut = join(path, '..', 'cut.json');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: bytes.length - 1 }), async (length) => {
        await writeFile(cut, bytes.subarray(0, length));
        await corruptOf(cut);
      }),
      { numRuns: 100 },
    );
    await writeFile(cut, Buffer.concat([bytes, Buffer.from('\n')]));
    expect(await corruptOf(cut)).toMatch(/a cut file\?/);
    await writeFile(cut, Buffer.alloc(0));
    await corruptOf(cut);
  });

  it('a manifest that does not fit its segments is corrupt, even with a valid checksum', async () => {
    const { path } = await withFile();
    const bytes = await readFile(path);
    const { manifest, manifestOffset } = layout(bytes);
    const rewrite = async (change: (m: Manifest) => void) => {
      const next = structuredClone(manifest);
      change(next);
      const json = Buffer.from(JSON.stringify(next), 'utf8');
      const trailer = Buffer.alloc(24);
      trailer.writeBigUInt64LE(BigInt(manifestOffset), 0);
      trailer.writeUInt32LE(json.length, 8);
      const { crc32 } = await import('node:zlib');
      trailer.writeUInt32LE(crc32(json), 12);
      Buffer.from('LITMEND\n', 'latin1').copy(trailer, 16);
      const file = join(path, '..', 'lying.json');
      await writeFile(file, Buffer.concat([bytes.subarray(0, manifestOffset), json, trailer]));
      return corruptOf(file);
    };
    expect(await rewrite((m) => (m.chunks += 1))).toMatch(/holds/);
    expect(await rewrite((m) => (m.segments[0]!.live -= 1))).toMatch(/dead rows do not match/);
    expect(await rewrite((m) => (m.segments[0]!.contents.length += 8))).toMatch(/bytes where its shape has/);
    expect(await rewrite((m) => m.acl.push(['hr']))).toMatch(/ACL classes repeat/);
    expect(await rewrite((m) => (m.segments[0]!.heap.length = 10 ** 9))).toMatch(/outside the file/);
  });
});

describe('ids and sources checked across segments (a merge of their sorted lists)', () => {
  /** The file with its manifest changed by `change` (and its sections' bytes by `bytesOf`), every checksum made right. */
  async function rewritten(
    path: string,
    change: (m: Manifest & { segments: { heap: { crc32: number } }[] }, bytes: Buffer) => void,
  ): Promise<string> {
    const bytes = Buffer.from(await readFile(path));
    const { manifest, manifestOffset } = layout(bytes);
    const next = structuredClone(manifest) as Manifest & { segments: { heap: { crc32: number } }[] };
    change(next, bytes);
    const { crc32 } = await import('node:zlib');
    const json = Buffer.from(JSON.stringify(next), 'utf8');
    const trailer = Buffer.alloc(24);
    trailer.writeBigUInt64LE(BigInt(manifestOffset), 0);
    trailer.writeUInt32LE(json.length, 8);
    trailer.writeUInt32LE(crc32(json), 12);
    Buffer.from('LITMEND\n', 'latin1').copy(trailer, 16);
    const file = join(path, '..', `rewritten-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, Buffer.concat([bytes.subarray(0, manifestOffset), json, trailer]));
    return file;
  }
  const otherId = (id: string) => `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;

  it('a segment listed again under another id repeats every chunk: corrupt; with all its rows dead it is no chunk at all', async () => {
    const { path, store, embeddings } = await withFile();
    const twice = await rewritten(path, (m) => {
      const copy = structuredClone(m.segments[0]!);
      m.segments.push({ ...copy, id: otherId(copy.id) });
      m.chunks += copy.live;
    });
    expect(await corruptOf(twice)).toMatch(/chunk .* appears twice/);
    const deadCopy = await rewritten(path, (m) => {
      const copy = structuredClone(m.segments[0]!);
      const rows = copy.shape.rows;
      const bits = Buffer.alloc(Math.ceil(rows / 8));
      for (let row = 0; row < rows; row += 1) bits[row >> 3]! |= 1 << (row & 7);
      m.segments.push({ ...copy, id: otherId(copy.id), dead: bits.toString('base64'), live: 0 });
    });
    expect(await answers(await MemoryHybridStore.load(deadCopy, { embeddings, now: NOW }))).toEqual(await answers(store));
  });

  it('a source listed as empty that has live chunks, or counts that do not add up, is corrupt', async () => {
    const { path, store } = await withFile();
    const { sourceId: source } = store.sources().find((s) => s.sourceId !== 'empty.md')!;
    const listed = await rewritten(path, (m) => m.emptySources.push({ sourceId: source }));
    expect(await corruptOf(listed)).toMatch(new RegExp(`source ${source.replace(/[.]/g, '\\.')} is listed as empty and has chunks`));
    const fewer = await rewritten(path, (m) => (m.sources -= 1));
    expect(await corruptOf(fewer)).toMatch(/it counts .* sources .* and holds/);
  });

  it("ids out of their stored order (two ids swapped in a segment's strings, checksum right) are corrupt, not a wrong lookup", async () => {
    const { path } = await withFile();
    const swapped = await rewritten(path, (m, bytes) => {
      const { heap } = m.segments[0]!;
      const strings = JSON.parse(bytes.subarray(heap.offset, heap.offset + heap.length).toString('utf8')) as { ids: string[] };
      const sorted = [...strings.ids].sort();
      const [a, b] = [strings.ids.indexOf(sorted[0]!), strings.ids.indexOf(sorted.at(-1)!)];
      [strings.ids[a], strings.ids[b]] = [strings.ids[b]!, strings.ids[a]!];
      const json = Buffer.from(JSON.stringify(strings), 'utf8');
      expect(json.length).toBe(heap.length);
      json.copy(bytes, heap.offset);
      heap.crc32 = crc32Of(json);
    });
    expect(await corruptOf(swapped)).toMatch(/chunk ids of a segment are out of order/);
  });
});

describe('strings a segment cannot hold', () => {
  it('metadata nested past the limit, in a file whose checksums are right, is corrupt naming the limit', async () => {
    const store = new MemoryHybridStore({ now: NOW });
    await store.addDocuments([{ id: 'doc.md', text: 'Some text.', metadata: { marker: 'HERE' } }]);
    const path = join(await mkdtemp(join(tmpdir(), 'litm-file-')), 'store.json');
    await store.save(path);
    const bytes = await readFile(path);
    const { manifest, manifestOffset } = layout(bytes);
    const [segment] = manifest.segments;
    const heap = bytes.subarray(segment!.heap.offset, segment!.heap.offset + segment!.heap.length).toString('utf8');
    expect(heap).toContain('"marker":"HERE"');
    // A hostile file: nesting no addDocuments call could have written, with every checksum made to match.
    const deep = Buffer.from(heap.replace('"marker":"HERE"', `"marker":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`), 'utf8');
    const { crc32 } = await import('node:zlib');
    const next = structuredClone(manifest) as Manifest & { segments: { heap: { crc32: number } }[] };
    next.segments[0]!.heap = { offset: segment!.heap.offset, length: deep.length, crc32: crc32(deep) };
    const json = Buffer.from(JSON.stringify(next), 'utf8');
    const offset = segment!.heap.offset + deep.length;
    const trailer = Buffer.alloc(24);
    trailer.writeBigUInt64LE(BigInt(offset), 0);
    trailer.writeUInt32LE(json.length, 8);
    trailer.writeUInt32LE(crc32(json), 12);
    Buffer.from('LITMEND\n', 'latin1').copy(trailer, 16);
    expect(manifestOffset).toBe(segment!.heap.offset + segment!.heap.length);
    await writeFile(path, Buffer.concat([bytes.subarray(0, segment!.heap.offset), deep, json, trailer]));
    const error = await MemoryHybridStore.load(path).catch((e: unknown) => e);
    expect(isLitmPackError(error, 'corrupt')).toBe(true);
    expect((error as Error).message).toContain('MAX_METADATA_DEPTH');
    expect((error as Error).message).toContain(path);
    expect((error as { issues: unknown[] }).issues.length).toBeGreaterThan(0);
  });
});

describe('incremental saves', () => {
  it('an ingest that changes a few sources appends to the previous file; the result loads as the store', async () => {
    const { path, store, embeddings } = await withFile();
    const before = await readFile(path);
    const old = layout(before);
    await store.addDocuments(docs(3, 5, '2'));
    await store.save(path);
    const after = await readFile(path);
    const next = layout(after);
    // The bytes of every segment kept are where they were; only new ones (and the manifest) came after them.
    expect(after.subarray(0, old.sectionsEnd).equals(before.subarray(0, old.sectionsEnd))).toBe(true);
    const kept = next.manifest.segments.filter((s) => s.contents.offset < old.sectionsEnd);
    expect(kept.map((s) => s.id)).toEqual(old.manifest.segments.map((s) => s.id));
    expect(next.manifest.segments.length).toBeGreaterThan(kept.length);
    expect(kept.some((s) => s.dead !== null)).toBe(true);
    expect(after.length - before.length).toBeLessThan(before.length / 2);
    expect(await answers(await MemoryHybridStore.load(path, { embeddings, now: NOW }))).toEqual(await answers(store));
  });

  it('once most of the file would be garbage, a save writes it afresh (compaction)', async () => {
    const { path, store, embeddings } = await withFile();
    const before = await readFile(path);
    // Every source changes: the old segments' rows all die, and the snapshot drops them.
    await store.addDocuments(docs(0, 60, '9'));
    await store.save(path);
    const after = await readFile(path);
    const { manifest, sectionsEnd } = layout(after);
    const referenced = manifest.segments.reduce((sum, s) => sum + s.contents.length + s.heap.length, 8);
    expect(referenced).toBe(sectionsEnd);
    expect(after.length).toBeLessThan(before.length + referenced);
    expect(await answers(await MemoryHybridStore.load(path, { embeddings, now: NOW }))).toEqual(await answers(store));
  });

  it('a save over a file another writer replaced meanwhile is still whole', async () => {
    const { path, store, embeddings } = await withFile();
    const other = new MemoryHybridStore({ embeddings, now: NOW, chunkTokens: 32 });
    await other.addDocuments(docs(100, 103));
    await other.save(path);
    await store.addDocuments(docs(3, 4, '2'));
    await store.save(path);
    expect(await answers(await MemoryHybridStore.load(path, { embeddings, now: NOW }))).toEqual(await answers(store));
  });
});

describe('a served store follows the file by its segments', () => {
  it('reloads only the segments a new version added; its answers are the new version', async () => {
    const { path, store, embeddings } = await withFile();
    const reloads: ReloadInfo[] = [];
    const served = await ReloadingStore.open(path, { embeddings, now: NOW, onReload: (info) => reloads.push(info) });
    const segments = layout(await readFile(path)).manifest.segments.length;
    await store.addDocuments(docs(7, 8, '2'));
    await store.save(path);
    expect(await served.refresh()).toBe(true);
    expect(reloads).toEqual([{ path, chunks: store.size, segments: segments + 1, segmentsRead: 1 }]);
    expect(await answers(served.current)).toEqual(await answers(store));

    // A write through the served store: its load shares the segments too, and the next reader sees the result.
    await served.addDocuments(docs(8, 9, '2'));
    await store.addDocuments(docs(8, 9, '2'));
    expect(reloads.at(-1)?.segmentsRead).toBe(0);
    expect(await answers((await ReloadingStore.open(path, { embeddings, now: NOW })).current)).toEqual(await answers(store));
  });
});
