import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { isLitmPackError, type LitmPackErrorCode, CandidateSchema, type IngestDocument, type SearchMode } from '../src/index.js';
import { cosineSimilarity } from '../src/base/vectors.js';
import { fuseDbsf, fuseRrf } from '../src/store/fusion.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { hybridPrefetchLimit } from '../src/store/requests.js';
import { indexedTextOf } from '../src/store/indexed-text.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';
import { readSaved, savedSchema, writeSaved, writeV1 } from './helpers/store-files.js';
import { V1_DOCS, V1_NOW } from './helpers/v1-corpus.js';

const fsControl = vi.hoisted(() => ({ failRename: false }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: async (from: string, to: string) => {
      if (fsControl.failRename) throw Object.assign(new Error('EIO: simulated crash during rename'), { code: 'EIO' });
      return actual.rename(from, to);
    },
  };
});

beforeEach(() => {
  fsControl.failRename = false;
});

const corpus: IngestDocument[] = [
  {
    id: 'cookies.md',
    version: '1',
    metadata: { lang: 'en', topic: 'baking' },
    text: '# Cookies\n\nRecipe for baking chocolate chip cookies with brown butter.\n\n## Storage\n\nKeep cookies in a tin for a week.',
  },
  {
    id: 'bread.md',
    version: '1',
    metadata: { lang: 'en', topic: 'baking' },
    text: '# Bread\n\nSourdough bread needs a lively starter and a hot oven.',
  },
  {
    id: 'cars.md',
    version: '1',
    metadata: { lang: 'en', topic: 'cars' },
    text: '# Cars\n\nChange the engine oil of your car every ten thousand kilometres.',
  },
  {
    id: 'garten.md',
    version: '1',
    metadata: { lang: 'de', topic: 'garden' },
    text: 'Tomaten brauchen viel Sonne und regelmäßig Wasser.',
  },
];

const secret: IngestDocument = {
  id: 'merger.md',
  version: '1',
  acl: ['legal'],
  text: 'The merger code name is BLUEBIRD and the chocolate cookies budget is secret.',
};

function clock(start = Date.UTC(2025, 0, 1)) {
  let t = start;
  return () => new Date((t += 60_000));
}

async function expectCode(promise: Promise<unknown> | (() => unknown), code: LitmPackErrorCode): Promise<Error> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    expect(isLitmPackError(error, code), String(error)).toBe(true);
    return error as Error;
  }
  throw new Error(`expected a LitmPackError ${code}`);
}

async function embeddedStore(options: ConstructorParameters<typeof MemoryHybridStore>[0] = {}) {
  const embeddings = new FakeEmbeddings();
  const store = new MemoryHybridStore({ embeddings, now: clock(), ...options });
  await store.addDocuments([...corpus, secret]);
  return { store, embeddings };
}

describe('construction and input validation', () => {
  it('rejects unknown or invalid options with invalid_input', async () => {
    await expectCode(() => new MemoryHybridStore({ chunkTokenz: 10 } as never), 'invalid_input');
    await expectCode(() => new MemoryHybridStore({ fusion: { method: 'rrf', k: 0 } }), 'invalid_input');
    await expectCode(() => new MemoryHybridStore({ embeddings: {} as never }), 'invalid_input');
  });

  it('rejects an empty or whitespace query, an unknown mode and a bad limit', async () => {
    const store = new MemoryHybridStore();
    await expectCode(store.search({ text: '' }), 'invalid_input');
    await expectCode(store.search({ text: '  \n ' }), 'invalid_input');
    await expectCode(store.search({ text: 'x', mode: 'fuzzy' as SearchMode }), 'invalid_input');
    await expectCode(store.search({ text: 'x', limit: 0 }), 'invalid_input');
  });

  it('throws unsupported_mode for dense search without embeddings', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments(corpus);
    await expectCode(store.search({ text: 'cookies', mode: 'dense' }), 'unsupported_mode');
  });

  it('rejects unsupported filters instead of ignoring them', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments(corpus);
    await expectCode(store.search({ text: 'cookies', filter: { must: [{ key: 'loc', geo_radius: {} }] } as never }), 'unsupported_filter');
  });
});

describe('lexical search', () => {
  it('ranks the chunk that shares the rare query terms first, with no similarity', async () => {
    const store = new MemoryHybridStore({ now: clock() });
    await store.addDocuments(corpus);
    const results = await store.search({ text: 'chocolate chip cookies', mode: 'lexical' });
    expect(results[0]!.text).toContain('chocolate chip cookies');
    expect(results[0]!.section).toEqual(['Cookies']);
    expect(results.every((c) => c.similarity === undefined)).toBe(true);
    expect(results.map((c) => c.sourceId)).not.toContain('cars.md');
    for (const c of results) expect(CandidateSchema.parse(c)).toEqual(c);
  });

  it('degrades hybrid to lexical when no embeddings are configured', async () => {
    const store = new MemoryHybridStore({ now: clock() });
    await store.addDocuments(corpus);
    const hybrid = await store.search({ text: 'sourdough oven' });
    const lexical = await store.search({ text: 'sourdough oven', mode: 'lexical' });
    expect(hybrid).toEqual(lexical);
    expect(hybrid[0]!.sourceId).toBe('bread.md');
    expect(hybrid[0]!.similarity).toBeUndefined();
  });

  it('returns nothing for a query of stopwords only', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments(corpus);
    expect(await store.search({ text: 'the and of', mode: 'lexical' })).toEqual([]);
  });

  it('sorts by score desc then id, and respects limit', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments(corpus);
    const results = await store.search({ text: 'cookies bread car', mode: 'lexical', limit: 2 });
    expect(results).toHaveLength(2);
    const all = await store.search({ text: 'cookies bread car', mode: 'lexical', limit: 50 });
    for (let i = 1; i < all.length; i += 1) {
      const [a, b] = [all[i - 1]!, all[i]!];
      expect(a.score > b.score || (a.score === b.score && a.id < b.id)).toBe(true);
    }
  });
});

describe('dense and hybrid search', () => {
  it('dense scores and similarity are the exact cosine', async () => {
    const { store, embeddings } = await embeddedStore();
    const query = 'cookies in a tin';
    const results = await store.search({ text: query, mode: 'dense', limit: 3 });
    expect(results).toHaveLength(3);
    for (const c of results) {
      // The vector is the indexed text's: the title and heading path, then the chunk's text.
      const expected = cosineSimilarity(
        embeddings.embed(query),
        embeddings.embed(indexedTextOf({ ...c, section: c.section ?? [] }, 'title-headings@1')),
      );
      expect(c.similarity).toBe(expected);
      expect(c.score).toBe(expected);
    }
    expect(results[0]!.text).toBe('Keep cookies in a tin for a week.');
  });

  it('similarity is present iff dense ran', async () => {
    const { store } = await embeddedStore();
    const hybrid = await store.search({ text: 'engine oil' });
    expect(hybrid.length).toBeGreaterThan(0);
    expect(hybrid.every((c) => typeof c.similarity === 'number')).toBe(true);
    const lexical = await store.search({ text: 'engine oil', mode: 'lexical' });
    expect(lexical.every((c) => c.similarity === undefined)).toBe(true);
  });

  it('hybrid rrf equals fusing a dense and a lexical prefetch of prefetchLimit each', async () => {
    const { store } = await embeddedStore();
    const text = 'chocolate cookies bread';
    const limit = 3;
    const prefetch = hybridPrefetchLimit(limit);
    const dense = await store.search({ text, mode: 'dense', limit: prefetch });
    const lexical = await store.search({ text, mode: 'lexical', limit: prefetch });
    const expected = fuseRrf([dense, lexical]).slice(0, limit);
    const hybrid = await store.search({ text, limit });
    expect(hybrid.map((c) => [c.id, c.score])).toEqual(expected.map((p) => [p.id, p.score]));

    const weighted = await store.search({ text, limit, fusion: { method: 'rrf', k: 60, weights: { dense: 1, lexical: 3 } } });
    const expectedWeighted = fuseRrf([dense, lexical], { k: 60, weights: [1, 3] }).slice(0, limit);
    expect(weighted.map((c) => [c.id, c.score])).toEqual(expectedWeighted.map((p) => [p.id, p.score]));
  });

  it('hybrid dbsf equals fusing the two prefetches with distribution-based normalisation', async () => {
    const { store } = await embeddedStore({ fusion: { method: 'dbsf' } });
    const text = 'chocolate cookies bread';
    const prefetch = hybridPrefetchLimit(5);
    const dense = await store.search({ text, mode: 'dense', limit: prefetch });
    const lexical = await store.search({ text, mode: 'lexical', limit: prefetch });
    const hybrid = await store.search({ text, limit: 5 });
    expect(hybrid.map((c) => [c.id, c.score])).toEqual(
      fuseDbsf([dense, lexical])
        .slice(0, 5)
        .map((p) => [p.id, p.score]),
    );
  });

  it('prefetches max(limit, prefetchLimit) per arm before fusing', async () => {
    expect(hybridPrefetchLimit(3)).toBe(50);
    expect(hybridPrefetchLimit(20)).toBe(80);
    expect(hybridPrefetchLimit(10, 2)).toBe(10);
    const { store } = await embeddedStore({ prefetchLimit: 2 });
    const text = 'chocolate cookies bread';
    const dense = await store.search({ text, mode: 'dense', limit: 2 });
    const lexical = await store.search({ text, mode: 'lexical', limit: 2 });
    const hybrid = await store.search({ text, limit: 2 });
    expect(hybrid.map((c) => [c.id, c.score])).toEqual(
      fuseRrf([dense, lexical])
        .slice(0, 2)
        .map((p) => [p.id, p.score]),
    );
  });
});

describe('filters and access control inside the search', () => {
  it('applies filters before ranking', async () => {
    const { store } = await embeddedStore();
    for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
      const results = await store.search({
        text: 'cookies bread tomaten',
        mode,
        filter: { must: [{ key: 'metadata.lang', match: { value: 'de' } }] },
      });
      expect(results.map((c) => c.sourceId)).toEqual(['garten.md']);
    }
    const notBaking = await store.search({
      text: 'cookies oven oil',
      mode: 'lexical',
      filter: { must_not: [{ key: 'metadata.topic', match: { value: 'baking' } }] },
      principals: 'all',
    });
    // merger.md has no topic, so must_not holds for it too
    expect(notBaking.map((c) => c.sourceId).sort()).toEqual(['cars.md', 'merger.md']);
  });

  it('never returns restricted text in any mode, even when the query quotes it', async () => {
    const { store } = await embeddedStore();
    const query = 'The merger code name is BLUEBIRD and the chocolate cookies budget is secret.';
    for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
      for (const principals of [[], ['sales'], ['sales', 'support']]) {
        const results = await store.search({ text: query, mode, principals, limit: 50 });
        expect(results.length).toBeGreaterThan(0);
        expect(results.some((c) => c.text.includes('BLUEBIRD') || c.sourceId === 'merger.md')).toBe(false);
        expect(JSON.stringify(results)).not.toContain('BLUEBIRD');
      }
      const allowed = await store.search({ text: query, mode, principals: ['sales', 'legal'], limit: 1 });
      expect(allowed[0]!.sourceId).toBe('merger.md');
    }
  });

  it('fills the limit with visible chunks (the ACL is not a post-filter)', async () => {
    const { store } = await embeddedStore();
    const results = await store.search({ text: 'BLUEBIRD chocolate cookies', mode: 'lexical', principals: ['sales'], limit: 1 });
    expect(results).toHaveLength(1);
    expect(results[0]!.sourceId).toBe('cookies.md');
  });

  it('reads anonymously when no principals are given; principals "all" is the full view', async () => {
    const { store } = await embeddedStore();
    const anonymous = await store.search({ text: 'BLUEBIRD merger', mode: 'lexical' });
    expect(anonymous.some((c) => c.sourceId === 'merger.md')).toBe(false);
    expect(anonymous).toEqual(await store.search({ text: 'BLUEBIRD merger', mode: 'lexical', principals: [] }));
    const all = await store.search({ text: 'BLUEBIRD', mode: 'lexical', principals: 'all' });
    expect(all[0]!.sourceId).toBe('merger.md');
  });

  it('with idfCorpus "visible", restricted chunks do not move the scores of visible ones', async () => {
    const text = 'chocolate cookies budget';
    const publicOnly = new MemoryHybridStore({ now: clock() });
    await publicOnly.addDocuments(corpus);
    const baseline = await publicOnly.search({ text, mode: 'lexical', principals: ['sales'] });

    const visible = new MemoryHybridStore({ idfCorpus: 'visible', now: clock() });
    await visible.addDocuments([...corpus, secret]);
    expect(await visible.search({ text, mode: 'lexical', principals: ['sales'] })).toEqual(baseline);

    // The default is "visible" too.
    const byDefault = new MemoryHybridStore({ now: clock() });
    await byDefault.addDocuments([...corpus, secret]);
    expect(await byDefault.search({ text, mode: 'lexical', principals: ['sales'] })).toEqual(baseline);

    // Qdrant's default (collection-wide statistics) counts every chunk.
    const global = new MemoryHybridStore({ idfCorpus: 'all' });
    await global.addDocuments([...corpus, secret]);
    const globalScores = (await global.search({ text, mode: 'lexical', principals: ['sales'] })).map((c) => c.score);
    expect(globalScores).not.toEqual(baseline.map((c) => c.score));
  });
});

describe('ingest', () => {
  const v1: IngestDocument = { id: 'policy.md', version: 'v1', text: '# A\n\nAlpha rules.\n\n# B\n\nBeta rules.\n\n# C\n\nGamma rules.' };
  const v2: IngestDocument = {
    id: 'policy.md',
    version: 'v2',
    text: '# A\n\nAlpha rules.\n\n# B\n\nBeta rules, revised.\n\n# C\n\nGamma rules.',
  };

  it('re-ingesting the same version changes nothing', async () => {
    const embeddings = new FakeEmbeddings();
    const store = new MemoryHybridStore({ embeddings, now: clock() });
    expect(await store.addDocuments([v1])).toEqual({ added: 3, unchanged: 0, removed: 0 });
    const before = await store.search({ text: 'rules', limit: 10 });
    const calls = embeddings.documentCalls;
    expect(await store.addDocuments([v1])).toEqual({ added: 0, unchanged: 3, removed: 0 });
    expect(embeddings.documentCalls).toBe(calls);
    expect(await store.search({ text: 'rules', limit: 10 })).toEqual(before);
    expect(store.size).toBe(3);
  });

  it('a new version replaces the source’s chunks; unchanged content keeps indexedAt and its embedding', async () => {
    const embeddings = new FakeEmbeddings();
    const store = new MemoryHybridStore({ embeddings, now: clock() });
    await store.addDocuments([v1]);
    const path = join(await mkdtemp(join(tmpdir(), 'litm-store-')), 'v.json');
    await store.save(path);
    const firstIndexedAt = (await readSaved(path)).chunks[0]!.record.indexedAt;

    embeddings.embeddedTexts = [];
    // every chunk's payload gets the new version, one text changed
    expect(await store.addDocuments([v2])).toEqual({ added: 3, unchanged: 0, removed: 1 });
    expect(embeddings.embeddedTexts).toEqual(['B\n\nBeta rules, revised.']);
    expect(store.sources()).toEqual([{ sourceId: 'policy.md', version: 'v2', chunks: 3 }]);

    const results = await store.search({ text: 'rules', mode: 'lexical', limit: 10 });
    expect(results.map((c) => c.text).sort()).toEqual(['Alpha rules.', 'Beta rules, revised.', 'Gamma rules.']);
    expect(results.every((c) => c.version === 'v2')).toBe(true);

    await store.save(path);
    const records = (await readSaved(path)).chunks.map((c) => c.record);
    const byText = new Map(records.map((r) => [r.text, r.indexedAt]));
    expect(byText.get('Alpha rules.')).toBe(firstIndexedAt);
    expect(byText.get('Gamma rules.')).toBe(firstIndexedAt);
    expect(byText.get('Beta rules, revised.')).not.toBe(firstIndexedAt);
  });

  it('a failed embedding leaves the store exactly as it was', async () => {
    const embeddings = new FakeEmbeddings();
    const store = new MemoryHybridStore({ embeddings, now: clock(), embedBatchSize: 1 });
    await store.addDocuments([v1]);
    const snapshot = async () => ({
      size: store.size,
      sources: store.sources(),
      hits: await store.search({ text: 'rules cookies', limit: 20 }),
    });
    const before = await snapshot();

    embeddings.failOnCall = embeddings.documentCalls + 2; // fail halfway through the batches
    await expect(store.addDocuments([v2, ...corpus])).rejects.toThrow('embedding service unavailable');
    expect(await snapshot()).toEqual(before);
  });

  it('an aborted ingest changes nothing and throws aborted', async () => {
    const store = new MemoryHybridStore({ embeddings: new FakeEmbeddings() });
    const controller = new AbortController();
    controller.abort();
    await expectCode(store.addDocuments(corpus, { signal: controller.signal }), 'aborted');
    expect(store.size).toBe(0);
  });

  it('validates the whole batch before writing anything', async () => {
    const store = new MemoryHybridStore();
    await expectCode(store.addDocuments([...corpus, { id: 'bad', text: 'x', timestamp: 'soon' }]), 'invalid_input');
    expect(store.size).toBe(0);
  });

  it('reports progress once per document, in order', async () => {
    const store = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), embedBatchSize: 2 });
    const progress: [number, number][] = [];
    await store.addDocuments(corpus, { onProgress: (done, total) => progress.push([done, total]) });
    expect(progress).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);
  });

  it('serialises concurrent ingests', async () => {
    const store = new MemoryHybridStore({ embeddings: new FakeEmbeddings() });
    await Promise.all(corpus.map((doc) => store.addDocuments([doc])));
    expect(store.sources().map((s) => s.sourceId)).toEqual(['bread.md', 'cars.md', 'cookies.md', 'garten.md']);
    expect(store.size).toBe(5);
  });

  it('rejects embeddings of another dimension than the stored ones', async () => {
    const store = new MemoryHybridStore({ embeddings: new FakeEmbeddings({ dimension: 8 }) });
    await store.addDocuments(corpus);
    const path = join(await mkdtemp(join(tmpdir(), 'litm-store-')), 'd.json');
    await store.save(path);
    const other = await MemoryHybridStore.load(path, { embeddings: new FakeEmbeddings({ dimension: 16 }) });
    await expectCode(other.search({ text: 'cookies' }), 'config_mismatch');
  });
});

describe('ranking at scale', () => {
  const words = ['amber', 'basalt', 'cedar', 'delta', 'ember', 'fjord', 'granite', 'harbor', 'indigo', 'juniper'];
  const textFor = (i: number, round: number) =>
    `${words[i % 10]} ${words[(i * 3 + round) % 10]} ${words[(i * 7 + 1) % 10]} note ${round}-${i}`;
  const docsFor = (count: number, round: number): IngestDocument[] =>
    Array.from({ length: count }, (_, i) => ({ id: `doc-${String(i).padStart(4, '0')}`, version: String(round), text: textFor(i, round) }));
  const ranking = (results: { id: string; score: number; similarity?: number }[]) => results.map((c) => [c.id, c.score, c.similarity]);

  it('after replacing most of the corpus twice, answers exactly like a store built from the final documents', async () => {
    const store = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), now: clock() });
    for (const round of [1, 2, 3]) await store.addDocuments(docsFor(1100, round));
    const fresh = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), now: clock() });
    await fresh.addDocuments(docsFor(1100, 3));
    expect(store.size).toBe(fresh.size);
    for (const text of ['amber cedar', 'granite harbor note', 'juniper', 'note 3-17']) {
      for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
        for (const extra of [{}, { filter: { must_not: [{ key: 'sourceId', match: { value: 'doc-0003' } }] } }]) {
          const request = { text, mode, limit: 25, ...extra };
          expect(ranking(await store.search(request)), `${mode} "${text}"`).toEqual(ranking(await fresh.search(request)));
        }
      }
    }
  }, 60_000);

  it('dense similarity is the cosine with the stored Float32 vector, whatever the dimension', async () => {
    const wave = (dimension: number) => (text: string) =>
      Array.from({ length: dimension }, (_, i) => Math.sin((i + 1) * (text.length + 0.37 * text.charCodeAt(i % text.length))));
    for (const dimension of [6, 8, 384]) {
      const embed = wave(dimension);
      const embeddings = {
        embedQuery: (text: string) => Promise.resolve(embed(text)),
        embedDocuments: (texts: string[]) => Promise.resolve(texts.map(embed)),
      };
      const store = new MemoryHybridStore({ embeddings, now: clock() });
      await store.addDocuments(corpus);
      const query = 'warm bread and cookies';
      const results = await store.search({ text: query, mode: 'dense', limit: 20 });
      expect(results.length).toBe(store.size);
      for (const c of results) {
        const expected = cosineSimilarity(
          embed(query),
          Float32Array.from(embed(indexedTextOf({ ...c, section: c.section ?? [] }, 'title-headings@1'))),
        );
        expect(Math.abs(c.similarity! - expected), `dimension ${dimension}`).toBeLessThanOrEqual(1e-12);
        expect(c.score).toBe(c.similarity);
      }
      for (let i = 1; i < results.length; i += 1) expect(results[i - 1]!.score).toBeGreaterThanOrEqual(results[i]!.score);
    }
  });

  it('orders tied scores by id when the limit cuts through the tie', async () => {
    const store = new MemoryHybridStore({ embeddings: new FakeEmbeddings(), now: clock() });
    const twins = ['k', 'c', 'x', 'a', 'm', 'q', 'e', 'z'].map((name) => ({
      id: `${name}.md`,
      text: 'Lanterns glow over the quiet harbour.',
    }));
    await store.addDocuments([...twins, { id: 'other.md', text: 'Granite cliffs above a cold fjord.' }]);
    for (const mode of ['dense', 'lexical'] as const) {
      const all = await store.search({ text: 'lanterns harbour', mode, limit: 20 });
      const tied = all.filter((c) => c.score === all[0]!.score).map((c) => c.sourceId);
      expect(tied).toEqual(twins.map((t) => t.id).sort());
      const cut = await store.search({ text: 'lanterns harbour', mode, limit: 3 });
      expect(cut.map((c) => c.sourceId)).toEqual(tied.slice(0, 3));
    }
  });
});

describe('save and load', () => {
  it('round-trips: the loaded store answers every mode identically and saves the same bytes', async () => {
    const { store, embeddings } = await embeddedStore();
    const dir = await mkdtemp(join(tmpdir(), 'litm-store-'));
    const path = join(dir, 'store.json');
    await store.save(path);
    const loaded = await MemoryHybridStore.load(path, { embeddings });
    expect(loaded.size).toBe(store.size);
    expect(loaded.sources()).toEqual(store.sources());
    for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
      for (const principals of [undefined, ['legal']]) {
        const request = { text: 'chocolate cookies oil', mode, limit: 20, ...(principals ? { principals } : {}) };
        expect(await loaded.search(request)).toEqual(await store.search(request));
      }
    }
    const again = join(dir, 'again.json');
    await loaded.save(again);
    expect((await readFile(again)).equals(await readFile(path))).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['again.json', 'store.json']);
  });

  it('reads a file of the earlier format (memory-store@1, written before the columnar store) and saves it as @3', async () => {
    const fixture = join(import.meta.dirname, 'fixtures', 'memory-store-v1.json');
    expect((JSON.parse(await readFile(fixture, 'utf8')) as { schema: string }).schema).toBe('litm-pack/memory-store@1');
    const embeddings = new FakeEmbeddings({ dimension: 8 });
    const loaded = await MemoryHybridStore.load(fixture, { embeddings });
    // The fixture was indexed by chunk text alone, and keeps being indexed so.
    const fresh = new MemoryHybridStore({ embeddings, now: V1_NOW, chunkTokens: 16, indexedText: 'chunk-text' });
    await fresh.addDocuments(V1_DOCS);
    const sameAnswers = async (store: MemoryHybridStore) => {
      expect(store.sources()).toEqual(fresh.sources());
      expect(store.embedding).toEqual({ model: null, dimension: 8 });
      for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
        for (const principals of [undefined, [], ['hr'], ['leads']]) {
          const request = { text: 'refunds receipt roadmap salary', mode, limit: 20, ...(principals ? { principals } : {}) };
          expect(await store.search(request), `${mode} ${JSON.stringify(principals)}`).toEqual(await fresh.search(request));
        }
      }
      const read = { sourceIds: ['hr/salaries.md', 'handbook/refunds.md', 'empty.md'], principals: ['hr'] };
      expect(await store.getChunks(read)).toEqual(await fresh.getChunks(read));
      expect(await store.getChunks({ filter: { must: [{ key: 'clusters', match: { any: ['support'] } }] } })).toEqual(
        await fresh.getChunks({ filter: { must: [{ key: 'clusters', match: { any: ['support'] } }] } }),
      );
    };
    await sameAnswers(loaded);
    const dir = await mkdtemp(join(tmpdir(), 'litm-store-'));
    await loaded.save(join(dir, 'store.json'));
    expect(await savedSchema(join(dir, 'store.json'))).toBe('litm-pack/memory-store@3');
    await sameAnswers(await MemoryHybridStore.load(join(dir, 'store.json'), { embeddings }));
  });

  it('throws not_found for a missing file and corrupt for a damaged one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-store-'));
    await expectCode(MemoryHybridStore.load(join(dir, 'nope.json')), 'not_found');

    const garbage = join(dir, 'garbage.json');
    await writeFile(garbage, '{"schema": "litm-pack/memory-store@1", "chunks": [');
    const error = await expectCode(MemoryHybridStore.load(garbage), 'corrupt');
    expect(error.message).toContain('not valid JSON');

    const wrongSchema = join(dir, 'other.json');
    await writeFile(wrongSchema, JSON.stringify({ schema: 'something-else@9' }));
    expect((await expectCode(MemoryHybridStore.load(wrongSchema), 'corrupt')).message).toContain('schema');

    const store = new MemoryHybridStore();
    await store.addDocuments(corpus);
    const good = join(dir, 'good.json');
    await store.save(good);
    const saved = await readSaved(good);
    saved.chunks[0]!.record.text += ' tampered';
    const tampered = join(dir, 'tampered.json');
    await writeSaved(tampered, saved);
    expect((await expectCode(MemoryHybridStore.load(tampered), 'corrupt')).message).toMatch(
      /line \d+: .*textSha256: does not match the text/,
    );
    // The same damage in a file of the earlier format.
    await writeV1(tampered, saved);
    expect((await expectCode(MemoryHybridStore.load(tampered), 'corrupt')).message).toContain('textSha256');

    (saved.chunks[0]!.record as { text: unknown }).text = 42;
    await writeSaved(tampered, saved);
    await expectCode(MemoryHybridStore.load(tampered), 'corrupt');

    // A file cut short (a copy that stopped half-way): caught by its trailer (@3), by the header's counts (@2).
    const whole = await readFile(good);
    await writeFile(tampered, whole.subarray(0, whole.length - 100));
    expect((await expectCode(MemoryHybridStore.load(tampered), 'corrupt')).message).toContain('a cut file?');
    await writeSaved(tampered, await readSaved(good));
    const lines = (await readFile(tampered, 'utf8')).split('\n');
    await writeFile(tampered, `${lines.slice(0, -3).join('\n')}\n`);
    expect((await expectCode(MemoryHybridStore.load(tampered), 'corrupt')).message).toContain('a cut file?');
    // A vector of the wrong size.
    const wrong = await readSaved(good);
    wrong.chunks[0]!.dense = Buffer.alloc(12).toString('base64');
    await writeSaved(tampered, wrong);
    expect((await expectCode(MemoryHybridStore.load(tampered), 'corrupt')).message).toMatch(/line \d+: chunk .* has a vector of 3 values/);
  });

  it('a crash during save (rename fails) leaves the previous file intact and no temporary files', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments(corpus.slice(0, 1));
    const dir = await mkdtemp(join(tmpdir(), 'litm-store-'));
    const path = join(dir, 'store.json');
    await store.save(path);
    const before = await readFile(path, 'utf8');

    await store.addDocuments(corpus.slice(1));
    fsControl.failRename = true;
    const error = await expectCode(store.save(path), 'io_error');
    expect((error.cause as Error).message).toContain('simulated crash');
    fsControl.failRename = false;

    expect(await readFile(path, 'utf8')).toBe(before);
    expect(await readdir(dir)).toEqual(['store.json']);
    expect((await MemoryHybridStore.load(path)).size).toBe(2);
  });

  it('creates the folders a store file is saved into', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments([{ id: 'a.md', text: 'Refunds take 14 days.' }]);
    const root = await mkdtemp(join(tmpdir(), 'litm-missing-dir-'));
    const path = join(root, 'not', 'there', 'store.json');
    await store.save(path);
    expect((await MemoryHybridStore.load(path)).size).toBe(1);
    expect(await readdir(join(root, 'not', 'there'))).toEqual(['store.json']);
  });

  it('refuses a folder as the store: saving into it or loading it names the file to pass', async () => {
    const store = new MemoryHybridStore();
    const dir = await mkdtemp(join(tmpdir(), 'litm-store-dir-'));
    const saving = await expectCode(store.save(dir), 'invalid_input');
    expect(saving.message).toContain(join(dir, 'store.json'));
    const loading = await expectCode(MemoryHybridStore.load(dir), 'not_found');
    expect(loading.message).toContain(join(dir, 'store.json'));
    const missing = await expectCode(MemoryHybridStore.load(join(dir, 'nothing.json')), 'not_found');
    expect(missing.message).toMatch(/No store file at .*nothing\.json/u);
  });

  it('creates missing folders on the way to the file', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments(corpus.slice(0, 1));
    const path = join(await mkdtemp(join(tmpdir(), 'litm-store-')), 'missing', 'deeper', 's.json');
    await store.save(path);
    expect((await MemoryHybridStore.load(path)).size).toBe(store.size);
  });

  it('throws io_error when a folder on the way is a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-store-'));
    await writeFile(join(dir, 'plain-file'), 'x');
    const store = new MemoryHybridStore();
    await expectCode(store.save(join(dir, 'plain-file', 's.json')), 'io_error');
  });
});
