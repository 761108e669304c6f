// Past one machine: consistency and ordering on every request, sharding and replication settings, tenants on
// shard keys or on a tenant payload index, against the Qdrant engine. Every body goes through the engine's
// validation against Qdrant's own models; where one node cannot show a cluster effect (consistency,
// replication), the test asserts the exact request and that the engine accepts it as Qdrant's spec says.
// Against a real standalone server (QDRANT_URL) user-defined shard keys are refused with 405, which the
// store reports as `unsupported`; those tests check that instead.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { QdrantHybridStore, pointIdForChunk, type QdrantHybridStoreOptions } from '../../src/qdrant/index.js';
import type { IngestDocument } from '../../src/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { admin, collectionNames, failure, url } from './helpers.js';
import { bodyText, urlOf } from '../helpers/fetch-call.js';

const collectionName = collectionNames('cluster');
let clusterMode = false;

beforeAll(async () => {
  const answer = (await (await fetch(`${url}/cluster`)).json()) as { result?: { status?: string } };
  clusterMode = answer.result?.status === 'enabled';
});
afterEach(() => {
  vi.restoreAllMocks();
});

interface Sent {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Record<string, unknown> | undefined;
}

/** Every HTTP request the store sends (through the real fetch) while `spy` is active. */
function spyRequests() {
  const spy = vi.spyOn(globalThis, 'fetch');
  const sent = (): Sent[] =>
    spy.mock.calls.map(([input, init]) => {
      const target = new URL(urlOf(input));
      const body = init?.body === undefined || init.body === null ? undefined : (JSON.parse(bodyText(init)) as Record<string, unknown>);
      return { method: init?.method ?? 'GET', path: target.pathname, query: target.searchParams, body };
    });
  return { spy, sent };
}

const READS = /\/points\/(query|query\/batch|scroll|count)$|\/facet$/;
const WRITES = /\/points(\/delete)?$|\/index$/;

const docs = (prefix: string): IngestDocument[] => [
  { id: 'policy.md', text: `# Policy\n\n${prefix} refunds take fourteen days.\n\nKeep the receipt for refunds.` },
  { id: 'handbook.md', text: `# Handbook\n\n${prefix} parental leave is sixteen weeks.`, acl: ['hr'] },
];

describe('consistency and ordering', () => {
  it('every read sends readConsistency and every write sends writeOrdering; the engine accepts them', async () => {
    const store = new QdrantHybridStore({
      url,
      collection: collectionName('consistency'),
      embeddings: new FakeEmbeddings({ dimension: 16 }),
      readConsistency: 'majority',
      writeOrdering: 'strong',
    });
    const { sent } = spyRequests();
    await store.ensureCollection();
    await store.addDocuments(docs('Acme'));
    await store.addDocuments([{ id: 'policy.md', text: 'Refunds take a week now.' }]);
    for (const mode of ['hybrid', 'dense', 'lexical'] as const) await store.search({ text: 'refunds receipt', mode });
    await store.rankings({ text: 'refunds receipt' });
    await store.getChunks({ sourceIds: ['policy.md'] });
    await store.deleteSources(['handbook.md']);
    const requests = sent();
    const reads = requests.filter((r) => r.method === 'POST' && READS.test(r.path));
    const writes = requests.filter((r) => (r.method === 'PUT' || r.method === 'POST') && WRITES.test(r.path) && !READS.test(r.path));
    expect(new Set(reads.map((r) => r.path.replace(/^\/collections\/[^/]+/, '')))).toEqual(
      new Set(['/points/scroll', '/points/query', '/points/query/batch', '/facet']),
    );
    expect(new Set(writes.map((r) => r.path.replace(/^\/collections\/[^/]+/, '')))).toEqual(
      new Set(['/index', '/points', '/points/delete']),
    );
    for (const r of reads) expect(r.query.get('consistency'), `${r.method} ${r.path}`).toBe('majority');
    for (const r of writes) expect(r.query.get('ordering'), `${r.method} ${r.path}`).toBe('strong');
    for (const r of writes) expect(r.query.get('wait'), `${r.method} ${r.path}`).toBe('true');
  });

  it('a number of replicas is sent as a number; values outside the spec are refused by the engine as Qdrant does', async () => {
    const name = collectionName('consistency-n');
    const store = new QdrantHybridStore({ url, collection: name, vectorSize: 8, readConsistency: 2 });
    await store.ensureCollection();
    const { sent } = spyRequests();
    await store.search({ text: 'anything', mode: 'lexical' });
    expect(sent()[0]!.query.get('consistency')).toBe('2');
    vi.restoreAllMocks();
    // serde refuses a value it cannot read (400); a validator refuses a factor of 0 (422), as in Qdrant.
    for (const [query, status, message] of [
      ['consistency=0', 422, /^Validation error in query parameters: .*consistency/],
      ['consistency=most', 400, /^Deserialize error in query parameters: .*consistency/],
      ['ordering=fast', 400, /^Deserialize error in query parameters: .*ordering/],
    ] as const) {
      const path = query.startsWith('ordering') ? `points?wait=true&${query}` : `points/scroll?${query}`;
      const response = await fetch(`${url}/collections/${name}/${path}`, {
        method: query.startsWith('ordering') ? 'PUT' : 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(query.startsWith('ordering') ? { points: [] } : { limit: 1 }),
      });
      expect(response.status, query).toBe(status);
      expect(((await response.json()) as { status: { error: string } }).status.error).toMatch(message);
    }
  });
});

describe('sharding and replication settings', () => {
  it('are sent when the collection is created, read back, and a different setting is config_mismatch', async () => {
    const name = collectionName('replicas');
    const { sent } = spyRequests();
    const store = new QdrantHybridStore({
      url,
      collection: name,
      vectorSize: 8,
      shardNumber: 2,
      replicationFactor: 2,
      writeConsistencyFactor: 2,
    });
    await store.ensureCollection();
    const create = sent().find((r) => r.method === 'PUT' && r.path === `/collections/${name}`)!;
    expect(create.body).toMatchObject({ shard_number: 2, replication_factor: 2, write_consistency_factor: 2 });
    expect(create.body).not.toHaveProperty('sharding_method');
    vi.restoreAllMocks();
    const info = await admin.getCollection(name);
    expect(info.config.params).toMatchObject({ shard_number: 2, replication_factor: 2, write_consistency_factor: 2 });
    await expect(
      new QdrantHybridStore({ url, collection: name, vectorSize: 8, replicationFactor: 2 }).ensureCollection(),
    ).resolves.toBeDefined();
    const error = await failure(
      new QdrantHybridStore({ url, collection: name, vectorSize: 8, replicationFactor: 3 }).ensureCollection(),
      'config_mismatch',
    );
    expect(error.message).toMatch(/replication_factor is 2, this store asks for 3/);
    const shards = await failure(
      new QdrantHybridStore({ url, collection: name, vectorSize: 8, shardNumber: 4, writeConsistencyFactor: 1 }).ensureCollection(),
      'config_mismatch',
    );
    expect(shards.message).toMatch(/shard_number is 2, this store asks for 4/);
    expect(shards.message).toMatch(/write_consistency_factor is 2, this store asks for 1/);
  });

  it('refuses settings that cannot work before any request', () => {
    expect(() => new QdrantHybridStore({ url, collection: 'x', replicationFactor: 1, writeConsistencyFactor: 2 })).toThrow(
      /cannot exceed replicationFactor/,
    );
    expect(() => new QdrantHybridStore({ url, collection: 'x', tenant: 'acme' })).toThrow(/tenant needs tenancy/);
    expect(() => new QdrantHybridStore({ url, collection: 'x', tenancy: 'payload', payloadPreset: 'langchain-js' })).toThrow(
      /tenancy applies/,
    );
  });
});

/** Tenancy behaviour both modes share: isolation, same source ids, principals inside, deletes per tenant. */
function tenancyContract(tenancy: 'shard-key' | 'payload', available: () => boolean) {
  let admin_: QdrantHybridStore;
  let acme: QdrantHybridStore;
  let globex: QdrantHybridStore;

  beforeAll(async () => {
    if (!available()) return;
    const options: QdrantHybridStoreOptions = {
      url,
      collection: collectionName(`tenants-${tenancy}`),
      embeddings: new FakeEmbeddings({ dimension: 16 }),
      tenancy,
    };
    admin_ = new QdrantHybridStore(options);
    await admin_.ensureCollection();
    acme = admin_.forTenant('acme');
    globex = admin_.forTenant('globex');
    for (const store of [acme, globex]) await store.ensureCollection();
    await acme.addDocuments(docs('Acme'));
    await globex.addDocuments(docs('Globex'));
  });

  it('each tenant sees only its own chunks, by every path; the same source id is two sources', async (ctx) => {
    if (!available()) ctx.skip(); // a standalone server: reported as skipped, not passed
    for (const [store, name] of [
      [acme, 'Acme'],
      [globex, 'Globex'],
    ] as const) {
      for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
        const found = await store.search({ text: 'refunds receipt days', mode, limit: 20 });
        expect(found.length, `${name} ${mode}`).toBeGreaterThan(0);
        expect(
          found.every((c) => !c.text.includes(name === 'Acme' ? 'Globex' : 'Acme')),
          `${name} ${mode}`,
        ).toBe(true);
      }
      const chunks = await store.getChunks({ sourceIds: ['policy.md'] });
      expect(chunks.map((c) => c.text).join(' ')).toContain(name);
      // Both tenants have a handbook.md: only this tenant's chunks (by point identity) may be ranked.
      const own = new Set((await store.getChunks({ sourceIds: ['policy.md', 'handbook.md'] })).map((c) => c.id));
      const rankings = await store.rankings({ text: 'refunds', limit: 10 });
      for (const list of [rankings.dense!, rankings.lexical!, rankings.fused]) {
        expect(list.length).toBeGreaterThan(0);
        expect(list.every((entry) => own.has(entry.id))).toBe(true);
      }
    }
    // Same chunk key, two points.
    const [acmeChunk] = await acme.getChunks({ sourceIds: ['policy.md'] });
    expect(pointIdForChunk(acmeChunk!.id, 'acme')).not.toBe(pointIdForChunk(acmeChunk!.id, 'globex'));
  });

  it('principals still filter inside a tenant', async (ctx) => {
    if (!available()) ctx.skip(); // a standalone server: reported as skipped, not passed
    expect(
      (await acme.search({ text: 'parental leave weeks', mode: 'lexical', principals: ['sales'] })).some(
        (c) => c.sourceId === 'handbook.md',
      ),
    ).toBe(false);
    expect((await acme.search({ text: 'parental leave weeks', mode: 'lexical', principals: ['hr'] }))[0]!.sourceId).toBe('handbook.md');
    expect(await acme.getChunks({ sourceIds: ['handbook.md'], principals: ['sales'] })).toEqual([]);
  });

  it('deleteSources and dropTenant touch one tenant only; an admin store refuses point operations', async (ctx) => {
    if (!available()) ctx.skip(); // a standalone server: reported as skipped, not passed
    const extra = admin_.forTenant(`initech-${tenancy}`);
    await extra.ensureCollection();
    await extra.addDocuments(docs('Initech'));
    expect(await extra.deleteSources(['policy.md'])).toMatchObject({ sources: 1 });
    expect(await extra.getChunks({ sourceIds: ['policy.md'] })).toEqual([]);
    expect((await acme.getChunks({ sourceIds: ['policy.md'] })).length).toBeGreaterThan(0);
    await extra.dropTenant();
    expect((await globex.getChunks({ sourceIds: ['policy.md'] })).length).toBeGreaterThan(0);
    const error = await failure(admin_.search({ text: 'refunds' }), 'invalid_input');
    expect(error.message).toMatch(/needs a tenant/);
  });
}

describe('tenants on a payload index (is_tenant)', () => {
  tenancyContract('payload', () => true);

  it('creates the tenant index and tags and filters every request body with the tenant', async () => {
    const name = collectionName('payload-bodies');
    const { sent } = spyRequests();
    const store = new QdrantHybridStore({ url, collection: name, vectorSize: 8, tenancy: 'payload', tenant: 'acme' });
    await store.ensureCollection();
    await store.addDocuments(docs('Acme'));
    await store.search({ text: 'refunds', mode: 'lexical' });
    const requests = sent();
    expect(requests.find((r) => r.path.endsWith('/index') && r.body?.field_name === 'tenant')?.body).toEqual({
      field_name: 'tenant',
      field_schema: { type: 'keyword', is_tenant: true },
    });
    const upsert = requests.find((r) => r.method === 'PUT' && r.path.endsWith('/points'))!;
    expect((upsert.body!.points as { payload: Record<string, unknown> }[]).every((p) => p.payload.tenant === 'acme')).toBe(true);
    for (const r of requests.filter((x) => /scroll|query/.test(x.path))) {
      expect(JSON.stringify(r.body!.filter), r.path).toContain('{"key":"tenant","match":{"value":"acme"}}');
    }
    vi.restoreAllMocks();
    const info = await admin.getCollection(name);
    expect(info.payload_schema?.tenant).toMatchObject({ data_type: 'keyword', params: { type: 'keyword', is_tenant: true } });
    // Chunk records read back without the tenant tag.
    const [chunk] = await store.getChunks({ sourceIds: ['policy.md'] });
    expect(chunk).not.toHaveProperty('tenant');
  });

  it("shares IDF across tenants: another tenant's documents move this tenant's BM25 scores", async () => {
    const store = new QdrantHybridStore({ url, collection: collectionName('payload-idf'), vectorSize: 8, tenancy: 'payload', tenant: 'a' });
    await store.ensureCollection();
    await store.addDocuments([
      { id: 'x.md', text: 'Refunds take fourteen days.' },
      { id: 'y.md', text: 'Receipts are kept.' },
    ]);
    const before = (await store.search({ text: 'refunds', mode: 'lexical' }))[0]!.score;
    await store.forTenant('b').addDocuments(Array.from({ length: 6 }, (_, i) => ({ id: `b${i}.md`, text: `Refunds policy number ${i}.` })));
    const after = (await store.search({ text: 'refunds', mode: 'lexical' }))[0]!.score;
    expect(after).toBeLessThan(before);
  });
});

describe('tenants on user-defined shard keys', () => {
  tenancyContract('shard-key', () => clusterMode);

  it('creates a custom-sharded collection and one shard key per tenant; every point request names it', async () => {
    const name = collectionName('shard-bodies');
    const { sent } = spyRequests();
    const store = new QdrantHybridStore({ url, collection: name, vectorSize: 8, tenancy: 'shard-key', tenant: 'acme', shardNumber: 1 });
    if (!clusterMode) {
      const error = await failure(store.ensureCollection(), 'unsupported');
      expect(error.message).toMatch(/standalone.*cluster mode/);
      expect(sent().find((r) => r.method === 'PUT' && r.path === `/collections/${name}/shards`)?.body).toEqual({ shard_key: 'acme' });
      return;
    }
    await expect(store.ensureCollection()).resolves.toMatchObject({ created: true, shardKeyCreated: true });
    await expect(store.ensureCollection()).resolves.toMatchObject({ created: false, shardKeyCreated: false });
    await store.addDocuments(docs('Acme'));
    await store.addDocuments([{ id: 'policy.md', text: 'Refunds take a week now.' }]);
    await store.search({ text: 'refunds', mode: 'lexical' });
    await store.rankings({ text: 'refunds', mode: 'lexical' });
    await store.getChunks({ sourceIds: ['policy.md'] });
    await store.deleteSources(['policy.md']);
    const requests = sent();
    const create = requests.find((r) => r.method === 'PUT' && r.path === `/collections/${name}`)!;
    expect(create.body).toMatchObject({ sharding_method: 'custom', shard_number: 1 });
    expect(requests.find((r) => r.method === 'PUT' && r.path === `/collections/${name}/shards`)!.body).toEqual({ shard_key: 'acme' });
    const pointRequests = requests.filter((r) => /\/points(\/|$)|\/facet$/.test(r.path));
    expect(pointRequests.length).toBeGreaterThanOrEqual(6);
    for (const r of pointRequests) {
      if (r.path.endsWith('/query/batch')) {
        for (const search of r.body!.searches as Record<string, unknown>[]) expect(search.shard_key).toBe('acme');
      } else expect(r.body!.shard_key, `${r.method} ${r.path}`).toBe('acme');
    }
    vi.restoreAllMocks();
    expect((await admin.getCollection(name)).config.params).toMatchObject({ sharding_method: 'custom' });
  });

  it("keeps IDF per tenant: another tenant's documents do not move this tenant's BM25 scores", async (ctx) => {
    if (!clusterMode) ctx.skip(); // a standalone server: reported as skipped, not passed
    const store = new QdrantHybridStore({ url, collection: collectionName('shard-idf'), vectorSize: 8, tenancy: 'shard-key', tenant: 'a' });
    await store.ensureCollection();
    await store.addDocuments([
      { id: 'x.md', text: 'Refunds take fourteen days.' },
      { id: 'y.md', text: 'Receipts are kept.' },
    ]);
    const before = (await store.search({ text: 'refunds', mode: 'lexical' }))[0]!.score;
    const other = store.forTenant('b');
    await other.ensureCollection();
    await other.addDocuments(Array.from({ length: 6 }, (_, i) => ({ id: `b${i}.md`, text: `Refunds policy number ${i}.` })));
    const after = (await store.search({ text: 'refunds', mode: 'lexical' }))[0]!.score;
    expect(after).toBe(before);
  });

  it("a collection's sharding method must match the tenancy", async () => {
    const auto = collectionName('auto');
    await new QdrantHybridStore({ url, collection: auto, vectorSize: 8 }).ensureCollection();
    const error = await failure(
      new QdrantHybridStore({ url, collection: auto, vectorSize: 8, tenancy: 'shard-key', tenant: 'a' }).ensureCollection(),
      'config_mismatch',
    );
    expect(error.message).toMatch(/automatic sharding and tenancy "shard-key" needs sharding_method "custom"/);
    if (!clusterMode) return;
    const custom = collectionName('custom');
    await new QdrantHybridStore({ url, collection: custom, vectorSize: 8, tenancy: 'shard-key' }).ensureCollection();
    const plain = await failure(new QdrantHybridStore({ url, collection: custom, vectorSize: 8 }).ensureCollection(), 'config_mismatch');
    expect(plain.message).toMatch(/custom sharding/);
  });
});
