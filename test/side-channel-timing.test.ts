// Timing side channels on restricted documents: reading a source, chunk ids or a query term the caller may not
// see must cost what reading a missing one costs, or a caller could time requests to learn that restricted text
// exists (the answers themselves are already identical: see access-control.test.ts).
//
// Why these comparisons are robust on a noisy shared machine: the two cases run alternately (ABAB...), so load
// changes hit both alike; each sample times many calls, so timer resolution and per-call jitter average out; the
// medians of many samples ignore the samples hit by GC or preemption; and the bound is loose (within 1.5× either
// way) where the work differed by orders of magnitude before (a restricted 3,000-chunk source was read chunk by
// chunk, a term only in restricted text walked its 3,000 postings). Nothing is asserted about absolute time.
import { performance } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore } from '../src/retrieve/memory-store.js';
import type { IngestDocument } from '../src/retrieve/types.js';

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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Median time per call of `a` and of `b`, measured alternately; `a` and `b` must return the same answer. */
async function compare(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<{ a: number; b: number; ratio: number }> {
  expect(JSON.stringify(await a())).toBe(JSON.stringify(await b()));
  const calls = 40;
  const samples = 61;
  const time = async (op: () => Promise<unknown>) => {
    const start = performance.now();
    for (let i = 0; i < calls; i += 1) await op();
    return (performance.now() - start) / calls;
  };
  for (let i = 0; i < 5; i += 1) {
    await time(a);
    await time(b);
  }
  const as: number[] = [];
  const bs: number[] = [];
  for (let s = 0; s < samples; s += 1) {
    as.push(await time(a));
    bs.push(await time(b));
  }
  const result = { a: median(as), b: median(bs), ratio: median(as) / median(bs) };
  return result;
}

function expectWithinNoise(result: { a: number; b: number; ratio: number }): void {
  const label = `restricted ${(result.a * 1000).toFixed(1)} µs vs missing ${(result.b * 1000).toFixed(1)} µs per call`;
  expect(result.ratio, label).toBeLessThan(1.5);
  expect(result.ratio, label).toBeGreaterThan(1 / 1.5);
}

describe('restricted costs what missing costs', () => {
  it('getChunks of a restricted source (3,000 chunks) vs a source that does not exist', async () => {
    expectWithinNoise(
      await compare(
        () => store.getChunks({ sourceIds: ['hr/restricted.md'], principals }),
        () => store.getChunks({ sourceIds: ['hr/not-here.md'], principals }),
      ),
    );
  }, 120_000);

  it('getChunks of restricted chunk ids vs ids that do not exist', async () => {
    // As a request brings them: parsed from JSON, restricted and missing alike.
    const asRequest = (list: string[]): string[] => JSON.parse(JSON.stringify(list)) as string[];
    const ids = asRequest(restrictedIds.slice(0, 50));
    const missing = asRequest(ids.map((id) => id.replace('hr/restricted.md', 'hr/nothere.md')));
    expectWithinNoise(
      await compare(
        () => store.getChunks({ ids, principals }),
        () => store.getChunks({ ids: missing, principals }),
      ),
    );
  }, 120_000);

  it('lexical search for a term only restricted text holds vs a term no text holds', async () => {
    expectWithinNoise(
      await compare(
        () => store.search({ text: 'zanzibarite', mode: 'lexical', principals }),
        () => store.search({ text: 'quixotelium', mode: 'lexical', principals }),
      ),
    );
  }, 120_000);

  it('the caller who may read them does get them (the comparison is not between two empty stores)', async () => {
    expect(await store.getChunks({ sourceIds: ['hr/restricted.md'], principals: ['hr'] })).toHaveLength(RESTRICTED_CHUNKS);
    expect((await store.search({ text: 'zanzibarite', mode: 'lexical', principals: ['hr'], limit: 5 })).length).toBe(5);
  });
});
