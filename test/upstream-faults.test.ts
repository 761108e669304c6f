// A service litm-pack calls (here an embeddings server) that refuses litm-pack's own credentials is a fault of
// the deployment: an HTTP caller with a valid key gets 502 `upstream_unauthorized`, never a 401 of its own
// with WWW-Authenticate, and the answer names no internal endpoint. The CLI exits 3 (a fault), not 2.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_SURFACES, MemoryHybridStore, OpenAICompatibleEmbeddings } from '../src/index.js';
import { ApiKeys, startServer, type RunningServer } from '../src/server/index.js';
import { runCli } from './helpers/cli.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { sendJson, startLoopback } from './helpers/loopback.js';

const MODEL = 'fake-model';
let work: string;
let refusing: Awaited<ReturnType<typeof startLoopback>>;
let server: RunningServer;
let storeFile: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'litm-upstream-'));
  refusing = await startLoopback((_request, response) => sendJson(response, 401, { error: { message: 'invalid api key' } }));
  // Vectors of the model the refusing server claims to run, so only its answer differs.
  const embeddings = Object.assign(new FakeEmbeddings(), { model: MODEL });
  const writer = new MemoryHybridStore({ embeddings });
  await writer.addDocuments([{ id: 'refunds.md', text: 'Refunds are paid within 14 days to the original payment method.' }]);
  storeFile = join(work, 'store.json');
  await writer.save(storeFile);
  const store = await MemoryHybridStore.load(storeFile, {
    embeddings: new OpenAICompatibleEmbeddings({ url: `${refusing.url}/v1`, model: MODEL, retries: 0 }),
  });
  server = await startServer({
    store,
    rateLimit: false,
    requireAuth: true,
    apiKeys: new ApiKeys({ keys: [{ id: 'alice', key: 'a-long-random-secret-key', principals: [] }] }),
  });
});

afterAll(async () => {
  await server?.close();
  await refusing?.close();
  await rm(work, { recursive: true, force: true });
});

describe("an upstream service that refuses litm-pack's credentials", () => {
  it('is a 502 upstream fault for a caller with a valid key: no WWW-Authenticate, no internal endpoint', async () => {
    const response = await fetch(`${server.url}/api/bundle?q=refunds&mode=dense`, {
      headers: { authorization: 'Bearer a-long-random-secret-key' },
    });
    const body = await response.text();
    expect(response.status).toBe(502);
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(JSON.parse(body)).toMatchObject({ code: 'upstream_unauthorized' });
    expect(body).not.toContain(refusing.url);
    expect(body).not.toContain('127.0.0.1');
  });

  it("the caller's own missing key is still the caller's 401", async () => {
    const response = await fetch(`${server.url}/api/bundle?q=refunds&mode=dense`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('the CLI exits 3 (a fault that a key fixes), saying which service refused', async () => {
    const out = await runCli([
      'bundle',
      'refunds',
      '--mode',
      'dense',
      '--store',
      storeFile,
      '--embeddings',
      `${refusing.url}/v1`,
      '--embed-model',
      MODEL,
    ]);
    expect(out.code).toBe(ERROR_SURFACES.upstream_unauthorized.exit);
    expect(out.code).toBe(3);
    expect(out.stderr).toMatch(/embeddings server .* answered 401.*check the API key/u);
  });
});
