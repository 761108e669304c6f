// The MCP tools through the SDK's own Client: over stdio, spawning the built CLI (`litm-pack mcp`), and over
// Streamable HTTP against a real server on a loopback port. Every tool's answer validates against the output
// schema it declares, and the same request gives the same pack bytes on REST, MCP, the CLI and the library.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, PackSchema, packBundle, toCanonicalJson, type Pack, assembleBriefing, HttpReranker } from '../src/index.js';
import { DEGRADED_META_KEY, packText } from '../src/mcp/index.js';
import { MAX_BUDGET_TOKENS } from '../src/core/schemas.js';
import { QdrantHybridStore } from '../src/qdrant/index.js';
import { RagContextSchema, ragContextOf, startServer, type RunningServer } from '../src/server/index.js';
import { runCli } from './helpers/cli.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { closedPort, heldReranker } from './helpers/loopback.js';
import {
  ENG_MARKER,
  FIXED_NOW,
  HR_MARKER,
  KEYS,
  PUBLIC_DOCS,
  RESTRICTED_DOCS,
  fixtureKeys,
  fixtureStore,
  pipelineBundle,
} from './helpers/serve-fixtures.js';

const ROOT = resolve(import.meta.dirname, '..');
const BUILT_CLI = join(ROOT, 'dist/cli/main.js');

/** Newest modification time under a directory (the sources the build is made from). */
async function newestUnder(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

let work: string;
let storeDir: string;
let store: MemoryHybridStore;

beforeAll(async () => {
  if (!existsSync(BUILT_CLI)) {
    throw new Error('dist/cli/main.js is missing: the stdio tests spawn the built CLI. Run `npm run build` first (npm test does).');
  }
  if (statSync(BUILT_CLI).mtimeMs < (await newestUnder(join(ROOT, 'src')))) {
    throw new Error('dist/ is older than src/: run `npm run build` so the stdio tests spawn the code under test.');
  }
  work = await mkdtemp(join(tmpdir(), 'litm-mcp-'));
  storeDir = join(work, 'store');
  const writer = new MemoryHybridStore({ now: FIXED_NOW });
  await writer.addDocuments([...PUBLIC_DOCS, ...RESTRICTED_DOCS]);
  const { mkdir } = await import('node:fs/promises');
  await mkdir(storeDir);
  await writer.save(join(storeDir, 'store.json'));
  store = await MemoryHybridStore.load(join(storeDir, 'store.json'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const TOOLS = [
  'assemble_bundle',
  'get_briefing',
  'corpus_briefing_pack',
  'get_rag_context',
  'get_rankings',
  'pack_candidates',
  'verify_citations',
];
/** `litm-pack mcp` keeps a citation ledger beside the store by default, and then offers the stale feed. */
const STDIO_TOOLS = [...TOOLS, 'list_stale_citations'];

/** Calls a tool and checks its structured content against the output schema the server declared. */
async function call(client: Client, tools: Tool[], name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError !== true) {
    const tool = tools.find((t) => t.name === name);
    expect(tool?.outputSchema).toBeDefined();
    // The SDK advertises draft-07 JSON Schema.
    const validate = new Ajv({ strict: false }).compile(tool?.outputSchema as object);
    expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    expect(result.content[0]?.type).toBe('text');
  }
  return result;
}

const errorBody = (result: CallToolResult) => {
  expect(result.isError).toBe(true);
  const block = result.content[0];
  return JSON.parse(block?.type === 'text' ? block.text : '{}') as { error: string; code: string; issues: unknown[] };
};

const packOf = (result: CallToolResult): Pack => PackSchema.parse(result.structuredContent);

describe('litm-pack mcp over stdio (the SDK client spawning the built CLI)', () => {
  let client: Client;
  let tools: Tool[];

  beforeAll(async () => {
    client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BUILT_CLI, 'mcp', '--store', storeDir, '--principals', 'hr', '--log', join(work, 'tools.log')],
        stderr: 'pipe',
      }),
    );
    tools = (await client.listTools()).tools;
  });
  afterAll(async () => {
    await client.close();
  });

  it('lists the tools, each with an input and an output schema, a title, the four annotations and a description that routes', () => {
    expect(tools.map((t) => t.name).sort()).toEqual([...STDIO_TOOLS].sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description).toMatch(/[Dd]o not use|use assemble_bundle|use verify_citations/);
      expect(tool.title).toMatch(/\w/);
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    }
    expect(client.getInstructions()).toMatch(
      /assemble_bundle.*coverage\.confidence.*get_briefing.*get_rag_context.*verify_citations.*list_stale_citations/su,
    );
    const bundle = tools.find((t) => t.name === 'assemble_bundle');
    expect(bundle?.description).toMatch(/"strong" → answer from the context/);
    expect(bundle?.description).toMatch(/"unknown" → there is no dense similarity/);
    expect((bundle?.inputSchema.properties as Record<string, { maximum?: number }>).budget?.maximum).toBe(MAX_BUDGET_TOKENS);
    const briefing = tools.find((t) => t.name === 'get_briefing');
    expect(Object.keys(briefing?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['prompt', 'pins', 'clusters', 'scope_mode', 'budget']),
    );
    // The refine stages' parameters on every tool that retrieves, and pack.degraded in the pack tools' answers.
    for (const name of ['assemble_bundle', 'get_briefing', 'get_rag_context']) {
      const properties = tools.find((t) => t.name === name)?.inputSchema.properties as Record<
        string,
        { enum?: string[]; minimum?: number; maximum?: number; type?: string }
      >;
      expect(properties.compress).toMatchObject({ enum: ['none', 'sentences'] });
      expect(properties.diversity).toMatchObject({ minimum: 0, maximum: 1 });
      expect(properties.rerank).toMatchObject({ type: 'boolean' });
    }
    // Each output schema is the answer or the one error body every refusal carries.
    type Alternative = { required?: string[]; properties?: Record<string, unknown> };
    const alternatives = (name: string) =>
      (tools.find((t) => t.name === name)?.outputSchema as { anyOf?: Alternative[] } | undefined)?.anyOf ?? [];
    for (const name of STDIO_TOOLS) {
      expect(alternatives(name)).toHaveLength(2);
      expect(Object.keys(alternatives(name)[1]?.properties ?? {}).sort()).toEqual(['code', 'error', 'issues']);
    }
    for (const name of ['assemble_bundle', 'get_briefing', 'pack_candidates']) {
      expect(alternatives(name)[0]?.required).toContain('degraded');
    }
    expect(Object.keys(alternatives('get_rag_context')[0]?.properties ?? {}).sort()).toEqual([
      'context',
      'hits',
      'token_estimate',
      'truncated',
    ]);
  });

  it('answers every tool with structured content that validates against its output schema', async () => {
    const bundle = await call(client, tools, 'assemble_bundle', { query: 'how are refunds paid', budget: 300 });
    // The text a model reads: the context, then the decision trailer.
    expect(bundle.content[0]?.type === 'text' ? bundle.content[0].text : null).toBe(packText(packOf(bundle)));
    expect(packText(packOf(bundle)).startsWith(`${packOf(bundle).context}\n\n---\nlitm-pack: confidence `)).toBe(true);
    const briefing = await call(client, tools, 'get_briefing', { prompt: 'refunds and shipping', pins: ['handbook/shipping.md'] });
    expect(packOf(briefing).items[0]?.sourceId).toBe('handbook/shipping.md');
    const rag = await call(client, tools, 'get_rag_context', { query: 'refunds', max_tokens: 120 });
    expect(Object.keys(rag.structuredContent ?? {}).sort()).toEqual(['context', 'hits', 'token_estimate', 'truncated']);
    const parsed = RagContextSchema.parse(rag.structuredContent);
    expect(parsed.token_estimate).toBeLessThanOrEqual(120);
    expect(parsed.hits.map((h) => h.ref)).toEqual(parsed.hits.map((_, i) => i + 1));
    const candidates = [{ id: 'a', text: 'Refunds take 14 days.', score: 1 }];
    const packed = await call(client, tools, 'pack_candidates', { query: 'refunds', candidates, budget: 50 });
    expect(toCanonicalJson(packOf(packed))).toBe(toCanonicalJson(packBundle({ query: 'refunds', candidates, maxTokens: 50 })));
    expect(packed.content[0]?.type === 'text' ? packed.content[0].text : '').toBe(
      packText(packBundle({ query: 'refunds', candidates, maxTokens: 50 })),
    );
    const pinned = await call(client, tools, 'get_briefing', { pins: ['handbook/shipping.md'] });
    expect(packOf(pinned).items.map((item) => item.sourceId)).toEqual(['handbook/shipping.md']);
    const verified = await call(client, tools, 'verify_citations', { pack: packOf(bundle) });
    const checks = (verified.structuredContent as { checks: { status: string }[] }).checks;
    expect(checks.length).toBe(packOf(bundle).citations.length);
    expect(checks.every((check) => check.status === 'current')).toBe(true);
  });

  it('reads as the principals it was started with', async () => {
    const result = await call(client, tools, 'assemble_bundle', { query: `${HR_MARKER} schedule`, mode: 'lexical' });
    expect(JSON.stringify(result.structuredContent)).toContain('hr/salaries.md');
    expect(JSON.stringify(result.structuredContent)).not.toContain(ENG_MARKER);
  });

  it('answers typed tool errors: the service body for what it refuses, the SDK message naming the argument for a bad shape', async () => {
    expect(errorBody((await client.callTool({ name: 'get_briefing', arguments: {} })) as CallToolResult)).toMatchObject({
      code: 'invalid_input',
      error: 'A briefing needs at least one of prompt, pins or clusters',
    });
    expect(
      errorBody((await client.callTool({ name: 'get_briefing', arguments: { prompt: 'x', rerank: true } })) as CallToolResult),
    ).toMatchObject({
      code: 'unsupported',
      error: expect.stringMatching(/^rerank: no reranker is configured on this server/),
    });
    expect(
      errorBody(
        (await client.callTool({
          name: 'get_briefing',
          arguments: { pins: ['handbook/refunds.md'], compress: 'sentences' },
        })) as CallToolResult,
      ),
    ).toMatchObject({
      code: 'invalid_input',
      error: expect.stringMatching(/^compress works on the prompt's results/),
    });
    expect(errorBody((await client.callTool({ name: 'verify_citations', arguments: {} })) as CallToolResult)).toMatchObject({
      code: 'invalid_input',
    });
    expect(
      errorBody((await client.callTool({ name: 'assemble_bundle', arguments: { query: 'x', mode: 'dense' } })) as CallToolResult),
    ).toMatchObject({ code: 'unsupported_mode' });
    const shape = (await client.callTool({ name: 'assemble_bundle', arguments: { query: 'x', budget: 2.5 } })) as CallToolResult;
    expect(shape.isError).toBe(true);
    expect(shape.content[0]?.type === 'text' ? shape.content[0].text : '').toMatch(/budget must be a whole number/);
    const over = (await client.callTool({
      name: 'get_rag_context',
      arguments: { query: 'x', max_tokens: MAX_BUDGET_TOKENS + 1 },
    })) as CallToolResult;
    expect(over.content[0]?.type === 'text' ? over.content[0].text : '').toMatch(
      new RegExp(`max_tokens must be at most ${MAX_BUDGET_TOKENS}`),
    );
  });

  it('logs one JSON line per tool call to --log (stdout carries only the protocol), without the query text', async () => {
    await call(client, tools, 'assemble_bundle', { query: 'logged question about refunds', budget: 100 });
    let lines: Record<string, unknown>[] = [];
    for (let attempt = 0; attempt < 50; attempt += 1) {
      lines = (await readFile(join(work, 'tools.log'), 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      if (lines.some((line) => line.budget === 100)) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    // The same pack fields as the HTTP request log line: kind, mode and whether the dense arm answered included.
    expect(lines.find((line) => line.budget === 100)).toMatchObject({
      tool: 'assemble_bundle',
      kind: 'bundle',
      mode: 'hybrid',
      budgetBound: expect.any(Boolean),
      items: expect.any(Number),
      confidence: 'unknown',
      denseAvailable: false,
    });
    expect(JSON.stringify(lines)).not.toContain('logged question');
  });

  it('gives the same pack bytes as REST, the CLI and the library for the same request', async () => {
    const server = await startServer({ store, apiKeys: fixtureKeys(), rateLimit: false });
    try {
      const mcp = toCanonicalJson(packOf(await call(client, tools, 'assemble_bundle', { query: 'refunds shipping', budget: 200 })));
      const rest = await (
        await fetch(`${server.url}/api/bundle?q=refunds%20shipping&budget=200`, { headers: { authorization: `Bearer ${KEYS.alice}` } })
      ).text();
      const cli = await runCli(['bundle', 'refunds shipping', '--store', storeDir, '--budget', '200', '--principals', 'hr', '--json']);
      expect(cli.stderr).toBe('');
      const library = toCanonicalJson(await pipelineBundle(store, 'refunds shipping', { budget: 200, principals: ['hr'] }));
      expect(mcp).toBe(library);
      expect(rest).toBe(library);
      expect(cli.stdout.trim()).toBe(library);
    } finally {
      await server.close();
    }
  });

  it('selects sentences (BM25 alone: this server has no embeddings) with the same bytes as REST, the CLI and the pipeline', async () => {
    const query = 'how much does express shipping cost';
    const server = await startServer({ store, apiKeys: fixtureKeys(), rateLimit: false });
    try {
      const mcp = toCanonicalJson(packOf(await call(client, tools, 'assemble_bundle', { query, budget: 300, compress: 'sentences' })));
      const rest = await (
        await fetch(`${server.url}/api/bundle?q=${encodeURIComponent(query)}&budget=300&compress=sentences`, {
          headers: { authorization: `Bearer ${KEYS.alice}` },
        })
      ).text();
      const cli = await runCli([
        'bundle',
        query,
        '--store',
        storeDir,
        '--budget',
        '300',
        '--principals',
        'hr',
        '--compress',
        'sentences',
        '--json',
      ]);
      const library = toCanonicalJson(await pipelineBundle(store, query, { budget: 300, principals: ['hr'], compress: true }));
      expect(mcp).toBe(library);
      expect(rest).toBe(library);
      expect(cli.stdout.trim()).toBe(library);
      expect(
        PackSchema.parse(JSON.parse(library)).citations.some((c) => c.keptTextSha256 !== undefined && c.keptTextSha256 !== c.textSha256),
      ).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("refuses diversity on a store without embeddings: the library's error, in the server's terms", async () => {
    const result = (await client.callTool({ name: 'assemble_bundle', arguments: { query: 'refunds', diversity: 0.5 } })) as CallToolResult;
    const library = await store.search({ text: 'refunds', mode: 'hybrid', limit: 50, diversity: 0.5 }).then(
      () => null,
      (error: Error & { code: string }) => ({ code: error.code, message: error.message }),
    );
    expect(library?.code).toBe('unsupported');
    // The library's message names its own option ({ embeddings }); an agent is told what the server lacks.
    expect(library?.message).toMatch(/construct MemoryHybridStore with \{ embeddings \}/u);
    expect(errorBody(result)).toMatchObject({
      code: 'unsupported',
      error: expect.stringMatching(/^diversity \(MMR\) needs dense vectors: this server has no embeddings/u),
    });
  });
});

describe("the README's MCP host configuration", () => {
  it('starts a server an MCP client can use, reading as the principals it names', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## MCP server (agent hosts)'));
    const config = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)?.[1] ?? '{}') as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    const entry = config.mcpServers['litm-pack'];
    expect(entry?.command).toBe('npx');
    expect(entry?.args.slice(0, 2)).toEqual(['litm-pack', 'mcp']);
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(resolve(ROOT, manifest.bin['litm-pack'] as string)).toBe(BUILT_CLI);
    // `npx litm-pack` runs the package's bin, dist/cli/main.js; the store path is the user's.
    const args = (entry?.args ?? []).slice(1).map((arg) => (arg === '/path/to/.litm-store' ? storeDir : arg));
    expect(args).toContain(storeDir);
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BUILT_CLI, ...args], stderr: 'pipe' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...STDIO_TOOLS].sort());
      const principals = args[args.indexOf('--principals') + 1];
      const result = await call(client, tools, 'assemble_bundle', { query: `${ENG_MARKER} shipping`, mode: 'lexical' });
      const sources = packOf(result).items.map((item) => item.sourceId);
      expect(sources.includes('eng/roadmap.md')).toBe(principals === 'eng');
      expect(sources).not.toContain('hr/salaries.md');
    } finally {
      await client.close();
    }
  });
});

describe('litm-pack mcp --rerank-url', () => {
  it('degrades every pack visibly when the reranker refuses connections, instead of failing it, and logs the degradation', async () => {
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    const log = join(work, 'rerank.log');
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          BUILT_CLI,
          'mcp',
          '--store',
          storeDir,
          '--rerank-url',
          `http://127.0.0.1:${await closedPort()}/rerank`,
          '--rerank-timeout',
          '5000',
          '--log',
          log,
        ],
        stderr: 'pipe',
      }),
    );
    try {
      const { tools } = await client.listTools();
      const bundle = packOf(await call(client, tools, 'assemble_bundle', { query: 'refunds', budget: 300 }));
      expect(bundle.degraded).toEqual([{ stage: 'rerank', code: 'connection_failed' }]);
      expect(bundle.items.length).toBeGreaterThan(0);
      const plain = await pipelineBundle(store, 'refunds', { budget: 300, principals: [] });
      expect({ ...bundle, degraded: [], packHash: '' }).toEqual({ ...plain, packHash: '' });
      const rag = await call(client, tools, 'get_rag_context', { query: 'refunds', max_tokens: 200 });
      expect(rag._meta?.[DEGRADED_META_KEY]).toEqual([{ stage: 'rerank', code: 'connection_failed' }]);
      const off = packOf(await call(client, tools, 'assemble_bundle', { query: 'refunds', budget: 300, rerank: false }));
      expect(toCanonicalJson(off)).toBe(toCanonicalJson(plain));
      let lines: Record<string, unknown>[] = [];
      for (let attempt = 0; attempt < 50 && lines.length < 3; attempt += 1) {
        lines = (await readFile(log, 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        if (lines.length < 3) await new Promise((done) => setTimeout(done, 100));
      }
      expect(lines.map((line) => line.degraded)).toEqual([
        [{ stage: 'rerank', code: 'connection_failed' }],
        [{ stage: 'rerank', code: 'connection_failed' }],
        undefined,
      ]);
    } finally {
      await client.close();
    }
  });

  it('on SIGTERM answers the tool call in flight (waiting on its reranker) before it exits, and logs it whole', async () => {
    const reranker = await heldReranker();
    const { reached, release } = reranker;
    const log = join(work, 'sigterm.log');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BUILT_CLI, 'mcp', '--store', storeDir, '--rerank-url', `${reranker.url}/rerank`, '--rerank-timeout', '60000', '--log', log],
      stderr: 'pipe',
    });
    let transportClosed = false;
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      client.onclose = () => (transportClosed = true);
      const { tools } = await client.listTools();
      const inFlight = call(client, tools, 'assemble_bundle', { query: 'refunds', budget: 300 });
      await reached;
      process.kill(transport.pid as number, 'SIGTERM');
      await new Promise((done) => setTimeout(done, 300));
      expect(transportClosed).toBe(false);
      release();
      const pack = packOf(await inFlight);
      expect(pack.degraded).toEqual([]);
      expect(pack.items.length).toBeGreaterThan(0);
      expect(pack.items.every((item) => Number.isInteger(item.score) && item.score > 0 && item.score <= 10)).toBe(true);
      for (let i = 0; i < 100 && !transportClosed; i += 1) await new Promise((done) => setTimeout(done, 50));
      expect(transportClosed).toBe(true);
      const lines = (await readFile(log, 'utf8')).split('\n');
      expect(lines.pop()).toBe('');
      expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
        expect.objectContaining({ tool: 'assemble_bundle', items: pack.items.length, usedTokens: pack.budget.usedTokens }),
      ]);
    } finally {
      release();
      await client.close();
      await reranker.close();
    }
  });

  it('refuses reranker flags without --rerank-url', async () => {
    const result = await runCli(['mcp', '--store', storeDir, '--rerank-top-n', '10', '--rerank-timeout', '100']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('litm-pack: --rerank-top-n, --rerank-timeout need --rerank-url URL');
  });
});

describe('MCP over Streamable HTTP at /mcp (the SDK client against a real server)', () => {
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ store, apiKeys: fixtureKeys(), rateLimit: false });
  });
  afterAll(async () => {
    await server.close();
  });

  async function connect(key?: string): Promise<{ client: Client; tools: Tool[] }> {
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }));
    return { client, tools: (await client.listTools()).tools };
  }

  it("serves the same tools, bound to the principals of the caller's key, with the same bytes as REST", async () => {
    const anonymous = await connect();
    const alice = await connect(KEYS.alice);
    try {
      expect(anonymous.tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
      const args = { query: `${HR_MARKER} refunds`, mode: 'lexical', budget: 300 };
      const seenByAnonymous = JSON.stringify((await call(anonymous.client, anonymous.tools, 'assemble_bundle', args)).structuredContent);
      const seenByAlice = (await call(alice.client, alice.tools, 'assemble_bundle', args)).structuredContent;
      expect(seenByAnonymous).not.toContain('hr/salaries.md');
      expect(JSON.stringify(seenByAlice)).toContain('hr/salaries.md');
      const rest = await (
        await fetch(`${server.url}/api/bundle?q=${encodeURIComponent(args.query)}&mode=lexical&budget=300`, {
          headers: { authorization: `Bearer ${KEYS.alice}` },
        })
      ).text();
      expect(toCanonicalJson(PackSchema.parse(seenByAlice))).toBe(rest);
      for (const name of TOOLS) {
        const toolArgs =
          name === 'get_briefing'
            ? { prompt: 'refunds' }
            : name === 'pack_candidates'
              ? { query: 'q', candidates: [] }
              : name === 'verify_citations'
                ? { citations: [] }
                : name === 'get_rankings'
                  ? { query: 'refunds', mode: 'lexical' }
                  : { query: 'refunds' };
        expect((await call(alice.client, alice.tools, name, toolArgs)).isError).not.toBe(true);
      }
    } finally {
      await anonymous.client.close();
      await alice.client.close();
    }
  });

  it('selects sentences and diversifies with the same bytes as REST and the pipeline (a store with embeddings)', async () => {
    const embedded = await fixtureStore({ restricted: true });
    const embeddings = new FakeEmbeddings();
    const vectors = await startServer({ store: embedded, apiKeys: fixtureKeys(), rateLimit: false, embeddings });
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${vectors.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${KEYS.alice}` } },
        }),
      );
      const { tools } = await client.listTools();
      const rest = (query: string) =>
        fetch(`${vectors.url}/api/bundle?${query}`, { headers: { authorization: `Bearer ${KEYS.alice}` } }).then((r) => r.text());
      const query = 'how much does express shipping cost';

      const compressed = toCanonicalJson(
        packOf(await call(client, tools, 'assemble_bundle', { query, budget: 300, compress: 'sentences' })),
      );
      const compressedLibrary = toCanonicalJson(
        await pipelineBundle(embedded, query, { budget: 300, principals: ['hr'], compress: true, embeddings }),
      );
      expect(compressed).toBe(compressedLibrary);
      expect(await rest(`q=${encodeURIComponent(query)}&budget=300&compress=sentences`)).toBe(compressedLibrary);

      // A pool of 3 the budget does not fill would widen: the tool, REST and the pipeline widen it alike.
      const diverse = packOf(await call(client, tools, 'assemble_bundle', { query: 'refunds', limit: 3, diversity: 0.5 }));
      const diverseLibrary = toCanonicalJson(await pipelineBundle(embedded, 'refunds', { limit: 3, principals: ['hr'], diversity: 0.5 }));
      expect(toCanonicalJson(diverse)).toBe(diverseLibrary);
      expect(await rest('q=refunds&limit=3&diversity=0.5')).toBe(diverseLibrary);

      const rag = RagContextSchema.parse(
        (await call(client, tools, 'get_rag_context', { query, max_tokens: 200, compress: 'sentences', diversity: 0.5 })).structuredContent,
      );
      expect(rag).toEqual(
        ragContextOf(
          await pipelineBundle(embedded, query, { budget: 200, principals: ['hr'], compress: true, embeddings, diversity: 0.5 }),
        ),
      );

      const briefing = packOf(
        await call(client, tools, 'get_briefing', { prompt: query, compress: 'sentences', diversity: 0.5, budget: 500 }),
      );
      const { pack } = await assembleBriefing({
        store: embedded,
        prompt: query,
        principals: ['hr'],
        compress: { mode: 'sentences', embeddings },
        diversity: 0.5,
        embeddings,
        maxTokens: 500,
      });
      expect(toCanonicalJson(briefing)).toBe(toCanonicalJson(pack));
    } finally {
      await client.close();
      await vectors.close();
    }
  });

  it('diversifies a pool pinned at 3 (a server whose largest pool is 3) as the pipeline does', async () => {
    const embedded = await fixtureStore({ restricted: true });
    const small = await startServer({
      store: embedded,
      apiKeys: fixtureKeys(),
      rateLimit: false,
      embeddings: new FakeEmbeddings(),
      limits: { defaultPool: 3, ragDefaultPool: 3, maxPool: 3 },
    });
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${small.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${KEYS.alice}` } },
        }),
      );
      const { tools } = await client.listTools();
      const diverse = packOf(await call(client, tools, 'assemble_bundle', { query: 'refunds', limit: 3, diversity: 0.5 }));
      const diverseLibrary = toCanonicalJson(
        await pipelineBundle(embedded, 'refunds', { limit: 3, maxPool: 3, principals: ['hr'], diversity: 0.5 }),
      );
      expect(toCanonicalJson(diverse)).toBe(diverseLibrary);
      const rest = await fetch(`${small.url}/api/bundle?q=refunds&limit=3&diversity=0.5`, {
        headers: { authorization: `Bearer ${KEYS.alice}` },
      }).then((r) => r.text());
      expect(rest).toBe(diverseLibrary);
      // MMR trades the second refunds chunk for the shipping one.
      expect(diverse.items.map((item) => item.sourceId).sort()).toEqual(['handbook/refunds.md', 'handbook/shipping.md', 'hr/salaries.md']);
      const relevance = await pipelineBundle(embedded, 'refunds', { limit: 3, maxPool: 3, principals: ['hr'] });
      expect(relevance.items.map((item) => item.sourceId).sort()).toEqual(['handbook/refunds.md', 'handbook/refunds.md', 'hr/salaries.md']);
    } finally {
      await client.close();
      await small.close();
    }
  });

  it('a reranker fault degrades the pack, never fails it: pack.degraded on the pack tools, _meta on get_rag_context', async () => {
    const down = { reranker: new HttpReranker({ url: `http://127.0.0.1:${await closedPort()}/v1/rerank` }) };
    const reranking = await startServer({ store, rateLimit: false, rerank: down });
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${reranking.url}/mcp`)));
      const { tools } = await client.listTools();
      const expected = [{ stage: 'rerank', code: 'connection_failed' }];
      expect(packOf(await call(client, tools, 'assemble_bundle', { query: 'refunds' })).degraded).toEqual(expected);
      expect(packOf(await call(client, tools, 'get_briefing', { prompt: 'refunds' })).degraded).toEqual(expected);
      const rag = await call(client, tools, 'get_rag_context', { query: 'refunds' });
      expect(rag._meta?.[DEGRADED_META_KEY]).toEqual(expected);
      expect(Object.keys(rag.structuredContent ?? {}).sort()).toEqual(['context', 'hits', 'token_estimate', 'truncated']);
      const plain = await call(client, tools, 'get_rag_context', { query: 'refunds', rerank: false });
      expect(plain._meta?.[DEGRADED_META_KEY]).toBeUndefined();
      expect(plain.structuredContent).toEqual(rag.structuredContent);
    } finally {
      await client.close();
      await reranking.close();
    }
  });

  it('an unknown key cannot connect (401 unauthorized)', async () => {
    await expect(connect('not-a-configured-key-0000')).rejects.toThrow(/"code":"unauthorized"/);
  });

  it('a store fault is a tool error with the typed code, never a smaller pack', async () => {
    const { createServer: createNetServer } = await import('node:net');
    const probe = createNetServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((done) => probe.close(() => done()));
    const down = await startServer({
      store: new QdrantHybridStore({ url: `http://127.0.0.1:${port}`, collection: 'docs', retries: 0 }),
      rateLimit: false,
    });
    const client = new Client({ name: 'litm-pack-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${down.url}/mcp`)));
      for (const [name, args] of [
        ['assemble_bundle', { query: 'refunds' }],
        ['get_briefing', { prompt: 'refunds' }],
        ['get_rag_context', { query: 'refunds' }],
        ['verify_citations', { citations: [{ ref: 1, sourceId: 'a.md', chunkId: 'a.md#0', textSha256: '0'.repeat(64) }] }],
      ] as const) {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        // One shape for every refusal: the error body as structured content and as the text.
        expect(result.structuredContent).toEqual(errorBody(result));
        expect(errorBody(result)).toEqual({
          error: 'The store could not answer (connection_failed); try again later',
          code: 'connection_failed',
          issues: [],
        });
      }
    } finally {
      await client.close();
      await down.close();
    }
  });
});
