// The Qdrant test engine, exercised through the official JS client. Every assertion is
// Qdrant's own behaviour, so this file also passes against a real Qdrant 1.19 server
// (QDRANT_URL=http://localhost:6333).
import { randomUUID } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    qdrantUrl: string;
  }
}

const url = inject('qdrantUrl');
const client = new QdrantClient({ url, checkCompatibility: false });
const run = randomUUID().slice(0, 8);
const created: string[] = [];

function collectionName(label: string): string {
  const name = `engine_${run}_${label}`;
  created.push(name);
  return name;
}

afterAll(async () => {
  for (const name of created) await client.deleteCollection(name).catch(() => undefined);
});

interface RawResponse {
  status: number;
  body: { result?: unknown; status: string | { error: string }; time: number };
}

async function raw(method: string, path: string, body?: unknown): Promise<RawResponse> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as RawResponse['body'] };
}

async function rejection(promise: Promise<unknown>): Promise<{ status: number; data: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { status?: unknown; data?: unknown };
    return { status: Number(e.status), data: e.data };
  }
  throw new Error('expected the request to be rejected');
}

const UUID_POINT = '6a2f41a3-c54c-4b8e-9d2a-3c0f5c1e8b10';

// Six points with a 4-d dense vector and a sparse vector over "terms" 1..5.
// Term 1 is in points 1 and 5, term 5 only in the UUID point (the rare term).
const POINTS = [
  {
    id: 1,
    vector: { dense: [1, 0, 0, 0], text: { indices: [1, 2], values: [1, 1] } },
    payload: { lang: 'en', year: 2020, tags: ['a', 'b'], group: 'g1' },
  },
  {
    id: 2,
    vector: { dense: [0.9, 0.1, 0, 0], text: { indices: [2, 3], values: [1, 1] } },
    payload: { lang: 'en', year: 2021, tags: ['b'], group: 'g1' },
  },
  {
    id: 3,
    vector: { dense: [0, 1, 0, 0], text: { indices: [3], values: [1] } },
    payload: { lang: 'de', year: 2022, tags: ['c'], group: 'g2' },
  },
  {
    id: 4,
    vector: { dense: [0, 0, 1, 0], text: { indices: [4], values: [1] } },
    payload: { lang: 'fr', year: 2023, tags: [], group: 'g2' },
  },
  {
    id: 5,
    vector: { dense: [0, 0, 0, 1], text: { indices: [1, 4], values: [1, 1] } },
    payload: { lang: 'de', year: 2024, tags: ['a'], group: 'g3' },
  },
  {
    id: UUID_POINT,
    vector: { dense: [0.5, 0.5, 0, 0], text: { indices: [5], values: [1] } },
    payload: { lang: 'en', year: 2019, tags: [], group: 'g3' },
  },
];

// Qdrant's sparse IDF: ln(1 + (N - n + 0.5) / (n + 0.5)), N points, n containing the term.
const idf = (n: number, total = POINTS.length) => Math.log(1 + (total - n + 0.5) / (n + 0.5));

async function createHybridCollection(label: string): Promise<string> {
  const name = collectionName(label);
  await client.createCollection(name, {
    vectors: { dense: { size: 4, distance: 'Cosine' } },
    sparse_vectors: { text: { modifier: 'idf' } },
  });
  for (const [field_name, field_schema] of [
    ['lang', 'keyword'],
    ['group', 'keyword'],
    ['year', 'integer'],
  ] as const) {
    await client.createPayloadIndex(name, { field_name, field_schema, wait: true });
  }
  const upserted = await client.upsert(name, { wait: true, points: POINTS });
  expect(upserted.status).toBe('completed');
  return name;
}

const ids = (points: { id: string | number }[]) => points.map((p) => p.id);

describe('service', () => {
  it('answers the version check and health probes like Qdrant', async () => {
    const root = await fetch(`${url}/`).then((r) => r.json() as Promise<{ title: string; version: string }>);
    expect(root.title).toBe('qdrant - vector search engine');
    expect(root.version).toMatch(/^1\.\d+\.\d+/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });
});

describe('collections', () => {
  it('creates a collection with named dense and IDF sparse vectors and reports its config', async () => {
    const name = collectionName('config');
    expect(await client.collectionExists(name)).toEqual({ exists: false });
    expect(
      await client.createCollection(name, {
        vectors: { dense: { size: 4, distance: 'Cosine' } },
        sparse_vectors: { text: { modifier: 'idf' } },
      }),
    ).toBe(true);
    expect(await client.collectionExists(name)).toEqual({ exists: true });

    const info = await client.getCollection(name);
    expect(info.points_count).toBe(0);
    expect(info.config.params.vectors).toMatchObject({ dense: { size: 4, distance: 'Cosine' } });
    expect(info.config.params.sparse_vectors).toMatchObject({ text: { modifier: 'idf' } });

    await client.createPayloadIndex(name, { field_name: 'lang', field_schema: 'keyword', wait: true });
    expect((await client.getCollection(name)).payload_schema).toMatchObject({ lang: { data_type: 'keyword' } });

    expect(await client.deleteCollection(name)).toBe(true);
    expect(await client.collectionExists(name)).toEqual({ exists: false });
  });

  it('holds an unnamed single-vector collection, as other tools write them', async () => {
    const name = collectionName('unnamed');
    await client.createCollection(name, { vectors: { size: 3, distance: 'Cosine' } });
    await client.upsert(name, {
      wait: true,
      points: [
        { id: 1, vector: [1, 0, 0], payload: { content: 'one' } },
        { id: 2, vector: [0, 1, 0], payload: { content: 'two' } },
      ],
    });
    const { points } = await client.query(name, { query: [0.9, 0.1, 0], limit: 2, with_payload: true });
    expect(ids(points)).toEqual([1, 2]);
    expect(points[0]?.payload).toEqual({ content: 'one' });

    const [record] = await client.retrieve(name, { ids: [2], with_vector: true });
    expect(record?.vector).toEqual([0, 1, 0]);
    expect((await client.getCollection(name)).config.params.vectors).toMatchObject({ size: 3, distance: 'Cosine' });
  });

  it('rejects creating a collection twice', async () => {
    const name = collectionName('twice');
    await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
    const { status } = await rejection(client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } }));
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
  });
});

describe('search', () => {
  let name: string;
  beforeAll(async () => {
    name = await createHybridCollection('search');
  });

  it('counts, with and without a filter', async () => {
    expect(await client.count(name, { exact: true })).toEqual({ count: 6 });
    expect(await client.count(name, { exact: true, filter: { must: [{ key: 'lang', match: { value: 'en' } }] } })).toEqual({ count: 3 });
    expect(await client.count(name, { exact: true, filter: { must: [{ key: 'year', range: { gt: 2019, lt: 2022 } }] } })).toEqual({
      count: 2,
    });
  });

  it('ranks by cosine similarity on the named dense vector', async () => {
    const { points } = await client.query(name, { query: [1, 0, 0, 0], using: 'dense', limit: 3, with_payload: true });
    expect(ids(points)).toEqual([1, 2, UUID_POINT]);
    expect(points[0]?.score).toBeCloseTo(1, 5);
    expect(points[1]?.score).toBeCloseTo(0.9 / Math.hypot(0.9, 0.1), 5);
    expect(points[2]?.score).toBeCloseTo(Math.SQRT1_2, 5);
    expect(points[0]?.payload).toMatchObject({ lang: 'en', year: 2020 });
  });

  it('accepts the dense vector as {nearest: ...} and honours score_threshold', async () => {
    const { points } = await client.query(name, {
      query: { nearest: [1, 0, 0, 0] },
      using: 'dense',
      score_threshold: 0.9,
      limit: 10,
    });
    expect(ids(points)).toEqual([1, 2]);
  });

  it("scores sparse vectors with the engine's IDF: the rare term wins", async () => {
    const { points } = await client.query(name, {
      query: { indices: [3, 5], values: [1, 1] },
      using: 'text',
      limit: 10,
    });
    expect(points[0]?.id).toBe(UUID_POINT);
    expect(points[0]?.score).toBeCloseTo(idf(1), 4);
    expect(new Set(ids(points.slice(1)))).toEqual(new Set([2, 3]));
    for (const p of points.slice(1)) expect(p.score).toBeCloseTo(idf(2), 4);
  });

  it('fuses a dense and a sparse prefetch with RRF in one call', async () => {
    const prefetch = [
      { query: [1, 0, 0, 0], using: 'dense', limit: 3 },
      { query: { indices: [5], values: [1] }, using: 'text', limit: 3 },
    ];
    const fused = await client.query(name, { prefetch, query: { fusion: 'rrf' }, limit: 10 });
    // dense: 1, 2, uuid; sparse: uuid. The point found by both comes first.
    expect(ids(fused.points)).toEqual([UUID_POINT, 1, 2]);

    const weighted = await client.query(name, { prefetch, query: { rrf: { k: 2, weights: [1, 0.1] } }, limit: 10 });
    expect(weighted.points[0]?.id).toBe(1);

    const dbsf = await client.query(name, { prefetch, query: { fusion: 'dbsf' }, limit: 10 });
    expect(new Set(ids(dbsf.points))).toEqual(new Set([1, 2, UUID_POINT]));
  });

  it('runs several queries in one query/batch call, answers in order', async () => {
    const [dense, sparse] = await client.queryBatch(name, {
      searches: [
        { query: [0, 0, 0, 1], using: 'dense', limit: 1 },
        { query: { indices: [4], values: [1] }, using: 'text', limit: 5, with_payload: ['lang'] },
      ],
    });
    expect(ids(dense?.points ?? [])).toEqual([5]);
    expect(new Set(ids(sparse?.points ?? []))).toEqual(new Set([4, 5]));
    expect(sparse?.points[0]?.payload).toEqual({ lang: expect.any(String) });
  });

  it('filters with must / should / must_not, match value / any and range', async () => {
    const { points } = await client.query(name, {
      query: [1, 0, 0, 0],
      using: 'dense',
      limit: 10,
      filter: {
        must: [{ key: 'lang', match: { any: ['en', 'de'] } }],
        must_not: [{ key: 'year', range: { gte: 2024 } }],
        should: [
          { key: 'tags', match: { value: 'b' } },
          { key: 'group', match: { value: 'g2' } },
        ],
      },
    });
    expect(ids(points)).toEqual([1, 2, 3]);

    const prefiltered = await client.query(name, {
      prefetch: [
        { query: [1, 0, 0, 0], using: 'dense', limit: 10, filter: { must: [{ key: 'lang', match: { value: 'de' } }] } },
        { query: { indices: [1], values: [1] }, using: 'text', limit: 10, filter: { must: [{ key: 'lang', match: { value: 'de' } }] } },
      ],
      query: { fusion: 'rrf' },
      limit: 10,
    });
    expect(new Set(ids(prefiltered.points))).toEqual(new Set([3, 5]));
  });

  it('groups hits by a payload field', async () => {
    const { groups } = await client.queryGroups(name, {
      query: [1, 0, 0, 0],
      using: 'dense',
      group_by: 'group',
      group_size: 2,
      limit: 2,
      with_payload: true,
    });
    expect(groups.map((g) => g.id)).toEqual(['g1', 'g3']);
    expect(ids(groups[0]?.hits ?? [])).toEqual([1, 2]);
    expect(groups[1]?.hits[0]?.id).toBe(UUID_POINT);
    expect(groups[1]?.hits[0]?.payload).toMatchObject({ group: 'g3' });
  });

  it('retrieves points by id with payload and vectors', async () => {
    const records = await client.retrieve(name, { ids: [1, UUID_POINT, 999], with_payload: true, with_vector: true });
    expect(new Set(ids(records))).toEqual(new Set([1, UUID_POINT]));
    const one = records.find((r) => r.id === 1);
    expect(one?.payload).toMatchObject({ lang: 'en', tags: ['a', 'b'] });
    expect(one?.vector).toMatchObject({ dense: [1, 0, 0, 0], text: { indices: [1, 2], values: [1, 1] } });
  });

  it('scrolls through every point page by page', async () => {
    const seen: (string | number)[] = [];
    let offset: string | number | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await client.scroll(name, { limit: 4, ...(offset === undefined ? {} : { offset }) });
      seen.push(...ids(result.points));
      if (result.next_page_offset === null || result.next_page_offset === undefined) break;
      offset = result.next_page_offset as string | number;
    }
    expect(new Set(seen)).toEqual(new Set(ids(POINTS)));
    expect(seen).toHaveLength(POINTS.length);
  });
});

describe('updates', () => {
  it('deletes by ids and by filter', async () => {
    const name = await createHybridCollection('delete');
    const byIds = await client.delete(name, { wait: true, points: [4, UUID_POINT] });
    expect(byIds.status).toBe('completed');
    expect(await client.count(name, { exact: true })).toEqual({ count: 4 });

    await client.delete(name, { wait: true, filter: { must: [{ key: 'lang', match: { value: 'de' } }] } });
    const left = await client.scroll(name, { limit: 10 });
    expect(new Set(ids(left.points))).toEqual(new Set([1, 2]));
  });

  it('overwrites a point on upsert with the same id', async () => {
    const name = await createHybridCollection('overwrite');
    await client.upsert(name, {
      wait: true,
      points: [{ id: 1, vector: { dense: [0, 0, 1, 0] }, payload: { lang: 'it' } }],
    });
    const [record] = await client.retrieve(name, { ids: [1], with_payload: true });
    expect(record?.payload).toEqual({ lang: 'it' });
    expect(await client.count(name, { exact: true })).toEqual({ count: 6 });
  });
});

describe('errors', () => {
  it("rejects a body that does not match Qdrant's models with 400 and a format error", async () => {
    const name = collectionName('invalid');
    const { status, data } = await rejection(client.createCollection(name, { vectors: { size: 'four', distance: 'Cosine' } } as never));
    expect(status).toBe(400);
    expect(data).toMatchObject({ status: { error: expect.stringMatching(/^Format error in JSON body: /) } });
    expect(await client.collectionExists(name)).toEqual({ exists: false });

    await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
    const missingVector = await raw('PUT', `/collections/${name}/points?wait=true`, { points: [{ id: 1 }] });
    expect(missingVector.status).toBe(400);
    expect(missingVector.body.status).toEqual({ error: expect.stringMatching(/^Format error in JSON body: /) });
    expect(typeof missingVector.body.time).toBe('number');

    const notJson = await raw('POST', `/collections/${name}/points/query`, '{"limit": ');
    expect(notJson.status).toBe(400);
  });

  it("rejects values outside Qdrant's limits with a validation error", async () => {
    const name = collectionName('limits');
    await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
    const zero = await raw('POST', `/collections/${name}/points/query`, { query: [1, 0], limit: 0 });
    expect(zero.status).toBe(422);
    expect(zero.body.status).toEqual({ error: expect.stringMatching(/^Validation error in JSON body: /) });
  });

  it('refuses a vector of the wrong size', async () => {
    const name = collectionName('dims');
    await client.createCollection(name, { vectors: { size: 3, distance: 'Cosine' } });
    const { status, data } = await rejection(client.upsert(name, { wait: true, points: [{ id: 1, vector: [1, 0] }] }));
    expect(status).toBe(400);
    expect(data).toMatchObject({ status: { error: expect.stringContaining('Vector dimension error: expected dim: 3, got 2') } });
  });

  it("answers 404 in Qdrant's shape for an unknown collection", async () => {
    const name = `engine_${run}_missing`;
    const { status, data } = await rejection(client.getCollection(name));
    expect(status).toBe(404);
    expect(data).toMatchObject({ status: { error: `Not found: Collection \`${name}\` doesn't exist!` } });

    const query = await raw('POST', `/collections/${name}/points/query`, { query: [1, 0], limit: 1 });
    expect(query.status).toBe(404);
    expect(query.body.status).toEqual({ error: expect.stringContaining("doesn't exist") });
  });
});

describe('aliases', () => {
  it('resolve for reads and writes, move atomically in one call, and go with their collection', async () => {
    const a = collectionName('alias_a');
    const b = collectionName('alias_b');
    const alias = `engine_${run}_alias`;
    for (const [name, id] of [
      [a, 1],
      [b, 2],
    ] as const) {
      await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' } });
      await client.upsert(name, { wait: true, points: [{ id, vector: [1, 0] }] });
    }
    await client.updateCollectionAliases({ actions: [{ create_alias: { collection_name: a, alias_name: alias } }] });
    expect(await client.collectionExists(alias)).toEqual({ exists: true });
    expect(ids((await client.query(alias, { query: [1, 0] })).points)).toEqual([1]);
    await client.upsert(alias, { wait: true, points: [{ id: 3, vector: [0, 1] }] });
    expect(await client.count(a)).toEqual({ count: 2 });
    expect((await client.getAliases()).aliases).toContainEqual({ alias_name: alias, collection_name: a });
    expect((await client.getCollectionAliases(a)).aliases).toEqual([{ alias_name: alias, collection_name: a }]);

    await client.updateCollectionAliases({
      actions: [{ delete_alias: { alias_name: alias } }, { create_alias: { collection_name: b, alias_name: alias } }],
    });
    expect(ids((await client.query(alias, { query: [1, 0] })).points)).toEqual([2]);

    // An alias cannot take a collection's name, nor point at a missing collection; a collection cannot take an alias's.
    expect(
      await rejection(client.updateCollectionAliases({ actions: [{ create_alias: { collection_name: b, alias_name: a } }] })),
    ).toMatchObject({ status: 409 });
    expect(
      await rejection(
        client.updateCollectionAliases({ actions: [{ create_alias: { collection_name: `engine_${run}_none`, alias_name: 'x' } }] }),
      ),
    ).toMatchObject({ status: 404 });
    const clash = await raw('PUT', `/collections/${alias}`, { vectors: { size: 2, distance: 'Dot' } });
    expect(clash.status).toBe(400);
    expect(clash.body.status).toEqual({ error: expect.stringMatching(/Alias with the same name already exists/) });

    await client.deleteCollection(b);
    expect(await client.collectionExists(alias)).toEqual({ exists: false });
    expect((await client.getAliases()).aliases.some((entry) => entry.alias_name === alias)).toBe(false);
  });
});

describe('facets and collection metadata', () => {
  it('counts points per value of an indexed field, with a filter', async () => {
    const name = await createHybridCollection('facet');
    const { hits } = await client.facet(name, { key: 'lang', exact: true });
    expect(hits).toEqual([
      { value: 'en', count: 3 },
      { value: 'de', count: 2 },
      { value: 'fr', count: 1 },
    ]);
    const filtered = await client.facet(name, { key: 'lang', exact: true, filter: { must: [{ key: 'year', range: { gte: 2022 } }] } });
    expect(filtered.hits).toEqual([
      { value: 'de', count: 2 },
      { value: 'fr', count: 1 },
    ]);
  });

  it('keeps metadata given at creation and merges a PATCH into it', async () => {
    const name = collectionName('metadata');
    const created = await raw('PUT', `/collections/${name}`, {
      vectors: { size: 2, distance: 'Dot' },
      metadata: { owner: 'docs', version: 1 },
    });
    expect(created.status).toBe(200);
    await client.updateCollection(name, { metadata: { version: 2, model: 'm' } });
    const info = await client.getCollection(name);
    expect((info.config as { metadata?: unknown }).metadata).toEqual({ owner: 'docs', version: 2, model: 'm' });
  });
});

describe('user-defined shard keys (a one-peer cluster)', () => {
  let cluster = false;
  beforeAll(async () => {
    const answer = (await (await fetch(`${url}/cluster`)).json()) as { result?: { status?: string } };
    cluster = answer.result?.status === 'enabled';
  });

  it('route points by shard key, refuse updates without one or with an unknown one, and fan reads out', async () => {
    const name = collectionName('shards');
    await client.createCollection(name, { vectors: { size: 2, distance: 'Dot' }, sharding_method: 'custom' });
    if (!cluster) {
      // A standalone Qdrant accepts the collection but refuses shard keys: 405 "running in standalone mode".
      const refused = await raw('PUT', `/collections/${name}/shards`, { shard_key: 'a' });
      expect(refused.status).toBe(405);
      return;
    }
    await client.createShardKey(name, { shard_key: 'a' });
    await client.createShardKey(name, { shard_key: 'b' });
    expect((await client.listShardKeys(name)).shard_keys).toEqual([{ key: 'a' }, { key: 'b' }]);
    const duplicate = await raw('PUT', `/collections/${name}/shards`, { shard_key: 'a' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.status).toEqual({ error: `Bad request: Sharding key "a" already exists for collection ${name}` });

    await client.upsert(name, { wait: true, shard_key: 'a', points: [{ id: 1, vector: [1, 0] }] });
    await client.upsert(name, { wait: true, shard_key: 'b', points: [{ id: 2, vector: [0.9, 0.1] }] });
    const noKey = await raw('PUT', `/collections/${name}/points?wait=true`, { points: [{ id: 3, vector: [1, 0] }] });
    expect(noKey.status).toBe(400);
    expect(noKey.body.status).toEqual({ error: 'Wrong input: Shard key not specified' });
    const unknown = await raw('PUT', `/collections/${name}/points?wait=true`, { shard_key: 'zzz', points: [{ id: 3, vector: [1, 0] }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.status).toEqual({ error: 'Wrong input: Shard key "zzz" not found' });

    expect(ids((await client.query(name, { query: [1, 0], shard_key: 'b' })).points)).toEqual([2]);
    expect(ids((await client.query(name, { query: [1, 0] })).points)).toEqual([1, 2]);
    expect(await client.count(name, { shard_key: 'a' })).toEqual({ count: 1 });
    expect(await client.count(name)).toEqual({ count: 2 });
    expect(ids((await client.scroll(name, { shard_key: 'a' })).points)).toEqual([1]);
    await client.deleteShardKey(name, { shard_key: 'a' });
    expect(await client.count(name)).toEqual({ count: 1 });

    const auto = collectionName('shards_auto');
    await client.createCollection(auto, { vectors: { size: 2, distance: 'Dot' } });
    const onAuto = await raw('PUT', `/collections/${auto}/shards`, { shard_key: 'a' });
    expect(onAuto.status).toBe(400);
    expect(onAuto.body.status).toEqual({ error: 'Bad request: Shard Key cannot be created with Auto sharding method' });
  });
});
