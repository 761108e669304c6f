import { Document } from '@langchain/core/documents';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnableMap, RunnablePassthrough } from '@langchain/core/runnables';
import { FakeChatModel } from '@langchain/core/utils/testing';
import { createStuffDocumentsChain } from '@langchain/classic/chains/combine_documents';
import { Settings } from '@llamaindex/core/global';
import { MockLLM } from '@llamaindex/core/llms/mock';
import { RetrieverQueryEngine } from '@llamaindex/core/query-engine';
import { getResponseSynthesizer } from '@llamaindex/core/response-synthesizers';
import { Document as LlamaDocument, MetadataMode } from '@llamaindex/core/schema';
import { extractText } from '@llamaindex/core/utils';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryHybridStore, isLitmPackError } from '../src/index.js';
import {
  BriefingPackRetriever,
  BundleRetriever,
  LitmCompressor,
  LitmDocumentPrompt,
  formatDocumentsAsContext,
} from '../src/langchain/index.js';
import * as llamaindex from '../src/llamaindex/index.js';
import { SUPPORT_CORPUS } from './helpers/support-corpus.js';

const CORPUS = SUPPORT_CORPUS;
const QUESTION = 'how are refunds paid after a return?';

let store: MemoryHybridStore;
beforeAll(async () => {
  store = new MemoryHybridStore();
  await store.addDocuments(CORPUS.map((doc) => ({ ...doc, version: 'v1', metadata: { team: 'support' } })));
});

const prompt = ChatPromptTemplate.fromMessages([
  ['system', 'Answer from the numbered context only and cite [n].\n\n{context}'],
  ['human', '{question}'],
]);

describe('LCEL: retriever.pipe(formatDocumentsAsContext)', () => {
  it('pipes as LangChain users write it: the model receives the pack context', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 300 });
    // FakeChatModel answers with the prompt it received, so the answer shows what the model read.
    const chain = RunnableMap.from({ context: retriever.pipe(formatDocumentsAsContext), question: new RunnablePassthrough() })
      .pipe(prompt)
      .pipe(new FakeChatModel({}))
      .pipe(new StringOutputParser());
    const seen = await chain.invoke(QUESTION);
    const { pack } = await retriever.retrieveWithCitations(QUESTION);
    expect(pack.items.length).toBeGreaterThanOrEqual(3);
    expect(seen).toContain(pack.context);
    expect(seen).toMatch(/^\[1\] /m);
    expect(seen).toContain(`[${pack.items.length}] `);
  });

  it('still takes options when called directly, and refuses a run config mixed with options', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 300, format: 'xml' });
    const docs = await retriever.invoke(QUESTION);
    expect(formatDocumentsAsContext(docs, { format: 'xml' })).toMatch(/^<documents>/);
    expect(formatDocumentsAsContext(docs, { tags: ['x'], recursionLimit: 3 })).toMatch(/^<documents>/);
    expect(() => formatDocumentsAsContext(docs, { tags: ['x'], format: 'xml' } as never)).toThrow(
      /run config with formatting options \(format\)/,
    );
    expect(() => formatDocumentsAsContext(docs, { formt: 'xml' } as never)).toThrow(/unknown option "formt" \(did you mean "format"\?\)/);
  });
});

describe("LangChain's createStuffDocumentsChain with LitmDocumentPrompt", () => {
  it('puts every [n] marker and provenance line in the prompt: a markdown bundle arrives as pack.context', async () => {
    const retriever = new BundleRetriever({ store, maxTokens: 300 });
    const { documents, pack } = await retriever.retrieveWithCitations(QUESTION);
    const chain = await createStuffDocumentsChain({
      llm: new FakeChatModel({}),
      prompt,
      documentPrompt: new LitmDocumentPrompt(),
    });
    const seen = await chain.invoke({ context: documents, question: QUESTION });
    expect(seen).toContain(pack.context);
    for (const citation of pack.citations) expect(seen).toContain(`[${citation.ref}] `);

    // The default document prompt is what drops them: the text arrives without its number.
    const plain = await (
      await createStuffDocumentsChain({ llm: new FakeChatModel({}), prompt })
    ).invoke({ context: documents, question: QUESTION });
    expect(plain).not.toMatch(/\[\d+\] /);
  });

  it('keeps the markers of compressed documents, and refuses documents that were never packed', async () => {
    const foreign = CORPUS.map((doc, i) => new Document({ pageContent: doc.text, metadata: { source: doc.id, score: 1 - i / 10 } }));
    const { documents, pack } = await new LitmCompressor({ maxTokens: 200, format: 'text' }).compressWithCitations(foreign, 'refunds');
    const documentPrompt = new LitmDocumentPrompt();
    const blocks = await Promise.all(documents.map((doc) => documentPrompt.format({ ...doc.metadata, page_content: doc.pageContent })));
    expect(blocks.join('\n\n')).toBe(pack.context);
    await expect(documentPrompt.format({ page_content: 'loose text', source: 'x.md' })).rejects.toSatisfy((e) =>
      isLitmPackError(e, 'invalid_input'),
    );
  });

  it('renders briefing items with their markers and the caveats document as it is', async () => {
    const retriever = new BriefingPackRetriever({ store, maxTokens: 400, pins: ['warranty.md'] });
    const { documents, pack } = await retriever.retrieveWithCitations(QUESTION);
    const chain = await createStuffDocumentsChain({ llm: new FakeChatModel({}), prompt, documentPrompt: new LitmDocumentPrompt() });
    const seen = await chain.invoke({ context: documents, question: QUESTION });
    expect(seen).toMatch(/^\[1\] Warranty(?: \(lines? [\d–]+\))?$/mu);
    expect(seen).toContain(pack.caveats!);
  });
});

describe("LlamaIndex's default response synthesizer", () => {
  function recordingLLM() {
    const llm = new MockLLM({ responseMessage: 'Refunds go to the original payment method [1].' });
    const complete = vi.spyOn(llm, 'complete');
    return { llm, prompts: () => complete.mock.calls.map(([params]) => extractText(params.prompt)) };
  }

  it('reads each node as its block, so the prompt holds the pack context with its [n] markers', async () => {
    const { llm, prompts } = recordingLLM();
    const retriever = new llamaindex.BundleRetriever({ store, maxTokens: 300 });
    // No synthesizer given: the engine builds LlamaIndex's default one with Settings.llm.
    const response = await Settings.withLLM(llm, () => new RetrieverQueryEngine(retriever).query({ query: QUESTION }));
    const { nodes, pack } = await retriever.retrieveWithCitations(QUESTION);
    expect(response.sourceNodes?.map((n) => n.node.id_)).toEqual(nodes.map((n) => n.node.id_));
    const [seen] = prompts();
    expect(seen).toContain(pack.context);
    // Metadata lines (team: support, citation, litm) are for programs; the text itself is unchanged.
    expect(seen).not.toContain('team: support');
    expect(nodes[0]!.node.getContent(MetadataMode.NONE)).toBe(pack.items[0]!.text);
    expect(nodes[0]!.node.getContent(MetadataMode.EMBED)).toContain('team: support');
  });

  it('also through the postprocessor, in every synthesizer mode that reads text', async () => {
    const nodes = CORPUS.map((doc, i) => ({
      node: new LlamaDocument({ text: doc.text, id_: doc.id, metadata: { source: doc.id } }),
      score: 1 - i / 10,
    }));
    const postprocessor = new llamaindex.LitmPostprocessor({ maxTokens: 200 });
    const { pack } = await postprocessor.postprocessWithCitations(nodes, 'refunds');
    for (const mode of ['compact', 'refine', 'tree_summarize'] as const) {
      const { llm, prompts } = recordingLLM();
      const synthesizer = getResponseSynthesizer(mode, { llm });
      await synthesizer.synthesize({ query: 'refunds', nodes: await postprocessor.postprocessNodes(nodes, 'refunds') });
      const all = prompts().join('\n');
      for (const citation of pack.citations) expect(all, mode).toContain(`[${citation.ref}] `);
    }
  });
});
