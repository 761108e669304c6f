// `litm-pack rankings` embeds the query as `bundle` does: --embeddings/--embed-model, or the LITM_EMBEDDINGS_*
// variables, so its dense arm runs (its own `--mode dense` error recommends exactly that).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import type { Rankings } from '../src/store/types.js';
import { runCli } from './helpers/cli.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { sendJson, startLoopback } from './helpers/loopback.js';

const MODEL = 'fake-model';
const fake = new FakeEmbeddings();
let work: string;
let storeFile: string;
let embeddingsServer: Awaited<ReturnType<typeof startLoopback>>;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'litm-rankings-'));
  // An OpenAI-compatible /v1/embeddings answering the same vectors the store was written with.
  embeddingsServer = await startLoopback((request, response) => {
    const input = (request.body as { input: string[] }).input;
    sendJson(response, 200, {
      object: 'list',
      model: MODEL,
      data: input.map((text, index) => ({ object: 'embedding', index, embedding: fake.embed(text) })),
    });
  });
  const writer = new MemoryHybridStore({ embeddings: Object.assign(new FakeEmbeddings(), { model: MODEL }) });
  await writer.addDocuments([
    { id: 'refunds.md', text: 'Refunds are paid within 14 days to the original payment method.' },
    { id: 'shipping.md', text: 'Shipping is free above 50 euros; express shipping takes one day.' },
  ]);
  storeFile = join(work, 'store.json');
  await writer.save(storeFile);
});

afterAll(async () => {
  await embeddingsServer?.close();
  await rm(work, { recursive: true, force: true });
});

describe('rankings with embeddings', () => {
  it('takes --embeddings and --embed-model: the dense arm runs', async () => {
    const out = await runCli([
      'rankings',
      'refunds payment',
      '--mode',
      'dense',
      '--store',
      storeFile,
      '--embeddings',
      `${embeddingsServer.url}/v1`,
      '--embed-model',
      MODEL,
      '--json',
    ]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const rankings = JSON.parse(out.stdout) as Rankings;
    expect(rankings.mode).toBe('dense');
    expect(rankings.dense?.[0]?.id).toMatch(/^refunds\.md/u);
    expect(embeddingsServer.requests.some((request) => request.path === '/v1/embeddings')).toBe(true);
  });

  it('reads LITM_EMBEDDINGS_URL and LITM_EMBEDDINGS_MODEL as bundle does; hybrid then has both arms', async () => {
    const out = await runCli(['rankings', 'refunds payment', '--store', storeFile, '--json'], undefined, {
      env: { LITM_EMBEDDINGS_URL: `${embeddingsServer.url}/v1`, LITM_EMBEDDINGS_MODEL: MODEL },
    });
    expect(out.code, out.stderr).toBe(0);
    const rankings = JSON.parse(out.stdout) as Rankings;
    expect(rankings.mode).toBe('hybrid');
    expect(rankings.dense).not.toBeNull();
    expect(rankings.lexical).not.toBeNull();
  });

  it('without them, --mode dense still says what to give', async () => {
    const out = await runCli(['rankings', 'refunds', '--mode', 'dense', '--store', storeFile], undefined, {
      env: { LITM_EMBEDDINGS_URL: undefined, LITM_EMBEDDINGS_MODEL: undefined },
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/--mode dense needs --embeddings URL --embed-model NAME/u);
  });
});
