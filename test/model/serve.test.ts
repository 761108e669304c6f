// The HTTP API and the MCP tools with a real reranker and real sentence embeddings (all-MiniLM-L6-v2 behind
// test/model/server.py): reranked and sentence-selected packs are byte for byte the pipeline's, and every
// reranker fault the server can inject gives a degraded pack, never an error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PackSchema, toCanonicalJson, OpenAICompatibleEmbeddings, HttpReranker, MemoryHybridStore } from '../../src/index.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { FIXED_NOW, PUBLIC_DOCS, pipelineBundle, spawnServe } from '../helpers/serve-fixtures.js';

const base = inject('modelUrl');

let store: MemoryHybridStore;
let work: string;
beforeAll(async () => {
  store = new MemoryHybridStore({ now: FIXED_NOW });
  await store.addDocuments(PUBLIC_DOCS);
  work = await mkdtemp(join(tmpdir(), 'litm-serve-model-'));
  await store.save(join(work, 'store.json'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function mcpClient(server: RunningServer): Promise<Client> {
  const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  return client;
}

const QUERY = 'how long until my refund arrives';

describe('a server with a real reranker', () => {
  it("reranks every bundle: the reranker's scores, the pipeline's bytes, on REST and MCP alike", async () => {
    const rerank = { reranker: new HttpReranker({ url: `${base}/rerank` }), topN: 50 };
    const server = await startServer({ store, rateLimit: false, rerank });
    const client = await mcpClient(server);
    try {
      const rest = await (await fetch(`${server.url}/api/bundle?q=${encodeURIComponent(QUERY)}&budget=300`)).text();
      const pack = PackSchema.parse(JSON.parse(rest));
      expect(pack.degraded).toEqual([]);
      expect(rest).toBe(toCanonicalJson(await pipelineBundle(store, QUERY, { budget: 300, rerank })));
      // The packing score is the model's: the same scores the reranker gives these texts directly.
      const direct = await new HttpReranker({ url: `${base}/rerank` }).rerank(
        QUERY,
        pack.items.map((item) => item.text),
      );
      expect(pack.items.map((item) => item.score)).toEqual(
        direct.sort((a, b) => a.index - b.index).map((r): unknown => expect.closeTo(r.score, 6)),
      );
      const plain = PackSchema.parse(
        await (await fetch(`${server.url}/api/bundle?q=${encodeURIComponent(QUERY)}&budget=300&rerank=false`)).json(),
      );
      expect(plain.items.map((item) => item.score)).not.toEqual(pack.items.map((item) => item.score));
      const mcp = (await client.callTool({ name: 'assemble_bundle', arguments: { query: QUERY, budget: 300 } })) as CallToolResult;
      expect(toCanonicalJson(PackSchema.parse(mcp.structuredContent))).toBe(rest);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it.each([
    ['status:503', 'server_error'],
    ['status:401', 'upstream_unauthorized'],
    ['retry-after:3', 'rate_limited'],
    ['malformed', 'bad_response'],
    ['delay:3000', 'timeout'],
  ])('x-fault %s: a 200 pack without reranking, degraded { rerank, %s }, on REST and MCP', async (fault, code) => {
    const rerank = { reranker: new HttpReranker({ url: `${base}/rerank`, headers: { 'x-fault': fault } }), timeoutMs: 500 };
    const server = await startServer({ store, rateLimit: false, rerank });
    const client = await mcpClient(server);
    try {
      const response = await fetch(`${server.url}/api/bundle?q=${encodeURIComponent(QUERY)}&budget=300`);
      expect(response.status).toBe(200);
      const pack = PackSchema.parse(await response.json());
      expect(pack.degraded).toEqual([{ stage: 'rerank', code }]);
      const unranked = await pipelineBundle(store, QUERY, { budget: 300 });
      expect({ ...pack, degraded: [], packHash: '' }).toEqual({ ...unranked, packHash: '' });
      const mcp = (await client.callTool({ name: 'assemble_bundle', arguments: { query: QUERY, budget: 300 } })) as CallToolResult;
      expect(mcp.isError).not.toBe(true);
      expect(PackSchema.parse(mcp.structuredContent).degraded).toEqual([{ stage: 'rerank', code }]);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('a server with real sentence embeddings', () => {
  it("blends sentence vectors into selection: the pipeline's bytes with the same embeddings", async () => {
    const embeddings = new OpenAICompatibleEmbeddings({ url: `${base}/v1`, model: 'all-MiniLM-L6-v2' });
    const server = await startServer({ store, rateLimit: false, embeddings });
    try {
      const response = await fetch(
        `${server.url}/api/bundle?q=${encodeURIComponent('what does express shipping cost')}&budget=300&compress=sentences`,
      );
      expect(response.status).toBe(200);
      const body = await response.text();
      expect(PackSchema.parse(JSON.parse(body)).degraded).toEqual([]);
      expect(body).toBe(
        toCanonicalJson(await pipelineBundle(store, 'what does express shipping cost', { budget: 300, compress: true, embeddings })),
      );
    } finally {
      await server.close();
    }
  });
});

describe('litm-pack serve --rerank-url', () => {
  it("reranks with the flags' reranker (protocol from the URL, top N), as the pipeline does with the same stage", async () => {
    const serve = await spawnServe([
      '--store',
      work,
      '--port',
      '0',
      '--no-rate-limits',
      '--log',
      '/dev/null',
      '--rerank-url',
      `${base}/v1/rerank`,
      '--rerank-top-n',
      '3',
      '--rerank-timeout',
      '20000',
    ]);
    const { url } = serve;
    try {
      expect(serve.stderr()).toContain(`reranking with ${base}/v1/rerank`);
      const body = await (await fetch(`${url}/api/bundle?q=${encodeURIComponent(QUERY)}&budget=2000`)).text();
      const pack = PackSchema.parse(JSON.parse(body));
      expect(pack.degraded).toEqual([]);
      // Only the top 3 are reranked, and only they are packed.
      expect(pack.items).toHaveLength(3);
      const stage = { reranker: new HttpReranker({ url: `${base}/v1/rerank`, protocol: 'cohere' }), topN: 3 };
      expect(body).toBe(toCanonicalJson(await pipelineBundle(store, QUERY, { budget: 2000, rerank: stage })));
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    } finally {
      serve.kill();
    }
  });
});
