import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAIEmbedding } from '@llamaindex/openai';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MemoryHybridStore, OpenAICompatibleEmbeddings, PackSchema, isLitmPackError, packBundle } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { readSaved } from '../helpers/store-files.js';

const base = inject('modelUrl');
const MODEL = 'all-MiniLM-L6-v2';
const work = mkdtempSync(join(tmpdir(), 'litm-model-embeddings-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const DOCS = [
  { id: 'refunds.md', text: 'Refunds are issued to the original payment method within 14 days of receiving the return.' },
  { id: 'shipping.md', text: 'Standard shipping takes three to five business days; express delivery arrives the next day.' },
  { id: 'warranty.md', text: 'The warranty covers manufacturing defects for two years from the date of purchase.' },
  { id: 'cookies.md', text: 'Our chocolate chip cookies are baked fresh every morning with brown butter.' },
];

const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));

describe('OpenAICompatibleEmbeddings against a server of real all-MiniLM-L6-v2 vectors', () => {
  const embeddings = new OpenAICompatibleEmbeddings({ url: `${base}/v1`, model: MODEL, batchSize: 3 });

  it('gives the memory store real similarities: a paraphrase finds its passage with partial or strong confidence', async () => {
    const store = new MemoryHybridStore({ embeddings });
    await store.addDocuments(DOCS);
    expect(store.embedding).toEqual({ model: MODEL, dimension: 384 });
    const candidates = await store.search({ text: 'How long until I get my money back?', mode: 'dense', limit: 4 });
    expect(candidates[0]?.sourceId).toBe('refunds.md');
    const pack = packBundle({ query: 'How long until I get my money back?', candidates, maxTokens: 500 });
    expect(pack.coverage.topSimilarity).toBeGreaterThan(0.4);
    expect(['partial', 'strong']).toContain(pack.coverage.confidence);
  });

  it("maps the server's faults to typed errors", async () => {
    const faulty = (fault: string) =>
      new OpenAICompatibleEmbeddings({ url: `${base}/v1`, model: MODEL, retries: 1, retryBaseDelayMs: 1, headers: { 'x-fault': fault } });
    const cases: [string, string][] = [
      ['status:503', 'server_error'],
      ['status:401', 'upstream_unauthorized'],
      ['malformed', 'bad_response'],
      ['retry-after:120', 'rate_limited'],
    ];
    for (const [fault, code] of cases) {
      const error = await faulty(fault)
        .embedQuery('x')
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(isLitmPackError(error, code as never), `${fault}: ${String(error)}`).toBe(true);
    }
    const unknownModel = await new OpenAICompatibleEmbeddings({ url: `${base}/v1`, model: 'text-embedding-3-small' }).embedQuery('x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isLitmPackError(unknownModel, 'bad_request')).toBe(true);
    expect(String(unknownModel)).toContain('is model "text-embedding-3-small" served there?');
  });
});

describe("LlamaIndex's OpenAIEmbedding as the store embeddings", () => {
  it('embeds through the LlamaIndex class and agrees with the OpenAI-compatible provider', async () => {
    const llamaEmbedding = new OpenAIEmbedding({ model: MODEL, apiKey: 'not-needed', baseURL: `${base}/v1`, maxRetries: 0 });
    const store = new MemoryHybridStore({ embeddings: llamaEmbedding });
    await store.addDocuments(DOCS);
    expect(store.embedding).toEqual({ model: MODEL, dimension: 384 });
    const [best] = await store.search({ text: 'freshly baked biscuits', mode: 'dense' });
    expect(best?.sourceId).toBe('cookies.md');

    const ours = await new OpenAICompatibleEmbeddings({ url: `${base}/v1`, model: MODEL }).embedQuery('freshly baked biscuits');
    const theirs = await llamaEmbedding.getQueryEmbedding({ type: 'text', text: 'freshly baked biscuits' });
    expect(cosine(ours, theirs!)).toBeGreaterThan(0.9999);
  });
});

describe('the CLI with --embeddings', () => {
  const store = join(work, 'store');
  const flags = ['--embeddings', `${base}/v1`, '--embed-model', MODEL];

  it('ingest + bundle --mode hybrid give a strong or partial confidence', async () => {
    const ingest = await runCli(['ingest', 'examples/corpus', '--store', store, ...flags]);
    expect(ingest.stderr).toBe('');
    expect(ingest.code).toBe(0);
    expect((await readSaved(join(store, 'store.json'))).header).toMatchObject({ embeddingModel: MODEL, dimension: 384 });

    // The environment works as the flags do.
    const bundle = await runCli(
      ['bundle', 'Why put the best passage first and the second best last?', '--store', store, '--mode', 'hybrid', '--json'],
      undefined,
      {
        env: { LITM_EMBEDDINGS_URL: `${base}/v1`, LITM_EMBEDDINGS_MODEL: MODEL },
      },
    );
    expect(bundle.stderr).toBe('');
    const pack = PackSchema.parse(JSON.parse(bundle.stdout));
    expect(['strong', 'partial']).toContain(pack.coverage.confidence);
    expect(pack.citations[0]?.sourceId).toBe('examples/corpus/lost-in-the-middle.md');
  });

  it('refuses a query embedder of another model (exit 3), and says when the vectors go unused', async () => {
    const other = await runCli([
      'bundle',
      'refunds',
      '--store',
      store,
      '--embeddings',
      `${base}/v1`,
      '--embed-model',
      `sentence-transformers/${MODEL}`,
    ]);
    expect(other.code).toBe(3);
    expect(other.stderr).toContain(
      `made by the embedding model "${MODEL}" (dimension 384); these embeddings use "sentence-transformers/${MODEL}"`,
    );

    const without = await runCli(['bundle', 'refunds', '--store', store, '--json'], undefined, {
      env: { LITM_EMBEDDINGS_URL: undefined, LITM_EMBEDDINGS_MODEL: undefined },
    });
    expect(without.code).toBe(0);
    expect(without.stderr).toContain(`the store holds 384-d vectors of ${MODEL}, but no --embeddings was given: searching with BM25 only`);

    const ingestWithout = await runCli(['ingest', 'examples/corpus', '--store', store], undefined, {
      env: { LITM_EMBEDDINGS_URL: undefined, LITM_EMBEDDINGS_MODEL: undefined },
    });
    expect(ingestWithout.code).toBe(2);
    expect(ingestWithout.stderr).toContain(`ingest with --embeddings URL --embed-model ${MODEL} so new chunks get vectors too`);
  });
});
