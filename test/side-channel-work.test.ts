// Side channels on restricted documents: reading a source, chunk ids or a query term the caller may not see must
// do the work that reading a missing one does, or a caller could time requests to learn that restricted text
// exists (the answers themselves are already identical: see access-control.test.ts). Checked on the work itself,
// not on the clock: every read of the store's segments (ids, source lists, postings, records) is traced, and the
// trace of a restricted read must equal the trace of a missing one. Before, a restricted 3,000-chunk source was
// read chunk by chunk and a term only in restricted text walked its 3,000 postings. The timings these traces
// stand for are measured by `npx tsx bench/side-channel.ts` (a benchmark, not a test: the machine is shared).
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Segment } from '../src/memory/segment.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import type { IngestDocument } from '../src/store/schemas.js';

const RESTRICTED_CHUNKS = 3000;
const principals = ['sales'];
let store: MemoryHybridStore;
let restrictedIds: string[];

const WORDS = ['harbor', 'lantern', 'granite', 'meadow', 'copper', 'willow', 'saffron', 'quarry'];
const sentence = (i: number, extra: string) => `${WORDS[i % 8]} ${WORDS[(i * 3 + 1) % 8]} ${WORDS[(i * 5 + 2) % 8]} ${extra} ${i}.`;

beforeAll(async () => {
  store = new MemoryHybridStore({ chunkTokens: 16, now: () => new Date(Date.UTC(2025, 0, 1)) });
  const restricted: IngestDocument = {
    id: 'hr/restricted.md',
    acl: ['hr'],
    // One short paragraph per chunk, each holding a term found nowhere else.
    text: Array.from({ length: RESTRICTED_CHUNKS }, (_, i) => sentence(i, 'zanzibarite')).join('\n\n'),
  };
  const open: IngestDocument[] = Array.from({ length: 200 }, (_, i) => ({ id: `public/${i}.md`, text: sentence(i, 'meadowlark') }));
  await store.addDocuments([restricted, ...open]);
  restrictedIds = (await store.getChunks({ sourceIds: ['hr/restricted.md'], principals: 'all' })).map((c) => c.id);
  expect(restrictedIds).toHaveLength(RESTRICTED_CHUNKS);
}, 120_000);

/** The segment reads a request makes, in order: which method, and the ACL class of the class-scoped ones. (Each test also checks that a caller who may read the text makes the reads that return it, so the trace is not blind.) */
const TRACED = ['rowOf', 'forEachRowOfSource', 'postings', 'record', 'text', 'dense'] as const;
afterEach(() => {
  vi.restoreAllMocks();
});

async function traceOf(request: () => Promise<unknown>): Promise<{ answer: string; reads: string[] }> {
  const reads: string[] = [];
  for (const method of TRACED) {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- the original method, called below with the spied-on segment as `this`
    const original = Segment.prototype[method] as (...args: unknown[]) => unknown;
    vi.spyOn(Segment.prototype, method).mockImplementation(function (this: Segment, ...args: unknown[]) {
      // The ACL class (the first argument of the class-scoped reads) and the kind of read; rows are counted.
      reads.push(
        method === 'rowOf' || method === 'forEachRowOfSource' || method === 'postings' ? `${method}(class ${String(args[0])})` : method,
      );
      return original.apply(this, args);
    } as never);
  }
  try {
    return { answer: JSON.stringify(await request()), reads };
  } finally {
    vi.restoreAllMocks();
  }
}

/** A restricted read and a missing one: the same answer from the same reads. */
async function expectSameWork(restricted: () => Promise<unknown>, missing: () => Promise<unknown>): Promise<void> {
  const a = await traceOf(restricted);
  const b = await traceOf(missing);
  expect(a.answer).toBe(b.answer);
  expect(a.reads).toEqual(b.reads);
}

describe('restricted costs what missing costs', () => {
  it('getChunks of a restricted source (3,000 chunks) vs a source that does not exist', async () => {
    await expectSameWork(
      () => store.getChunks({ sourceIds: ['hr/restricted.md'], principals }),
      () => store.getChunks({ sourceIds: ['hr/not-here.md'], principals }),
    );
    const reader = await traceOf(() => store.getChunks({ sourceIds: ['hr/restricted.md'], principals: ['hr'] }));
    expect(reader.reads.filter((read) => read === 'record').length).toBeGreaterThanOrEqual(RESTRICTED_CHUNKS);
  });

  it('getChunks of restricted chunk ids vs ids that do not exist', async () => {
    // As a request brings them: parsed from JSON, restricted and missing alike.
    const asRequest = (list: string[]): string[] => JSON.parse(JSON.stringify(list)) as string[];
    const ids = asRequest(restrictedIds.slice(0, 50));
    const missing = asRequest(ids.map((id) => id.replace('hr/restricted.md', 'hr/nothere.md')));
    await expectSameWork(
      () => store.getChunks({ ids, principals }),
      () => store.getChunks({ ids: missing, principals }),
    );
    const reader = await traceOf(() => store.getChunks({ ids, principals: ['hr'] }));
    expect(reader.reads.filter((read) => read === 'record').length).toBeGreaterThanOrEqual(ids.length);
  });

  it('lexical search for a term only restricted text holds vs a term no text holds', async () => {
    await expectSameWork(
      () => store.search({ text: 'zanzibarite', mode: 'lexical', principals }),
      () => store.search({ text: 'quixotelium', mode: 'lexical', principals }),
    );
    const reader = await traceOf(() => store.search({ text: 'zanzibarite', mode: 'lexical', principals: ['hr'] }));
    expect(reader.reads.some((read) => read === 'record' || read === 'text')).toBe(true);
  });

  it('the caller who may read them does get them (the comparison is not between two empty stores)', async () => {
    expect(await store.getChunks({ sourceIds: ['hr/restricted.md'], principals: ['hr'] })).toHaveLength(RESTRICTED_CHUNKS);
    expect((await store.search({ text: 'zanzibarite', mode: 'lexical', principals: ['hr'], limit: 5 })).length).toBe(5);
  });
});
