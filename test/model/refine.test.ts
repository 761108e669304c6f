import { CohereRerank as LangChainCohereRerank } from '@langchain/cohere';
import { CohereRerank as LlamaIndexCohereRerank } from '@llamaindex/cohere';
import { TextNode } from '@llamaindex/core/schema';
import { CohereClient } from 'cohere-ai';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type LitmPackErrorCode,
  HttpReranker,
  RerankStageSchema,
  splitSentences,
  assembleBriefing,
  MemoryHybridStore,
  type EmbeddingsLike,
} from '../../src/index.js';
import { BriefingPackRetriever, BundleRetriever, CompressorReranker, LitmCompressor } from '../../src/langchain/index.js';
import { BundleRetriever as LlamaBundleRetriever, LitmPostprocessor, PostprocessorReranker } from '../../src/llamaindex/index.js';
import { rerankCandidates } from '../../src/refine/index.js';
import { sentenceKey } from '../../src/core/sentences.js';
import { runCli } from '../helpers/cli.js';
import { closedPort } from '../helpers/loopback.js';
import { failure } from '../helpers/failure.js';

const base = inject('modelUrl');

/**
 * A client of the model server's OpenAI-compatible `/v1/embeddings` (real all-MiniLM-L6-v2 vectors), with a
 * fault header to inject failures and a count of its calls.
 */
class ServerEmbeddings implements EmbeddingsLike {
  documentCalls = 0;
  documentTexts = 0;
  constructor(readonly headers: Record<string, string> = {}) {}

  async #embed(input: string[]): Promise<number[][]> {
    const response = await fetch(`${base}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...this.headers },
      body: JSON.stringify({ model: 'all-MiniLM-L6-v2', input }),
    });
    if (!response.ok) throw Object.assign(new Error(`embeddings answered ${response.status}`), { status: response.status });
    const json = (await response.json()) as { data: { index: number; embedding: number[] }[] };
    return json.data.sort((a, b) => a.index - b.index).map((d) => d.embedding);
  }

  async embedQuery(text: string): Promise<number[]> {
    return (await this.#embed([text]))[0]!;
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    this.documentCalls += 1;
    this.documentTexts += texts.length;
    return this.#embed(texts);
  }
}

const texts = [
  'The cat sat on the mat all afternoon.',
  'Refunds are issued within 14 days of a return being received.',
  'Shipping to Europe takes about a week.',
  'A receipt is required for every refund request.',
  'Our office plants are watered on Mondays.',
];
const query = 'how long do refunds take?';

const ranked = (results: { index: number; score: number }[]) => [...results].sort((a, b) => b.score - a.score).map((r) => r.index);

describe('HttpReranker against the model server (real all-MiniLM-L6-v2 scores)', () => {
  it('speaks TEI /rerank and Cohere-style /v1/rerank with the same scores, in batches', async () => {
    const tei = new HttpReranker({ url: `${base}/rerank` });
    const cohere = new HttpReranker({ url: `${base}/v1/rerank`, model: 'all-MiniLM-L6-v2' });
    expect(tei.protocol).toBe('tei');
    expect(cohere.protocol).toBe('cohere');
    const a = await tei.rerank(query, texts);
    const b = await cohere.rerank(query, texts);
    expect(ranked(a)[0]).toBe(1);
    expect(ranked(a).slice(0, 2).sort()).toEqual([1, 3]);
    const byIndex = (r: { index: number; score: number }[]) => r.sort((x, y) => x.index - y.index).map((x) => x.score);
    expect(byIndex(b)).toEqual(byIndex([...a]).map((s): unknown => expect.closeTo(s, 5)));
    const batched = await new HttpReranker({ url: `${base}/rerank`, batchSize: 2 }).rerank(query, texts);
    expect(byIndex(batched)).toEqual(byIndex([...a]).map((s): unknown => expect.closeTo(s, 5)));
  });

  it('maps every protocol error to a typed code', async () => {
    const faulty = (fault: string, path = '/rerank') => new HttpReranker({ url: `${base}${path}`, headers: { 'x-fault': fault } });
    await failure(faulty('status:503').rerank(query, texts), 'server_error');
    await failure(faulty('status:401', '/v1/rerank').rerank(query, texts), 'upstream_unauthorized');
    await failure(faulty('status:422').rerank(query, texts), 'bad_request');
    const limited = await failure(faulty('retry-after:7').rerank(query, texts), 'rate_limited');
    expect(limited.retryAfterMs).toBe(7000);
    await failure(faulty('malformed').rerank(query, texts), 'bad_response');
    await failure(faulty('malformed', '/v1/rerank').rerank(query, texts), 'bad_response');
    await failure(new HttpReranker({ url: `http://127.0.0.1:${await closedPort()}/rerank` }).rerank(query, texts), 'connection_failed');
    // The server's own validation: an empty query is a 422 (TEI) / 400 (Cohere-style).
    await failure(new HttpReranker({ url: `${base}/rerank` }).rerank(' ', texts), 'bad_request');
    const controller = new AbortController();
    const pending = faulty('delay:2000').rerank(query, texts, { signal: controller.signal });
    controller.abort();
    await failure(pending, 'aborted');
  });
});

describe("reranker adapters over the frameworks' real CohereRerank classes", () => {
  it("LangChain CohereRerank (a compressor setting relevanceScore) gives the model's scores; its topN bounds the pool", async () => {
    const client = new CohereClient({ token: 'test', environment: base });
    const all = await new CompressorReranker(new LangChainCohereRerank({ client, model: 'all-MiniLM-L6-v2', topN: texts.length })).rerank(
      query,
      texts,
    );
    const direct = await new HttpReranker({ url: `${base}/v1/rerank` }).rerank(query, texts);
    expect(ranked(all)).toEqual(ranked(direct));
    const top2 = await new CompressorReranker(new LangChainCohereRerank({ client, model: 'all-MiniLM-L6-v2', topN: 2 })).rerank(
      query,
      texts,
    );
    expect(top2.map((r) => r.index).sort()).toEqual([1, 3]);
  });

  it("LlamaIndex CohereRerank (a node postprocessor) gives the model's scores", async () => {
    const postprocessor = new LlamaIndexCohereRerank({ apiKey: 'test', baseUrl: base, model: 'all-MiniLM-L6-v2', topN: texts.length });
    const results = await new PostprocessorReranker(postprocessor).rerank(query, texts);
    const direct = await new HttpReranker({ url: `${base}/v1/rerank` }).rerank(query, texts);
    expect(ranked(results)).toEqual(ranked(direct));
  });
});

describe('rerank and sentence selection in the pipeline, and their failures', () => {
  let store: MemoryHybridStore;
  beforeAll(async () => {
    store = new MemoryHybridStore();
    await store.addDocuments(texts.map((text, i) => ({ id: `doc-${i}.md`, text: `${text} Filler sentence number ${i} about nothing.` })));
  });

  it("the reranker's score becomes the packing score; the retrieval score stays in metadata", async () => {
    const reranker = new HttpReranker({ url: `${base}/rerank` });
    const retriever = new BundleRetriever({ store, maxTokens: 1000, mode: 'lexical', rerank: { reranker } });
    const { documents, pack } = await retriever.retrieveWithCitations('refunds receipt days');
    const plain = await store.search({ text: 'refunds receipt days', mode: 'lexical', limit: 50 });
    expect(pack.degraded).toEqual([]);
    const direct = await reranker.rerank(
      'refunds receipt days',
      [...plain].map((c) => c.text),
    );
    for (const doc of documents) {
      const index = plain.findIndex((c) => c.id === doc.id);
      expect(doc.metadata.litm.score).toBeCloseTo(direct.find((r) => r.index === index)!.score, 5);
      expect(doc.metadata.retrievalScore).toBe(plain[index]!.score);
    }
  });

  it('a failing or slow reranker never fails the pack: fused order, and `degraded` everywhere', async () => {
    const plain = await new BundleRetriever({ store, maxTokens: 1000, mode: 'lexical' }).retrieveWithCitations('refunds receipt days');
    const faults: [Record<string, string>, LitmPackErrorCode, number?][] = [
      [{ 'x-fault': 'status:503' }, 'server_error'],
      [{ 'x-fault': 'retry-after:3' }, 'rate_limited'],
      [{ 'x-fault': 'malformed' }, 'bad_response'],
      [{ 'x-fault': 'delay:3000' }, 'timeout', 300],
    ];
    for (const [headers, code, timeoutMs] of faults) {
      const reranker = new HttpReranker({ url: `${base}/rerank`, headers });
      const retriever = new BundleRetriever({
        store,
        maxTokens: 1000,
        mode: 'lexical',
        rerank: { reranker, ...(timeoutMs ? { timeoutMs } : {}) },
      });
      const { documents, pack } = await retriever.retrieveWithCitations('refunds receipt days');
      expect(pack.degraded, code).toEqual([{ stage: 'rerank', code }]);
      expect(pack.items.map((i) => i.id)).toEqual(plain.pack.items.map((i) => i.id));
      for (const doc of documents) expect(doc.metadata.litm.degraded).toEqual([{ stage: 'rerank', code }]);
    }
    const refused = new HttpReranker({ url: `http://127.0.0.1:${await closedPort()}/rerank` });
    const { pack } = await new LlamaBundleRetriever({
      store,
      maxTokens: 1000,
      mode: 'lexical',
      rerank: { reranker: refused },
    }).retrieveWithCitations('refunds');
    expect(pack.degraded).toEqual([{ stage: 'rerank', code: 'connection_failed' }]);
    // The caller's own abort is not a degradation.
    const controller = new AbortController();
    const slow = new HttpReranker({ url: `${base}/rerank`, headers: { 'x-fault': 'delay:2000' } });
    const stage = RerankStageSchema.parse({ reranker: slow });
    const pending = rerankCandidates('refunds', await store.search({ text: 'refunds', mode: 'lexical' }), stage, controller.signal);
    controller.abort();
    await failure(pending, 'aborted');
  });

  it('briefings say which stage degraded in their caveats', async () => {
    const reranker = new HttpReranker({ url: `${base}/rerank`, headers: { 'x-fault': 'status:500' } });
    const retriever = new BriefingPackRetriever({ store, maxTokens: 1000, mode: 'lexical', rerank: { reranker } });
    const { documents, pack } = await retriever.retrieveWithCitations('refunds');
    expect(pack.caveats).toContain('Degraded: the rerank stage failed (server_error) and was bypassed.');
    expect(documents.at(-1)?.metadata.litm.role).toBe('caveats');
    expect(documents.at(-1)?.metadata.litm.degraded).toEqual([{ stage: 'rerank', code: 'server_error' }]);
  });

  it("briefings: one call to the real reranker for the prompt's and the cluster's searches; the CLI too", async () => {
    const clustered = new MemoryHybridStore();
    await clustered.addDocuments([
      { id: 'pinned.md', text: 'Read this page before answering any customer.' },
      ...texts.map((text, i) => ({ id: `doc-${i}.md`, text, ...(i % 2 === 0 ? { clusters: ['even'] } : {}) })),
    ]);
    const http = new HttpReranker({ url: `${base}/rerank` });
    let calls = 0;
    const reranker = { rerank: (q: string, t: string[], o?: { signal?: AbortSignal }) => ((calls += 1), http.rerank(q, t, o)) };
    const embeddings = new ServerEmbeddings();
    const { pack, candidates } = await assembleBriefing({
      store: clustered,
      prompt: query,
      pins: ['pinned.md'],
      clusters: ['even'],
      mode: 'lexical',
      maxTokens: 1000,
      rerank: { reranker },
      compress: { mode: 'sentences', embeddings },
    });
    expect(calls).toBe(1);
    expect(embeddings.documentCalls).toBe(1);
    expect(pack.degraded).toEqual([]);
    const reranked = candidates.filter((c) => c.sourceId !== 'pinned.md');
    const direct = await http.rerank(
      query,
      reranked.map((c) => c.text),
    );
    reranked.forEach((c, i) => expect(c.score).toBeCloseTo(direct.find((r) => r.index === i)!.score, 5));
    expect(pack.items[0]!.sourceId).toBe('pinned.md');
    expect(pack.items.find((item) => item.sourceId === 'doc-1.md')?.rank).toBe(1); // the refunds sentence leads

    const dir = `${process.env.TMPDIR ?? '/tmp'}/litm-refine-briefing-${process.pid}`;
    const { mkdir, writeFile, rm } = await import('node:fs/promises');
    await mkdir(`${dir}/docs`, { recursive: true });
    try {
      for (const [i, text] of texts.entries())
        await writeFile(`${dir}/docs/doc-${i}.md`, `---\nclusters: [${i % 2 === 0 ? 'even' : 'odd'}]\n---\n${text}\n`);
      expect((await runCli(['ingest', `${dir}/docs`, '--store', `${dir}/store`, '--quiet'])).code).toBe(0);
      const out = await runCli([
        'briefing',
        '--store',
        `${dir}/store`,
        '--prompt',
        query,
        '--clusters',
        'even',
        '--rerank',
        `${base}/rerank`,
        '--compress',
        'sentences',
        '--json',
      ]);
      expect(out.code, out.stderr).toBe(0);
      const cli = JSON.parse(out.stdout) as {
        degraded: unknown[];
        items: { text: string; score: number }[];
        citations: { spans?: unknown[] }[];
      };
      expect(cli.degraded).toEqual([]);
      expect(cli.citations.every((c) => Array.isArray(c.spans))).toBe(true);
      expect(cli.items.some((item) => item.text.startsWith('Refunds are issued within 14 days'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sentence vectors: one batched embed call per pack, cached by sentence hash; failures fall back to BM25', async () => {
    const embeddings = new ServerEmbeddings();
    const retriever = new BundleRetriever({ store, maxTokens: 1000, mode: 'lexical', compress: { mode: 'sentences', embeddings } });
    const first = await retriever.retrieveWithCitations('how long until refunds come back?');
    expect(first.pack.degraded).toEqual([]);
    expect(first.pack.items.length).toBeGreaterThan(0);
    expect(embeddings.documentCalls).toBe(1);
    const sentences = new Set(
      first.pack.items.length > 0
        ? texts.flatMap((t, i) =>
            splitSentences(`${t} Filler sentence number ${i} about nothing.`).map((r) =>
              sentenceKey(`${t} Filler sentence number ${i} about nothing.`.slice(r.start, r.end)),
            ),
          )
        : [],
    );
    expect(embeddings.documentTexts).toBeLessThanOrEqual(sentences.size);
    await retriever.retrieveWithCitations('how long until refunds come back?');
    expect(embeddings.documentCalls).toBe(1);

    for (const [headers, code, timeoutMs] of [
      [{ 'x-fault': 'status:503' }, 'server_error'],
      [{ 'x-fault': 'delay:3000' }, 'timeout', 300],
    ] as const) {
      const failing = new ServerEmbeddings(headers);
      const degraded = new BundleRetriever({
        store,
        maxTokens: 1000,
        mode: 'lexical',
        compress: { mode: 'sentences', embeddings: failing, ...(timeoutMs ? { timeoutMs } : {}) },
      });
      const { pack } = await degraded.retrieveWithCitations('refunds receipt');
      const bm25 = await new BundleRetriever({
        store,
        maxTokens: 1000,
        mode: 'lexical',
        compress: { mode: 'sentences' },
      }).retrieveWithCitations('refunds receipt');
      expect(pack.degraded).toEqual([{ stage: 'sentence-embeddings', code }]);
      expect(pack.items.map((i) => i.text)).toEqual(bm25.pack.items.map((i) => i.text));
    }
  });

  it('the compressor and the postprocessor rerank and select too', async () => {
    const reranker = new HttpReranker({ url: `${base}/rerank` });
    const docs = (await store.search({ text: 'refunds', mode: 'lexical' })).map((c) => ({
      pageContent: c.text,
      metadata: { id: c.id, score: c.score },
    }));
    const compressor = new LitmCompressor({ maxTokens: 1000, rerank: { reranker }, compress: { mode: 'sentences' } });
    const { pack } = await compressor.compressWithCitations(docs, 'how long do refunds take?');
    expect(pack.items[0]?.text.startsWith('Refunds are issued within 14 days')).toBe(true);
    expect(pack.citations[0]?.spans?.length).toBeGreaterThan(0);
    const postprocessor = new LitmPostprocessor({
      maxTokens: 1000,
      rerank: { reranker: new HttpReranker({ url: `${base}/rerank`, headers: { 'x-fault': 'status:502' } }) },
    });
    const nodes = docs.map((d) => ({ node: new TextNode({ id_: String(d.metadata.id), text: d.pageContent }), score: d.metadata.score }));
    const processed = await postprocessor.postprocessWithCitations(nodes, 'refunds');
    expect(processed.pack.degraded).toEqual([{ stage: 'rerank', code: 'server_error' }]);
    expect(processed.nodes[0]?.node.metadata.litm.degraded).toEqual([{ stage: 'rerank', code: 'server_error' }]);
  });

  it('the CLI reranks with --rerank and prints what degraded', async () => {
    const dir = `${process.env.TMPDIR ?? '/tmp'}/litm-refine-${process.pid}`;
    const docsDir = `${dir}/docs`;
    const { mkdir, writeFile, rm } = await import('node:fs/promises');
    await mkdir(docsDir, { recursive: true });
    try {
      for (const [i, text] of texts.entries()) await writeFile(`${docsDir}/doc-${i}.md`, `${text}\n`);
      expect((await runCli(['ingest', docsDir, '--store', `${dir}/store`, '--quiet'])).code).toBe(0);
      const ok = await runCli([
        'bundle',
        'refunds receipt',
        '--store',
        `${dir}/store`,
        '--rerank',
        `${base}/rerank`,
        '--compress',
        'sentences',
        '--json',
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      const pack = JSON.parse(ok.stdout) as { degraded: unknown[]; citations: { spans?: unknown[] }[] };
      expect(pack.degraded).toEqual([]);
      expect(pack.citations.every((c) => Array.isArray(c.spans))).toBe(true);
      const port = await closedPort();
      const degraded = await runCli([
        'bundle',
        'refunds receipt',
        '--store',
        `${dir}/store`,
        '--rerank',
        `http://127.0.0.1:${port}/rerank`,
      ]);
      expect(degraded.code, degraded.stderr).toBe(0);
      expect(degraded.stdout).toContain('Degraded: rerank (connection_failed)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
