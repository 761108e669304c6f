/**
 * Contextual indexing before and after, on SciFact (train split) and HotpotQA (the distractor sample): the same
 * documents given as a user gives them (`{ id, title, text }`), indexed by their text alone (`chunk-text`, what the
 * stores did before) and with the title and heading path in front (`title-headings@1`). Dense vectors are
 * all-MiniLM-L6-v2 of exactly the text each recipe indexes, from the offline cache.
 *
 *   npx tsx bench/indexed-text.ts --texts FILE     (writes the indexed texts the cache lacks, as JSON lines)
 *   .venv-bench/bin/python bench/python/embed.py --datasets scifact,hotpotqa --texts FILE --name indexed-text
 *   npx tsx bench/indexed-text.ts [--write]
 *
 * SciFact documents are indexed whole (one chunk each), as BEIR evaluates them; the row "title + abstract as the
 * text" is the BEIR convention bench/retrieval.ts uses, for reference. HotpotQA: one store per question holding its
 * ten context paragraphs (two gold, eight distractors) with their article titles.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { fuseDbsf, fuseRrf, type ScoredId } from '../src/store/fusion.js';
import { indexedTextOf, type IndexedTextRecipe } from '../src/store/indexed-text.js';
import { hybridPrefetchLimit } from '../src/store/requests.js';
import type { Fusion, IngestDocument } from '../src/store/schemas.js';
import { CachedEmbeddings } from './lib/cached-embeddings.js';
import { loadHotpot, loadSciFact } from './lib/datasets.js';
import { mean, ndcgAt, recallAt, uniqueBy } from './lib/metrics.js';
import { loadNote, writeSection } from './lib/report.js';
import { fixed, markdownTable } from './lib/table.js';
import { now, progress } from './lib/timing.js';

const { values: args } = parseArgs({ options: { texts: { type: 'string' }, write: { type: 'boolean', default: false } } });

const LIMIT = 100;
const CHUNK_TOKENS = 8192;
const RECIPES: IndexedTextRecipe[] = ['chunk-text', 'title-headings@1'];
const CACHES = ['scifact-corpus', 'scifact-queries', 'hotpotqa', 'indexed-text'];

interface SciFactInput {
  label: string;
  recipe: IndexedTextRecipe;
  docs: IngestDocument[];
}

function sciFactInputs(): { inputs: SciFactInput[]; data: ReturnType<typeof loadSciFact> } {
  const data = loadSciFact();
  // The abstract alone: loadSciFact's text is title + " " + abstract.
  const abstract = (d: { title: string; text: string }) => d.text.slice(d.title.length).replace(/^[ \t\n\r]+/, '');
  const asGiven = data.corpus.map((d) => ({ id: d.id, title: d.title, text: abstract(d) }));
  return {
    data,
    inputs: [
      { label: '{ title, text: abstract }, chunk-text (before)', recipe: 'chunk-text', docs: asGiven },
      { label: '{ title, text: abstract }, title-headings@1 (after)', recipe: 'title-headings@1', docs: asGiven },
      {
        label: 'reference: text = title + " " + abstract (BEIR convention), chunk-text',
        recipe: 'chunk-text',
        docs: data.corpus.map((d) => ({ id: d.id, text: d.text })),
      },
    ],
  };
}

function hotpotDocs(question: ReturnType<typeof loadHotpot>[number]): IngestDocument[] {
  return question.items
    .filter((item) => item.kind === 'paragraph')
    .map((item) => ({ id: `${item.id}`, title: item.title, text: item.text }));
}

/** Every text the recipes index, for the embedding cache. */
function allIndexedTexts(): string[] {
  const texts = new Set<string>();
  for (const input of sciFactInputs().inputs)
    for (const doc of input.docs) texts.add(indexedTextOf({ text: doc.text, title: doc.title, section: [] }, input.recipe));
  for (const question of loadHotpot()) {
    for (const doc of hotpotDocs(question))
      for (const recipe of RECIPES) texts.add(indexedTextOf({ text: doc.text, title: doc.title, section: [] }, recipe));
  }
  return [...texts];
}

interface Arms {
  dense: ScoredId[];
  lexical: ScoredId[];
}

const FUSIONS: { name: string; fusion: Fusion }[] = [
  { name: 'RRF k=2 (default)', fusion: { method: 'rrf' } },
  { name: 'DBSF', fusion: { method: 'dbsf' } },
];

function fuse(arms: Arms, fusion: Fusion): ScoredId[] {
  if (fusion.method === 'dbsf') return fuseDbsf([arms.dense, arms.lexical]);
  return fuseRrf([arms.dense, arms.lexical], {
    ...(fusion.k === undefined ? {} : { k: fusion.k }),
    ...(fusion.weights ? { weights: [fusion.weights.dense, fusion.weights.lexical] } : {}),
  });
}

/** The grid bench/retrieval.ts tunes over (train split: an optimistic figure, said so in the table). */
function grid(): Fusion[] {
  const out: Fusion[] = [{ method: 'dbsf' }];
  for (const k of [1, 2, 3, 5, 10, 20, 40, 60]) {
    for (const [dense, lexical] of [
      [1, 1],
      [1, 0.8],
      [1, 0.6],
      [1, 0.4],
      [0.8, 1],
      [0.6, 1],
      [0.4, 1],
    ] as const) {
      out.push(dense === 1 && lexical === 1 ? { method: 'rrf', k } : { method: 'rrf', k, weights: { dense, lexical } });
    }
  }
  return out;
}

const describe = (fusion: Fusion) =>
  fusion.method === 'dbsf'
    ? 'DBSF'
    : `RRF k=${fusion.k ?? 2}${fusion.weights ? ` w ${fusion.weights.dense}/${fusion.weights.lexical}` : ''}`;

async function runSciFact(embeddings: CachedEmbeddings): Promise<string> {
  const { data, inputs } = sciFactInputs();
  const rows: (string | number)[][] = [];
  const prefetch = hybridPrefetchLimit(LIMIT);
  for (const input of inputs) {
    const store = new MemoryHybridStore({ embeddings, chunkTokens: CHUNK_TOKENS, indexedText: input.recipe });
    await store.addDocuments(input.docs);
    const arms: (Arms & { sourceOf: Map<string, string> })[] = [];
    for (const query of data.queries) {
      const dense = await store.search({ text: query.text, mode: 'dense', limit: prefetch });
      const lexical = await store.search({ text: query.text, mode: 'lexical', limit: prefetch });
      const sourceOf = new Map([...dense, ...lexical].map((c) => [c.id, c.sourceId ?? c.id]));
      arms.push({
        dense: dense.map(({ id, score }) => ({ id, score })),
        lexical: lexical.map(({ id, score }) => ({ id, score })),
        sourceOf,
      });
    }
    const score = (rank: (i: number) => ScoredId[]) => {
      const ndcg: number[] = [];
      const recall: number[] = [];
      data.queries.forEach((query, i) => {
        const ranked = uniqueBy(
          rank(i)
            .slice(0, LIMIT)
            .map((s) => arms[i]!.sourceOf.get(s.id)!),
          (id) => id,
        );
        const relevant = data.qrels.get(query.id)!;
        ndcg.push(ndcgAt(ranked, relevant, 10));
        recall.push(recallAt(ranked, relevant, 100));
      });
      return { ndcg: mean(ndcg), recall: mean(recall) };
    };
    const lexical = score((i) => arms[i]!.lexical);
    const dense = score((i) => arms[i]!.dense);
    const fused = FUSIONS.map(({ fusion }) => score((i) => fuse(arms[i]!, fusion)));
    const tuned = grid()
      .map((fusion) => ({ fusion, ...score((i) => fuse(arms[i]!, fusion)) }))
      .sort((a, b) => b.ndcg - a.ndcg)[0]!;
    // The default hybrid of the store itself, as a check that the arms above are what a hybrid search fuses.
    const check = await store.search({ text: data.queries[0]!.text, mode: 'hybrid', limit: 10 });
    const viaArms = fuse(arms[0]!, { method: 'rrf' })
      .slice(0, 10)
      .map((s) => s.id);
    if (check.map((c) => c.id).join() !== viaArms.join()) throw new Error('hybrid search and the fused arms disagree');
    rows.push([
      input.label,
      `${fixed(lexical.ndcg)} / ${fixed(lexical.recall)}`,
      `${fixed(dense.ndcg)} / ${fixed(dense.recall)}`,
      ...fused.map((f) => `${fixed(f.ndcg)} / ${fixed(f.recall)}`),
      `${fixed(tuned.ndcg)} (${describe(tuned.fusion)})`,
    ]);
    progress(
      `SciFact ${input.label}: lexical ${fixed(lexical.ndcg)}, dense ${fixed(dense.ndcg)}, hybrid ${fused.map((f) => fixed(f.ndcg)).join(' / ')}, best ${fixed(tuned.ndcg)}`,
    );
  }
  return [
    `#### SciFact, train split (${data.queries.length} queries, ${data.corpus.length} abstracts): nDCG@10 / recall@100`,
    '',
    markdownTable(
      ['Documents, recipe', 'lexical', 'dense', ...FUSIONS.map((f) => `hybrid ${f.name}`), 'best of the fusion grid (tuned on train)'],
      rows,
    ),
  ].join('\n');
}

async function runHotpot(embeddings: CachedEmbeddings): Promise<string> {
  const questions = loadHotpot();
  const rows: (string | number)[][] = [];
  for (const recipe of RECIPES) {
    for (const mode of ['lexical', 'dense', 'hybrid'] as const) {
      let bothTop4 = 0;
      let recall2 = 0;
      let ndcg = 0;
      for (const question of questions) {
        const store = new MemoryHybridStore({ embeddings, chunkTokens: CHUNK_TOKENS, indexedText: recipe });
        await store.addDocuments(hotpotDocs(question));
        const ranked = (await store.search({ text: question.question, mode, limit: 10 })).map((c) => c.sourceId ?? c.id);
        const titleOf = new Map(question.items.map((item) => [item.id, item.title]));
        const gold = new Map(question.goldTitles.map((title) => [title, 1]));
        const titles = ranked.map((id) => titleOf.get(id)!);
        if (question.goldTitles.every((t) => titles.slice(0, 4).includes(t))) bothTop4 += 1;
        recall2 += recallAt(titles, gold, 2);
        ndcg += ndcgAt(titles, gold, 10);
      }
      const n = questions.length;
      rows.push([recipe, mode, `${fixed((100 * bothTop4) / n, 1)}%`, `${fixed((100 * recall2) / n, 1)}%`, fixed(ndcg / n)]);
      progress(
        `HotpotQA ${recipe} ${mode}: both gold in top 4 ${fixed((100 * bothTop4) / n, 1)}%, recall@2 ${fixed((100 * recall2) / n, 1)}%`,
      );
    }
  }
  return [
    `#### HotpotQA distractor sample (${questions.length} questions; per question a store of its 10 paragraphs with their titles)`,
    '',
    markdownTable(['Recipe', 'mode', 'both gold in the top 4', 'gold recall@2', 'nDCG@10'], rows),
  ].join('\n');
}

async function main(): Promise<void> {
  if (args.texts !== undefined) {
    const texts = allIndexedTexts();
    let missing = texts;
    try {
      const cached = new CachedEmbeddings({ datasets: CACHES.filter((name) => name !== 'indexed-text') });
      missing = texts.filter((text) => !cached.has(text));
    } catch {
      // No cache yet: every text is missing.
    }
    writeFileSync(args.texts, missing.map((text) => JSON.stringify({ text })).join('\n') + '\n');
    progress(`${missing.length} of ${texts.length} indexed texts are not in the cache: written to ${args.texts}`);
    return;
  }
  const started = now();
  const embeddings = new CachedEmbeddings({ datasets: CACHES });
  const sci = await runSciFact(embeddings);
  const hotpot = await runHotpot(embeddings);
  const md = [
    '### Contextual indexing: before and after',
    '',
    'The same documents, given as `{ id, title, text }`, indexed by their text alone (`chunk-text`, the stores before) and ' +
      'with the title (and heading path: none here) in front (`title-headings@1`, the default now). Both arms use all-MiniLM-L6-v2 ' +
      'vectors of exactly the indexed text, from the offline cache. Command: `npx tsx bench/indexed-text.ts` (after ' +
      '`--texts FILE` and `embed.py --texts FILE --name indexed-text` fill the cache).',
    '',
    sci,
    '',
    hotpot,
    '',
    `Run took ${((now() - started) / 1000).toFixed(0)} s; ${loadNote()}.`,
  ].join('\n');
  process.stdout.write(`${md}\n`);
  if (args.write) writeSection('indexed-text', md);
}

await main();
