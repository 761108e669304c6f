import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { MetadataMode } from '@llamaindex/core/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { isLitmPackError, toCanonicalJson, assembleBriefing, MemoryHybridStore } from '../src/index.js';
import { BriefingPackRetriever as LangChainBriefing, PACK_SUMMARY_EVENT } from '../src/langchain/index.js';
import { BriefingPackRetriever as LlamaIndexBriefing } from '../src/llamaindex/index.js';

let store: MemoryHybridStore;
beforeAll(async () => {
  store = new MemoryHybridStore();
  await store.addDocuments([
    {
      id: 'docs/handbook.md',
      version: 'v1',
      text: '# Handbook\n\nAnswer politely.\n\n## Escalation\n\nEscalate legal threats within one hour.',
    },
    {
      id: 'docs/billing/refunds.md',
      version: 'v1',
      clusters: ['billing'],
      kind: 'insight',
      text: 'Refunds are issued within 14 days of a return.',
    },
    {
      id: 'docs/billing/invoices.md',
      version: 'v1',
      clusters: ['billing'],
      kind: 'segment',
      text: 'Invoices are sent monthly; refund credits appear on the next one.',
    },
    { id: 'notes/refunds.md', version: 'v1', text: 'Customers ask about refund timing weekly.' },
    {
      id: 'legal/merger.md',
      version: 'v1',
      acl: ['legal'],
      clusters: ['billing'],
      text: 'Refunds of the acquired shop follow its old rules.',
    },
  ]);
});

const settings = { maxTokens: 800, mode: 'lexical' as const, pins: ['handbook.md'], clusters: ['billing'], principals: ['support'] };

class SummaryHandler extends BaseCallbackHandler {
  name = 'summary';
  override awaitHandlers = true;
  chains: string[] = [];
  events: string[] = [];
  override handleChainStart(
    _c: unknown,
    _i: unknown,
    _r: string,
    _p?: string,
    _t?: string[],
    _m?: Record<string, unknown>,
    _type?: string,
    name?: string,
  ) {
    if (name) this.chains.push(name);
  }
  override handleCustomEvent(name: string) {
    this.events.push(name);
  }
}

describe('BriefingPackRetriever (LangChain) through assembleBriefing', () => {
  it('invoke("") is a briefing from pins and clusters alone: the same pack assembleBriefing gives', async () => {
    const retriever = new LangChainBriefing({ store, ...settings });
    const handler = new SummaryHandler();
    const { documents, pack } = await retriever.retrieveWithCitations('', { callbacks: [handler] });
    const direct = await assembleBriefing({ store, ...settings, prompt: '' });
    expect(toCanonicalJson(pack)).toBe(toCanonicalJson(direct.pack));
    expect(pack.query).toBe('');
    expect(documents[0]!.metadata.citation!.sourceId).toBe('docs/handbook.md');
    expect(documents.slice(0, -1).map((d) => d.metadata.citation!.sourceId)).toEqual(pack.items.map((i) => i.sourceId));
    expect(new Set(pack.items.map((i) => i.sourceId))).toEqual(
      new Set(['docs/handbook.md', 'docs/billing/refunds.md', 'docs/billing/invoices.md']),
    );
    expect(documents.at(-1)!.metadata.litm.role).toBe('caveats');
    expect(handler.chains).toContain('LitmBriefing');
    expect(handler.events).toContain(PACK_SUMMARY_EVENT);
    const invoked = await retriever.invoke('   ');
    expect(invoked.map((d) => d.pageContent)).toEqual(documents.map((d) => d.pageContent));
  });

  it('with a prompt: the prompt widens the briefing, the same pack as assembleBriefing', async () => {
    const retriever = new LangChainBriefing({ store, ...settings });
    const { pack } = await retriever.retrieveWithCitations('refund timing');
    expect(toCanonicalJson(pack)).toBe(toCanonicalJson((await assembleBriefing({ store, ...settings, prompt: 'refund timing' })).pack));
    expect(pack.items.map((i) => i.sourceId)).toContain('notes/refunds.md');
    expect(pack.items.map((i) => i.sourceId)).not.toContain('legal/merger.md');
  });

  it('a blank query with neither pins nor clusters is invalid_input; so are unknown options', async () => {
    const retriever = new LangChainBriefing({ store, maxTokens: 500 });
    await expect(retriever.invoke('')).rejects.toSatisfy((error: unknown) => isLitmPackError(error, 'invalid_input'));
    expect(() => new LangChainBriefing({ store, maxTokens: 500, cluster: ['x'] } as never)).toThrow(/cluster/);
  });
});

describe('BriefingPackRetriever (LlamaIndex) through assembleBriefing', () => {
  it('retrieve("") with pins and clusters, ending with the caveats node; the same pack as assembleBriefing', async () => {
    const retriever = new LlamaIndexBriefing({ store, ...settings });
    const { nodes, pack } = await retriever.retrieveWithCitations('');
    expect(toCanonicalJson(pack)).toBe(toCanonicalJson((await assembleBriefing({ store, ...settings })).pack));
    expect(nodes[0]!.node.metadata.citation?.sourceId).toBe('docs/handbook.md');
    expect(nodes.at(-1)!.node.metadata.litm.role).toBe('caveats');
    expect(nodes.at(-1)!.node.getContent(MetadataMode.NONE)).toBe(pack.caveats);
    const retrieved = await retriever.retrieve({ query: '' });
    expect(retrieved).toHaveLength(nodes.length);
    const strict = new LlamaIndexBriefing({ store, ...settings, scopeMode: 'strict' });
    const scoped = await strict.retrieveWithCitations('refund timing');
    expect(scoped.pack.items.map((i) => i.sourceId)).not.toContain('notes/refunds.md');
    await expect(new LlamaIndexBriefing({ store, maxTokens: 500 }).retrieve({ query: ' ' })).rejects.toSatisfy((error: unknown) =>
      isLitmPackError(error, 'invalid_input'),
    );
  });
});
