import { describe, expect, it } from 'vitest';
import {
  toCanonicalJson,
  type Pack,
  assembleBriefing,
  type BriefingRequest,
  MemoryHybridStore,
  type IngestDocument,
  getTokenizer,
} from '../src/index.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { failure } from './helpers/failure.js';

const handbook = [
  '# Handbook',
  'Welcome to the support handbook. Read it before your first shift.',
  '## Tone',
  'Answer customers politely and sign every reply with your first name.',
  '## Escalation',
  'Escalate legal threats to the duty manager within one hour.',
].join('\n\n');

const docs: IngestDocument[] = [
  { id: 'docs/handbook.md', version: 'v1', text: handbook },
  {
    id: 'docs/billing/refunds.md',
    version: 'v1',
    clusters: ['billing'],
    kind: 'insight',
    text: 'Refunds are issued within 14 days of a return being received. Refund delays are the top complaint.',
  },
  {
    id: 'docs/billing/invoices.md',
    version: 'v1',
    clusters: ['billing'],
    kind: 'segment',
    text: 'Invoices are sent on the first working day. Refund credits appear on the next invoice.',
  },
  {
    id: 'docs/billing/vat.md',
    version: 'v1',
    clusters: ['billing'],
    kind: 'segment',
    text: 'VAT is charged at the rate of the delivery country, shown on every invoice.',
  },
  {
    id: 'docs/ops/shipping.md',
    version: 'v1',
    clusters: ['ops'],
    kind: 'segment',
    text: 'Parcels leave the warehouse within two days; refund labels are printed on request.',
  },
  {
    id: 'docs/ops/warehouse.md',
    version: 'v1',
    clusters: ['ops'],
    text: 'The warehouse closes on public holidays and parcels wait until the next working day.',
  },
  { id: 'notes/refunds.md', version: 'v1', text: 'Meeting notes: customers ask about refund timing weekly.' },
  {
    id: 'legal/merger.md',
    version: 'v1',
    acl: ['legal'],
    clusters: ['billing'],
    kind: 'insight',
    text: 'The merger is code named BLUEBIRD; refunds of the acquired shop follow its old rules.',
  },
];

async function storeWith(extra: IngestDocument[] = [], embeddings = false): Promise<MemoryHybridStore> {
  const store = new MemoryHybridStore(embeddings ? { embeddings: new FakeEmbeddings() } : {});
  await store.addDocuments([...docs, ...extra]);
  return store;
}

const sources = (pack: Pack) => pack.items.map((i) => i.sourceId);
const brief = (request: Omit<BriefingRequest, 'maxTokens'> & { maxTokens?: number }) =>
  assembleBriefing({ mode: 'lexical', maxTokens: 1500, principals: [], ...request }).then((b) => b.pack);

describe('assembleBriefing: what a briefing is built from', () => {
  it('needs a prompt, pins or clusters; a blank prompt counts as none', async () => {
    const store = await storeWith();
    await failure(assembleBriefing({ store, maxTokens: 500 }), 'invalid_input');
    const error = await failure(assembleBriefing({ store, prompt: '   ', maxTokens: 500 }), 'invalid_input');
    expect(error.message).toMatch(/needs at least one of prompt, pins or clusters/);
    await failure(assembleBriefing({ store, prompt: 'x', maxTokens: 500, pin: ['a'] } as never), 'invalid_input');
  });

  it('from a prompt alone: prompt results, the query recorded', async () => {
    const pack = await brief({ store: await storeWith(), prompt: 'refund timing' });
    expect(pack.kind).toBe('briefing');
    expect(pack.query).toBe('refund timing');
    expect(pack.items.length).toBeGreaterThan(0);
    expect(sources(pack)).not.toContain('legal/merger.md');
  });
});

describe('pins', () => {
  it('are fetched whether or not the prompt finds them, and open the grounding zone in document order', async () => {
    const store = await storeWith();
    const found = await store.search({ text: 'refund timing', mode: 'lexical', limit: 50 });
    expect(found.map((c) => c.sourceId)).not.toContain('docs/handbook.md');
    const pack = await brief({ store, prompt: 'refund timing', pins: ['docs/handbook.md'] });
    const handbookItems = pack.items.filter((i) => i.sourceId === 'docs/handbook.md');
    expect(handbookItems.length).toBe(3);
    expect(pack.items.slice(0, 3)).toEqual(handbookItems);
    expect(handbookItems.every((i) => i.role === 'grounding')).toBe(true);
    const spans = pack.citations.slice(0, 3).map((c) => c.span!.start);
    expect(spans).toEqual([...spans].sort((a, b) => a - b));
    expect(handbookItems.map((i) => i.text)).toEqual([
      'Welcome to the support handbook. Read it before your first shift.',
      'Answer customers politely and sign every reply with your first name.',
      'Escalate legal threats to the duty manager within one hour.',
    ]);
  });

  it('alone make a briefing (no prompt: empty query), pins in the order given, chunk ids too', async () => {
    const store = await storeWith();
    const [escalation] = await store.getChunks({
      sourceIds: ['docs/handbook.md'],
      filter: { must: [{ key: 'section', match: { value: 'Escalation' } }] },
    });
    const pack = await brief({ store, pins: ['docs/ops/shipping.md', escalation!.id] });
    expect(pack.query).toBe('');
    expect(pack.items.map((i) => i.id)).toEqual([(await store.getChunks({ sourceIds: ['docs/ops/shipping.md'] }))[0]!.id, escalation!.id]);
    expect(pack.items.every((i) => i.role === 'grounding')).toBe(true);
    expect(pack.caveats).not.toMatch(/Pinned but not found/);
  });

  it('are verbatim while they fit, then cut, then a one-line pointer', async () => {
    const long = Array.from({ length: 12 }, (_, i) => `Rule ${i + 1} of the escalation policy says to write things down carefully.`).join(
      ' ',
    );
    const store = await storeWith([
      { id: 'a.md', text: 'Short pinned rule one.' },
      { id: 'b.md', text: long },
    ]);
    const cut = await brief({ store, pins: ['a.md', 'b.md'], maxTokens: 200 });
    expect(cut.items[0]).toMatchObject({ sourceId: 'a.md', truncated: false, pointer: false, text: 'Short pinned rule one.' });
    expect(cut.items[1]).toMatchObject({ sourceId: 'b.md', truncated: true, pointer: false });
    expect(long.startsWith(cut.items[1]!.text)).toBe(true);
    // When not even a useful cut fits, the pin stays as a one-line pointer that still cites it.
    const pointer = await brief({ store, pins: ['a.md', 'b.md'], maxTokens: 200, minTruncatedTokens: 1000 });
    expect(pointer.items[1]).toMatchObject({ sourceId: 'b.md', pointer: true, text: '' });
    expect(pointer.citations[1]!.sourceId).toBe('b.md');
    for (const pack of [cut, pointer]) expect(getTokenizer('o200k_base').count(pack.context)).toBeLessThanOrEqual(200);
  });

  it('that do not exist and that the caller may not see answer identically', async () => {
    // BM25 statistics over what the caller may read (idfCorpus "visible"), one clock: the two stores differ
    // only in the restricted source.
    const now = () => new Date('2025-01-01T00:00:00Z');
    const withSecret = new MemoryHybridStore({ idfCorpus: 'visible', now });
    await withSecret.addDocuments(docs);
    const hidden = await brief({ store: withSecret, prompt: 'refund timing', pins: ['legal/merger.md'], principals: ['support'] });
    const withoutSecret = new MemoryHybridStore({ idfCorpus: 'visible', now });
    await withoutSecret.addDocuments(docs.filter((d) => d.id !== 'legal/merger.md'));
    const absent = await brief({ store: withoutSecret, prompt: 'refund timing', pins: ['legal/merger.md'], principals: ['support'] });
    expect(toCanonicalJson(hidden)).toBe(toCanonicalJson(absent));
    expect(hidden.caveats).toMatch(/Pinned but not found: legal\/merger\.md\./);
    expect(hidden.briefing!.missingPins).toEqual(['legal/merger.md']);
    const seen = await brief({ store: withSecret, prompt: 'refund timing', pins: ['legal/merger.md'], principals: ['legal'] });
    expect(seen.items[0]!.sourceId).toBe('legal/merger.md');
    // A path suffix that only a restricted source ends with is not found either, not ambiguous.
    const suffix = await brief({ store: withSecret, pins: ['merger.md'], principals: ['support'], prompt: 'refund' });
    expect(suffix.briefing!.missingPins).toEqual(['merger.md']);
  });

  it('may be the path as ingested when it is a suffix of one source id; ambiguity lists the candidates', async () => {
    const store = await storeWith();
    const pack = await brief({ store, pins: ['shipping.md'] });
    expect(sources(pack)).toEqual(['docs/ops/shipping.md']);
    expect((await brief({ store, pins: ['ops/shipping.md'] })).items).toEqual(pack.items);
    const error = await failure(brief({ store, pins: ['refunds.md'] }), 'invalid_input');
    expect(error.message).toMatch(/Pin "refunds\.md" is ambiguous: it could be docs\/billing\/refunds\.md, notes\/refunds\.md/);
    // A suffix must end at a path separator.
    expect((await brief({ store, pins: ['hipping.md'], prompt: 'refund' })).briefing!.missingPins).toEqual(['hipping.md']);
  });

  it('are at most 25 by default (configurable); more is an error, never a silent cut', async () => {
    const store = await storeWith();
    const many = Array.from({ length: 26 }, (_, i) => `p${i}.md`);
    const error = await failure(brief({ store, pins: many }), 'invalid_input');
    expect(error.message).toMatch(/Too many pins: 26, at most 25/);
    await failure(brief({ store, pins: ['a', 'b', 'c'], maxPins: 2 }), 'invalid_input');
    expect((await brief({ store, pins: many, maxPins: 30, prompt: 'refund' })).briefing!.missingPins).toHaveLength(26);
  });
});

describe('clusters', () => {
  it('alone: the most central chunks of each cluster, only members, each within its fair share', async () => {
    const store = await storeWith();
    const pack = await brief({ store, clusters: ['billing', 'ops'], maxTokens: 400 });
    expect(pack.query).toBe('');
    const members = new Set([
      'docs/billing/refunds.md',
      'docs/billing/invoices.md',
      'docs/billing/vat.md',
      'docs/ops/shipping.md',
      'docs/ops/warehouse.md',
    ]);
    expect(pack.items.length).toBeGreaterThan(0);
    for (const source of sources(pack)) expect(members.has(source)).toBe(true);
    expect(sources(pack).some((s) => s.startsWith('docs/billing/'))).toBe(true);
    expect(sources(pack).some((s) => s.startsWith('docs/ops/'))).toBe(true);
    const share = 400 / 2;
    for (const prefix of ['docs/billing/', 'docs/ops/']) {
      const used = pack.items.filter((i) => i.sourceId.startsWith(prefix)).reduce((sum, i) => sum + i.tokens, 0);
      expect(used).toBeLessThanOrEqual(share);
    }
  });

  it('without vectors the lexical centre leads: the chunk sharing the most terms with the rest of the cluster', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments([
      { id: 'c/hub.md', clusters: ['c'], text: 'apples pears plums cherries' },
      { id: 'c/a.md', clusters: ['c'], text: 'apples pears grapes' },
      { id: 'c/b.md', clusters: ['c'], text: 'plums cherries lemons' },
      { id: 'c/odd.md', clusters: ['c'], text: 'quantum chromodynamics lattice' },
    ]);
    const pack = await brief({ store, clusters: ['c'], maxTokens: 2000, groundingCount: 0 });
    expect(pack.items[0]!.sourceId).toBe('c/hub.md');
    expect(pack.items.at(-1)!.sourceId).toBe('c/odd.md');
  });

  it('with embeddings the dense centroid leads', async () => {
    const embeddings = new FakeEmbeddings();
    const store = new MemoryHybridStore({ embeddings });
    await store.addDocuments([
      { id: 'c/odd.md', clusters: ['c'], text: 'zebra zebra zebra' },
      { id: 'c/a.md', clusters: ['c'], text: 'apples pears apples pears' },
      { id: 'c/b.md', clusters: ['c'], text: 'apples pears apples plums' },
      { id: 'c/hub.md', clusters: ['c'], text: 'apples pears apples pears plums' },
    ]);
    const pack = await brief({ store, clusters: ['c'], maxTokens: 2000, groundingCount: 0, embeddings });
    expect(pack.items.at(-1)!.sourceId).toBe('c/odd.md');
    expect(pack.items[0]!.sourceId).toBe('c/hub.md');
  });

  it('with a prompt: the cluster chunks most relevant to it, beside the prompt results', async () => {
    const store = await storeWith();
    const pack = await brief({ store, prompt: 'refund', clusters: ['ops'], maxTokens: 1000 });
    expect(sources(pack)).toContain('docs/ops/shipping.md'); // the ops chunk that mentions refunds
    expect(sources(pack)).toContain('docs/billing/refunds.md'); // prefer scope: prompt results beyond the cluster
  });

  it('respects the ACL: restricted members are never drawn; an unreadable cluster is reported like a missing one', async () => {
    const store = await storeWith([{ id: 'legal/secret.md', acl: ['legal'], clusters: ['legal-only'], text: 'Secret legal advice.' }]);
    const pack = await brief({ store, clusters: ['billing'], principals: ['support'] });
    expect(sources(pack)).not.toContain('legal/merger.md');
    const legal = await brief({ store, clusters: ['billing'], principals: ['legal'] });
    expect(sources(legal)).toContain('legal/merger.md');
    const hidden = await brief({ store, clusters: ['legal-only'], principals: ['support'] });
    const none = await brief({ store, clusters: ['no-such-cluster'], principals: ['support'] });
    expect(hidden.items).toEqual([]);
    expect(hidden.caveats).toMatch(/Gap: cluster "legal-only": no sources found\./);
    expect(hidden.caveats!.replace('legal-only', 'X')).toBe(none.caveats!.replace('no-such-cluster', 'X'));
  });

  it('at most 10 clusters and 200 member sources each by default (configurable); more is an error', async () => {
    const store = await storeWith();
    const eleven = Array.from({ length: 11 }, (_, i) => `c${i}`);
    expect((await failure(brief({ store, clusters: eleven }), 'invalid_input')).message).toMatch(/Too many clusters: 11, at most 10/);
    await failure(brief({ store, clusters: ['billing', 'ops'], maxClusters: 1 }), 'invalid_input');
    const error = await failure(brief({ store, clusters: ['billing'], maxClusterSources: 2 }), 'invalid_input');
    expect(error.message).toMatch(/Cluster "billing" has 3 member sources, more than maxClusterSources \(2\)/);
  });
});

describe('scope', () => {
  it('prefer widens with prompt results; strict keeps them to the pins and clusters, inside the store query', async () => {
    const store = await storeWith();
    const prefer = await brief({ store, prompt: 'refund', pins: ['docs/handbook.md'], clusters: ['ops'] });
    expect(sources(prefer)).toContain('notes/refunds.md');
    const strict = await brief({ store, prompt: 'refund', pins: ['docs/handbook.md'], clusters: ['ops'], scopeMode: 'strict' });
    expect(sources(strict)).toContain('docs/handbook.md');
    expect(sources(strict).some((source) => source.startsWith('docs/ops/'))).toBe(true);
    for (const source of sources(strict)) expect(['docs/handbook.md', 'docs/ops/shipping.md', 'docs/ops/warehouse.md']).toContain(source);
    // Strict scope is a filter in the query, not a post-filter: the pool is filled with in-scope results.
    const calls: unknown[] = [];
    const spying = {
      search: (request: Parameters<MemoryHybridStore['search']>[0]) => (calls.push(request.filter), store.search(request)),
      addDocuments: store.addDocuments.bind(store),
      getChunks: store.getChunks.bind(store),
    };
    await assembleBriefing({ store: spying, prompt: 'refund', clusters: ['ops'], scopeMode: 'strict', mode: 'lexical', maxTokens: 500 });
    expect(calls).toContainEqual({ should: [{ key: 'clusters', match: { any: ['ops'] } }] });
    await failure(brief({ store, prompt: 'refund', scopeMode: 'strict' }), 'invalid_input');
  });
});

describe('tiers', () => {
  it('the strongest insight leads the grounding zone; tierWeights bias selection; caveats count kinds', async () => {
    const store = await storeWith();
    const plain = await brief({ store, prompt: 'refund invoice', groundingCount: 1 });
    expect(plain.items[0]).toMatchObject({ sourceId: 'docs/billing/refunds.md', role: 'grounding' });
    expect(plain.caveats).toMatch(/Kinds: (\d+ insight, )?\d+ no kind, \d+ segment\.|Kinds: .*insight/);

    // The smallest budget with room for an item: the weights decide which tier gets it.
    const at = (maxTokens: number, tierWeights: Record<string, number>) =>
      brief({ store, prompt: 'refund invoice', maxTokens, groundingCount: 1, tierWeights });
    let budget = 100;
    while ((await at(budget, { insight: 0.01, segment: 10 })).items.length === 0) budget += 5;
    const toSegments = await at(budget, { insight: 0.01, segment: 10 });
    const toInsights = await at(budget, { insight: 10, segment: 0.01 });
    expect(toSegments.items.length).toBeLessThan(plain.items.length);
    expect(toSegments.items.every((i) => i.sourceId !== 'docs/billing/refunds.md')).toBe(true);
    expect(toInsights.items[0]!.sourceId).toBe('docs/billing/refunds.md');
    // Scores stay the candidates' own.
    const candidates = await store.search({ text: 'refund invoice', mode: 'lexical', limit: 50, principals: [] });
    for (const item of toSegments.items) expect(item.score).toBe(candidates.find((c) => c.id === item.id)!.score);

    const counted = await brief({ store, clusters: ['billing'], maxTokens: 2000 });
    expect(counted.caveats).toMatch(/Kinds: 1 insight, 2 segment\./);
  });
});
