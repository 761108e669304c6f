// format "anthropic" on the HTTP API and the MCP packing tools: the pack as it is (its context in markdown) and
// beside it the items as Anthropic search_result blocks, the same blocks toAnthropicSearchResults gives for that
// pack, one per item in context order.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackSchema, type Pack } from '../src/core/schemas.js';
import { toAnthropicSearchResults } from '../src/llm/anthropic.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { fixtureStore } from './helpers/serve-fixtures.js';

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ store: await fixtureStore({ restricted: false }), rateLimit: false });
});
afterAll(async () => {
  await server?.close();
});

const get = async (path: string) => {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('HTTP format=anthropic', () => {
  it('answers { pack, search_results }: the pack in markdown, one block per item in context order', async () => {
    const { status, body } = await get('/api/bundle?q=refunds%20shipping&budget=400&format=anthropic');
    expect(status).toBe(200);
    const pack = PackSchema.parse(body.pack);
    expect(pack.format).toBe('markdown');
    expect(pack.items.length).toBeGreaterThan(1);
    expect(body.search_results).toEqual(toAnthropicSearchResults(pack));
    const results = body.search_results as { content: { text: string }[] }[];
    results.forEach((result, i) => expect(result.content.map((block) => block.text).join('')).toBe(pack.items[i]?.text));
  });

  it('takes granularity, and refuses it without format anthropic', async () => {
    const { body } = await get('/api/bundle?q=refunds&budget=400&format=anthropic&granularity=item');
    expect((body.search_results as { content: unknown[] }[]).every((result) => result.content.length === 1)).toBe(true);
    const refused = await get('/api/bundle?q=refunds&granularity=item');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'invalid_input' });
    expect(String(refused.body.error)).toMatch(/granularity goes with format anthropic/u);
  });

  it('works for a briefing', async () => {
    const { status, body } = await get('/api/briefing?prompt=refunds&budget=600&format=anthropic');
    expect(status).toBe(200);
    expect(body.search_results).toEqual(toAnthropicSearchResults(PackSchema.parse(body.pack)));
  });
});

describe('MCP format "anthropic"', () => {
  it('assemble_bundle answers the pack with search_results beside it; without it, none', async () => {
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      const call = async (args: Record<string, unknown>) =>
        (await client.callTool({
          name: 'assemble_bundle',
          arguments: { query: 'refunds shipping', budget: 400, ...args },
        })) as CallToolResult;
      const withBlocks = (await call({ format: 'anthropic', granularity: 'sentence' })).structuredContent as Pack & {
        search_results: unknown;
      };
      const { search_results: results, ...pack } = withBlocks;
      expect(results).toEqual(toAnthropicSearchResults(PackSchema.parse(pack), { granularity: 'sentence' }));
      expect(pack.format).toBe('markdown');
      const plain = (await call({})).structuredContent as Record<string, unknown>;
      expect(plain.search_results).toBeUndefined();
      expect(plain.packHash).toBe(pack.packHash);
      const refused = await call({ granularity: 'item' });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
