/**
 * Timing side channels on restricted documents, in process: a restricted source, restricted chunk ids and a term
 * only restricted text holds, each against a missing one, read by a caller who may not see them (what citation
 * checks, pins and lexical search do). Median time per call over alternating samples, with the share of pairs
 * where the restricted read was the slower one (50% means indistinguishable).
 *
 *   npx tsx bench/side-channel.ts
 */
import { performance } from 'node:perf_hooks';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import type { IngestDocument } from '../src/store/schemas.js';
import { loadNote } from './lib/report.js';
import { markdownTable } from './lib/table.js';

const WORDS = ['harbor', 'lantern', 'granite', 'meadow', 'copper', 'willow', 'saffron', 'quarry'];
const sentence = (i: number, extra: string) => `${WORDS[i % 8]} ${WORDS[(i * 3 + 1) % 8]} ${WORDS[(i * 5 + 2) % 8]} ${extra} ${i}.`;

const store = new MemoryHybridStore({ chunkTokens: 16 });
const restricted: IngestDocument = {
  id: 'hr/restricted.md',
  acl: ['hr'],
  text: Array.from({ length: 3000 }, (_, i) => sentence(i, 'zanzibarite')).join('\n\n'),
};
await store.addDocuments([
  restricted,
  ...Array.from({ length: 200 }, (_, i) => ({ id: `public/${i}.md`, text: sentence(i, 'meadowlark') })),
]);
// Ids as a request brings them: parsed from JSON (flat strings), restricted and missing alike.
const asRequest = (list: string[]): string[] => JSON.parse(JSON.stringify(list)) as string[];
const restrictedIds = (await store.getChunks({ sourceIds: ['hr/restricted.md'], principals: 'all' })).slice(0, 50).map((c) => c.id);
const ids = asRequest(restrictedIds);
const missingIds = asRequest(restrictedIds.map((id) => id.replace('hr/restricted.md', 'hr/nothere.md')));
const principals = ['sales'];

async function compare(a: () => Promise<unknown>, b: () => Promise<unknown>) {
  const time = async (op: () => Promise<unknown>) => {
    const start = performance.now();
    for (let i = 0; i < 40; i += 1) await op();
    return (performance.now() - start) / 40;
  };
  for (let i = 0; i < 5; i += 1) await Promise.all([time(a), time(b)]);
  const as: number[] = [];
  const bs: number[] = [];
  for (let s = 0; s < 301; s += 1) {
    as.push(await time(a));
    bs.push(await time(b));
  }
  const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!;
  const slower = as.filter((t, i) => t > bs[i]!).length;
  return [median(as) * 1000, median(bs) * 1000, slower / as.length];
}

const rows: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
  [
    'getChunks of a source (3,000 chunks)',
    () => store.getChunks({ sourceIds: ['hr/restricted.md'], principals }),
    () => store.getChunks({ sourceIds: ['hr/none.md'], principals }),
  ],
  ['getChunks of 50 chunk ids', () => store.getChunks({ ids, principals }), () => store.getChunks({ ids: missingIds, principals })],
  [
    'lexical search, one term',
    () => store.search({ text: 'zanzibarite', mode: 'lexical', principals }),
    () => store.search({ text: 'quixotelium', mode: 'lexical', principals }),
  ],
];
const table: string[][] = [];
for (const [name, a, b] of rows) {
  const [ra, rb, slower] = await compare(a, b);
  table.push([name, ra!.toFixed(1), rb!.toFixed(1), (ra! / rb!).toFixed(2), `${(slower! * 100).toFixed(0)}%`]);
}
process.stdout.write(
  `${markdownTable(['read by a caller without access', 'restricted µs', 'missing µs', 'ratio', 'restricted slower in'], table)}\n\n301 alternating samples of 40 calls each; ${loadNote()}.\n`,
);
