// Qdrant's value limits on the fields the store sends (limits, RRF's k, MMR, vector sizes, sharding and
// replication numbers, sparse indices, point ids), as the test engine enforces them from its own facts.
// Each is Qdrant's behaviour, so this file also passes against a real Qdrant 1.19 server (QDRANT_URL).
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
const collection = `limits_${run}`;
const sharded = `limits_${run}_sharded`;
const fresh = (label: string) => `limits_${run}_${label}`;
const created = [collection, sharded];

beforeAll(async () => {
  await client.createCollection(collection, {
    vectors: { dense: { size: 2, distance: 'Cosine' } },
    sparse_vectors: { text: { modifier: 'idf' } },
  });
  await client.createPayloadIndex(collection, { field_name: 'lang', field_schema: 'keyword', wait: true });
  await client.upsert(collection, {
    wait: true,
    points: [
      { id: 1, vector: { dense: [1, 0], text: { indices: [1], values: [1] } }, payload: { lang: 'en' } },
      { id: 2, vector: { dense: [0, 1], text: { indices: [2], values: [1] } }, payload: { lang: 'de' } },
    ],
  });
  await client.createCollection(sharded, { vectors: { size: 2, distance: 'Cosine' }, sharding_method: 'custom' });
});

afterAll(async () => {
  for (const name of created) await client.deleteCollection(name).catch(() => undefined);
});

async function send(method: string, path: string, body: unknown): Promise<{ status: number; error?: string }> {
  const headers = { 'content-type': 'application/json' };
  const response = await fetch(`${url}${path}`, { method, headers, body: JSON.stringify(body) });
  const answer = (await response.json()) as { status: string | { error: string } };
  if (typeof answer.status !== 'object') return { status: response.status };
  return { status: response.status, error: answer.status.error };
}

const points = `/collections/${collection}/points`;
const query = (body: object) => ['POST', `${points}/query`, { using: 'dense', ...body }] as const;
const arms = [
  { query: [1, 0], using: 'dense', limit: 2 },
  { query: { indices: [1], values: [1] }, using: 'text', limit: 2 },
];
const fused = (rrf: object) => query({ prefetch: arms, query: { rrf } });
const mmr = (options: object) => query({ query: { nearest: [1, 0], mmr: options }, limit: 1 });
const create = (label: string, body: object) => {
  const name = fresh(label);
  created.push(name);
  return ['PUT', `/collections/${name}`, { vectors: { size: 2, distance: 'Cosine' }, ...body }] as const;
};
const shardKey = (body: object) => ['PUT', `/collections/${sharded}/shards`, { shard_key: 'acme', ...body }] as const;

type Case = [string, readonly [string, string, unknown]];

// A value past a limit Qdrant's validators set: 422.
const outOfRange: Case[] = [
  ['query limit 0', query({ query: [1, 0], limit: 0 })],
  ['prefetch limit 0', query({ prefetch: { query: [1, 0], using: 'dense', limit: 0 }, query: { fusion: 'rrf' } })],
  ['query/batch search limit 0', ['POST', `${points}/query/batch`, { searches: [{ query: [1, 0], using: 'dense', limit: 0 }] }]],
  ['rrf k 0', fused({ k: 0 })],
  ['mmr candidates_limit 16385', mmr({ diversity: 0.5, candidates_limit: 16385 })],
  ['mmr diversity 1.5', mmr({ diversity: 1.5 })],
  ['hnsw_ef 0', query({ query: [1, 0], params: { hnsw_ef: 0 } })],
  ['group_size 0', ['POST', `${points}/query/groups`, { query: [1, 0], using: 'dense', group_by: 'lang', group_size: 0 }]],
  ['scroll limit 0', ['POST', `${points}/scroll`, { limit: 0 }]],
  ['facet limit 0', ['POST', `/collections/${collection}/facet`, { key: 'lang', limit: 0 }]],
  ['vector size 0', create('size0', { vectors: { size: 0, distance: 'Cosine' } })],
  ['shard_number 0', create('shards0', { shard_number: 0 })],
  ['replication_factor 0', create('replicas0', { replication_factor: 0 })],
  ['write_consistency_factor 0', create('consistency0', { write_consistency_factor: 0 })],
  ['shard key shards_number 0', shardKey({ shards_number: 0 })],
  ['shard key replication_factor 0', shardKey({ replication_factor: 0 })],
];

// A negative number where Qdrant's type is unsigned: serde refuses it, 400.
const negative: Case[] = [
  ['a negative sparse index', query({ query: { indices: [-1], values: [1] }, using: 'text' })],
  ['a negative point id', ['PUT', `${points}?wait=true`, { points: [{ id: -1, vector: { dense: [1, 0] } }] }]],
  ['a negative query offset', query({ query: [1, 0], offset: -1 })],
];

// The limits themselves are allowed.
const atTheLimit: Case[] = [
  ['query limit 1', query({ query: [1, 0], limit: 1 })],
  ['rrf k 1', fused({ k: 1 })],
  ['mmr candidates_limit 16384, diversity 1', mmr({ diversity: 1, candidates_limit: 16384 })],
  ['hnsw_ef 1', query({ query: [1, 0], params: { hnsw_ef: 1 } })],
  ['scroll limit 1', ['POST', `${points}/scroll`, { limit: 1 }]],
  ['facet limit 1', ['POST', `/collections/${collection}/facet`, { key: 'lang', limit: 1 }]],
  [
    'vector size 1, one shard, one replica, write consistency 1',
    create('ones', { vectors: { size: 1, distance: 'Cosine' }, shard_number: 1, replication_factor: 1, write_consistency_factor: 1 }),
  ],
];

describe("values outside Qdrant's limits", () => {
  for (const [what, [method, path, body]] of outOfRange) {
    it(`${what}: 422 with a validation error`, async () => {
      const { status, error } = await send(method, path, body);
      expect(status).toBe(422);
      expect(error).toMatch(/^Validation error in JSON body: /);
    });
  }
  for (const [what, [method, path, body]] of negative) {
    it(`${what}: 400 with a format error`, async () => {
      const { status, error } = await send(method, path, body);
      expect(status).toBe(400);
      expect(error).toMatch(/^Format error in JSON body: /);
    });
  }
  for (const [what, [method, path, body]] of atTheLimit) {
    it(`${what}: accepted`, async () => {
      const { status, error } = await send(method, path, body);
      expect({ status, error }).toEqual({ status: 200 });
    });
  }
});
