// getChunks, deleteSources, rankings, clusters and kind: the same answers from MemoryHybridStore and from
// QdrantHybridStore on the Qdrant engine (or a real server with QDRANT_URL).
import { beforeAll, describe, expect, it } from 'vitest';
import { QdrantHybridStore } from '../../src/qdrant/index.js';
import {
  MemoryHybridStore,
  type Filter,
  type GetChunksRequest,
  type IngestDocument,
  type RankedChunk,
  type SearchRequest,
} from '../../src/index.js';
import { DistinctEmbeddings, clock, collectionNames, url } from './helpers.js';

const collection = collectionNames('parity')('stores');

// No two chunks sharing a query term have the same length: BM25 ties would leave Qdrant's arm order (and so RRF)
// to the engine, where the memory store breaks them by id.
const corpus: IngestDocument[] = [
  {
    id: 'billing/refunds.md',
    clusters: ['billing'],
    kind: 'insight',
    text: '# Refunds\n\nRefunds take fourteen days.\n\nKeep the receipt; refunds without one take a little longer.',
  },
  {
    id: 'billing/invoices.md',
    clusters: ['billing', 'finance'],
    text: '# Invoices\n\nInvoices are sent monthly.\n\nA late invoice costs a fee.',
  },
  {
    id: 'hr/leave.md',
    clusters: ['hr'],
    acl: ['hr'],
    kind: 'segment',
    text: '# Leave\n\nParental leave is sixteen weeks.\n\nHolidays are twenty-five days.',
  },
  { id: 'ops/oncall.md', text: 'The on-call rota changes on Mondays.\n\nRefunds questions go to billing, never to the on-call engineer.' },
  {
    id: 'finance/budget.md',
    clusters: ['finance'],
    acl: ['finance'],
    text: 'The budget for refunds is reviewed each quarter by the board.\n\nInvoices over a limit need approval.',
  },
];

let qdrant: QdrantHybridStore;
let memory: MemoryHybridStore;

beforeAll(async () => {
  qdrant = new QdrantHybridStore({ url, collection, embeddings: new DistinctEmbeddings(), chunkTokens: 12, now: clock() });
  // Qdrant computes BM25 IDF over the whole collection: the memory store's idfCorpus "all".
  memory = new MemoryHybridStore({ embeddings: new DistinctEmbeddings(), chunkTokens: 12, now: clock(), idfCorpus: 'all' });
  await qdrant.ensureCollection();
  expect(await qdrant.addDocuments(corpus)).toEqual(await memory.addDocuments(corpus));
});

describe('parity: getChunks', () => {
  const cluster = (name: string): Filter => ({ must: [{ key: 'clusters', match: { any: [name] } }] });
  const requests: GetChunksRequest[] = [
    { sourceIds: ['ops/oncall.md', 'billing/refunds.md'] },
    { sourceIds: ['hr/leave.md', 'billing/refunds.md'], principals: ['sales'] },
    { sourceIds: ['hr/leave.md'], principals: ['hr'] },
    { filter: cluster('billing') },
    { filter: cluster('finance'), principals: [] },
    { filter: cluster('finance'), principals: ['finance'] },
    { filter: { must: [{ key: 'kind', match: { value: 'insight' } }] } },
    { filter: { must_not: [{ key: 'clusters', match: { any: ['billing'] } }] }, limit: 3 },
    { sourceIds: ['billing/refunds.md', 'billing/invoices.md'], filter: cluster('finance') },
    { sourceIds: ['nowhere.md'] },
    { filter: { must: [] }, principals: 'all' },
  ];
  it('the same records in the same order, clusters and kind included', async () => {
    for (const request of requests) {
      const label = JSON.stringify(request);
      const fromQdrant = await qdrant.getChunks(request);
      expect(fromQdrant, label).toEqual(await memory.getChunks(request));
    }
    const [refunds] = await qdrant.getChunks({ sourceIds: ['billing/refunds.md'] });
    expect(refunds).toMatchObject({ clusters: ['billing'], kind: 'insight' });
    const [leave] = await qdrant.getChunks({ sourceIds: ['hr/leave.md'], principals: 'all' });
    expect(leave).toMatchObject({ clusters: ['hr'], kind: 'segment', acl: ['hr'] });
  });

  it('ids pick the same chunks', async () => {
    const ids = (await memory.getChunks({ sourceIds: ['billing/invoices.md', 'ops/oncall.md'] })).map((c) => c.id);
    const request = { ids: [ids[2]!, ids[0]!, 'missing#0'] };
    expect(await qdrant.getChunks(request)).toEqual(await memory.getChunks(request));
  });
});

/** The same ranking up to ties: same ids and scores; where the order differs, the scores are tied. */
function expectSameRanked(actual: RankedChunk[] | null, expected: RankedChunk[] | null, label: string): void {
  if (expected === null) {
    expect(actual, label).toBeNull();
    return;
  }
  expect(actual, label).not.toBeNull();
  const byId = new Map(expected.map((entry) => [entry.id, entry]));
  expect(actual!.map((e) => e.id).sort(), label).toEqual(expected.map((e) => e.id).sort());
  for (const [i, entry] of actual!.entries()) {
    const other = byId.get(entry.id)!;
    expect(entry.sourceId).toBe(other.sourceId);
    expect(Math.abs(entry.score - other.score), `${label}: ${entry.id}`).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(other.score)));
    expect(entry.position).toBe(i + 1);
    if (expected[i]!.id !== entry.id) expect(Math.abs(expected[i]!.score - other.score), `${label}: tie at ${i}`).toBeLessThanOrEqual(1e-4);
  }
}

describe('parity: rankings', () => {
  const texts = ['refunds receipt', 'invoices late fee', 'parental leave holidays', 'budget approval refunds'];
  it('each arm and the fused ranking match, for every mode, with filters and principals', async () => {
    for (const text of texts) {
      for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
        for (const extra of [
          {},
          { principals: ['hr'] },
          { filter: { must: [{ key: 'clusters', match: { any: ['billing', 'finance'] } }] } },
        ]) {
          const request: SearchRequest = { text, mode, limit: 5, ...extra };
          const label = `${mode} "${text}" ${JSON.stringify(extra)}`;
          const [q, m] = [await qdrant.rankings(request), await memory.rankings(request)];
          // Tied scores within an arm leave its order (and RRF) to the engine: the corpus is built without any.
          for (const arm of [m.dense, m.lexical]) {
            const scores = (arm ?? []).map((entry) => entry.score);
            expect(new Set(scores).size, `${label}: ties in an arm`).toBe(scores.length);
          }
          expect(q.mode, label).toBe(m.mode);
          expectSameRanked(q.dense, m.dense, `${label} dense`);
          expectSameRanked(q.lexical, m.lexical, `${label} lexical`);
          expectSameRanked(q.fused, m.fused, `${label} fused`);
        }
      }
    }
  });
});

describe('parity: rankings with diversity (MMR)', () => {
  const texts = ['refunds receipt', 'invoices late fee', 'budget approval refunds'];
  it('fused is exactly what search returns, the arms are the plain arms, and both stores agree', async () => {
    for (const text of texts) {
      for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
        for (const diversity of [0.5, 1]) {
          for (const extra of [{}, { principals: ['hr'] }]) {
            const request: SearchRequest = { text, mode, limit: 4, diversity, ...extra };
            const label = `${mode} "${text}" diversity ${diversity} ${JSON.stringify(extra)}`;
            for (const store of [qdrant, memory]) {
              const rankings = await store.rankings(request);
              const searched = await store.search(request);
              expect(
                rankings.fused.map(({ id, score }) => ({ id, score })),
                `${label}: fused vs search`,
              ).toEqual(searched.map(({ id, score }) => ({ id, score })));
              // MMR picks among the arms' results; the arms themselves are what rankings reports without it.
              const plain = await store.rankings({ ...request, diversity: 0 });
              expect(rankings.dense, `${label}: dense arm`).toEqual(plain.dense);
              expect(rankings.lexical, `${label}: lexical arm`).toEqual(plain.lexical);
            }
            const [q, m] = [await qdrant.rankings(request), await memory.rankings(request)];
            expect(q.mode, label).toBe(m.mode);
            expectSameRanked(q.dense, m.dense, `${label} dense`);
            expectSameRanked(q.lexical, m.lexical, `${label} lexical`);
            expectSameRanked(q.fused, m.fused, `${label} fused`);
          }
        }
      }
    }
    // MMR changed the fused ranking somewhere (the test would pass vacuously if diversity were ignored).
    const request: SearchRequest = { text: 'refunds receipt', mode: 'dense', limit: 4 };
    const changed = await Promise.all(
      [0, 1].map(async (diversity) => (await qdrant.rankings({ ...request, diversity })).fused.map((e) => e.id).join()),
    );
    expect(changed[0]).not.toBe(changed[1]);
  });
});

describe('parity: deleteSources', () => {
  it('the same counts, and the same chunks left', async () => {
    const request = ['billing/invoices.md', 'ghost.md', 'hr/leave.md', 'billing/invoices.md'];
    expect(await qdrant.deleteSources(request)).toEqual(await memory.deleteSources(request));
    expect(await qdrant.deleteSources(['ghost.md'])).toEqual(await memory.deleteSources(['ghost.md']));
    const everything = { sourceIds: corpus.map((d) => d.id) };
    expect(await qdrant.getChunks(everything)).toEqual(await memory.getChunks(everything));
    expect((await qdrant.getChunks(everything)).some((c) => c.sourceId === 'hr/leave.md')).toBe(false);
  });
});
