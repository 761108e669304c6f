// The contracts the seeds' agents were written against, and what today's hosts read: maildb's get_rag_context
// (max_tokens 4000, limit 20, hits with message_id for e-mail), RFC-093's corpus_briefing_pack(query, max_tokens),
// the debug rankings over MCP, Wikantik's missing-q message; text content that carries the decision for a host
// that shows the model only text; and MCP 2026-07-28 (server/discover, the per-request envelope, its header
// and error rules) beside 2025-11-25 on the same /mcp and on stdio, from one registry of tools.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toCanonicalJson } from '../src/core/pack.js';
import { PackSchema, type Pack } from '../src/core/schemas.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { TRAILER_PREFIX, packTrailer } from '../src/mcp/text.js';
import { startServer, type RunningServer } from '../src/server/server.js';
import { RagContextSchema, RankingsSchema } from '../src/service/responses.js';
import { ragContextOf } from '../src/service/service.js';
import { getTokenizer } from '../src/tokenize/tiktoken.js';
import { runCli } from './helpers/cli.js';
import { makeEmail } from './helpers/real-files.js';
import { KEYS, bearer, fixtureKeys, fixtureStore, pipelineBundle } from './helpers/serve-fixtures.js';

const ROOT = resolve(import.meta.dirname, '..');
const BUILT_CLI = join(ROOT, 'dist/cli/main.js');
const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

let store: MemoryHybridStore;
let server: RunningServer;
let lines: string[];

beforeAll(async () => {
  store = await fixtureStore({ restricted: true });
  lines = [];
  server = await startServer({ store, apiKeys: fixtureKeys(), rateLimit: false, log: { write: (line: string) => lines.push(line) } });
});
afterAll(async () => {
  await server?.close();
});

async function connect(url: string, key?: string): Promise<{ client: Client; tools: Tool[] }> {
  const client = new Client({ name: 'contracts', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), key === undefined ? {} : { requestInit: { headers: bearer(key) } }),
  );
  return { client, tools: (await client.listTools()).tools };
}

/** A 2026-07-28 request: the envelope in `_meta`, the routing headers the revision requires. */
async function modern(
  method: string,
  params: Record<string, unknown> = {},
  options: { key?: string; headers?: Record<string, string>; url?: string } = {},
) {
  const name = method === 'tools/call' ? (params.name as string) : method === 'resources/read' ? (params.uri as string) : undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
    ...(options.key === undefined ? {} : bearer(options.key)),
    ...options.headers,
  };
  const response = await fetch(`${options.url ?? server.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: ENVELOPE } }),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      result?: Record<string, unknown>;
      error?: { code: number; message: string; data?: Record<string, unknown> };
    },
  };
}

const textOf = (result: CallToolResult) =>
  result.content
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n');

describe("the seeds' tool contracts", () => {
  it("get_rag_context: maildb's defaults (max_tokens 4000, limit 20) and exactly its four fields", async () => {
    const { client, tools } = await connect(server.url, KEYS.alice);
    try {
      const properties = tools.find((t) => t.name === 'get_rag_context')?.inputSchema.properties as Record<string, { default?: unknown }>;
      expect(properties.max_tokens?.default).toBe(4000);
      expect(properties.limit?.default).toBe(20);
      lines.length = 0;
      const result = (await client.callTool({ name: 'get_rag_context', arguments: { query: 'refunds shipping' } })) as CallToolResult;
      const rag = RagContextSchema.parse(result.structuredContent);
      expect(rag).toEqual(ragContextOf(await pipelineBundle(store, 'refunds shipping', { budget: 4000, limit: 20, principals: ['hr'] })));
      // The call's log line is written once its answer is out.
      for (let i = 0; i < 200 && !lines.some((line) => line.includes('get_rag_context')); i += 1)
        await new Promise((done) => setTimeout(done, 25));
      expect(
        lines.map((line) => JSON.parse(line) as { tool?: string; budget?: number }).find((line) => line.tool === 'get_rag_context')?.budget,
      ).toBe(4000);
    } finally {
      await client.close();
    }
  });

  it("get_rag_context names the Message-ID of an e-mail's hits (a message composed by nodemailer, ingested by the CLI)", async () => {
    const work = await mkdtemp(join(tmpdir(), 'litm-rag-mail-'));
    try {
      await mkdir(join(work, 'mail'));
      await writeFile(
        join(work, 'mail', 'renewal.eml'),
        await makeEmail({
          from: 'Alice <alice@acme.com>',
          to: 'you@example.com',
          subject: 'Contract renewal',
          date: new Date('2024-03-15T09:30:00Z'),
          messageId: '<renewal@acme.com>',
          text: 'The renewal of the hosting contract runs for 24 months.',
        }),
      );
      await writeFile(join(work, 'mail', 'notes.md'), '# Notes\n\nThe hosting contract renewal is discussed on Monday.');
      const ingested = await runCli(['ingest', join(work, 'mail'), '--store', join(work, 'store'), '--quiet']);
      expect(ingested.code, ingested.stderr).toBe(0);
      const mail = await MemoryHybridStore.load(join(work, 'store', 'store.json'));
      const mailServer = await startServer({ store: mail, rateLimit: false });
      const { client } = await connect(mailServer.url);
      try {
        const rag = RagContextSchema.parse(
          ((await client.callTool({ name: 'get_rag_context', arguments: { query: 'hosting contract renewal' } })) as CallToolResult)
            .structuredContent,
        );
        const email = rag.hits.find((hit) => hit.source_id.endsWith('renewal.eml') || hit.source_id.includes('renewal@acme.com'));
        expect(email?.message_id).toBe('renewal@acme.com');
        expect(rag.hits.find((hit) => hit.source_id.endsWith('notes.md'))?.message_id).toBeUndefined();
      } finally {
        await client.close();
        await mailServer.close();
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('corpus_briefing_pack(query, max_tokens) is the briefing whose prompt is the query; rankings are served over MCP', async () => {
    const { client } = await connect(server.url, KEYS.alice);
    try {
      const pack = (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args }).then((r) => PackSchema.parse((r as CallToolResult).structuredContent));
      const corpus = await pack('corpus_briefing_pack', { query: 'refunds and shipping', max_tokens: 700 });
      expect(toCanonicalJson(corpus)).toBe(toCanonicalJson(await pack('get_briefing', { prompt: 'refunds and shipping', budget: 700 })));
      expect(corpus.budget.maxTokens).toBe(700);
      const rankings = RankingsSchema.parse(
        ((await client.callTool({ name: 'get_rankings', arguments: { query: 'refunds', mode: 'lexical', k: 5 } })) as CallToolResult)
          .structuredContent,
      );
      const rest = (await (
        await fetch(`${server.url}/api/bundle?q=refunds&mode=lexical&debug=rankings&k=5`, { headers: bearer(KEYS.alice) })
      ).json()) as { rankings: unknown };
      expect(rankings).toEqual(rest.rankings);
    } finally {
      await client.close();
    }
  });

  it('a bundle without q says "q (query) parameter required", with its code and issue', async () => {
    const answer = await fetch(`${server.url}/api/bundle?budget=100`);
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({
      error: 'q (query) parameter required',
      code: 'invalid_input',
      issues: [{ path: ['q'], message: 'q (query) parameter required' }],
    });
  });
});

describe('a host that shows the model only text', () => {
  it('finds the confidence, the budget and every citation after the context, for every tool that packs', async () => {
    const { client } = await connect(server.url, KEYS.alice);
    try {
      const calls: [string, Record<string, unknown>][] = [
        ['assemble_bundle', { query: 'refunds shipping', budget: 400 }],
        ['get_briefing', { prompt: 'refunds shipping', budget: 600 }],
        ['corpus_briefing_pack', { query: 'refunds shipping', max_tokens: 600 }],
        ['get_rag_context', { query: 'refunds shipping', max_tokens: 400 }],
        [
          'pack_candidates',
          { query: 'refunds', candidates: [{ id: 'a', sourceId: 'a.md', text: 'Refunds take 14 days.', score: 1, similarity: 0.7 }] },
        ],
      ];
      for (const [name, args] of calls) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        // What the host shows: the text blocks, nothing else.
        const text = textOf(result);
        const pack = name === 'get_rag_context' ? null : PackSchema.parse(result.structuredContent);
        const summary = text.split('\n').find((line) => line.startsWith(TRAILER_PREFIX));
        expect(summary, name).toMatch(
          /^litm-pack: confidence (strong|partial|weak|unknown) · top similarity (unknown|-?\d\.\d\d) · \d+ items? · \d+\/\d+ tokens · truncated (yes|no)$/u,
        );
        if (pack !== null) {
          expect(summary).toContain(`confidence ${pack.coverage.confidence}`);
          expect(summary).toContain(`${pack.budget.usedTokens}/${pack.budget.maxTokens} tokens`);
          for (const citation of pack.citations)
            expect(text, name).toMatch(
              new RegExp(`^\\[${citation.ref}\\] ${citation.sourceId.replace(/[.*+?^${}()|[\]\\/]/gu, '\\$&')}\\b`, 'mu'),
            );
          // The context comes first, whole.
          expect(text.startsWith(pack.context)).toBe(true);
        } else {
          const rag = RagContextSchema.parse(result.structuredContent);
          expect(text.startsWith(rag.context)).toBe(true);
          for (const hit of rag.hits) expect(text).toContain(`[${hit.ref}] ${hit.source_id}`);
        }
        // The structured content stays as it is.
        if (pack !== null) expect(pack.context).not.toContain(TRAILER_PREFIX);
      }
    } finally {
      await client.close();
    }
  });

  it('the trailer costs its summary line (at most 30 tokens, o200k_base) and one line per citation of its id, locator and version plus at most 6, as docs/mcp.md states', async () => {
    const tokenizer = getTokenizer('o200k_base');
    for (const budget of [100, 400, 2000]) {
      const pack = await pipelineBundle(store, 'refunds shipping salary roadmap', { budget, principals: ['hr', 'eng'] });
      const [rule, summary, ...citations] = packTrailer(pack).split('\n');
      expect(tokenizer.count(`\n\n${rule}\n${summary}`)).toBeLessThanOrEqual(30);
      expect(citations).toHaveLength(pack.citations.length);
      for (const [index, line] of citations.entries()) {
        const citation = pack.citations[index]!;
        const own = tokenizer.count(citation.sourceId) + (citation.version === undefined ? 0 : tokenizer.count(citation.version));
        expect(tokenizer.count(`\n${line}`) - own, line).toBeLessThanOrEqual(6);
      }
    }
  });

  it('answers the structured content as JSON text where the host asks for it (textContent json)', async () => {
    const json = await startServer({ store, rateLimit: false, textContent: 'json' });
    const { client } = await connect(json.url);
    try {
      const result = (await client.callTool({ name: 'assemble_bundle', arguments: { query: 'refunds' } })) as CallToolResult;
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    } finally {
      await client.close();
      await json.close();
    }
  });
});

describe('MCP 2026-07-28 beside 2025-11-25 on /mcp', () => {
  it('server/discover names the revision, the capabilities and the instructions; tools/list declaring 2026-07-28 answers the same tools', async () => {
    const discover = await modern('server/discover');
    expect(discover.status).toBe(200);
    expect(discover.body.result).toMatchObject({
      supportedVersions: expect.arrayContaining([MODERN]),
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: expect.stringContaining('assemble_bundle'),
    });
    const list = await modern('tools/list', {}, { key: KEYS.alice });
    expect(list.status).toBe(200);
    const { client, tools } = await connect(server.url, KEYS.alice);
    await client.close();
    expect(list.body.result?.tools).toEqual(JSON.parse(JSON.stringify(tools)));
    // The revision's cacheable result fields.
    expect(list.body.result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: 'public' });
  });

  it("a tool call in the new revision gives the same pack, bound to the caller's key; resources read the same", async () => {
    const called = await modern(
      'tools/call',
      { name: 'assemble_bundle', arguments: { query: 'refunds schedule', mode: 'lexical', budget: 300 } },
      { key: KEYS.alice },
    );
    expect(called.status).toBe(200);
    const pack: Pack = PackSchema.parse((called.body.result as { structuredContent: unknown }).structuredContent);
    const rest = await (
      await fetch(`${server.url}/api/bundle?q=refunds%20schedule&mode=lexical&budget=300`, { headers: bearer(KEYS.alice) })
    ).text();
    expect(toCanonicalJson(pack)).toBe(rest);
    expect(JSON.stringify(pack)).toContain('hr/salaries.md');
    const anonymous = await modern('tools/call', {
      name: 'assemble_bundle',
      arguments: { query: 'refunds schedule', mode: 'lexical', budget: 300 },
    });
    expect(JSON.stringify(anonymous.body)).not.toContain('hr/salaries.md');
    const read = await modern('resources/read', { uri: 'litm://sources/hr%2Fsalaries.md' }, { key: KEYS.alice });
    expect(read.body.result).toMatchObject({ contents: [{ uri: 'litm://sources/hr%2Fsalaries.md', mimeType: 'text/plain' }] });
    const refused = await modern('resources/read', { uri: 'litm://sources/hr%2Fsalaries.md' });
    expect(refused.body.error).toMatchObject({ code: -32602, data: { uri: 'litm://sources/hr%2Fsalaries.md', code: 'not_found' } });
  });

  it("keeps the revision's header and error rules: a missing or contradicting routing header, an unknown revision", async () => {
    const missing = await modern('tools/list', {}, { headers: { 'mcp-method': '' } });
    expect(missing.status).toBe(400);
    const contradicting = await modern(
      'tools/call',
      { name: 'assemble_bundle', arguments: { query: 'x' } },
      { headers: { 'mcp-name': 'get_briefing' } },
    );
    expect(contradicting.status).toBe(400);
    expect(contradicting.body.error?.message).toMatch(/header/iu);
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2099-01-01',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      }),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain(MODERN);
  });
});

describe('MCP 2026-07-28 over stdio (the built CLI)', () => {
  it('answers server/discover and a tool call carrying the envelope, without initialize', async () => {
    if (!existsSync(BUILT_CLI)) throw new Error('dist/cli/main.js is missing: run `npm run build` first (npm test does).');
    const work = await mkdtemp(join(tmpdir(), 'litm-stdio-modern-'));
    await store.save(join(work, 'store.json'));
    const child = spawn(process.execPath, [BUILT_CLI, 'mcp', '--store', work, '--principals', 'hr'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const answers = createInterface({ input: child.stdout });
    const pending = new Map<number, (message: Record<string, unknown>) => void>();
    answers.on('line', (line) => {
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') pending.get(message.id)?.(message);
    });
    const ask = (id: number, method: string, params: Record<string, unknown> = {}) =>
      new Promise<Record<string, unknown>>((done) => {
        pending.set(id, done);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } })}\n`);
      });
    try {
      const discover = await ask(1, 'server/discover');
      expect(discover.result).toMatchObject({
        supportedVersions: expect.arrayContaining([MODERN]),
        instructions: expect.stringContaining('assemble_bundle'),
      });
      const called = (await ask(2, 'tools/call', {
        name: 'assemble_bundle',
        arguments: { query: 'refunds schedule', mode: 'lexical', budget: 300 },
      })) as { result: { structuredContent: unknown; content: { type: string; text?: string }[] } };
      const pack = PackSchema.parse(called.result.structuredContent);
      expect(toCanonicalJson(pack)).toBe(toCanonicalJson(await pipelineBundleLexical(store, 'refunds schedule', ['hr'])));
      expect(called.result.content[0]?.text).toContain(`${TRAILER_PREFIX} confidence`);
      const tools = (await ask(3, 'tools/list')) as { result: { tools: { name: string }[] } };
      expect(tools.result.tools.map((tool) => tool.name)).toContain('list_stale_citations');
      child.stdin.end();
      await new Promise((done) => child.once('exit', done));
      // `litm-pack mcp` keeps the ledger beside the store by default: the pack it served is in it.
      const { readFile } = await import('node:fs/promises');
      const ledger = (await readFile(join(work, 'citations.ledger.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { pack: string; caller: string; principals: string[] });
      expect(ledger).toEqual([expect.objectContaining({ pack: pack.packHash, caller: 'stdio', principals: ['hr'] })]);
    } finally {
      if (child.exitCode === null) {
        child.stdin.end();
        await new Promise((done) => child.once('exit', done));
      }
      await rm(work, { recursive: true, force: true });
    }
  });
});

/** The pack REST and the pipeline give for a lexical bundle of 300 tokens. */
async function pipelineBundleLexical(source: MemoryHybridStore, query: string, principals: string[]): Promise<Pack> {
  const { assembleBundle } = await import('../src/pipeline/bundle.js');
  return (await assembleBundle({ store: source, query, mode: 'lexical', maxTokens: 300, principals })).pack;
}
