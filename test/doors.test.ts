// One pipeline, six doors: the same request through the library, the CLI, the HTTP API, the MCP tools (over
// Streamable HTTP, the SDK's own client) and both frameworks' retrievers gives one pack, byte for byte (one
// packHash), with no budget given (every door's defaults are the pipeline's table) and with sentence
// selection. And the same folder ingested through `loadDocuments` + `addDocuments` and through
// `litm-pack ingest` gives the same store file and the same packs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MemoryHybridStore,
  PIPELINE_DEFAULTS,
  PackSchema,
  assembleBriefing,
  assembleBundle,
  loadDocuments,
  toCanonicalJson,
  type CandidateInput,
  type Pack,
} from '../src/index.js';
import { Document } from '@langchain/core/documents';
import { TextNode } from '@llamaindex/core/schema';
import { BriefingPackRetriever as LangChainBriefing, BundleRetriever as LangChainBundle, LitmCompressor } from '../src/langchain/index.js';
import {
  BriefingPackRetriever as LlamaIndexBriefing,
  BundleRetriever as LlamaIndexBundle,
  LitmPostprocessor,
} from '../src/llamaindex/index.js';
import { packCandidates } from '../src/pipeline/bundle.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { readSaved } from './helpers/store-files.js';
import { runCli } from './helpers/cli.js';

const ROOT = resolve(import.meta.dirname, '..');
const QUERY = 'Why should the best passage go first and the second best last in a long context?';
const PROMPT = 'How should a token budget be spent on retrieved passages?';

let work: string;
let storeDir: string;
let store: MemoryHybridStore;
let server: RunningServer;
let mcp: Client;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'litm-doors-'));
  storeDir = join(work, 'store');
  const ingested = await runCli(['ingest', 'examples/corpus', '--store', storeDir, '--quiet']);
  expect(ingested.code, ingested.stderr).toBe(0);
  store = await MemoryHybridStore.load(join(storeDir, 'store.json'));
  server = await startServer({ store, port: 0, rateLimit: false });
  mcp = new Client({ name: 'litm-pack-doors', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await rm(work, { recursive: true, force: true });
});

async function cliPack(args: string[]): Promise<Pack> {
  const out = await runCli([...args, '--store', storeDir, '--json']);
  expect(out.code, out.stderr).toBe(0);
  return PackSchema.parse(JSON.parse(out.stdout));
}

async function httpPack(path: string): Promise<Pack> {
  const response = await fetch(`${server.url}${path}`);
  const body = await response.text();
  expect(response.status, body).toBe(200);
  return PackSchema.parse(JSON.parse(body));
}

async function mcpPack(tool: string, args: Record<string, unknown>): Promise<Pack> {
  const result = (await mcp.callTool({ name: tool, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return PackSchema.parse(result.structuredContent);
}

/** Every door's pack has the same bytes; returns the one pack. */
function oneHash(packs: Record<string, Pack>): Pack {
  const [first, ...rest] = Object.entries(packs);
  for (const [door, pack] of rest) {
    expect(toCanonicalJson(pack), `${door} differs from ${first![0]}`).toBe(toCanonicalJson(first![1]));
  }
  return first![1];
}

describe('one request, one pack on every door', () => {
  it("a bundle with no budget given: the table's default on every door", async () => {
    const pack = oneHash({
      library: (await assembleBundle({ store, query: QUERY })).pack,
      cli: await cliPack(['bundle', QUERY]),
      http: await httpPack(`/api/bundle?q=${encodeURIComponent(QUERY)}`),
      mcp: await mcpPack('assemble_bundle', { query: QUERY }),
      langchain: (await new LangChainBundle({ store }).retrieveWithCitations(QUERY)).pack,
      llamaindex: (await new LlamaIndexBundle({ store }).retrieveWithCitations(QUERY)).pack,
    });
    expect(pack.budget.maxTokens).toBe(PIPELINE_DEFAULTS.bundleBudget);
    expect(pack.items.length).toBeGreaterThan(1);
  });

  it('a bundle with sentence selection', async () => {
    const pack = oneHash({
      library: (await assembleBundle({ store, query: QUERY, compress: { mode: 'sentences' } })).pack,
      cli: await cliPack(['bundle', QUERY, '--compress', 'sentences']),
      http: await httpPack(`/api/bundle?q=${encodeURIComponent(QUERY)}&compress=sentences`),
      mcp: await mcpPack('assemble_bundle', { query: QUERY, compress: 'sentences' }),
      langchain: (await new LangChainBundle({ store, compress: { mode: 'sentences' } }).retrieveWithCitations(QUERY)).pack,
      llamaindex: (await new LlamaIndexBundle({ store, compress: { mode: 'sentences' } }).retrieveWithCitations(QUERY)).pack,
    });
    expect(pack.citations.some((citation) => (citation.spans?.length ?? 0) > 0)).toBe(true);
  });

  it('a bundle with a non-default order and header: the same vocabulary on every door', async () => {
    const pack = oneHash({
      library: (await assembleBundle({ store, query: QUERY, order: 'document', header: 'compact' })).pack,
      cli: await cliPack(['bundle', QUERY, '--order', 'document', '--header', 'compact']),
      http: await httpPack(`/api/bundle?q=${encodeURIComponent(QUERY)}&order=document&header=compact`),
      mcp: await mcpPack('assemble_bundle', { query: QUERY, order: 'document', header: 'compact' }),
      langchain: (await new LangChainBundle({ store, order: 'document', header: 'compact' }).retrieveWithCitations(QUERY)).pack,
      llamaindex: (await new LlamaIndexBundle({ store, order: 'document', header: 'compact' }).retrieveWithCitations(QUERY)).pack,
    });
    expect(pack.header).toBe('compact');
    // document order: each source's items together, sources in the order of their best item.
    const sources = pack.items.map((item) => item.sourceId);
    expect(sources.filter((source, index) => sources.indexOf(source) === index)).toEqual(
      [...pack.items]
        .sort((a, b) => a.rank - b.rank)
        .map((item) => item.sourceId)
        .filter((source, index, all) => all.indexOf(source) === index),
    );
    expect(pack.context).not.toContain('(source: ');
    const litm = (await assembleBundle({ store, query: QUERY })).pack;
    expect(pack.packHash).not.toBe(litm.packHash);
  });

  it('packing given candidates with a non-default order and header: the library, the CLI, HTTP, MCP and both frameworks', async () => {
    const candidates = JSON.parse(await readFile(join(ROOT, 'examples/candidates.json'), 'utf8')) as CandidateInput[];
    const query = 'refunds';
    const cli = await runCli(['pack', '--query', query, '--order', 'rank', '--header', 'minimal', 'examples/candidates.json']);
    expect(cli.code, cli.stderr).toBe(0);
    const response = await fetch(`${server.url}/api/pack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, candidates, order: 'rank', header: 'minimal' }),
    });
    expect(response.status).toBe(200);
    const documents = candidates.map((c) => new Document({ pageContent: c.text, metadata: { ...c, source: c.sourceId ?? c.id } }));
    const nodes = candidates.map((c) => ({
      node: new TextNode({ text: c.text, id_: c.id, metadata: { ...c, source: c.sourceId ?? c.id } }),
      score: c.score,
    }));
    const pack = oneHash({
      library: await packCandidates({ query, candidates, order: 'rank', header: 'minimal' }),
      cli: PackSchema.parse(JSON.parse(cli.stdout)),
      http: PackSchema.parse(await response.json()),
      mcp: await mcpPack('pack_candidates', { query, candidates, order: 'rank', header: 'minimal' }),
    });
    expect(pack.items.map((item) => item.rank)).toEqual(pack.items.map((_, index) => index + 1));
    expect(pack.header).toBe('minimal');
    const langchain = await new LitmCompressor({
      maxTokens: PIPELINE_DEFAULTS.packBudget,
      order: 'rank',
      header: 'minimal',
    }).compressWithCitations(documents, query);
    const llamaindex = await new LitmPostprocessor({
      maxTokens: PIPELINE_DEFAULTS.packBudget,
      order: 'rank',
      header: 'minimal',
    }).postprocessWithCitations(nodes, query);
    for (const framework of [langchain.pack, llamaindex.pack]) {
      expect(framework.header).toBe('minimal');
      expect(framework.items.map((item) => item.rank)).toEqual(framework.items.map((_, index) => index + 1));
    }
  });

  it('a briefing with a non-default header on every door', async () => {
    const pack = oneHash({
      library: (await assembleBriefing({ store, prompt: PROMPT, header: 'minimal' })).pack,
      cli: await cliPack(['briefing', '--prompt', PROMPT, '--header', 'minimal']),
      http: await httpPack(`/api/briefing?prompt=${encodeURIComponent(PROMPT)}&header=minimal`),
      mcp: await mcpPack('get_briefing', { prompt: PROMPT, header: 'minimal' }),
      langchain: (await new LangChainBriefing({ store, header: 'minimal' }).retrieveWithCitations(PROMPT)).pack,
      llamaindex: (await new LlamaIndexBriefing({ store, header: 'minimal' }).retrieveWithCitations(PROMPT)).pack,
    });
    expect(pack.header).toBe('minimal');
  });

  it("a briefing with no budget given: the table's default on every door", async () => {
    const pack = oneHash({
      library: (await assembleBriefing({ store, prompt: PROMPT })).pack,
      cli: await cliPack(['briefing', '--prompt', PROMPT]),
      http: await httpPack(`/api/briefing?prompt=${encodeURIComponent(PROMPT)}`),
      mcp: await mcpPack('get_briefing', { prompt: PROMPT }),
      langchain: (await new LangChainBriefing({ store }).retrieveWithCitations(PROMPT)).pack,
      llamaindex: (await new LlamaIndexBriefing({ store }).retrieveWithCitations(PROMPT)).pack,
    });
    expect(pack.kind).toBe('briefing');
    expect(pack.budget.maxTokens).toBe(PIPELINE_DEFAULTS.briefingBudget);
  });

  it('a briefing with sentence selection', async () => {
    oneHash({
      library: (await assembleBriefing({ store, prompt: PROMPT, compress: { mode: 'sentences' } })).pack,
      cli: await cliPack(['briefing', '--prompt', PROMPT, '--compress', 'sentences']),
      http: await httpPack(`/api/briefing?prompt=${encodeURIComponent(PROMPT)}&compress=sentences`),
      mcp: await mcpPack('get_briefing', { prompt: PROMPT, compress: 'sentences' }),
      langchain: (await new LangChainBriefing({ store, compress: { mode: 'sentences' } }).retrieveWithCitations(PROMPT)).pack,
      llamaindex: (await new LlamaIndexBriefing({ store, compress: { mode: 'sentences' } }).retrieveWithCitations(PROMPT)).pack,
    });
  });
});

describe('one ingest path', () => {
  it('loadDocuments + addDocuments gives the store litm-pack ingest gives, and the same packs', async () => {
    const cliFile = join(storeDir, 'store.json');
    const cliBytes = await readFile(cliFile);
    // The CLI's store was written at some instant: the library's gets the same clock, so indexedAt agrees.
    const indexedAt = (await readSaved(cliFile)).chunks[0]!.record.indexedAt;
    const library = new MemoryHybridStore({ now: () => new Date(indexedAt) });
    await library.addDocuments(await loadDocuments(['examples/corpus'], { base: ROOT }));
    const libraryFile = join(work, 'library', 'store.json');
    await library.save(libraryFile);
    // The same store, to the byte (a segment's id is the hash of its contents).
    expect((await readFile(libraryFile)).equals(cliBytes)).toBe(true);

    for (const query of [QUERY, 'term frequency saturation', 'what does a dense retriever miss?']) {
      const fromCli = (await assembleBundle({ store, query, maxTokens: 900 })).pack;
      const fromLibrary = (await assembleBundle({ store: library, query, maxTokens: 900 })).pack;
      expect(toCanonicalJson(fromLibrary)).toBe(toCanonicalJson(fromCli));
    }
    const briefing = (s: MemoryHybridStore) =>
      assembleBriefing({ store: s, clusters: ['retrieval'], pins: ['token-budgets.md'], maxTokens: 1500 });
    expect(toCanonicalJson((await briefing(library)).pack)).toBe(toCanonicalJson((await briefing(store)).pack));
  });

  it('front matter sets title, version, url, timestamp, acl, clusters and kind, the same through either path', async () => {
    const folder = join(work, 'front');
    await mkdir(folder, { recursive: true });
    await writeFile(
      join(folder, 'leave.md'),
      '---\ntitle: Parental leave\nversion: "2.10"\nurl: https://intranet.example/leave\ntimestamp: 2024-03-15\nacl: [hr]\nclusters: [handbook]\nkind: insight\n---\n# Leave\n\nParents get sixteen weeks of paid leave.\n',
    );
    const [doc] = await loadDocuments([folder], { base: work });
    expect(doc).toMatchObject({
      id: 'front/leave.md',
      title: 'Parental leave',
      version: '2.10',
      url: 'https://intranet.example/leave',
      timestamp: '2024-03-15',
      acl: ['hr'],
      clusters: ['handbook'],
      kind: 'insight',
    });
    const cliStore = join(work, 'front-store');
    expect((await runCli(['ingest', 'front', '--store', cliStore, '--quiet'], undefined, { cwd: work })).code).toBe(0);
    const [chunk] = await (
      await MemoryHybridStore.load(join(cliStore, 'store.json'))
    ).getChunks({ sourceIds: ['front/leave.md'], principals: 'all' });
    expect(chunk).toMatchObject({
      sourceId: 'front/leave.md',
      title: 'Parental leave',
      version: '2.10',
      url: 'https://intranet.example/leave',
      timestamp: '2024-03-15',
      acl: ['hr'],
      clusters: ['handbook'],
      kind: 'insight',
    });
  });

  it('a folder outside the working directory gets source ids below the folder holding it, never ../', async () => {
    const outside = join(work, 'elsewhere', 'notes');
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'a.md'), '# A\n\nAlpha.');
    const inside = join(work, 'cwd');
    await mkdir(inside, { recursive: true });
    const [doc] = await loadDocuments([outside], { base: inside });
    expect(doc!.id).toBe('notes/a.md');
    const cliStore = join(work, 'outside-store');
    expect((await runCli(['ingest', outside, '--store', cliStore, '--quiet'], undefined, { cwd: inside })).code).toBe(0);
    expect((await MemoryHybridStore.load(join(cliStore, 'store.json'))).sources().map((source) => source.sourceId)).toEqual(['notes/a.md']);
  });
});
