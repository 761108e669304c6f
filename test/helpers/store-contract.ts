// The semantics every Store shares for getChunks, deleteSources, rankings, clusters and kind: one suite,
// run on each store implementation with its own factory.
import { describe, expect, it } from 'vitest';
import {
  isLitmPackError,
  type LitmPackErrorCode,
  type ChunkRecord,
  type GetChunksRequest,
  type IngestDocument,
  type Rankings,
  type Store,
} from '../../src/index.js';

/** A store with the optional methods present (the suite checks them). */
export type FullStore = Store & Required<Pick<Store, 'getChunks' | 'deleteSources' | 'rankings'>>;

/** Opens a fresh, empty store; `embeddings: false` means a store without dense vectors. */
export type OpenStore = (options: { embeddings: boolean }) => Promise<FullStore>;

export const contractCorpus: IngestDocument[] = [
  {
    id: 'docs/billing/refunds.md',
    version: 'v1',
    clusters: ['billing'],
    kind: 'insight',
    text: '# Refunds\n\nRefunds are issued within 14 days of a return being received.\n\n## Exceptions\n\nGift cards are never refunded, and sale items are refunded as store credit.',
  },
  {
    id: 'docs/billing/invoices.md',
    version: 'v1',
    clusters: ['billing', 'finance'],
    kind: 'segment',
    text: '# Invoices\n\nInvoices are sent on the first working day of each month.\n\nA corrected invoice replaces the original and keeps its number.',
  },
  {
    id: 'docs/shipping.md',
    version: 'v2',
    clusters: ['logistics'],
    text: '# Shipping\n\nParcels leave the warehouse within two days.\n\nReturns travel back with a prepaid label.',
  },
  {
    id: 'notes/policy.md',
    version: 'v1',
    text: 'Our refund policy was last reviewed in March. Store credit never expires.',
  },
  {
    id: 'legal/merger.md',
    version: 'v1',
    acl: ['legal'],
    clusters: ['billing'],
    kind: 'insight',
    text: 'The merger code name is BLUEBIRD; refunds of the acquired company follow its old policy until June.',
  },
];

async function expectCode(promise: Promise<unknown>, code: LitmPackErrorCode): Promise<void> {
  try {
    await promise;
  } catch (error) {
    expect(isLitmPackError(error, code), String(error)).toBe(true);
    return;
  }
  throw new Error(`expected a LitmPackError ${code}`);
}

const sourcesOf = (records: readonly ChunkRecord[]) => [...new Set(records.map((r) => r.sourceId))];
const scored = (ranking: Rankings['fused']) => ranking.map(({ id, score }) => ({ id, score }));

/** The expected getChunks order of `records` (sources in `order`, then span start, then id). */
function inOrder(records: readonly ChunkRecord[], order: readonly string[]): ChunkRecord[] {
  return [...records].sort(
    (a, b) =>
      order.indexOf(a.sourceId) - order.indexOf(b.sourceId) || a.span.start - b.span.start || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

export function describeStoreMethods(label: string, open: OpenStore): void {
  async function filled(embeddings = true): Promise<FullStore> {
    const store = await open({ embeddings });
    await store.addDocuments(contractCorpus);
    return store;
  }

  describe(`${label}: getChunks`, () => {
    it('rejects a request with none of sourceIds, ids or filter, a bad limit and unknown keys', async () => {
      const store = await filled();
      await expectCode(store.getChunks({}), 'invalid_input');
      await expectCode(store.getChunks({ principals: ['legal'] }), 'invalid_input');
      await expectCode(store.getChunks({ sourceIds: ['docs/shipping.md'], limit: 0 }), 'invalid_input');
      await expectCode(store.getChunks({ sourceIds: ['docs/shipping.md'], limit: 100_001 }), 'invalid_input');
      await expectCode(store.getChunks({ sourceIds: ['docs/shipping.md'], sourceId: 'x' } as GetChunksRequest), 'invalid_input');
      await expectCode(store.getChunks({ filter: { must: [{ key: 'kind', match: { text: 'x' } }] } as never }), 'unsupported_filter');
    });

    it('returns the chunks of the named sources in the order given, each source by span, as ingested', async () => {
      const store = await filled();
      const order = ['docs/shipping.md', 'docs/billing/refunds.md'];
      const records = await store.getChunks({ sourceIds: order });
      expect(sourcesOf(records)).toEqual(order);
      expect(records).toEqual(inOrder(records, order));
      for (const record of records) {
        const doc = contractCorpus.find((d) => d.id === record.sourceId)!;
        expect(doc.text.slice(record.span.start, record.span.end)).toBe(record.text);
        expect(record.version).toBe(doc.version);
      }
      // Every chunk of the source is there: together they cover the document's text.
      const refunds = records.filter((r) => r.sourceId === 'docs/billing/refunds.md');
      expect(refunds.length).toBeGreaterThan(1);
      expect(refunds.map((r) => r.text).join(' ')).toContain('store credit');
    });

    it('orders by source id when no sourceIds are given, and applies the limit to that order', async () => {
      const store = await filled();
      const all = await store.getChunks({ filter: { must: [] }, principals: 'all' });
      // The full view: the restricted source is there too.
      const ids = contractCorpus.map((d) => d.id).sort();
      expect(sourcesOf(all)).toEqual(ids);
      expect(all).toEqual(inOrder(all, ids));
      const firstThree = await store.getChunks({ filter: { must: [] }, limit: 3, principals: 'all' });
      expect(firstThree).toEqual(all.slice(0, 3));
    });

    it('fetches chunk ids, ANDs every condition, and ignores ids that do not exist', async () => {
      const store = await filled();
      const all = await store.getChunks({ sourceIds: contractCorpus.map((d) => d.id), principals: ['legal'] });
      const picked = [all[4]!.id, all[0]!.id, 'nope#0000000000000000'];
      const byId = await store.getChunks({ ids: picked, principals: ['legal'] });
      const bySourceId = contractCorpus.map((d) => d.id).sort();
      expect(byId).toEqual(
        inOrder(
          all.filter((r) => picked.includes(r.id)),
          bySourceId,
        ),
      );
      expect(byId).toHaveLength(2);
      const both = await store.getChunks({ ids: picked, sourceIds: [all[4]!.sourceId], principals: ['legal'] });
      expect(both.map((r) => r.id)).toEqual([all[4]!.id]);
      const none = await store.getChunks({
        sourceIds: ['docs/shipping.md'],
        filter: { must: [{ key: 'kind', match: { value: 'insight' } }] },
      });
      expect(none).toEqual([]);
    });

    it('applies the ACL exactly as search does', async () => {
      const store = await filled();
      const request = { sourceIds: ['legal/merger.md', 'docs/shipping.md'] };
      expect(sourcesOf(await store.getChunks({ ...request, principals: [] }))).toEqual(['docs/shipping.md']);
      expect(sourcesOf(await store.getChunks({ ...request, principals: ['sales'] }))).toEqual(['docs/shipping.md']);
      expect(sourcesOf(await store.getChunks({ ...request, principals: ['legal', 'sales'] }))).toEqual([
        'legal/merger.md',
        'docs/shipping.md',
      ]);
      // No principals: anonymous, as in search; the full view is asked for.
      expect(sourcesOf(await store.getChunks(request))).toEqual(['docs/shipping.md']);
      expect(sourcesOf(await store.getChunks({ ...request, principals: 'all' }))).toEqual(['legal/merger.md', 'docs/shipping.md']);
    });

    it('copies clusters and kind to every chunk and filters on them', async () => {
      const store = await filled();
      const billing = await store.getChunks({ filter: { must: [{ key: 'clusters', match: { any: ['billing'] } }] }, principals: [] });
      expect(sourcesOf(billing)).toEqual(['docs/billing/invoices.md', 'docs/billing/refunds.md']);
      for (const record of billing) expect(record.clusters).toContain('billing');
      const withLegal = await store.getChunks({
        filter: { must: [{ key: 'clusters', match: { any: ['billing'] } }] },
        principals: ['legal'],
      });
      expect(sourcesOf(withLegal)).toContain('legal/merger.md');
      const insights = await store.getChunks({ filter: { must: [{ key: 'kind', match: { value: 'insight' } }] }, principals: [] });
      expect(sourcesOf(insights)).toEqual(['docs/billing/refunds.md']);
      const shipping = await store.getChunks({ sourceIds: ['docs/shipping.md'] });
      for (const record of shipping) {
        expect(record.clusters).toEqual(['logistics']);
        expect(record.kind).toBeUndefined();
      }
      const notes = await store.getChunks({ sourceIds: ['notes/policy.md'] });
      expect(notes[0]!.clusters).toBeUndefined();
    });
  });

  describe(`${label}: deleteSources`, () => {
    it('removes every chunk of the sources and counts the sources that existed', async () => {
      const store = await filled();
      const before = await store.getChunks({ sourceIds: ['docs/billing/refunds.md', 'docs/shipping.md'] });
      const result = await store.deleteSources(['docs/billing/refunds.md', 'docs/shipping.md', 'never-there.md', 'docs/shipping.md']);
      expect(result).toEqual({ sources: 2, chunks: before.length });
      expect(await store.getChunks({ sourceIds: ['docs/billing/refunds.md', 'docs/shipping.md'] })).toEqual([]);
      const hits = await store.search({ text: 'refunds issued within 14 days parcels warehouse', mode: 'hybrid', limit: 50 });
      expect(hits.map((c) => c.sourceId)).not.toContain('docs/billing/refunds.md');
      expect(hits.map((c) => c.sourceId)).not.toContain('docs/shipping.md');
      expect(hits.length).toBeGreaterThan(0);
      expect(await store.deleteSources(['docs/billing/refunds.md'])).toEqual({ sources: 0, chunks: 0 });
      // The rest is untouched and a deleted source can be ingested again.
      expect(sourcesOf(await store.getChunks({ sourceIds: ['notes/policy.md'] }))).toEqual(['notes/policy.md']);
      await store.addDocuments([contractCorpus[2]!]);
      expect(await store.getChunks({ sourceIds: ['docs/shipping.md'] })).toHaveLength(
        before.filter((r) => r.sourceId === 'docs/shipping.md').length,
      );
    });

    it('rejects what is not a list of source ids', async () => {
      const store = await filled();
      await expectCode(store.deleteSources('docs/shipping.md' as never), 'invalid_input');
      await expectCode(store.deleteSources(['']), 'invalid_input');
      expect(await store.deleteSources([])).toEqual({ sources: 0, chunks: 0 });
    });
  });

  describe(`${label}: rankings`, () => {
    it('fused is exactly what search returns, in every mode', async () => {
      const store = await filled();
      for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
        const request = { text: 'refunds store credit', mode, limit: 5, principals: ['legal'] };
        const rankings = await store.rankings(request);
        const search = await store.search(request);
        expect(rankings.mode).toBe(mode);
        expect(scored(rankings.fused)).toEqual(search.map(({ id, score }) => ({ id, score })));
        expect(rankings.fused.map((r) => r.sourceId)).toEqual(search.map((c) => c.sourceId));
        expect(rankings.fused.map((r) => r.position)).toEqual(search.map((_, i) => i + 1));
      }
    });

    it('each arm is its raw top k: the dense arm is dense search, the lexical arm lexical search', async () => {
      const store = await filled();
      const k = 4;
      const hybrid = await store.rankings({ text: 'refunds store credit invoices', limit: k });
      const dense = await store.search({ text: 'refunds store credit invoices', mode: 'dense', limit: k });
      const lexical = await store.search({ text: 'refunds store credit invoices', mode: 'lexical', limit: k });
      expect(hybrid.dense).not.toBeNull();
      expect(scored(hybrid.dense!)).toEqual(dense.map(({ id, score }) => ({ id, score })));
      expect(scored(hybrid.lexical!)).toEqual(lexical.map(({ id, score }) => ({ id, score })));
      for (const arm of [hybrid.dense!, hybrid.lexical!, hybrid.fused]) {
        expect(arm.length).toBeLessThanOrEqual(k);
        arm.forEach((entry, index) => {
          expect(entry.position).toBe(index + 1);
          const next = arm[index + 1];
          if (next) expect(entry.score > next.score || (entry.score === next.score && entry.id < next.id)).toBe(true);
        });
      }
      const denseOnly = await store.rankings({ text: 'refunds', mode: 'dense', limit: k });
      expect(denseOnly.lexical).toBeNull();
      const lexicalOnly = await store.rankings({ text: 'refunds', mode: 'lexical', limit: k });
      expect(lexicalOnly.dense).toBeNull();
    });

    it('without dense vectors, hybrid resolves to lexical and the dense arm is null', async () => {
      const store = await filled(false);
      const rankings = await store.rankings({ text: 'refunds', limit: 10 });
      expect(rankings.mode).toBe('lexical');
      expect(rankings.dense).toBeNull();
      expect(rankings.lexical!.length).toBeGreaterThan(0);
      expect(scored(rankings.fused)).toEqual(scored(rankings.lexical!));
    });

    it('validates like search and never ranks what the principals may not read', async () => {
      const store = await filled();
      await expectCode(store.rankings({ text: '  ' }), 'invalid_input');
      await expectCode(store.rankings({ text: 'x', limit: 0 }), 'invalid_input');
      const open = await store.rankings({ text: 'BLUEBIRD merger refunds', limit: 20, principals: ['sales'] });
      for (const arm of [open.dense!, open.lexical!, open.fused]) {
        expect(arm.map((r) => r.sourceId)).not.toContain('legal/merger.md');
      }
      const legal = await store.rankings({ text: 'BLUEBIRD merger refunds', limit: 20, principals: ['legal'] });
      expect(legal.lexical![0]!.sourceId).toBe('legal/merger.md');
    });
  });
}
