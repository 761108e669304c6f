import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore, isLitmPackError } from '../src/index.js';
import * as langchain from '../src/langchain/index.js';
import * as llamaindex from '../src/llamaindex/index.js';

let store: MemoryHybridStore;
beforeAll(async () => {
  store = new MemoryHybridStore();
  await store.addDocuments([{ id: 'refunds.md', text: 'Refunds are paid within 14 days.' }]);
});

/** The message of the LitmPackError `run` throws (synchronously or not); fails when it throws nothing else. */
async function messageOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(isLitmPackError(error, 'invalid_input'), String(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a LitmPackError');
}

describe('k and topK (other libraries’ names for how many results)', () => {
  const retrievers = {
    'LangChain BundleRetriever': (extra: object) => new langchain.BundleRetriever({ store, maxTokens: 100, ...extra }),
    'LangChain BriefingPackRetriever': (extra: object) => new langchain.BriefingPackRetriever({ store, maxTokens: 100, ...extra }),
    'LlamaIndex BundleRetriever': (extra: object) => new llamaindex.BundleRetriever({ store, maxTokens: 100, ...extra }),
    'LlamaIndex BriefingPackRetriever': (extra: object) => new llamaindex.BriefingPackRetriever({ store, maxTokens: 100, ...extra }),
  };

  for (const [name, make] of Object.entries(retrievers)) {
    it(`${name} rejects them naming limit (the candidate pool; the budget decides how many come back)`, async () => {
      for (const key of ['k', 'topK', 'similarityTopK']) {
        expect(await messageOf(() => make({ [key]: 5 }))).toContain(`unknown option "${key}" (did you mean "limit"?)`);
      }
      expect(() => make({ limit: 5 })).not.toThrow();
    });
  }

  it('store.search rejects them naming limit', async () => {
    for (const key of ['k', 'topK']) {
      expect(await messageOf(() => store.search({ text: 'refunds', [key]: 3 }))).toContain(
        `unknown option "${key}" (did you mean "limit"?)`,
      );
    }
    expect(await store.search({ text: 'refunds', limit: 1 })).toHaveLength(1);
  });

  it('the compressor and the postprocessor name maxTokens: they pack what they are given', async () => {
    expect(await messageOf(() => new langchain.LitmCompressor({ maxTokens: 100, k: 4 } as never))).toContain(
      'unknown option "k" (did you mean "maxTokens"?)',
    );
    expect(await messageOf(() => new llamaindex.LitmPostprocessor({ maxTokens: 100, topK: 4 } as never))).toContain(
      'unknown option "topK" (did you mean "maxTokens"?)',
    );
  });
});

describe('unknown options on retrievers, compressor and postprocessor', () => {
  it('name the key and the option it probably meant, ours or LangChain’s own', async () => {
    expect(await messageOf(() => new langchain.BundleRetriever({ store, maxTokes: 100 } as never))).toContain(
      'unknown option "maxTokes" (did you mean "maxTokens"?)',
    );
    expect(await messageOf(() => new langchain.BundleRetriever({ store, maxTokens: 100, tag: ['kb'] } as never))).toContain(
      'unknown option "tag" (did you mean "tags"?)',
    );
    expect(await messageOf(() => new llamaindex.BriefingPackRetriever({ store, maxTokens: 100, pin: ['a.md'] } as never))).toContain(
      'unknown option "pin" (did you mean "pins"?)',
    );
    expect(await messageOf(() => new langchain.LitmCompressor({ maxTokens: 100, dedupe: { shingle_size: 3 } } as never))).toContain(
      'dedupe: unknown option "shingle_size" (did you mean "shingleSize"?)',
    );
    expect(await messageOf(() => new llamaindex.LitmPostprocessor({ maxTokens: 100, compression: true } as never))).toContain(
      'unknown option "compression" (did you mean "compress"?)',
    );
    // compress is an option (sentence selection): a wrong value says what it takes.
    expect(await messageOf(() => new llamaindex.LitmPostprocessor({ maxTokens: 100, compress: true } as never))).toContain('compress');
  });

  it('pass LangChain’s own retriever fields on', () => {
    const retriever = new langchain.BundleRetriever({ store, maxTokens: 100, tags: ['kb'], metadata: { team: 'x' }, verbose: false });
    expect(retriever.tags).toEqual(['kb']);
    expect(retriever.metadata).toEqual({ team: 'x' });
  });
});

describe('serialisation (LangChain)', () => {
  it('is not supported, and says so the LangChain way: lc_serializable is false and toJSON is a stub', () => {
    const retriever = new langchain.BundleRetriever({ store, maxTokens: 100 });
    expect(retriever.lc_serializable).toBe(false);
    const json = retriever.toJSON();
    expect(json.type).toBe('not_implemented');
    expect(json.id).toEqual(['litm_pack', 'retrievers', 'BundleRetriever']);
    expect(new langchain.LitmDocumentPrompt().lc_serializable).toBe(false);
    expect(new langchain.LitmDocumentPrompt().toJSON().type).toBe('not_implemented');
  });
});
