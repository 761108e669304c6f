import { Settings } from '@llamaindex/core/global';
import { MockLLM } from '@llamaindex/core/llms/mock';
import { RetrieverQueryEngine } from '@llamaindex/core/query-engine';
import { getResponseSynthesizer } from '@llamaindex/core/response-synthesizers';
import { BaseRetriever } from '@llamaindex/core/retriever';
import { Document as LlamaDocument, MetadataMode, type NodeWithScore } from '@llamaindex/core/schema';
import { VectorStoreIndex } from 'llamaindex/indices';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { getTokenizer, isLitmPackError, type Pack, MemoryHybridStore } from '../src/index.js';
import { BriefingPackRetriever, BundleRetriever, LitmPostprocessor, type LitmDocumentMetadata } from '../src/llamaindex/index.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { SUPPORT_CORPUS } from './helpers/support-corpus.js';
import { WordEmbedding } from './helpers/word-embedding.js';

const CORPUS = SUPPORT_CORPUS.filter((doc) => doc.id !== 'privacy.md');

let store: MemoryHybridStore;

beforeAll(async () => {
  store = new MemoryHybridStore({ embeddings: new FakeEmbeddings() });
  await store.addDocuments(CORPUS.map((doc) => ({ ...doc, version: '2024-06', metadata: { team: 'support' } })));
});

/** A MockLLM-backed synthesizer whose `complete` calls are recorded. */
function recordingSynthesizer() {
  const llm = new MockLLM({ responseMessage: 'Refunds go to the original payment method [1].' });
  const complete = vi.spyOn(llm, 'complete');
  const synthesizer = getResponseSynthesizer('compact', { llm });
  const prompts = () => complete.mock.calls.map(([params]) => params.prompt as string);
  return { synthesizer, prompts };
}

function expectNodesMatch(nodes: NodeWithScore[], pack: Pack) {
  expect(nodes).toHaveLength(pack.items.length);
  nodes.forEach(({ node, score }, i) => {
    const item = pack.items[i]!;
    expect(node.getContent(MetadataMode.NONE)).toBe(item.text);
    expect(score).toBe(item.score);
    expect(node.metadata.citation).toEqual(pack.citations[i]);
    expect(node.metadata.litm).toMatchObject({ ref: i + 1, rank: item.rank, role: item.role, position: i });
  });
}

/** A packed node's metadata (LlamaIndex types node metadata as a record of any). */
const metadataOf = (n: NodeWithScore | undefined) => n?.node.metadata as LitmDocumentMetadata | undefined;

/** Ranks in context order under the LITM rule. */
function litmRanks(n: number): number[] {
  const order = new Array<number>(n);
  let front = 0;
  let back = n - 1;
  for (let rank = 1; rank <= n; rank++) order[rank % 2 === 1 ? front++ : back--] = rank;
  return order;
}

describe('BundleRetriever (LlamaIndex)', () => {
  it('serves a RetrieverQueryEngine: source nodes in LITM order, prompt in the same order', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 250 });
    const { synthesizer, prompts } = recordingSynthesizer();
    const engine = new RetrieverQueryEngine(retriever, synthesizer);
    const query = 'how are refunds paid after a return?';
    const response = await engine.query({ query });

    expect(response.message.content).toBe('Refunds go to the original payment method [1].');
    const { nodes, pack } = await retriever.retrieveWithCitations(query);
    const sources = response.sourceNodes ?? [];
    expect(sources.length).toBeGreaterThanOrEqual(4);
    expectNodesMatch(sources, pack);
    expect(sources.map((n) => n.node.id_)).toEqual(nodes.map((n) => n.node.id_));
    expect(sources.map((n) => metadataOf(n)?.litm.rank)).toEqual(litmRanks(sources.length));
    expect(sources[0]?.node.metadata.team).toBe('support');
    expect(sources[0]?.node.sourceNode?.nodeId).toBe(pack.citations[0]?.sourceId);

    const [prompt] = prompts();
    const positions = pack.items.map((item) => prompt!.indexOf(item.text));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    // The citation and litm objects are for programs: kept out of what the model reads.
    expect(prompt).not.toContain('textSha256');
    expect(prompt).not.toContain('packHash');
  });

  it('gives 20 concurrent calls each their own consistent nodes and pack', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 200 });
    const topics = ['refunds', 'shipping', 'gift cards', 'warranty', 'exchanges', 'loyalty points', 'returns'];
    const queries = Array.from({ length: 20 }, (_, i) => `${topics[i % topics.length]} question ${i}`);
    const results = await Promise.all(queries.map((query) => retriever.retrieveWithCitations(query)));
    results.forEach(({ nodes, pack }, i) => {
      expect(pack.query).toBe(queries[i]);
      expectNodesMatch(nodes, pack);
    });
  });

  it('rejects bad options with a typed error', () => {
    for (const options of [
      { store, maxTokens: 0 },
      { store, maxTokens: 10, mode: 'fuzzy' },
      { store, maxTokens: 10, extra: 1 },
    ]) {
      expect(() => new BundleRetriever(options as never)).toThrow(
        expect.objectContaining({ name: 'LitmPackError', code: 'invalid_input' }),
      );
    }
  });
});

describe('BriefingPackRetriever (LlamaIndex)', () => {
  it('ends with a caveats node that has no citation and no score', async () => {
    const retriever = new BriefingPackRetriever({ store, maxTokens: 400, pins: ['warranty.md'] });
    const { nodes, pack } = await retriever.retrieveWithCitations('refunds');
    const caveats = nodes.at(-1)!;
    expect(caveats.node.metadata.litm.role).toBe('caveats');
    expect(caveats.node.metadata.citation).toBeUndefined();
    expect(caveats.score).toBeUndefined();
    expect(caveats.node.getContent(MetadataMode.NONE)).toBe(pack.caveats);
    expectNodesMatch(nodes.slice(0, -1), pack);
    expect(nodes[0]?.node.metadata.citation?.sourceId).toBe('warranty.md');

    const without = await new BriefingPackRetriever({ store, maxTokens: 400, includeCaveats: false }).retrieve('refunds');
    expect(without.every((n) => metadataOf(n)?.litm.role !== 'caveats')).toBe(true);
  });
});

describe('LitmPostprocessor', () => {
  it("packs another retriever's nodes inside a RetrieverQueryEngine", async () => {
    const embedModel = new WordEmbedding();
    const texts = [...CORPUS.map((doc) => doc.text), CORPUS[0]!.text]; // one exact duplicate
    const documents = texts.map(
      (text, i) => new LlamaDocument({ text, id_: `doc-${i}`, metadata: { source: CORPUS[i % CORPUS.length]!.id } }),
    );
    // Settings.withEmbedModel scopes the embedding model to this call instead of setting it globally.
    const index = await Settings.withEmbedModel(embedModel, () => VectorStoreIndex.init({ nodes: documents }));
    const vectorRetriever = index.asRetriever({ similarityTopK: 8 });
    const postprocessor = new LitmPostprocessor({ maxTokens: 120 });
    const { synthesizer } = recordingSynthesizer();
    const engine = new RetrieverQueryEngine(vectorRetriever, synthesizer, [postprocessor]);

    const query = 'refunds to the original payment method';
    const response = await Settings.withEmbedModel(embedModel, () => engine.query({ query }));
    const base = await Settings.withEmbedModel(embedModel, () => vectorRetriever.retrieve(query));
    const { pack } = await postprocessor.postprocessWithCitations(base, query);

    const sources = response.sourceNodes ?? [];
    expectNodesMatch(sources, pack);
    expect(getTokenizer('o200k_base').count(pack.context)).toBeLessThanOrEqual(120);
    expect(pack.dropped.some((d) => d.reason === 'duplicate' || d.reason === 'near-duplicate')).toBe(true);
    // Vector scores decide the ranks; the best node opens the context.
    const best = [...base].sort((a, b) => (b.score ?? 0) - (a.score ?? 0))[0]!;
    expect(sources[0]?.node.id_).toBe(best.node.id_);
    expect(metadataOf(sources[0])?.citation?.sourceId).toBe(best.node.metadata.source);
    // The retriever's nodes are not modified.
    expect(base.every(({ node }) => !('litm' in node.metadata))).toBe(true);
  });

  it('uses incoming order when nodes have no scores, and needs a query', async () => {
    class ListRetriever extends BaseRetriever {
      constructor() {
        super();
      }
      _retrieve(): Promise<NodeWithScore[]> {
        return Promise.resolve(['First.', 'Second.', 'Third.'].map((text, i) => ({ node: new LlamaDocument({ text, id_: `n${i}` }) })));
      }
    }
    const postprocessor = new LitmPostprocessor({ maxTokens: 100 });
    const nodes = await new ListRetriever().retrieve('anything');
    const packed = await postprocessor.postprocessNodes(nodes, 'anything');
    expect(packed.map((n) => n.node.id_)).toEqual(['n0', 'n2', 'n1']);
    expect(packed.map((n) => n.score)).toEqual([1, 1 / 3, 2 / 3]);
    await expect(postprocessor.postprocessNodes(nodes)).rejects.toSatisfy((e) => isLitmPackError(e, 'invalid_input'));
    expect(() => new LitmPostprocessor({ maxTokens: 1.5 })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });
});
