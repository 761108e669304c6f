// The agent surfaces, safe by default, on real sockets: Host and Origin checked on every route; rate limits
// that count every JSON-RPC call per caller and never let refused strangers spend a valid key's budget, with
// defaults an agent's burst fits in; a network bind without keys refused; the corpus as MCP resources read
// under the caller's principals; a resource link per citation; and no door that reads restricted text when no
// principals were given.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, ResourceLink } from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, assembleBriefing, assembleBundle, verifyCitations, type Store } from '../src/index.js';
import { BundleRetriever as LangChainBundle } from '../src/langchain/index.js';
import { BundleRetriever as LlamaIndexBundle } from '../src/llamaindex/index.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { runCli } from './helpers/cli.js';
import { failure } from './helpers/failure.js';
import { ENG_MARKER, HR_MARKER, KEYS, bearer, fixtureKeys, fixtureStore } from './helpers/serve-fixtures.js';

let store: MemoryHybridStore;
let server: RunningServer;

beforeAll(async () => {
  store = await fixtureStore({ restricted: true, embeddings: false });
  server = await startServer({ store, apiKeys: fixtureKeys() });
});

afterAll(async () => {
  await server?.close();
});

interface RawAnswer {
  status: number;
  body: string;
}

/** A request on a real socket with headers fetch would not let us forge (Host). */
function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const MCP_INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

const ROUTES: [string, string, string?][] = [
  ['GET', '/api/openapi.json'],
  ['GET', '/api/bundle?q=refunds'],
  ['POST', '/api/bundle', '{"q":"refunds"}'],
  ['GET', '/api/briefing?prompt=refunds'],
  ['POST', '/api/briefing', '{"prompt":"refunds"}'],
  ['POST', '/api/pack', '{"query":"q","candidates":[]}'],
  ['POST', '/api/citations/verify', '{"citations":[]}'],
  ['GET', '/inspect?q=refunds'],
  ['POST', '/inspect', '{}'],
  ['POST', '/mcp', MCP_INIT],
  ['GET', '/mcp'],
  ['GET', '/no/such/route'],
];

describe('Host and Origin', () => {
  it('a forged Host is refused 403 on every route, naming the option; loopback names are served', async () => {
    const { port } = new URL(server.url);
    for (const [method, path, body] of ROUTES) {
      const extra = path === '/mcp' ? MCP_HEADERS : {};
      const forged = await raw(server.url, method, path, { host: 'evil.example.com', ...extra }, body);
      expect(forged.status, `${method} ${path}`).toBe(403);
      expect(forged.body).toMatch(/evil\.example\.com.*--allowed-hosts/u);
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
        const ok = await raw(server.url, method, path, { host, ...extra }, body);
        expect(ok.status, `${method} ${path} as ${host}`).not.toBe(403);
      }
    }
  });

  it("a foreign Origin is refused 403 on every route; the server's own pages and configured origins are not", async () => {
    const { port } = new URL(server.url);
    for (const [method, path, body] of ROUTES) {
      const extra = path === '/mcp' ? MCP_HEADERS : {};
      const forged = await raw(server.url, method, path, { host: `127.0.0.1:${port}`, origin: 'http://evil.example.com', ...extra }, body);
      expect(forged.status, `${method} ${path}`).toBe(403);
      expect(forged.body).toMatch(/--allowed-origins/u);
      const own = await raw(server.url, method, path, { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, ...extra }, body);
      expect(own.status, `${method} ${path}`).not.toBe(403);
    }
    const configured = await startServer({ store, allowedHosts: ['docs.example.com'], allowedOrigins: ['https://app.example.com'] });
    try {
      const allowed = await raw(configured.url, 'GET', '/api/bundle?q=refunds', {
        host: 'docs.example.com',
        origin: 'https://app.example.com',
      });
      expect(allowed.status).toBe(200);
      const other = await raw(configured.url, 'GET', '/api/bundle?q=refunds', {
        host: 'docs.example.com',
        origin: 'https://other.example.com',
      });
      expect(other.status).toBe(403);
    } finally {
      await configured.close();
    }
  });

  it('the probes answer whatever Host and Origin they carry (a pod IP, a service name); nothing else does', async () => {
    for (const host of ['10.1.2.3:8787', 'litm-pack.default.svc.cluster.local', 'evil.example.com']) {
      const health = await raw(server.url, 'GET', '/healthz', { host, origin: 'http://evil.example.com' });
      expect(health.status, host).toBe(200);
      expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
      const ready = await raw(server.url, 'GET', '/readyz', { host });
      expect(ready.status, host).toBe(200);
      expect(JSON.parse(ready.body)).toEqual({ status: 'ready' });
      expect((await raw(server.url, 'GET', '/api/openapi.json', { host })).status, host).toBe(403);
      expect((await raw(server.url, 'GET', '/metrics', { host })).status, host).toBe(403);
    }
  });

  it('on /mcp a refusal is a JSON-RPC error carrying the body and code', async () => {
    const forged = await raw(server.url, 'POST', '/mcp', { host: 'evil.example.com', ...MCP_HEADERS }, MCP_INIT);
    expect(JSON.parse(forged.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'forbidden' } } });
    const unknownKey = await raw(
      server.url,
      'POST',
      '/mcp',
      { host: new URL(server.url).host, authorization: 'Bearer not-a-key-0000000000', ...MCP_HEADERS },
      MCP_INIT,
    );
    expect(unknownKey.status).toBe(401);
    expect(JSON.parse(unknownKey.body)).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'unauthorized' } } });
  });
});

describe('rate limits that are fair', () => {
  it('every JSON-RPC call of a batch counts: a 20-call batch under a 5/s limit runs at most 5; a longer batch is refused whole, and logged', async () => {
    let searches = 0;
    const counting: Store = {
      addDocuments: (docs) => store.addDocuments(docs),
      search: (request) => ((searches += 1), store.search(request)),
    };
    const lines: string[] = [];
    const limited = await startServer({
      store: counting,
      rateLimit: { perClient: 5, global: 1000, windowMs: 60_000 },
      log: { write: (line: string) => lines.push(line) },
    });
    try {
      const call = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'assemble_bundle', arguments: { query: 'refunds' } },
      });
      const batch = JSON.stringify(Array.from({ length: 20 }, (_, i) => call(i + 1)));
      const answer = await raw(limited.url, 'POST', '/mcp', { host: new URL(limited.url).host, ...MCP_HEADERS }, batch);
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'rate_limited' } } });
      expect(searches).toBeLessThanOrEqual(5);
      // tools/list is counted like any call: the budget is spent.
      const list = await raw(
        limited.url,
        'POST',
        '/mcp',
        { host: new URL(limited.url).host, ...MCP_HEADERS },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      );
      expect(list.status).toBe(429);
      // 21 messages: more than one request may carry, refused before anything runs or is counted.
      const before = searches;
      const long = await raw(
        limited.url,
        'POST',
        '/mcp',
        { host: new URL(limited.url).host, ...MCP_HEADERS },
        JSON.stringify(Array.from({ length: 21 }, (_, i) => call(i + 1))),
      );
      expect(long.status).toBe(413);
      expect(JSON.parse(long.body)).toMatchObject({
        jsonrpc: '2.0',
        error: { data: { code: 'too_large', error: expect.stringMatching(/batch of 21 messages .* \(20\)/u) } },
      });
      expect(searches).toBe(before);
      // A request's log line is written once its answer is out.
      for (let i = 0; i < 200 && lines.length < 3; i += 1) await new Promise((done) => setTimeout(done, 25));
      expect(
        lines
          .map((line) => JSON.parse(line) as { route: string; status: number; code?: string })
          .filter((line) => line.route === '/mcp')
          .map((line) => [line.status, line.code]),
      ).toEqual([
        [429, 'rate_limited'],
        [429, 'rate_limited'],
        [413, 'too_large'],
      ]);
    } finally {
      await limited.close();
    }
  });

  it('housekeeping spends no work budget: with the default limits 45 pings all answer, and tool calls are still limited (30)', async () => {
    // The default limits, counted over a minute rather than a second, so that how fast this machine sends the
    // calls cannot decide the result (before, the pings spent the caller's 30 and the tool calls were refused).
    const defaults = await startServer({ store, rateLimit: { windowMs: 60_000 } });
    const host = new URL(defaults.url).host;
    const rpc = (id: number, method: string, params?: unknown) =>
      raw(
        defaults.url,
        'POST',
        '/mcp',
        { host, ...MCP_HEADERS },
        JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }),
      );
    try {
      // An initialize and 45 pings at once, then a notification.
      const pings = await Promise.all([
        rpc(0, 'initialize', (JSON.parse(MCP_INIT) as { params: unknown }).params),
        ...Array.from({ length: 45 }, (_, i) => rpc(i + 1, 'ping')),
      ]);
      expect(pings.map((answer) => answer.status)).toEqual(Array(46).fill(200));
      expect(JSON.parse(pings[1]!.body)).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
      const notified = await raw(
        defaults.url,
        'POST',
        '/mcp',
        { host, ...MCP_HEADERS },
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      );
      expect(notified.status).toBe(202);
      // The same caller's work budget is whole: 30 tool calls pass, the 31st is refused.
      const calls = await Promise.all(
        Array.from({ length: 31 }, (_, i) =>
          rpc(100 + i, 'tools/call', { name: 'get_rag_context', arguments: { query: 'refunds', max_tokens: 50 } }),
        ),
      );
      const statuses = calls.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(30);
      expect(statuses.filter((status) => status === 429)).toHaveLength(1);
    } finally {
      await defaults.close();
    }
  });

  it('a flood of housekeeping is bounded too, by a limit of its own', async () => {
    const limited = await startServer({ store, rateLimit: { housekeepingPerClient: 10, windowMs: 60_000 } });
    const host = new URL(limited.url).host;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i += 1)
        statuses.push(
          (await raw(limited.url, 'POST', '/mcp', { host, ...MCP_HEADERS }, JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ping' })))
            .status,
        );
      expect(statuses).toEqual([...Array<number>(10).fill(200), 429, 429]);
      const refused = await raw(
        limited.url,
        'POST',
        '/mcp',
        { host, ...MCP_HEADERS },
        JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
      );
      expect(JSON.parse(refused.body)).toMatchObject({
        error: { data: { code: 'rate_limited', error: expect.stringMatching(/housekeeping/u) } },
      });
      // Work has its own budget.
      const work = await raw(
        limited.url,
        'POST',
        '/mcp',
        { host, ...MCP_HEADERS },
        JSON.stringify({ jsonrpc: '2.0', id: 100, method: 'tools/list' }),
      );
      expect(work.status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("30 refused requests without a key leave a valid key's request its budget (200)", async () => {
    const strict = await startServer({
      store,
      apiKeys: fixtureKeys(),
      requireAuth: true,
      rateLimit: { perClient: 5, global: 10, windowMs: 60_000 },
    });
    try {
      for (let i = 0; i < 30; i += 1) expect((await fetch(`${strict.url}/api/bundle?q=refunds`)).status).toBe(401);
      const valid = await fetch(`${strict.url}/api/bundle?q=refunds`, { headers: bearer(KEYS.carol) });
      expect(valid.status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('with the defaults, 20 parallel calls from one agent all pass (REST, and MCP tool calls)', async () => {
    const rest = await startServer({ store });
    try {
      const statuses = await Promise.all(Array.from({ length: 20 }, () => fetch(`${rest.url}/api/bundle?q=refunds`).then((r) => r.status)));
      expect(statuses).toEqual(Array(20).fill(200));
    } finally {
      await rest.close();
    }
    const mcp = await startServer({ store });
    const client = new Client({ name: 'agent', version: '1' });
    try {
      // The session's own messages (initialize, initialized) count as two calls of the same caller.
      await client.connect(new StreamableHTTPClientTransport(new URL(`${mcp.url}/mcp`)));
      const results = await Promise.all(
        Array.from(
          { length: 20 },
          () => client.callTool({ name: 'assemble_bundle', arguments: { query: 'refunds' } }) as Promise<CallToolResult>,
        ),
      );
      expect(results.every((result) => result.isError !== true)).toBe(true);
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});

describe('network exposure is a decision', () => {
  it('a non-loopback bind without keys refuses to start, naming both ways forward', async () => {
    const error = await failure(startServer({ store, host: '0.0.0.0' }), 'invalid_input');
    expect(error.message).toMatch(/--keys FILE.*--allow-anonymous/u);
    const cli = await runCli(['serve', '--store', 'no-store-needed', '--host', '0.0.0.0']);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/without API keys.*--allow-anonymous/u);
  });
});

describe('the corpus as MCP resources', () => {
  // A server of its own: the Host and Origin checks above send many requests from the same address within a
  // second, and on a fast machine they would spend this one's per-client allowance (30 calls a second).
  let resources: RunningServer;
  beforeAll(async () => {
    resources = await startServer({ store, apiKeys: fixtureKeys() });
  });
  afterAll(async () => {
    await resources?.close();
  });

  async function mcpAs(key: string | undefined): Promise<Client> {
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`${resources.url}/mcp`),
        key === undefined ? {} : { requestInit: { headers: bearer(key) } },
      ),
    );
    return client;
  }

  it('a restricted source reads as not found without the principal, as text with it; the list shows what may be read', async () => {
    const uri = 'litm://sources/hr%2Fsalaries.md';
    const anonymous = await mcpAs(undefined);
    const alice = await mcpAs(KEYS.alice);
    try {
      const refused = await anonymous.readResource({ uri }).then(
        () => null,
        (error: Error & { code?: number }) => error,
      );
      const missing = await anonymous.readResource({ uri: 'litm://sources/no%2Fsuch.md' }).then(
        () => null,
        (error: Error & { code?: number }) => error,
      );
      // Invalid Params with the URI in the data (SEP-2164; -32002 before it), the same for both.
      expect(refused?.code).toBe(-32602);
      expect(refused?.message.replace('hr%2Fsalaries.md', 'X')).toBe(missing?.message.replace('no%2Fsuch.md', 'X'));
      expect((refused as Error & { data?: { uri?: string; code?: string } }).data).toMatchObject({ uri, code: 'not_found' });
      const read = await alice.readResource({ uri });
      expect(read.contents[0]).toMatchObject({ uri, mimeType: 'text/plain' });
      expect((read.contents[0] as { text: string }).text).toContain(HR_MARKER);
      const names = (client: Client) => client.listResources().then((page) => page.resources.map((resource) => resource.name).sort());
      expect(await names(anonymous)).toEqual(['handbook/refunds.md', 'handbook/shipping.md', 'notes/long-context.md']);
      expect(await names(alice)).toEqual(['handbook/refunds.md', 'handbook/shipping.md', 'hr/salaries.md', 'notes/long-context.md']);
      const templates = await anonymous.listResourceTemplates();
      expect(templates.resourceTemplates[0]?.uriTemplate).toBe('litm://sources/{sourceId}{?chunk,start,end,from}');
    } finally {
      await anonymous.close();
      await alice.close();
    }
  });

  it('every citation of a bundle has a resource link that reads back the cited text', async () => {
    const alice = await mcpAs(KEYS.alice);
    try {
      const result = (await alice.callTool({
        name: 'assemble_bundle',
        arguments: { query: 'refunds schedule', mode: 'lexical' },
      })) as CallToolResult;
      const pack = result.structuredContent as { citations: { ref: number; chunkId: string; textSha256: string }[] };
      const links = result.content.filter((block): block is ResourceLink => block.type === 'resource_link');
      expect(pack.citations.length).toBeGreaterThan(1);
      expect(links).toHaveLength(pack.citations.length);
      for (const [index, citation] of pack.citations.entries()) {
        const read = await alice.readResource({ uri: links[index]!.uri });
        const text = (read.contents[0] as { text: string }).text;
        expect(createHash('sha256').update(text).digest('hex'), `[${citation.ref}]`).toBe(citation.textSha256);
      }
      expect(result.content[0]?.type).toBe('text');
    } finally {
      await alice.close();
    }
  });
});

describe('access control safe by default on every door', () => {
  const readsRestricted = (texts: string[]) => texts.some((text) => text.includes(HR_MARKER) || text.includes(ENG_MARKER));
  const QUERY = `refunds ${HR_MARKER} ${ENG_MARKER} shipping`;

  it('without principals: the store, assembleBundle, assembleBriefing, both retrievers and verify read documents without an ACL only', async () => {
    expect(readsRestricted((await store.search({ text: QUERY, mode: 'lexical', limit: 50 })).map((c) => c.text))).toBe(false);
    expect(readsRestricted((await store.getChunks({ filter: { must: [] } })).map((c) => c.text))).toBe(false);
    expect(readsRestricted((await assembleBundle({ store, query: QUERY, mode: 'lexical' })).pack.items.map((i) => i.text))).toBe(false);
    const briefing = await assembleBriefing({ store, prompt: QUERY, pins: ['hr/salaries.md'], clusters: ['payroll'], mode: 'lexical' });
    expect(readsRestricted(briefing.pack.items.map((i) => i.text))).toBe(false);
    expect(briefing.pack.briefing?.missingPins).toEqual(['hr/salaries.md']);
    expect(readsRestricted((await new LangChainBundle({ store, mode: 'lexical' }).invoke(QUERY)).map((d) => d.pageContent))).toBe(false);
    expect(
      readsRestricted((await new LlamaIndexBundle({ store, mode: 'lexical' }).retrieveWithCitations(QUERY)).pack.items.map((i) => i.text)),
    ).toBe(false);
    // A full view is asked for explicitly.
    const all = await assembleBundle({ store, query: QUERY, mode: 'lexical', principals: 'all' });
    expect(readsRestricted(all.pack.items.map((i) => i.text))).toBe(true);
    const checks = await verifyCitations({ store, citations: all.pack.citations });
    const restricted = checks.filter((check) => check.sourceId === 'hr/salaries.md' || check.sourceId === 'eng/roadmap.md');
    expect(restricted.length).toBeGreaterThan(0);
    expect(restricted.every((check) => check.status === 'missing')).toBe(true);
    expect(
      (await verifyCitations({ store, citations: all.pack.citations, principals: 'all' })).every((check) => check.status === 'current'),
    ).toBe(true);
  });

  it('the CLI reads anonymously unless --principals or --all-principals says otherwise', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-acl-cli-'));
    const file = join(dir, 'store.json');
    await store.save(file);
    const texts = async (args: string[]) => {
      const out = await runCli(['bundle', QUERY, '--mode', 'lexical', '--store', file, '--json', ...args]);
      expect(out.code, out.stderr).toBe(0);
      return (JSON.parse(out.stdout) as { items: { text: string }[] }).items.map((item) => item.text);
    };
    expect(readsRestricted(await texts([]))).toBe(false);
    expect((await texts(['--principals', 'hr'])).some((text) => text.includes(HR_MARKER))).toBe(true);
    expect(readsRestricted(await texts(['--all-principals']))).toBe(true);
    const both = await runCli(['bundle', QUERY, '--store', file, '--principals', 'hr', '--all-principals']);
    expect(both.code).toBe(2);
  });
});
