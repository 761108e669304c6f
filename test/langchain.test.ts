import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { Document } from '@langchain/core/documents';
import type { BaseMessage } from '@langchain/core/messages';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnableLambda, RunnableMap, RunnablePassthrough } from '@langchain/core/runnables';
import { FakeListChatModel, SyntheticEmbeddings } from '@langchain/core/utils/testing';
import { ContextualCompressionRetriever } from '@langchain/classic/retrievers/contextual_compression';
import { MemoryVectorStore } from '@langchain/classic/vectorstores/memory';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { isLitmPackError, type Pack, MemoryHybridStore, getTokenizer } from '../src/index.js';
import {
  BriefingPackRetriever,
  BundleRetriever,
  LitmCompressor,
  PACK_RUN_NAME,
  PACK_SUMMARY_EVENT,
  SEARCH_RUN_NAME,
  formatDocumentsAsContext,
  type LitmDocumentMetadata,
  type PackSummary,
} from '../src/langchain/index.js';
import { SUPPORT_CORPUS } from './helpers/support-corpus.js';

const CORPUS = SUPPORT_CORPUS;

let store: MemoryHybridStore;

beforeAll(async () => {
  store = new MemoryHybridStore();
  await store.addDocuments(CORPUS.map((doc) => ({ ...doc, version: 'v1', metadata: { team: 'support', source: `kb/${doc.id}` } })));
});

/** Records runs and custom events the way a tracer sees them. */
class RecordingHandler extends BaseCallbackHandler {
  name = 'recording';
  override awaitHandlers = true;
  runs: { kind: string; runId: string; parentRunId: string | undefined; name: string | undefined }[] = [];
  ended = new Map<string, unknown>();
  events: { name: string; data: unknown; runId: string }[] = [];
  prompts: BaseMessage[][] = [];

  override handleRetrieverStart(
    retriever: { id: string[] },
    _query: string,
    runId: string,
    parentRunId?: string,
    _t?: string[],
    _m?: Record<string, unknown>,
    name?: string,
  ) {
    this.runs.push({ kind: 'retriever', runId, parentRunId, name: name ?? retriever.id.at(-1) });
  }
  override handleRetrieverEnd(documents: unknown, runId: string) {
    this.ended.set(runId, documents);
  }
  override handleChainStart(
    _chain: unknown,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    _t?: string[],
    _m?: Record<string, unknown>,
    _type?: string,
    name?: string,
  ) {
    this.runs.push({ kind: 'chain', runId, parentRunId, name });
  }
  override handleChainEnd(outputs: unknown, runId: string) {
    this.ended.set(runId, outputs);
  }
  override handleCustomEvent(name: string, data: unknown, runId: string) {
    this.events.push({ name, data, runId });
  }
  override handleChatModelStart(_llm: unknown, messages: BaseMessage[][]) {
    this.prompts.push(...messages);
  }
  childrenOf(runId: string) {
    return this.runs.filter((run) => run.parentRunId === runId);
  }
}

function expectSidecarMatches(documents: Document<LitmDocumentMetadata>[], pack: Pack, idsFromItems = true) {
  expect(documents).toHaveLength(pack.items.length);
  documents.forEach((doc, i) => {
    const item = pack.items[i]!;
    expect(doc.pageContent).toBe(item.text);
    if (idsFromItems) expect(doc.id).toBe(item.id);
    expect(doc.metadata.citation).toEqual(pack.citations[i]);
    expect(doc.metadata.litm).toMatchObject({ ref: i + 1, rank: item.rank, role: item.role, position: i, score: item.score });
    expect(doc.metadata.litm.packHash).toBe(pack.packHash);
  });
}

/** Ranks in context order for n items under the LITM rule: odd ranks from the front, even from the back. */
function litmRanks(n: number): number[] {
  const order = new Array<number>(n);
  let front = 0;
  let back = n - 1;
  for (let rank = 1; rank <= n; rank++) order[rank % 2 === 1 ? front++ : back--] = rank;
  return order;
}

describe('BundleRetriever (LangChain)', () => {
  it('returns documents in LITM context order with citations and litm metadata', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 400, mode: 'lexical' });
    const { documents, pack } = await retriever.retrieveWithCitations('how are refunds paid after a return?');
    expect(pack.kind).toBe('bundle');
    expect(documents.length).toBeGreaterThanOrEqual(4);
    expectSidecarMatches(documents, pack);
    expect(documents.map((d) => d.metadata.litm.rank)).toEqual(litmRanks(documents.length));
    // invoke gives the same documents
    const invoked = await retriever.invoke('how are refunds paid after a return?');
    expect(invoked.map((d) => d.pageContent)).toEqual(documents.map((d) => d.pageContent));
  });

  it("keeps the candidate's own metadata, including its own `source`", async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 400, mode: 'lexical' });
    const [first] = await retriever.invoke('gift cards refunded');
    expect(first?.metadata.team).toBe('support');
    expect(first?.metadata.source).toMatch(/^kb\//);
    expect(first?.metadata.citation?.sourceId).toBe('giftcards.md');
    expect(first?.metadata.citation?.version).toBe('v1');
  });

  it('fits the exact token budget', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 60, mode: 'lexical', encoding: 'cl100k_base' });
    const { pack } = await retriever.retrieveWithCitations('refunds returns shipping warranty');
    expect(getTokenizer('cl100k_base').count(pack.context)).toBeLessThanOrEqual(60);
    expect(pack.budget.usedTokens).toBe(getTokenizer('cl100k_base').count(pack.context));
    expect(pack.dropped.some((d) => d.reason === 'budget')).toBe(true);
  });

  it('rejects bad options at construction and bad queries before searching', async () => {
    const bad = [
      { store, maxTokens: 0 },
      { store, maxTokens: 100, mode: 'semantic' },
      { store, maxTokens: 100, format: 'html' },
      { store, maxTokens: 100, limit: -1 },
      { store, maxTokens: 100, unknownOption: true },
      { store: {}, maxTokens: 100 },
    ];
    for (const options of bad) {
      let caught: unknown;
      try {
        new BundleRetriever(options as never);
      } catch (error) {
        caught = error;
      }
      expect(isLitmPackError(caught, 'invalid_input'), JSON.stringify(Object.keys(options))).toBe(true);
    }
    const search = vi.spyOn(store, 'search');
    const retriever = new BundleRetriever({ store, maxTokens: 100 });
    await expect(retriever.invoke('   ')).rejects.toSatisfy((e) => isLitmPackError(e, 'invalid_input'));
    expect(search).not.toHaveBeenCalled();
    search.mockRestore();
  });

  it('serialises with its own namespace and name, without the store', () => {
    const retriever = new BundleRetriever({ store, maxTokens: 100, tags: ['kb'] });
    expect(BundleRetriever.lc_name()).toBe('BundleRetriever');
    expect(retriever.lc_namespace).toEqual(['litm_pack', 'retrievers']);
    expect(retriever.toJSON().id).toEqual(['litm_pack', 'retrievers', 'BundleRetriever']);
    expect(JSON.stringify(retriever.toJSON())).not.toContain('MemoryHybridStore');
    expect(retriever.tags).toEqual(['kb']);
  });

  it('gives 20 concurrent calls each their own consistent sidecar', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 300, mode: 'lexical' });
    const queries = Array.from({ length: 20 }, (_, i) => {
      const topics = ['refunds', 'shipping', 'gift cards', 'warranty', 'exchanges', 'loyalty points', 'payment details'];
      return `${topics[i % topics.length]} question ${i}`;
    });
    const results = await Promise.all(queries.map((q) => retriever.retrieveWithCitations(q)));
    results.forEach(({ documents, pack }, i) => {
      expect(pack.query).toBe(queries[i]);
      expectSidecarMatches(documents, pack);
    });
    // Each query alone gives the same bytes as under concurrency.
    for (const [i, query] of queries.entries()) {
      const alone = await retriever.retrieveWithCitations(query);
      expect(alone.pack.packHash).toBe(results[i]!.pack.packHash);
    }
    expect(new Set(results.map((r) => r.pack.packHash)).size).toBe(20);
  });
});

describe('tracing', () => {
  it('shows the retriever run with LitmSearch and LitmPack child runs and a pack summary event', async () => {
    const handler = new RecordingHandler();
    const retriever = new BundleRetriever({ store, maxTokens: 120, mode: 'lexical' });
    const { pack } = await retriever.retrieveWithCitations('refunds and returns', { callbacks: [handler] });
    await awaitAllCallbacks();

    const root = handler.runs.find((run) => run.kind === 'retriever');
    expect(root?.name).toBe('BundleRetriever');
    const children = handler.childrenOf(root!.runId);
    expect(children.map((c) => c.name)).toEqual([SEARCH_RUN_NAME, PACK_RUN_NAME]);
    const packRun = children[1]!;
    expect(handler.ended.get(packRun.runId)).toMatchObject({ packHash: pack.packHash, budget: pack.budget });

    const event = handler.events.find((e) => e.name === PACK_SUMMARY_EVENT);
    expect(event?.runId).toBe(packRun.runId);
    const summary = event?.data as PackSummary;
    expect(summary.budget).toEqual(pack.budget);
    expect(summary.coverage).toEqual(pack.coverage);
    expect(summary.itemCount).toBe(pack.items.length);
    expect(summary.dropped.total).toBe(pack.dropped.length);
    const budgetDrops = pack.dropped.filter((d) => d.reason === 'budget').length;
    expect(summary.dropped.byReason.budget ?? 0).toBe(budgetDrops);
    // The retriever run ends with the documents it returned.
    expect((handler.ended.get(root!.runId) as Document[]).length).toBe(pack.items.length);
  });

  it('traces invoke the same way', async () => {
    const handler = new RecordingHandler();
    const retriever = new BundleRetriever({ store, maxTokens: 120, mode: 'lexical' });
    await retriever.invoke('shipping costs', { callbacks: [handler], runName: 'kb-search' });
    await awaitAllCallbacks();
    const root = handler.runs.find((run) => run.kind === 'retriever');
    expect(root?.name).toBe('kb-search');
    expect(handler.childrenOf(root!.runId).map((c) => c.name)).toEqual([SEARCH_RUN_NAME, PACK_RUN_NAME]);
    expect(handler.events.filter((e) => e.name === PACK_SUMMARY_EVENT)).toHaveLength(1);
  });
});

describe('chains', () => {
  const prompt = ChatPromptTemplate.fromMessages([
    ['system', 'Answer from the numbered context only and cite [n].\n\n{context}'],
    ['human', '{question}'],
  ]);

  function buildChain(retriever: BundleRetriever, responses: string[]) {
    const model = new FakeListChatModel({ responses });
    return RunnableMap.from({
      context: retriever.pipe((docs: Document<LitmDocumentMetadata>[]) => formatDocumentsAsContext(docs)),
      question: new RunnablePassthrough<string>(),
    })
      .pipe(prompt)
      .pipe(model)
      .pipe(new StringOutputParser());
  }

  it('invoke: the model receives the pack context in LITM order', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 300, mode: 'lexical' });
    const handler = new RecordingHandler();
    const question = 'how are refunds paid after a return?';
    const answer = await buildChain(retriever, ['Refunds go to the original payment method [1].']).invoke(question, {
      callbacks: [handler],
    });
    await awaitAllCallbacks();
    expect(answer).toBe('Refunds go to the original payment method [1].');

    const { pack } = await retriever.retrieveWithCitations(question);
    expect(handler.prompts).toHaveLength(1);
    const system = handler.prompts[0]![0]!.text;
    expect(system).toContain(pack.context);
    // Best item at the start, second best at the end.
    const byRank = (rank: number) => pack.items.find((item) => item.rank === rank)!.text;
    const positions = pack.items.map((item) => system.indexOf(item.text));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(system.indexOf(byRank(1))).toBe(Math.min(...positions));
    expect(system.indexOf(byRank(2))).toBe(Math.max(...positions));
    expect(handler.prompts[0]![1]!.text).toBe(question);
  });

  it('batch: each prompt gets the context of its own question', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 200, mode: 'lexical' });
    const handler = new RecordingHandler();
    const questions = ['gift cards refunded?', 'express shipping price?', 'warranty for defects?'];
    const answers = await buildChain(retriever, ['a', 'b', 'c']).batch(questions, { callbacks: [handler] });
    await awaitAllCallbacks();
    expect(answers).toHaveLength(3);
    expect(handler.prompts).toHaveLength(3);
    for (const question of questions) {
      const { pack } = await retriever.retrieveWithCitations(question);
      const prompt = handler.prompts.find((messages) => messages[1]!.text === question);
      expect(prompt![0]!.text).toContain(pack.context);
    }
  });
});

describe('BriefingPackRetriever (LangChain)', () => {
  it('puts grounding first, evidence next and a caveats document last', async () => {
    const retriever = new BriefingPackRetriever({ store, maxTokens: 500, mode: 'lexical', pins: ['privacy.md'] });
    const { documents, pack } = await retriever.retrieveWithCitations('refunds and payment');
    expect(pack.kind).toBe('briefing');
    const caveats = documents.at(-1)!;
    expect(caveats.metadata.litm.role).toBe('caveats');
    expect(caveats.metadata.citation).toBeUndefined();
    expect(caveats.pageContent).toBe(pack.caveats);
    expectSidecarMatches(documents.slice(0, -1), pack);
    expect(documents[0]?.metadata.citation?.sourceId).toBe('privacy.md');
    const roles = documents.slice(0, -1).map((d) => d.metadata.litm.role);
    expect(roles.lastIndexOf('grounding')).toBeLessThan(roles.indexOf('evidence'));
    expect(formatDocumentsAsContext(documents)).toBe(pack.context);
  });

  it('leaves the caveats document out with includeCaveats: false', async () => {
    const retriever = new BriefingPackRetriever({ store, maxTokens: 500, mode: 'lexical', includeCaveats: false });
    const { documents, pack } = await retriever.retrieveWithCitations('refunds and payment');
    expect(documents.every((d) => d.metadata.litm.role !== 'caveats')).toBe(true);
    expectSidecarMatches(documents, pack);
  });
});

describe('formatDocumentsAsContext', () => {
  it("renders our documents exactly as the pack's context, in every format", async () => {
    for (const format of ['markdown', 'xml', 'text'] as const) {
      const retriever = new BundleRetriever({ store, maxTokens: 90, mode: 'lexical', format });
      const { documents, pack } = await retriever.retrieveWithCitations('refunds returns warranty');
      expect(pack.items.some((item) => item.truncated) || pack.truncated).toBe(true);
      expect(formatDocumentsAsContext(documents)).toBe(pack.context);
    }
  });

  it('packs foreign documents and refuses to change the format of ours', async () => {
    const docs = [
      new Document({ pageContent: 'First fact.', metadata: { source: 'a.md' } }),
      new Document({ pageContent: 'Second fact.', metadata: { source: 'b.md' } }),
      new Document({ pageContent: 'Third fact.', metadata: { source: 'c.md' } }),
    ];
    const context = formatDocumentsAsContext(docs);
    expect(context.indexOf('First fact.')).toBeLessThan(context.indexOf('Third fact.'));
    expect(context.indexOf('Third fact.')).toBeLessThan(context.indexOf('Second fact.'));
    expect(formatDocumentsAsContext([])).toBe('');

    const retriever = new BundleRetriever({ store, maxTokens: 200, mode: 'lexical' });
    const ours = await retriever.invoke('refunds');
    expect(() => formatDocumentsAsContext(ours, { format: 'xml' })).toThrow(
      expect.objectContaining({ name: 'LitmPackError', code: 'unsupported' }),
    );
  });
});

describe('LitmCompressor', () => {
  it('packs any retriever behind ContextualCompressionRetriever', async () => {
    const embeddings = new SyntheticEmbeddings({ vectorSize: 16 });
    const texts = [...CORPUS.map((doc) => doc.text), CORPUS[0]!.text]; // one exact duplicate
    const vectorStore = await MemoryVectorStore.fromTexts(
      texts,
      texts.map((_, i) => ({ source: `doc-${i % CORPUS.length}`, n: i })),
      embeddings,
    );
    const baseRetriever = vectorStore.asRetriever(9);
    const compressor = new LitmCompressor({ maxTokens: 150 });
    const retriever = new ContextualCompressionRetriever({ baseCompressor: compressor, baseRetriever });
    const handler = new RecordingHandler();

    const query = 'refund to the original payment method';
    const base = await baseRetriever.invoke(query);
    const documents = (await retriever.invoke(query, { callbacks: [handler] })) as Document<LitmDocumentMetadata>[];
    await awaitAllCallbacks();

    const { pack } = await compressor.compressWithCitations(base, query);
    expectSidecarMatches(documents, pack, false); // documents keep their own (absent) ids
    expect(getTokenizer('o200k_base').count(pack.context)).toBeLessThanOrEqual(150);
    expect(pack.dropped.some((d) => d.reason === 'duplicate' || d.reason === 'near-duplicate')).toBe(true);
    // No scores in MemoryVectorStore metadata: the base retriever's order is the rank order.
    const keptInBaseOrder = base.filter((doc) => documents.some((d) => d.pageContent === doc.pageContent));
    expect(documents[0]!.pageContent).toBe(keptInBaseOrder[0]!.pageContent);
    expect(documents.at(-1)!.pageContent).toBe(keptInBaseOrder[1]!.pageContent);
    // Original metadata kept, input documents untouched.
    expect(typeof documents[0]!.metadata.n).toBe('number');
    expect(base.every((doc) => !('litm' in doc.metadata))).toBe(true);

    const root = handler.runs.find((run) => run.kind === 'retriever' && run.name === 'ContextualCompressionRetriever');
    const packRun = handler.runs.find((run) => run.name === PACK_RUN_NAME);
    expect(packRun?.parentRunId).toBe(root?.runId);
    expect(handler.events.some((e) => e.name === PACK_SUMMARY_EVENT && e.runId === packRun?.runId)).toBe(true);
  });

  it('reads ids, sources and scores from metadata with fallbacks', async () => {
    const compressor = new LitmCompressor({ maxTokens: 500, maxPerSource: 1 });
    const docs = [
      new Document({ pageContent: 'Low scored text about cats.', metadata: { score: 0.1, source: 'x' } }),
      new Document({ pageContent: 'High scored text about dogs.', metadata: { relevanceScore: 0.9, sourceId: 'y' }, id: 'dog' }),
      new Document({ pageContent: 'Middle scored text about birds.', metadata: { score: 0.5, id: 'bird', source: 'x' } }),
    ];
    const { documents, pack } = await compressor.compressWithCitations(docs, 'animals');
    expect(documents.map((d) => d.metadata.citation?.chunkId)).toEqual(['dog', 'bird']);
    expect(documents.map((d) => d.metadata.citation?.sourceId)).toEqual(['y', 'x']);
    expect(documents.map((d) => d.id)).toEqual(['dog', undefined]);
    expect(pack.dropped).toEqual([{ id: expect.stringMatching(/^sha256:/), reason: 'source-cap' }]);
  });

  it('re-packs documents from our own retriever by their scores, not their LITM order', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 400, mode: 'lexical' });
    const { documents, pack } = await retriever.retrieveWithCitations('refunds returns');
    const again = await new LitmCompressor({ maxTokens: 400 }).compressWithCitations(documents, 'refunds returns');
    expect(again.pack.items.map((i) => i.id)).toEqual(pack.items.map((i) => i.id));
    expect(again.documents.map((d) => d.metadata.litm.rank)).toEqual(documents.map((d) => d.metadata.litm.rank));
  });

  it('validates its options', () => {
    expect(() => new LitmCompressor({ maxTokens: -5 })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => new LitmCompressor({ maxTokens: 5, mode: 'dense' } as never)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });

  it('works as a plain step in a chain', async () => {
    const compressor = new LitmCompressor({ maxTokens: 200 });
    const step = RunnableLambda.from((docs: Document[]) => compressor.compressDocuments(docs, 'facts'));
    const out = await step.invoke([new Document({ pageContent: 'One.' }), new Document({ pageContent: 'Two.' })]);
    expect(out.map((d) => d.pageContent)).toEqual(['One.', 'Two.']);
  });
});
