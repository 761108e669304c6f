// Hostile requests cost the server what the answer is bounded to, counted in bytes answered (never in time):
// a small resources/read of a long source answers one page (and names the next, which reach the rest); a batch
// of reads answers a bounded total; a batch of 12 is answered and logged; resources/list reads an index of
// sources and reaches every one past 100,000 chunks; /readyz says unready when the served store file is gone,
// unreadable or corrupt; an error answer quotes an excerpt of the input, never the input several times over.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { ReloadingStore } from '../src/memory/reloading-store.js';
import { startServer, type RunningServer } from '../src/server/server.js';
import { DEFAULT_LIMITS } from '../src/service/limits.js';
import { NEXT_PAGE_META_KEY } from '../src/mcp/resources.js';
import { FIXED_NOW, PUBLIC_DOCS, fixtureStore } from './helpers/serve-fixtures.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** One document of `count` chunks (one region each), every chunk `size` characters of text. */
function manyChunks(
  id: string,
  count: number,
  size: number,
): { id: string; text: string; regions: { start: number; end: number; unit: 'whole' }[] } {
  const parts: string[] = [];
  const regions: { start: number; end: number; unit: 'whole' }[] = [];
  let at = 0;
  for (let i = 0; i < count; i += 1) {
    const head = `Chunk ${i} of ${id}. `;
    const text = head + 'lorem ipsum dolor sit amet '.repeat(Math.ceil(size / 27)).slice(0, Math.max(0, size - head.length));
    parts.push(text);
    regions.push({ start: at, end: at + text.length, unit: 'whole' });
    at += text.length + 2;
  }
  return { id, text: parts.join('\n\n'), regions };
}

/** POSTs a JSON-RPC body to /mcp and answers the status and the bytes of the answer. */
async function post(server: RunningServer, body: unknown): Promise<{ status: number; bytes: number; json: unknown }> {
  const response = await fetch(`${server.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, bytes: Buffer.byteLength(text), json: JSON.parse(text) as unknown };
}

const read = (id: number, uri: string) => ({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri } });

describe('resources/read answers a bounded page', () => {
  let store: MemoryHybridStore;
  let server: RunningServer;
  const LONG = 'long.md';
  let whole: string;

  beforeAll(async () => {
    store = new MemoryHybridStore({ now: FIXED_NOW });
    // About 3 MB of text in 1,500 chunks: three times what one read answers.
    const doc = manyChunks(LONG, 1500, 2000);
    await store.addDocuments([doc, ...PUBLIC_DOCS]);
    whole = (await store.getChunks({ sourceIds: [LONG], limit: 100_000 })).map((chunk) => chunk.text).join('\n\n');
    server = await startServer({ store, rateLimit: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("a 103-byte request answers at most one read's bytes, and the pages it names read the whole source", async () => {
    expect(Buffer.byteLength(whole)).toBeGreaterThan(3 * DEFAULT_LIMITS.maxResourceReadBytes - 200_000);
    const request = read(1, `litm://sources/${LONG}`);
    expect(JSON.stringify(request).length).toBeLessThan(110);
    const first = await post(server, request);
    expect(first.status).toBe(200);
    // The text and the JSON around it: one read's worth, not the 3 MB source.
    expect(first.bytes).toBeLessThan(DEFAULT_LIMITS.maxResourceReadBytes + 4096);
    const pages: string[] = [];
    let next: string | undefined = `litm://sources/${LONG}`;
    for (let page = 0; next !== undefined && page < 100; page += 1) {
      const answer = (await post(server, read(page + 2, next))).json as {
        result: { contents: { text: string; _meta?: Record<string, string> }[] };
      };
      const content = answer.result.contents[0]!;
      expect(Buffer.byteLength(content.text)).toBeLessThanOrEqual(DEFAULT_LIMITS.maxResourceReadBytes);
      pages.push(content.text);
      next = content._meta?.[NEXT_PAGE_META_KEY];
    }
    expect(next).toBeUndefined();
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages.join('\n\n')).toBe(whole);
  });

  it("a batch of ten reads answers at most the request's total; the reads past it are refused by name, and a batch of 12 is answered and logged", async () => {
    // A server of its own, so that its log holds this test's requests only.
    const own: string[] = [];
    const batches = await startServer({ store, rateLimit: false, log: { write: (line: string) => own.push(line) } });
    const ten = await post(
      batches,
      Array.from({ length: 10 }, (_, i) => read(i + 1, `litm://sources/${LONG}`)),
    );
    expect(ten.status).toBe(200);
    expect(ten.bytes).toBeLessThan(DEFAULT_LIMITS.maxRequestReadBytes + 64 * 1024);
    const answers = ten.json as { id: number; result?: unknown; error?: { code: number; data: { code: string } } }[];
    expect(answers).toHaveLength(10);
    const refused = answers.filter((answer) => answer.error !== undefined);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((answer) => answer.error?.data.code === 'too_large')).toBe(true);

    // The log line of a request is written once its answer is out: wait for the ten reads' line before counting.
    const logged = async (count: number) => {
      for (let i = 0; i < 200 && own.length < count; i += 1) await new Promise((done) => setTimeout(done, 25));
    };
    await logged(1);
    own.length = 0;
    const twelve = await post(
      batches,
      Array.from({ length: 12 }, (_, i) => read(i + 1, 'litm://sources/handbook%2Frefunds.md')),
    );
    expect(twelve.status).toBe(200);
    expect((twelve.json as unknown[]).map((answer) => (answer as { id: number }).id).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    await logged(1);
    await batches.close();
    expect(own.map((line) => JSON.parse(line) as { route: string; status: number })).toEqual([
      expect.objectContaining({ route: '/mcp', status: 200 }),
    ]);
  });

  it('a chunk or span longer than one read answers is refused with how to read it in parts, never cut silently', async () => {
    const small = await startServer({ store, rateLimit: false, limits: { maxResourceReadBytes: 1024, maxRequestReadBytes: 4096 } });
    try {
      const chunk = (await store.getChunks({ sourceIds: [LONG], limit: 100_000 })).sort((a, b) => b.text.length - a.text.length)[0]!;
      expect(Buffer.byteLength(chunk.text)).toBeGreaterThan(1024);
      const { start } = chunk.span;
      const byChunk = (await post(small, read(1, `litm://sources/${LONG}?chunk=${encodeURIComponent(chunk.id)}`))).json as {
        error: { data: { code: string; error: string } };
      };
      expect(byChunk.error.data).toMatchObject({
        code: 'too_large',
        error: expect.stringContaining(`read it in parts by span, e.g. litm://sources/long.md?start=${start}&end=${start + 256}`),
      });
      const bySpan = (await post(small, read(2, `litm://sources/${LONG}?start=${start}&end=${start + 1500}`))).json as {
        error: { data: { code: string } };
      };
      expect(bySpan.error.data.code).toBe('too_large');
      const part = (await post(small, read(3, `litm://sources/${LONG}?start=${start}&end=${start + 256}`))).json as {
        result: { contents: { text: string }[] };
      };
      expect(part.result.contents[0]!.text).toBe(chunk.text.slice(0, 256));
      // A whole-source page of this server holds what fits its 1024 bytes.
      const page = (await post(small, read(4, `litm://sources/${LONG}`))).json as {
        result?: { contents: { text: string }[] };
        error?: unknown;
      };
      if (page.result !== undefined) expect(Buffer.byteLength(page.result.contents[0]!.text)).toBeLessThanOrEqual(1024);
    } finally {
      await small.close();
    }
  });
});

describe('resources/list reads an index of sources', () => {
  it('reaches every source of a store past 100,000 chunks, a page at a time', async () => {
    const store = new MemoryHybridStore({ now: FIXED_NOW });
    // 100,000 chunks of one source come first in source order: a scan of 100,000 chunks saw nothing else.
    await store.addDocuments([
      manyChunks('a-big.md', 100_000, 20),
      { id: 'b.md', text: 'Bee.' },
      { id: 'c.md', text: 'Sea.' },
      { id: 'd.md', text: 'Dee.', acl: ['hr'] },
    ]);
    expect(store.size).toBeGreaterThan(100_000);
    const server = await startServer({ store, rateLimit: false, limits: { resourcesPageSize: 2 } });
    const client = new Client({ name: 'lister', version: '1' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.listResources(cursor === undefined ? {} : { cursor });
        seen.push(...page.resources.map((resource) => resource.name));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== undefined && pages < 10);
      // Every source an anonymous caller may read, and not the one it may not.
      expect(seen).toEqual(['a-big.md', 'b.md', 'c.md']);
      expect(pages).toBe(2);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('/readyz follows the served store file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'litm-ready-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 while the file is gone, unreadable or corrupt (still serving what it loaded), and 200 once it loads again', async () => {
    const file = join(dir, 'store.json');
    const source = await fixtureStore({ restricted: false, embeddings: false });
    await source.save(file);
    const store = await ReloadingStore.open(file);
    const server = await startServer({ store, rateLimit: false });
    const ready = async () => {
      const answer = await fetch(`${server.url}/readyz`);
      return { status: answer.status, body: (await answer.json()) as { status: string; code?: string; error?: string } };
    };
    try {
      expect(await ready()).toEqual({ status: 200, body: { status: 'ready' } });
      await rm(file);
      const gone = await ready();
      expect(gone).toMatchObject({ status: 503, body: { status: 'unready', code: 'not_found' } });
      // A probe answers anyone: the file's path is not told.
      expect(JSON.stringify(gone.body)).not.toContain(dir);
      // The requests are still served from the version loaded before.
      expect((await fetch(`${server.url}/api/bundle?q=refunds&format=md`)).status).toBe(200);
      await mkdir(file);
      expect((await ready()).status).toBe(503);
      await rm(file, { recursive: true });
      await writeFile(file, '{"not": "a store"');
      expect(await ready()).toMatchObject({ status: 503, body: { status: 'unready', code: 'corrupt' } });
      await source.save(file);
      expect(await ready()).toEqual({ status: 200, body: { status: 'ready' } });
    } finally {
      await server.close();
    }
  });
});

describe('an error answer quotes an excerpt of the input', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ store: await fixtureStore({ restricted: false, embeddings: false }), rateLimit: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  const manyKeys = (first: [string, string]): Record<string, unknown> =>
    Object.fromEntries<unknown>([first, ...Array.from({ length: 60_000 }, (_, i) => [`unknown${i}`, 1] as const)]);

  it('a 0.9 MB body of unknown parameters gets a few kilobytes, on REST and on MCP', async () => {
    const rest = JSON.stringify(manyKeys(['q', 'refunds']));
    expect(rest.length).toBeGreaterThan(900_000);
    const answer = await fetch(`${server.url}/api/bundle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rest });
    const text = await answer.text();
    expect(answer.status).toBe(400);
    expect(Buffer.byteLength(text)).toBeLessThan(8192);
    expect(JSON.parse(text)).toMatchObject({
      code: 'invalid_input',
      error: expect.stringMatching(/^unknown option "unknown0".*more characters\)$/u),
    });

    const tool = await post(server, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'assemble_bundle', arguments: manyKeys(['query', 'refunds']) },
    });
    expect(tool.status).toBe(200);
    expect(tool.bytes).toBeLessThan(8192);
    expect(tool.json).toMatchObject({ result: { isError: true, structuredContent: { code: 'invalid_input' } } });
  });

  it('a 0.9 MB tool name, resource URI or id is not answered back whole', async () => {
    const long = 'x'.repeat(900_000);
    const tool = await post(server, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: long, arguments: {} } });
    expect(tool.bytes).toBeLessThan(8192);
    const resource = await post(server, read(2, `litm://sources/${long}`));
    expect(resource.bytes).toBeLessThan(8192);
    expect(resource.json).toMatchObject({ error: { code: -32602, data: { code: 'not_found' } } });
    const id = await post(server, { jsonrpc: '2.0', id: long, method: 'tools/list' });
    expect(id.status).toBe(400);
    expect(id.bytes).toBeLessThan(8192);
  });
});
