// Sentence selection, reranking and diversity on the briefing path: assembleBriefing takes them as every other
// surface does, and the CLI and both frameworks' briefing retrievers reach them through it (one path).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/base/canonical.js';
import {
  isLitmPackError,
  toCanonicalJson,
  PackSchema,
  type Pack,
  assembleBriefing,
  type BriefingRequest,
  type Reranker,
  MemoryHybridStore,
  verifyCitations,
  type ChunkRecord,
  type IngestDocument,
  type SearchRequest,
} from '../src/index.js';
import { BriefingPackRetriever as LangChainBriefing } from '../src/langchain/index.js';
import { BriefingPackRetriever as LlamaIndexBriefing } from '../src/llamaindex/index.js';
import { runCli } from './helpers/cli.js';
import { closedPort } from './helpers/loopback.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { TopicEmbeddings, topicCorpus } from './helpers/topic-embeddings.js';
import { failure } from './helpers/failure.js';

const docs: IngestDocument[] = [
  {
    id: 'docs/handbook.md',
    text: 'Welcome to the support handbook. Read it before your first shift. Escalate legal threats to the duty manager within one hour.',
  },
  {
    id: 'docs/billing/refunds.md',
    clusters: ['billing'],
    text: 'The billing team sits on the second floor. Refunds are issued within 14 days of a return being received. The team lunch is on Fridays.',
  },
  {
    id: 'docs/billing/invoices.md',
    clusters: ['billing'],
    text: 'Invoices are sent on the first working day. Refund credits appear on the next invoice. Paper invoices cost extra.',
  },
  {
    id: 'docs/ops/shipping.md',
    clusters: ['ops'],
    text: 'Parcels leave the warehouse within two days. Refund labels are printed on request. The loading dock opens at six.',
  },
  { id: 'notes/refunds.md', text: 'Meeting notes from March. Customers ask about refund timing weekly. Nobody took minutes in April.' },
];

/** A reranker that scores by how many words of the query a text shares, and records every call. */
class CountingReranker implements Reranker {
  calls: { query: string; texts: string[] }[] = [];
  constructor(readonly fail = false) {}

  rerank(query: string, texts: string[]) {
    this.calls.push({ query, texts });
    if (this.fail) return Promise.reject(Object.assign(new Error('rerank service down'), { status: 503 }));
    const words = new Set(query.toLowerCase().match(/\w+/g));
    return Promise.resolve(
      texts
        .map((text, index) => ({ index, score: (text.toLowerCase().match(/\w+/g) ?? []).filter((w) => words.has(w)).length / 10 }))
        .sort((a, b) => b.score - a.score),
    );
  }
}

/** A store that records the search requests it answers. */
class RecordingStore extends MemoryHybridStore {
  searches: SearchRequest[] = [];
  override async search(request: SearchRequest) {
    this.searches.push(request);
    return super.search(request);
  }
}

let store: MemoryHybridStore;
let chunks: Map<string, ChunkRecord>;
beforeAll(async () => {
  store = new MemoryHybridStore();
  await store.addDocuments(docs);
  chunks = new Map((await store.getChunks({ filter: { must: [] } })).map((c) => [c.id, c]));
});

const base = { mode: 'lexical' as const, maxTokens: 1500, pins: ['handbook.md'], clusters: ['billing'] };
const prompt = 'how long do refunds take';

describe('assembleBriefing with compress', () => {
  it('selects sentences of every candidate but the pins, with exact spans into the source', async () => {
    const { pack } = await assembleBriefing({ store, ...base, prompt, compress: { mode: 'sentences' } });
    const whole = (await assembleBriefing({ store, ...base, prompt })).pack;
    expect(pack.items.map((i) => i.sourceId)).toEqual(expect.arrayContaining(['docs/handbook.md', 'docs/billing/refunds.md']));
    let narrowed = 0;
    for (const [index, item] of pack.items.entries()) {
      const citation = pack.citations[index]!;
      const chunk = chunks.get(item.id)!;
      expect(citation.textSha256).toBe(chunk.textSha256);
      expect(citation.keptTextSha256).toBe(sha256Hex(item.text));
      // The chunk is its source here (one chunk per document), so spans slice the chunk text.
      const shown = citation.spans!.map((s) => chunk.text.slice(s.start - chunk.span.start, s.end - chunk.span.start));
      expect(item.text.split(' … ').join(' ')).toContain(shown[0]!);
      for (const sentence of shown) expect(item.text).toContain(sentence);
      if (item.sourceId === 'docs/handbook.md')
        expect(item.text).toBe(chunk.text); // the pin stays whole
      else if (item.text !== chunk.text) narrowed += 1;
    }
    expect(narrowed).toBeGreaterThan(0);
    const refunds = pack.items.find((i) => i.sourceId === 'docs/billing/refunds.md')!;
    expect(refunds.text).toContain('Refunds are issued within 14 days');
    expect(refunds.text).not.toContain('The team lunch is on Fridays');
    expect(pack.budget.usedTokens).toBeLessThan(whole.budget.usedTokens);
    expect(PackSchema.parse(pack)).toEqual(pack);
    // Citations of selected items still verify: the hash pins the whole chunk the sentences came from.
    const checks = await verifyCitations({ store, pack });
    expect(checks.map((c) => c.status)).toEqual(pack.items.map(() => 'current'));
  });

  it('embeds the sentences of the whole pool in one call; a failing embedder is reported, selection runs on BM25', async () => {
    const embeddings = new FakeEmbeddings();
    const { pack } = await assembleBriefing({ store, ...base, prompt, compress: { mode: 'sentences', embeddings } });
    expect(embeddings.documentCalls).toBe(1);
    expect(pack.degraded).toEqual([]);
    const failing = new FakeEmbeddings({ failOnCall: 1 });
    const degraded = (await assembleBriefing({ store, ...base, prompt, compress: { mode: 'sentences', embeddings: failing } })).pack;
    const bm25 = (await assembleBriefing({ store, ...base, prompt, compress: { mode: 'sentences' } })).pack;
    expect(degraded.degraded).toEqual([{ stage: 'sentence-embeddings', code: 'server_error' }]);
    expect(degraded.items.map((i) => i.text)).toEqual(bm25.items.map((i) => i.text));
    expect(degraded.caveats).toContain('Degraded: the sentence-embeddings stage failed (server_error) and was bypassed.');
  });
});

describe('assembleBriefing with rerank', () => {
  it("scores the cluster's and the prompt's searches in ONE reranker call; pins are never reranked", async () => {
    const reranker = new CountingReranker();
    const { pack, candidates } = await assembleBriefing({ store, ...base, prompt, rerank: { reranker } });
    expect(reranker.calls).toHaveLength(1);
    const sent = reranker.calls[0]!;
    expect(sent.query).toBe(prompt);
    expect(new Set(sent.texts).size).toBe(sent.texts.length); // each distinct text once
    expect(sent.texts).toContain(chunks.get([...chunks.keys()].find((id) => id.startsWith('docs/billing/refunds.md'))!)!.text);
    expect(sent.texts).not.toContain(chunks.get([...chunks.keys()].find((id) => id.startsWith('docs/handbook.md'))!)!.text);
    const direct = await reranker.rerank(prompt, sent.texts);
    for (const item of pack.items) {
      if (item.sourceId === 'docs/handbook.md') {
        expect(item.score).toBe(0);
        continue;
      }
      const text = chunks.get(item.id)!.text;
      expect(item.score).toBe(direct.find((r) => sent.texts[r.index] === text)!.score);
      expect(candidates.find((c) => c.id === item.id)!.metadata?.retrievalScore).toEqual(expect.any(Number));
    }
    expect(pack.degraded).toEqual([]);
  });

  it('a failing reranker leaves the briefing as it would be without one, and says so in degraded and the caveats', async () => {
    const reranker = new CountingReranker(true);
    const { pack } = await assembleBriefing({ store, ...base, prompt, rerank: { reranker } });
    const plain = (await assembleBriefing({ store, ...base, prompt })).pack;
    expect(reranker.calls).toHaveLength(1);
    expect(pack.degraded).toEqual([{ stage: 'rerank', code: 'server_error' }]);
    expect(pack.caveats).toContain('Degraded: the rerank stage failed (server_error) and was bypassed.');
    expect(pack.items).toEqual(plain.items);
  });
});

describe('assembleBriefing with diversity', () => {
  it("runs MMR in the prompt's search and in each cluster's search for it", async () => {
    const topics = new RecordingStore({ embeddings: new TopicEmbeddings() });
    await topics.addDocuments(topicCorpus().map((d) => ({ ...d, clusters: [d.id.split('-')[0]!] })));
    const request: BriefingRequest = {
      store: topics,
      prompt: 'topic-tea guide',
      clusters: ['bread'],
      mode: 'dense',
      limit: 5,
      maxPool: 5,
      maxTokens: 3000,
      groundingCount: 0,
    };
    const plain = (await assembleBriefing(request)).pack;
    topics.searches = [];
    const diverse = (await assembleBriefing({ ...request, diversity: 0.8 })).pack;
    expect(topics.searches).toHaveLength(2);
    expect(topics.searches.every((s) => s.diversity === 0.8)).toBe(true);
    const topicsOf = (pack: Pack) => new Set(pack.items.map((i) => i.sourceId.split('-')[0]));
    expect(topicsOf(plain)).toEqual(new Set(['tea', 'bread']));
    expect(topicsOf(diverse).size).toBeGreaterThanOrEqual(4);
    // Without the store's embeddings MMR cannot run, and says so.
    await failure(assembleBriefing({ store, prompt, diversity: 0.5, maxTokens: 500 }), 'unsupported');
  });
});

describe('assembleBriefing: the refine stages need a prompt', () => {
  it('compress, rerank or diversity without a prompt is invalid_input naming them; diversity 0 is no MMR', async () => {
    const reranker = new CountingReranker();
    const error = await failure(
      assembleBriefing({ store, ...base, compress: { mode: 'sentences' }, rerank: { reranker } }),
      'invalid_input',
    );
    expect(error.message).toMatch(/compress, rerank work on the prompt's results/);
    await failure(assembleBriefing({ store, ...base, prompt: '  ', diversity: 0.3 }), 'invalid_input');
    expect((await assembleBriefing({ store, ...base, diversity: 0 })).pack.items.length).toBeGreaterThan(0);
    expect(reranker.calls).toHaveLength(0);
    await failure(assembleBriefing({ store, ...base, prompt, compress: { mode: 'words' } } as never), 'invalid_input');
  });
});

describe('briefing retrievers reach the stages through assembleBriefing', () => {
  const settings = { ...base, compress: { mode: 'sentences' as const } };

  it("LangChain: the same pack as assembleBriefing, degradations in every document's metadata", async () => {
    const retriever = new LangChainBriefing({ store, ...settings, rerank: { reranker: new CountingReranker() } });
    const { pack } = await retriever.retrieveWithCitations(prompt);
    const direct = await assembleBriefing({ store, ...settings, rerank: { reranker: new CountingReranker() }, prompt });
    expect(toCanonicalJson(pack)).toBe(toCanonicalJson(direct.pack));
    expect(pack.citations.every((c) => c.spans !== undefined)).toBe(true);
    const failing = new LangChainBriefing({ store, ...settings, rerank: { reranker: new CountingReranker(true) } });
    const { documents } = await failing.retrieveWithCitations(prompt);
    for (const doc of documents) expect(doc.metadata.litm.degraded).toEqual([{ stage: 'rerank', code: 'server_error' }]);
    expect(documents.at(-1)!.pageContent).toContain('Degraded: the rerank stage failed');
    await expect(retriever.invoke('')).rejects.toSatisfy((e: unknown) => isLitmPackError(e, 'invalid_input'));
    expect(() => new LangChainBriefing({ store, ...settings, diversity: 2 })).toThrow(/diversity/);
  });

  it('LlamaIndex: the same pack as assembleBriefing', async () => {
    const retriever = new LlamaIndexBriefing({ store, ...settings });
    const { pack, nodes } = await retriever.retrieveWithCitations(prompt);
    expect(toCanonicalJson(pack)).toBe(toCanonicalJson((await assembleBriefing({ store, ...settings, prompt })).pack));
    expect(pack.items.some((i) => i.text !== chunks.get(i.id)!.text)).toBe(true); // sentences selected
    expect(nodes.at(-1)!.node.metadata.litm.role).toBe('caveats');
  });
});

describe('litm-pack briefing with --compress, --rerank and --diversity', () => {
  it('selects sentences, reports an unreachable reranker, and refuses MMR without embeddings', async () => {
    const work = mkdtempSync(join(tmpdir(), 'litm-briefing-refine-'));
    try {
      const storeDir = join(work, 'store');
      expect((await runCli(['ingest', 'examples/corpus', '--store', storeDir, '--quiet'])).code).toBe(0);
      const args = [
        'briefing',
        '--store',
        storeDir,
        '--pins',
        'token-budgets.md',
        '--clusters',
        'retrieval',
        '--prompt',
        'Where should the strongest passage go?',
      ];
      const out = await runCli([...args, '--compress', 'sentences', '--json']);
      expect(out.code, out.stderr).toBe(0);
      const pack = PackSchema.parse(JSON.parse(out.stdout));
      expect(pack.citations.every((c) => Array.isArray(c.spans) && c.keptTextSha256 !== undefined)).toBe(true);
      expect(pack.items.some((i) => i.text.includes(' … '))).toBe(true);
      const down = await runCli([...args, '--rerank', `http://127.0.0.1:${await closedPort()}/rerank`, '--rerank-timeout', '2000']);
      expect(down.code, down.stderr).toBe(0);
      expect(down.stdout).toContain('Degraded: rerank (connection_failed)');
      const mmr = await runCli([...args, '--diversity', '0.5']);
      expect(mmr.code).toBe(2);
      expect(mmr.stderr).toMatch(/diversity \(MMR\) needs dense vectors/);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
