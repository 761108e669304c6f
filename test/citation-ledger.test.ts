// The citation ledger and the stale feed, as a deployment uses them: files ingested with the CLI, served by a
// server that records every pack's citations beside the store, the cited files changed and re-ingested; then
// the served citations that went stale are found over MCP (list_stale_citations), over HTTP
// (GET /api/citations/stale) and by the CLI (citations stale), each caller seeing only sources it may read. A
// line a crash tore is skipped, never fatal, and never swallows the next one.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pack } from '../src/core/schemas.js';
import { ReloadingStore } from '../src/memory/reloading-store.js';
import { startServer, type RunningServer } from '../src/server/server.js';
import { CitationLedger, ledgerPathBeside } from '../src/service/ledger.js';
import { StaleAnswerSchema, type StaleAnswer } from '../src/service/responses.js';
import { runCli } from './helpers/cli.js';
import { KEYS, bearer, fixtureKeys } from './helpers/serve-fixtures.js';

const REFUNDS_V1 = '# Refunds\n\nRefunds are paid within 14 days of the return.\n\n## Gift cards\n\nGift cards are never refunded.';
const REFUNDS_V2 = '# Refunds\n\nRefunds are paid within 30 days of the return.\n\n## Gift cards\n\nGift cards are never refunded.';
const SALARY_V1 = '# Salary refunds\n\nRefunds of salary advances are netted monthly by payroll.';
const SALARY_V2 = '# Salary refunds\n\nRefunds of salary advances are netted every quarter by payroll.';

let work: string;
let docs: string;
let storeDir: string;

async function ingest(): Promise<void> {
  for (const [folder, acl] of [
    ['public', []],
    ['hr', ['--acl', 'hr']],
  ] as const) {
    const out = await runCli(['ingest', join(docs, folder), '--store', storeDir, '--quiet', ...acl]);
    expect(out.code, out.stderr).toBe(0);
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'litm-ledger-'));
  docs = join(work, 'docs');
  storeDir = join(work, 'store');
  await mkdir(join(docs, 'public'), { recursive: true });
  await mkdir(join(docs, 'hr'), { recursive: true });
  await writeFile(join(docs, 'public', 'refunds.md'), REFUNDS_V1);
  await writeFile(join(docs, 'hr', 'salary.md'), SALARY_V1);
  await ingest();
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function mcpAs(server: RunningServer, key?: string): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), key === undefined ? {} : { requestInit: { headers: bearer(key) } }),
  );
  return client;
}

async function staleOverMcp(client: Client, args: Record<string, unknown> = {}): Promise<StaleAnswer> {
  const result = (await client.callTool({ name: 'list_stale_citations', arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return StaleAnswerSchema.parse(result.structuredContent);
}

async function staleOverHttp(server: RunningServer, key?: string, query = ''): Promise<StaleAnswer> {
  const answer = await fetch(`${server.url}/api/citations/stale${query}`, key === undefined ? {} : { headers: bearer(key) });
  expect(answer.status).toBe(200);
  return StaleAnswerSchema.parse(await answer.json());
}

const sources = (answer: StaleAnswer) => answer.citations.map((c) => `${c.status} ${c.sourceId}`).sort();

describe('the stale feed of a served corpus', () => {
  let server: RunningServer;
  let ledger: CitationLedger;
  let storeFile: string;
  let alicePack: Pack;
  let anonymousPack: Pack;

  beforeAll(async () => {
    storeFile = join(storeDir, 'store.json');
    ledger = await CitationLedger.open({ path: ledgerPathBeside(storeFile) });
    const store = await ReloadingStore.open(storeFile);
    server = await startServer({ store, apiKeys: fixtureKeys(), ledger, rateLimit: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("serves bundles over MCP and HTTP, and records each one's citations in the ledger beside the store", async () => {
    const alice = await mcpAs(server, KEYS.alice);
    try {
      const result = (await alice.callTool({
        name: 'assemble_bundle',
        arguments: { query: 'refunds netted paid days', mode: 'lexical' },
      })) as CallToolResult;
      alicePack = result.structuredContent as unknown as Pack;
      expect([...new Set(alicePack.citations.map((c) => c.sourceId))].sort()).toEqual([
        expect.stringContaining('salary.md'),
        expect.stringContaining('refunds.md'),
      ]);
    } finally {
      await alice.close();
    }
    const anonymous = await fetch(`${server.url}/api/bundle?q=${encodeURIComponent('refunds paid days')}&mode=lexical`);
    anonymousPack = (await anonymous.json()) as Pack;
    expect(anonymousPack.citations.map((c) => c.sourceId).every((id) => id.includes('refunds'))).toBe(true);
    await ledger.flush();
    const lines = (await readFile(ledger.path, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { pack: string; caller: string; principals: string[]; citations: unknown[] });
    expect(lines.map((line) => [line.pack, line.caller, line.principals])).toEqual([
      [alicePack.packHash, 'alice', ['hr']],
      [anonymousPack.packHash, 'anonymous', []],
    ]);
    expect(lines[0]!.citations).toHaveLength(alicePack.citations.length);
    // Nothing has changed yet: nothing is stale.
    const client = await mcpAs(server, KEYS.alice);
    try {
      expect((await staleOverMcp(client)).citations).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('finds the citations of changed files after a re-ingest, each caller only what it may read', async () => {
    await writeFile(join(docs, 'public', 'refunds.md'), REFUNDS_V2);
    await writeFile(join(docs, 'hr', 'salary.md'), SALARY_V2);
    await ingest();

    const alice = await mcpAs(server, KEYS.alice);
    const carol = await mcpAs(server, KEYS.carol);
    try {
      const seenByAlice = await staleOverMcp(alice);
      const salary = alicePack.citations.find((c) => c.sourceId.includes('salary'))!;
      const refunds = alicePack.citations.find((c) => c.sourceId.includes('refunds') && c.textSha256 !== undefined)!;
      expect(sources(seenByAlice)).toEqual(expect.arrayContaining([`changed ${salary.sourceId}`, `changed ${refunds.sourceId}`]));
      const salaryEntry = seenByAlice.citations.find((c) => c.sourceId === salary.sourceId)!;
      expect(salaryEntry).toMatchObject({
        chunkId: salary.chunkId,
        textSha256: salary.textSha256,
        citedSpan: salary.span,
        currentVersion: expect.any(String),
      });
      expect(salaryEntry.packs).toEqual([{ packHash: alicePack.packHash, servedAt: expect.any(String), kind: 'bundle', caller: 'alice' }]);
      // The same page over HTTP.
      expect(await staleOverHttp(server, KEYS.alice)).toEqual(seenByAlice);

      // carol (no principals) and an anonymous caller see the public source only; who was served is not told.
      for (const answer of [await staleOverMcp(carol), await staleOverHttp(server, KEYS.carol), await staleOverHttp(server)]) {
        expect(answer.citations.every((c) => c.sourceId.includes('refunds'))).toBe(true);
        expect(answer.citations.length).toBeGreaterThan(0);
        expect(JSON.stringify(answer)).not.toContain('salary');
        expect(
          answer.citations.flatMap((c) => c.packs.map((p) => p.caller)).filter((caller) => caller !== undefined && caller !== 'anonymous'),
        ).toEqual([]);
      }
      // Newest first, a page at a time: every page reaches the same citations.
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await staleOverMcp(alice, { limit: 1, ...(cursor === undefined ? {} : { cursor }) });
        expect(page.citations.length).toBeLessThanOrEqual(1);
        paged.push(...page.citations.map((c) => `${c.sourceId} ${c.chunkId}`));
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      expect(paged).toEqual(seenByAlice.citations.map((c) => `${c.sourceId} ${c.chunkId}`));
      const lastServed = seenByAlice.citations.map((c) => c.lastServedAt);
      expect([...lastServed].sort().reverse()).toEqual(lastServed);
      // Filters: a status, and a time after every pack.
      expect((await staleOverMcp(alice, { status: 'missing' })).citations).toEqual([]);
      expect((await staleOverHttp(server, KEYS.alice, '?since=2999-01-01')).citations).toEqual([]);
      expect((await staleOverHttp(server, KEYS.alice, '?status=changed,moved')).citations.length).toBe(seenByAlice.citations.length);
    } finally {
      await alice.close();
      await carol.close();
    }
    // The gauge of the last check.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^litm_pack_stale_citations [1-9]\d*$/mu);
  });

  it('a source removed from the store is missing for a caller who could read it when it was served, and for no one else', async () => {
    const salaryId = alicePack.citations.find((c) => c.sourceId.includes('salary'))!.sourceId;
    const removed = await runCli(['remove', salaryId, '--store', storeDir]);
    expect(removed.code, removed.stderr).toBe(0);
    const seenByAlice = await staleOverHttp(server, KEYS.alice, '?status=missing');
    expect(sources(seenByAlice)).toContain(`missing ${salaryId}`);
    // bob reads eng, not hr: the citation was served to hr.
    expect(JSON.stringify(await staleOverHttp(server, KEYS.bob))).not.toContain('salary');
    expect(JSON.stringify(await staleOverHttp(server))).not.toContain('salary');
  });

  it('the CLI lists the same feed from the ledger file (exit 3 when something is stale); bad arguments are refused by name', async () => {
    await ledger.flush();
    const all = await runCli(['citations', 'stale', '--ledger', ledger.path, '--store', storeDir, '--all-principals', '--json']);
    expect(all.code, all.stderr).toBe(3);
    const lines = all.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; sourceId?: string; packs?: { caller?: string }[] });
    expect(lines.at(-1)).toMatchObject({ type: 'summary', checked: expect.any(Number), skippedLines: 0 });
    expect(lines.filter((line) => line.type === 'citation').map((line) => line.sourceId)).toEqual(
      expect.arrayContaining([expect.stringContaining('salary'), expect.stringContaining('refunds')]),
    );
    // A full view is told who was served.
    expect(lines.flatMap((line) => line.packs ?? []).map((pack) => pack.caller)).toEqual(expect.arrayContaining(['alice', 'anonymous']));
    const anonymous = await runCli(['citations', 'stale', '--store', storeDir]);
    expect(anonymous.code).toBe(3);
    expect(anonymous.stdout).not.toContain('salary');
    expect(anonymous.stdout).toMatch(/changed .*refunds/u);
    const bad = await runCli(['citations', 'stale', '--store', storeDir, '--status', 'current']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/status/u);
  });
});

describe("without a ledger (the library's default)", () => {
  it('records nothing, does not offer list_stale_citations, and refuses the stale feed by saying why', async () => {
    const { stat } = await import('node:fs/promises');
    const beside = ledgerPathBeside(join(storeDir, 'store.json'));
    const sizeOf = () =>
      stat(beside).then(
        (info) => info.size,
        () => 0,
      );
    const before = await sizeOf();
    const plain = await startServer({ store: await ReloadingStore.open(join(storeDir, 'store.json')), rateLimit: false });
    const client = await mcpAs(plain);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).not.toContain('list_stale_citations');
      await client.callTool({ name: 'assemble_bundle', arguments: { query: 'refunds' } });
      const answer = await fetch(`${plain.url}/api/citations/stale`);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ code: 'unsupported', error: expect.stringMatching(/keeps no citation ledger/u) });
      await new Promise((done) => setTimeout(done, 50));
      expect(await sizeOf()).toBe(before);
    } finally {
      await client.close();
      await plain.close();
    }
  });
});

describe('the ledger file', () => {
  it('survives a torn last line: it is skipped, the next append starts a line of its own, and nothing else is lost', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-ledger-torn-'));
    try {
      const path = join(dir, 'citations.ledger.jsonl');
      const pack = {
        kind: 'bundle',
        packHash: 'a'.repeat(64),
        citations: [{ ref: 1, sourceId: 's.md', chunkId: 's.md#1', textSha256: 'b'.repeat(64), span: { start: 0, end: 5 } }],
      } as unknown as Pack;
      const first = await CitationLedger.open({ path });
      first.record(pack, { id: 'alice', principals: ['hr'] });
      await first.flush();
      // A crash in the middle of the next line: half of it, no newline.
      const whole = await readFile(path, 'utf8');
      await appendFile(path, whole.slice(0, Math.floor(whole.length / 2)));
      // Read as it stands: the complete line only.
      const reader = await CitationLedger.open({ path });
      expect([...(await reader.served()).values()].map((served) => served.count)).toEqual([1]);
      // The next process appends: its line is read whole; the torn one is counted as skipped.
      const next = await CitationLedger.open({ path });
      next.record({ ...pack, packHash: 'c'.repeat(64) }, { id: 'bob', principals: [] });
      await next.flush();
      const after = await CitationLedger.open({ path });
      const [served] = [...(await after.served()).values()];
      expect(served?.count).toBe(2);
      expect(served?.packs.map((p) => p.caller).sort()).toEqual(['alice', 'bob']);
      expect(after.skippedLines).toBe(1);
      expect(after.entries).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is set aside by size and read across its files; the oldest beyond keepFiles are removed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-ledger-rotate-'));
    try {
      const path = join(dir, 'citations.ledger.jsonl');
      const ledger = await CitationLedger.open({ path, maxFileBytes: 1024, keepFiles: 2 });
      for (let i = 0; i < 12; i += 1) {
        const pack = {
          kind: 'bundle',
          packHash: String(i).padStart(64, '0'),
          citations: [{ ref: 1, sourceId: `s${i}.md`, chunkId: `s${i}.md#1`, textSha256: 'b'.repeat(64) }],
        } as unknown as Pack;
        ledger.record(pack, { id: 'alice', principals: [] });
      }
      await ledger.flush();
      const { readdir } = await import('node:fs/promises');
      const files = (await readdir(dir)).sort();
      expect(files[0]).toBe('citations.ledger.jsonl');
      expect(files.length).toBe(3);
      // What the kept files hold is read; nothing is read twice.
      const reader = await CitationLedger.open({ path });
      const served = [...(await reader.served()).values()];
      expect(served.length).toBeGreaterThan(2);
      expect(served.every((entry) => entry.count === 1)).toBe(true);
      expect(served.map((entry) => entry.citation.sourceId)).toContain('s11.md');
      expect(reader.skippedLines).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
