// Zero-downtime reindex through an alias, against the Qdrant engine: the swap, the versioned collections,
// queries through the alias, and a failure at every step (injected into the client) leaving the alias on the
// old collection.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { LitmPackErrorCode, IngestDocument } from '../../src/index.js';
import { QdrantHybridStore, QdrantRestClient, type QdrantClientLike } from '../../src/qdrant/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { admin, failure, url, wrapClient } from './helpers.js';
import { bodyText, urlOf } from '../helpers/fetch-call.js';

const run = randomUUID().slice(0, 8);
const aliasesUsed: string[] = [];

function aliasName(label: string): string {
  const name = `reindex_${run}_${label}`;
  aliasesUsed.push(name);
  return name;
}

// The versioned collections behind each alias are the store's to name: found by prefix and removed.
afterAll(async () => {
  const { collections } = await admin.getCollections();
  for (const { name } of collections) {
    if (aliasesUsed.some((alias) => name === alias || name.startsWith(`${alias}_v`)))
      await admin.deleteCollection(name).catch(() => undefined);
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function aliasTarget(alias: string): Promise<string | undefined> {
  const { aliases } = await admin.getAliases();
  return aliases.find((a) => a.alias_name === alias)?.collection_name;
}

async function collectionNames(alias: string): Promise<string[]> {
  const { collections } = await admin.getCollections();
  return collections
    .map((c) => c.name)
    .filter((name) => name.startsWith(`${alias}_v`))
    .sort();
}

const v1: IngestDocument[] = [
  { id: 'policy.md', text: '# Policy\n\nRefunds take fourteen days from the day the return arrives.' },
  { id: 'leave.md', text: '# Leave\n\nParental leave is sixteen weeks at full pay.' },
  { id: 'cars.md', text: 'Change the engine oil every ten thousand kilometres.' },
];
const v2: IngestDocument[] = [
  { id: 'policy.md', text: '# Policy\n\nRefunds now take seven days from the day the return arrives.' },
  { id: 'leave.md', text: '# Leave\n\nParental leave is twenty weeks at full pay.' },
  { id: 'tea.md', text: 'Green tea brews best below boiling water.' },
];

type Fault = (method: keyof QdrantClientLike, call: number, run: () => Promise<unknown>) => Promise<unknown>;

/** The store's own HTTP client behind a wrapper that lets a test break one call. */
const faultyClient = (fault: Fault): QdrantClientLike => wrapClient(new QdrantRestClient({ url }), fault);

function openOnAlias(alias: string, client?: QdrantClientLike) {
  return new QdrantHybridStore({
    ...(client === undefined ? { url } : { client }),
    collection: alias,
    embeddings: new FakeEmbeddings({ dimension: 16 }),
  });
}

describe('reindex', () => {
  it('creates alias_v1 the first time, then builds alias_v2 beside it, swaps atomically and drops v1', async () => {
    const alias = aliasName('swap');
    const store = openOnAlias(alias);
    const first = await store.reindex({ alias, documents: v1, sampleQueries: ['refunds'] });
    expect(first).toMatchObject({ alias, collection: `${alias}_v1`, previous: null, previousDropped: false, points: first.chunks });
    expect(first.sampleQueries).toBeGreaterThanOrEqual(2);
    expect(await aliasTarget(alias)).toBe(`${alias}_v1`);
    const before = await store.search({ text: 'refunds days', mode: 'lexical' });
    expect(before[0]!.text).toContain('fourteen');

    const { mock } = vi.spyOn(globalThis, 'fetch');
    const second = await store.reindex({ alias, documents: v2 });
    expect(second).toMatchObject({ collection: `${alias}_v2`, previous: `${alias}_v1`, previousDropped: true });
    const swap = mock.calls.find(([input]) => urlOf(input).endsWith('/collections/aliases'))!;
    expect(JSON.parse(bodyText(swap[1]))).toEqual({
      actions: [{ delete_alias: { alias_name: alias } }, { create_alias: { alias_name: alias, collection_name: `${alias}_v2` } }],
    });
    const order = mock.calls.map(([input, init]) => `${init?.method} ${new URL(urlOf(input)).pathname}`);
    expect(order.indexOf(`POST /collections/aliases`)).toBeLessThan(order.indexOf(`DELETE /collections/${alias}_v1`));
    vi.restoreAllMocks();

    // The same store object, opened on the alias before the swap, now reads the new collection.
    const after = await store.search({ text: 'refunds days', mode: 'lexical' });
    expect(after[0]!.text).toContain('seven');
    expect(await store.getChunks({ sourceIds: ['cars.md'] })).toEqual([]);
    expect(await aliasTarget(alias)).toBe(`${alias}_v2`);
    expect(await collectionNames(alias)).toEqual([`${alias}_v2`]);

    const kept = await store.reindex({ alias, documents: v1, keepPrevious: true });
    expect(kept).toMatchObject({ collection: `${alias}_v3`, previous: `${alias}_v2`, previousDropped: false });
    expect(await collectionNames(alias)).toEqual([`${alias}_v2`, `${alias}_v3`]);
  });

  it('refuses an alias name that is a collection, and a store with tenants', async () => {
    const alias = aliasName('taken');
    await new QdrantHybridStore({ url, collection: alias, vectorSize: 8 }).ensureCollection();
    const error = await failure(openOnAlias(alias).reindex({ alias, documents: v1 }), 'invalid_input');
    expect(error.message).toMatch(/is a collection, not an alias/);
    const tenants = new QdrantHybridStore({ url, collection: alias, vectorSize: 8, tenancy: 'payload', tenant: 'a' });
    await failure(tenants.reindex({ alias, documents: v1 }), 'unsupported');
  });

  describe('a failure at any step leaves the alias on the old collection', () => {
    const faults: { step: string; code: LitmPackErrorCode; message: RegExp; fault: Fault }[] = [
      {
        step: 'creating the new collection',
        code: 'server_error',
        message: /creating the new collection/,
        fault: (method, _call, run) =>
          method === 'createCollection'
            ? Promise.reject(
                Object.assign(new Error('disk full'), { status: 500, data: { status: { error: 'disk full' } }, headers: new Headers() }),
              )
            : run(),
      },
      {
        step: 'indexing the new collection after it was created',
        code: 'server_error',
        message: /creating the new collection/,
        fault: (method, _call, run) =>
          method === 'createPayloadIndex'
            ? Promise.reject(
                Object.assign(new Error('disk full'), { status: 500, data: { status: { error: 'disk full' } }, headers: new Headers() }),
              )
            : run(),
      },
      {
        step: 'an upsert midway',
        code: 'connection_failed',
        message: /ingesting into the new collection/,
        fault: (method, call, run) =>
          method === 'upsert' && call === 1
            ? Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }))
            : run(),
      },
      {
        step: 'a point count that does not add up',
        code: 'server_error',
        message: /counting the new collection.*holds \d+ points after \d+ chunks/,
        fault: async (method, _call, run) => {
          const answer = await run();
          return method === 'count' ? { count: (answer as { count: number }).count - 1 } : answer;
        },
      },
      {
        step: 'a sample query that finds nothing',
        code: 'server_error',
        message: /running sample queries.*finds nothing/,
        fault: async (method, _call, run) => (method === 'query' ? { points: [] } : run()),
      },
      {
        step: 'the alias swap',
        code: 'server_error',
        message: /moving the alias/,
        fault: (method, _call, run) =>
          method === 'updateCollectionAliases'
            ? Promise.reject(
                Object.assign(new Error('Service internal error'), {
                  status: 500,
                  data: { status: { error: 'consensus timeout' } },
                  headers: new Headers(),
                }),
              )
            : run(),
      },
    ];

    for (const { step, code, message, fault } of faults) {
      it(step, async () => {
        const alias = aliasName(step.replace(/\W+/g, '-'));
        await openOnAlias(alias).reindex({ alias, documents: v1 });
        const error = await failure(
          openOnAlias(alias, faultyClient(fault)).reindex({ alias, documents: v2, sampleQueries: ['refunds'] }),
          code,
        );
        expect(error.message).toMatch(message);
        expect(error.message).toMatch(new RegExp(`the alias still points at "${alias}_v1"`));
        expect(error.details).toMatchObject({ alias, previous: `${alias}_v1`, collection: `${alias}_v2` });
        expect(await aliasTarget(alias)).toBe(`${alias}_v1`);
        expect(await collectionNames(alias)).toEqual([`${alias}_v1`]);
        const reader = openOnAlias(alias);
        expect((await reader.search({ text: 'refunds days', mode: 'lexical' }))[0]!.text).toContain('fourteen');
        expect((await reader.getChunks({ sourceIds: ['cars.md'] })).length).toBe(1);
      });
    }
  });

  it('a previous collection that cannot be dropped after the swap is reported, not thrown', async () => {
    const alias = aliasName('nodrop');
    await openOnAlias(alias).reindex({ alias, documents: v1 });
    const client = faultyClient((method, _call, run) =>
      method === 'deleteCollection'
        ? Promise.reject(
            Object.assign(new Error('locked'), { status: 403, data: { status: { error: 'Storage locked' } }, headers: new Headers() }),
          )
        : run(),
    );
    const result = await openOnAlias(alias, client).reindex({ alias, documents: v2 });
    expect(result).toMatchObject({ collection: `${alias}_v2`, previous: `${alias}_v1`, previousDropped: false });
    expect(result.warning).toMatch(/could not be dropped.*Storage locked/);
    expect(await aliasTarget(alias)).toBe(`${alias}_v2`);
  });
});
