// Inputs found by an adversarial pass that were answered badly: each now gets a clear, typed answer.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, assembleBundle, loadDocuments, packBundle, type Pack, type SkippedFile } from '../src/index.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { runCli } from './helpers/cli.js';
import { failure } from './helpers/failure.js';

const work = mkdtempSync(join(tmpdir(), 'litm-hardening-'));
let server: RunningServer;
let store: MemoryHybridStore;

beforeAll(async () => {
  store = new MemoryHybridStore();
  await store.addDocuments([{ id: 'refunds.md', text: 'Refunds are paid within 14 days.' }]);
  server = await startServer({ store, rateLimit: false, requestTimeoutMs: 400 });
});

afterAll(async () => {
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

/** `{ must: [{ must: [ … { key, match } … ] }] }`, `depth` filters deep. */
function nested(depth: number): Record<string, unknown> {
  let filter: Record<string, unknown> = { must: [{ key: 'sourceId', match: { value: 'refunds.md' } }] };
  for (let i = 1; i < depth; i += 1) filter = { must: [filter] };
  return filter;
}

describe('a filter nested thousands of levels deep', () => {
  it('is invalid_input naming the limit, in the library and on the HTTP API (not a 500)', async () => {
    const error = await failure(assembleBundle({ store, query: 'refunds', filter: nested(6000) }), 'invalid_input');
    expect(error.message).toMatch(/nested deeper than 32 levels/u);
    // Written as text: JSON.stringify itself recurses through the nesting.
    const leaf = '{"key":"sourceId","match":{"value":"refunds.md"}}';
    const body = `{"q":"refunds","filter":${'{"must":['.repeat(8000)}${leaf}${']}'.repeat(8000)}}`;
    const response = await fetch(`${server.url}/api/bundle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_input' });
    // A filter within the limit still works.
    const ok = await assembleBundle({ store, query: 'refunds', filter: nested(32) });
    expect(ok.pack.items).toHaveLength(1);
  });
});

describe('a BigInt in candidate metadata', () => {
  it('is invalid_input whatever the order of the candidates (never a TypeError when its item is kept)', () => {
    const plain = { id: 'a', text: 'Refunds take 14 days.', score: 1 };
    const odd = { id: 'b', text: 'Returns take 30 days.', score: 0.5, metadata: { size: 10n } as Record<string, unknown> };
    for (const candidates of [
      [plain, odd],
      [odd, plain],
    ]) {
      let thrown: unknown;
      try {
        packBundle({ query: 'refunds', maxTokens: 200, candidates });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ name: 'LitmPackError', code: 'invalid_input' });
      expect(String((thrown as Error).message)).toMatch(/bigint, which JSON cannot carry/u);
    }
  });
});

describe('a request body sent slowly', () => {
  it('is answered 408 and its connection closed once the request timeout passes', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    try {
      socket.write('POST /api/pack HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"que');
      const ended = await Promise.race([
        closed.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
      ]);
      expect(ended).toBe(true);
      expect(received).toMatch(/^HTTP\/1\.1 408/u);
    } finally {
      socket.destroy();
    }
  });
});

describe("a query string naming an object's own machinery", () => {
  it('?constructor=1 and ?__proto__=1 are unknown parameters, named as such', async () => {
    for (const name of ['constructor', '__proto__', 'hasOwnProperty']) {
      const response = await fetch(`${server.url}/api/bundle?q=refunds&${name}=1`);
      const body = (await response.json()) as { code: string; error: string };
      expect(response.status, name).toBe(400);
      expect(body.error).toBe(`unknown option "${name}"`);
      expect(body.error).not.toMatch(/function|native code/u);
    }
  });
});

describe('files ingest cannot read as documents', () => {
  it('a FIFO named like a document is skipped as not a regular file, never read (the ingest ends)', async () => {
    const dir = join(work, 'fifo');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'real.md'), '# Real\n\nSome text.');
    const fifo = join(dir, 'pipe.md');
    execFileSync('mkfifo', [fifo]);
    const skipped: SkippedFile[] = [];
    const docs = await loadDocuments([join(dir, 'real.md'), fifo], { base: work, onSkip: (skip) => skipped.push(skip) });
    expect(docs.map((doc) => doc.id)).toEqual(['fifo/real.md']);
    expect(skipped).toEqual([{ path: fifo, reason: 'not-a-file', message: 'not a regular file (a FIFO, socket or device)' }]);
    // Through a folder it is not walked at all; the CLI ends and says what it skipped.
    const out = await runCli(['ingest', fifo, join(dir, 'real.md'), '--store', join(work, 'fifo-store'), '--quiet']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('not a regular file');
  });

  it('a file of headings alone is skipped with a reason, not stored as nothing in silence', async () => {
    const dir = join(work, 'headings');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'outline.md'), '---\ntitle: Outline\n---\n# Part one\n\n## Section\n\n');
    writeFileSync(join(dir, 'body.md'), '# Body\n\nText to index.');
    const out = await runCli(['ingest', dir, '--store', join(work, 'headings-store'), '--quiet']);
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/skipped .*outline\.md: no text to index/u);
    expect(out.stdout).toMatch(/Ingested 1 file .*\nSkipped 1 file: 1 with no text to index\./u);
  });
});

describe('names with terminal escape sequences', () => {
  it('reach the terminal as visible symbols in every table the CLI prints', async () => {
    const dir = join(work, 'escapes');
    mkdirSync(dir, { recursive: true });
    const name = 'red\u001b[31m\u001b]0;owned\u0007.md';
    writeFileSync(join(dir, name), '# Refunds\n\nRefunds are paid within 14 days.');
    const storePath = join(work, 'escapes-store');
    const ingested = await runCli(['ingest', dir, '--store', storePath]);
    expect(ingested.code).toBe(0);
    const bundle = await runCli(['bundle', 'refunds', '--store', storePath]);
    const json = await runCli(['bundle', 'refunds', '--store', storePath, '--json']);
    writeFileSync(join(work, 'pack.json'), json.stdout);
    const verify = await runCli(['verify', join(work, 'pack.json'), '--store', storePath]);
    const rankings = await runCli(['rankings', 'refunds', '--store', storePath]);
    for (const out of [ingested, bundle, verify, rankings]) {
      // eslint-disable-next-line no-control-regex -- BEL and ESC must not reach the terminal
      expect(out.stdout + out.stderr).not.toMatch(/[\u0007\u001b]/u);
    }
    expect(bundle.stdout).toContain('red␛[31m␛]0;owned␇.md');
    expect(verify.stdout).toContain('␛[31m');
    // JSON keeps the id exactly (JSON escapes controls itself).
    expect((JSON.parse(json.stdout) as Pack).citations[0]?.sourceId).toBe(`escapes/${name}`);
  });
});
