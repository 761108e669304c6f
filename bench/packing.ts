/**
 * Packing quality on the HotpotQA distractor dev sample. Per question the corpus is its 10 context paragraphs
 * (2 gold, 8 distractors) plus the gold paragraphs' near-duplicate 100-word retrieval chunks; we retrieve,
 * pack to 512/1024/2048 tokens (o200k_base) and measure whether the gold made it in, where it sits, and whether
 * duplicates survive. Baselines: LangChain's EnsembleRetriever ranking cut to the budget, with and without
 * LangChain Python's LongContextReorder rule.
 *
 *   npx tsx bench/packing.ts [--limit-questions N] [--write]
 */
import { parseArgs } from 'node:util';
import { packBundle } from '../src/core/pack.js';
import { escapeBody } from '../src/render/render.js';
import type { Candidate, Pack } from '../src/core/schemas.js';
import { MemoryHybridStore } from '../src/retrieve/memory-store.js';
import type { Fusion } from '../src/retrieve/types.js';
import { getTokenizer } from '../src/tokenize/tiktoken.js';
import { buildLangChainBaseline, langchainPythonLongContextReorder } from './baselines/langchain.js';
import { CachedEmbeddings } from './lib/cached-embeddings.js';
import { loadHotpot, type HotpotParagraph, type HotpotQuestion } from './lib/datasets.js';
import { mean, percentile } from './lib/metrics.js';
import { loadNote, writeSection } from './lib/report.js';
import { fixed, markdownTable, pct } from './lib/table.js';
import { now, progress } from './lib/timing.js';

const { values: args } = parseArgs({
  options: {
    'limit-questions': { type: 'string' },
    /** Hybrid fusion for our store: `dbsf` or `rrf[:k[:denseWeight:lexicalWeight]]`; default: the store's default. */
    fusion: { type: 'string' },
    write: { type: 'boolean', default: false },
  },
});

const BUDGETS = [512, 1024, 2048] as const;

function parseFusion(spec: string | undefined): Fusion | undefined {
  if (spec === undefined) return undefined;
  if (spec === 'dbsf') return { method: 'dbsf' };
  const [method, k, dense, lexical] = spec.split(':');
  if (method !== 'rrf') throw new Error(`--fusion must be dbsf or rrf[:k[:dense:lexical]], got ${spec}`);
  return {
    method: 'rrf',
    ...(k ? { k: Number(k) } : {}),
    ...(dense && lexical ? { weights: { dense: Number(dense), lexical: Number(lexical) } } : {}),
  };
}
const FUSION = parseFusion(args.fusion);
const ENCODING = 'o200k_base' as const;
const EDGE = 0.2;
const tokenizer = getTokenizer(ENCODING);

/** One packed context, reduced to what the metrics need. */
interface PackedContext {
  context: string;
  /** Items in context order with their character span in `context`. */
  items: { item: HotpotParagraph; start: number; end: number }[];
  usedTokens: number;
}

interface QuestionScore {
  bothGold: boolean;
  goldStart: number;
  goldEnd: number;
  goldMiddle: number;
  knownPairs: number;
  nearDuplicatePairs: number;
  usedTokens: number;
  items: number;
}

// ---------------------------------------------------------------------------------------------
// Systems

/** litm-pack: hybrid retrieval in MemoryHybridStore, then packBundle (dedupe, budget, LITM order). */
function oursFromPack(pack: Pack, byId: Map<string, HotpotParagraph>): PackedContext {
  const items: PackedContext['items'] = [];
  let from = 0;
  for (const packed of pack.items) {
    const body = escapeBody(pack.format, packed.text);
    const start = pack.context.indexOf(body, from);
    if (start < 0) throw new Error(`item ${packed.id} not found in its pack's context`);
    items.push({ item: byId.get(packed.id)!, start, end: start + body.length });
    from = start + body.length;
  }
  return { context: pack.context, items, usedTokens: pack.budget.usedTokens };
}

/**
 * What a LangChain.js user does with a ranked list and a token budget: join page contents with blank lines
 * (`formatDocumentsAsString`) and keep documents in the given order while the joined text fits; a document that
 * does not fit is skipped and smaller later ones may still go in. No dedupe, no truncation.
 */
function cutToBudget(ranked: HotpotParagraph[], budget: number, reorder?: (kept: HotpotParagraph[]) => HotpotParagraph[]): PackedContext {
  const kept: HotpotParagraph[] = [];
  for (const item of ranked) {
    const trial = [...kept, item];
    if (tokenizer.count(trial.map((d) => d.text).join('\n\n')) <= budget) kept.push(item);
  }
  const ordered = reorder ? reorder(kept) : kept;
  const items: PackedContext['items'] = [];
  let offset = 0;
  for (const item of ordered) {
    items.push({ item, start: offset, end: offset + item.text.length });
    offset += item.text.length + 2;
  }
  const context = ordered.map((d) => d.text).join('\n\n');
  return { context, items, usedTokens: context.length === 0 ? 0 : tokenizer.count(context) };
}

// ---------------------------------------------------------------------------------------------
// Metrics

function shingles(text: string, size = 5): Set<string> {
  const words = text.normalize('NFKC').toLowerCase().split(/\s+/).filter(Boolean);
  const out = new Set<string>();
  if (words.length < size) {
    if (words.length > 0) out.add(words.join(' '));
    return out;
  }
  for (let i = 0; i + size <= words.length; i += 1) out.add(words.slice(i, i + size).join(' '));
  return out;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter += 1;
  const union = a.size + b.size - inter;
  return union === 0 ? 0 : inter / union;
}

function overlapCoefficient(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter += 1;
  const smaller = Math.min(a.size, b.size);
  return smaller === 0 ? 0 : inter / smaller;
}

/**
 * What-if only, not the product: drops a candidate whose word 5-grams are mostly (overlap coefficient ≥ 0.8)
 * inside a better-ranked candidate's or contain them, to show what containment-aware dedupe would change.
 */
function dropContained(ranked: Candidate[]): Candidate[] {
  const kept: { candidate: Candidate; grams: Set<string> }[] = [];
  for (const candidate of ranked) {
    const grams = shingles(candidate.text);
    if (kept.some((k) => overlapCoefficient(k.grams, grams) >= 0.8)) continue;
    kept.push({ candidate, grams });
  }
  return kept.map((k) => k.candidate);
}

/** Median word 5-gram Jaccard and overlap coefficient over the known paragraph/chunk pairs. */
function pairStatistics(questions: HotpotQuestion[]): { jaccard: number; overlap: number; jaccardAtLeast08: number } {
  const j: number[] = [];
  const o: number[] = [];
  for (const q of questions) {
    for (const chunk of q.items.filter((i) => i.kind === 'chunk')) {
      const paragraph = q.items.find((i) => i.kind === 'paragraph' && i.goldTitle === chunk.goldTitle);
      if (!paragraph) continue;
      const a = shingles(paragraph.text);
      const b = shingles(chunk.text);
      j.push(jaccard(a, b));
      o.push(overlapCoefficient(a, b));
    }
  }
  return { jaccard: percentile(j, 50), overlap: percentile(o, 50), jaccardAtLeast08: j.filter((x) => x >= 0.8).length };
}

function score(question: HotpotQuestion, packed: PackedContext): QuestionScore {
  const present = new Set(packed.items.filter((p) => p.item.goldTitle !== null).map((p) => p.item.goldTitle!));
  const bothGold = question.goldTitles.every((t) => present.has(t));
  // Positions in tokens: an item is at the start edge if it begins in the first fifth of the context, at the
  // end edge if it ends in the last fifth, else in the middle.
  const total = packed.usedTokens;
  let goldStart = 0;
  let goldEnd = 0;
  let goldMiddle = 0;
  for (const { item, start, end } of packed.items) {
    if (!item.gold) continue;
    const startTok = tokenizer.count(packed.context.slice(0, start));
    const endTok = tokenizer.count(packed.context.slice(0, end));
    if (startTok < EDGE * total) goldStart += 1;
    else if (endTok > (1 - EDGE) * total) goldEnd += 1;
    else goldMiddle += 1;
  }
  let knownPairs = 0;
  let nearDuplicatePairs = 0;
  const kept = packed.items.map((p) => p.item);
  for (let i = 0; i < kept.length; i += 1) {
    for (let j = i + 1; j < kept.length; j += 1) {
      const a = kept[i]!;
      const b = kept[j]!;
      if (a.goldTitle !== null && a.goldTitle === b.goldTitle && a.kind !== b.kind) knownPairs += 1;
      if (jaccard(shingles(a.text), shingles(b.text)) >= 0.8) nearDuplicatePairs += 1;
    }
  }
  return { bothGold, goldStart, goldEnd, goldMiddle, knownPairs, nearDuplicatePairs, usedTokens: packed.usedTokens, items: kept.length };
}

interface Aggregate {
  system: string;
  budget: number;
  bothGold: number;
  edgeShare: number;
  startShare: number;
  endShare: number;
  middleShare: number;
  knownPairs: number;
  nearDuplicatePairs: number;
  meanTokens: number;
  meanItems: number;
}

function aggregate(system: string, budget: number, scores: QuestionScore[]): Aggregate {
  const gold = scores.reduce((s, q) => s + q.goldStart + q.goldEnd + q.goldMiddle, 0);
  const start = scores.reduce((s, q) => s + q.goldStart, 0);
  const end = scores.reduce((s, q) => s + q.goldEnd, 0);
  return {
    system,
    budget,
    bothGold: mean(scores.map((q) => (q.bothGold ? 1 : 0))),
    edgeShare: gold === 0 ? Number.NaN : (start + end) / gold,
    startShare: gold === 0 ? Number.NaN : start / gold,
    endShare: gold === 0 ? Number.NaN : end / gold,
    middleShare: gold === 0 ? Number.NaN : (gold - start - end) / gold,
    knownPairs: scores.reduce((s, q) => s + q.knownPairs, 0),
    nearDuplicatePairs: scores.reduce((s, q) => s + q.nearDuplicatePairs, 0),
    meanTokens: mean(scores.map((q) => q.usedTokens)),
    meanItems: mean(scores.map((q) => q.items)),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = now();
  let questions = loadHotpot();
  if (args['limit-questions']) questions = questions.slice(0, Number(args['limit-questions']));
  const embeddings = new CachedEmbeddings({ datasets: ['hotpotqa'] });
  const pairs = questions.reduce((n, q) => n + q.items.filter((i) => i.kind === 'chunk').length, 0);
  progress(`HotpotQA: ${questions.length} questions, ${pairs} paragraph/chunk near-duplicate pairs`);

  const systems = [
    'litm-pack (hybrid retrieval + packBundle)',
    'what-if: litm-pack + containment dedupe (bench-only pre-filter)',
    'litm-pack packBundle on the EnsembleRetriever ranking',
    'LangChain EnsembleRetriever, rank order cut to budget',
    'LangChain EnsembleRetriever, cut + LongContextReorder (Python rule)',
  ] as const;
  const scores = new Map<string, QuestionScore[]>();
  const key = (s: string, b: number) => `${s}@${b}`;
  for (const s of systems) for (const b of BUDGETS) scores.set(key(s, b), []);

  let done = 0;
  for (const question of questions) {
    const byId = new Map(question.items.map((i) => [i.id, i]));
    const docs = question.items.map((i) => ({ id: i.id, text: i.text, title: i.title }));

    // Ours: every item is one chunk (chunkTokens large), so ids map back to items.
    const store = new MemoryHybridStore({ embeddings, chunkTokens: 8192, ...(FUSION ? { fusion: FUSION } : {}) });
    await store.addDocuments(docs);
    const candidates: Candidate[] = (await store.search({ text: question.question, mode: 'hybrid', limit: docs.length })).map(
      (c) => ({ ...c, id: c.sourceId ?? c.id }),
    );

    // The LangChain pipeline over the same items and vectors.
    const lc = await buildLangChainBaseline({
      docs: question.items.map((i) => ({ id: i.id, text: i.text })),
      embeddings,
      k: docs.length,
    });
    const ranked = (await lc.ensemble.invoke(question.question)).map((d) => byId.get(String(d.metadata.id))!);
    // packBundle needs scores: the ensemble's order, as a descending score.
    const ensembleCandidates: Candidate[] = ranked.map((item, i) => ({
      id: item.id,
      text: item.text,
      title: item.title,
      score: ranked.length - i,
    }));

    for (const budget of BUDGETS) {
      const ours = packBundle({ query: question.question, candidates, maxTokens: budget, encoding: ENCODING });
      scores.get(key(systems[0], budget))!.push(score(question, oursFromPack(ours, byId)));
      const oursOnLc = packBundle({ query: question.question, candidates: ensembleCandidates, maxTokens: budget, encoding: ENCODING });
      const whatIf = packBundle({ query: question.question, candidates: dropContained(candidates), maxTokens: budget, encoding: ENCODING });
      scores.get(key(systems[1], budget))!.push(score(question, oursFromPack(whatIf, byId)));
      scores.get(key(systems[2], budget))!.push(score(question, oursFromPack(oursOnLc, byId)));
      scores.get(key(systems[3], budget))!.push(score(question, cutToBudget(ranked, budget)));
      scores
        .get(key(systems[4], budget))!
        .push(score(question, cutToBudget(ranked, budget, langchainPythonLongContextReorder)));
    }
    done += 1;
    if (done % 25 === 0) progress(`  ${done}/${questions.length} questions`);
  }

  const rows: Aggregate[] = [];
  for (const budget of BUDGETS) for (const s of systems) rows.push(aggregate(s, budget, scores.get(key(s, budget))!));

  const lines: string[] = [];
  lines.push(`### HotpotQA dev sample (${questions.length} questions), packing at 512 / 1024 / 2048 tokens (${ENCODING})`);
  lines.push('');
  lines.push(`Our hybrid fusion: ${args.fusion ?? "the store's default"}.`);
  lines.push('');
  lines.push(
    `Per question: 10 context paragraphs (2 gold, 8 distractors) plus ${pairs} retrieval chunks in all that nearly duplicate a gold ` +
      'paragraph. "Both gold": both supporting paragraphs (or their near-duplicate chunk) are in the pack. Position: a gold item ' +
      'is at the start if it begins in the first fifth of the context (by tokens), at the end if it ends in the last fifth, ' +
      'else in the middle. "Known pairs": a gold paragraph and its own chunk both kept; "near-dup pairs": any two kept items ' +
      'with word 5-gram Jaccard ≥ 0.8. Tokens: the whole context, exact.',
  );
  lines.push('');
  lines.push(
    markdownTable(
      ['Budget', 'System', 'Both gold', 'Gold at edges', 'start', 'end', 'middle', 'Known pairs', 'Near-dup pairs', 'Mean tokens', 'Mean items'],
      rows.map((r) => [
        r.budget,
        r.system,
        pct(r.bothGold),
        pct(r.edgeShare),
        pct(r.startShare),
        pct(r.endShare),
        pct(r.middleShare),
        r.knownPairs,
        r.nearDuplicatePairs,
        fixed(r.meanTokens, 0),
        fixed(r.meanItems, 1),
      ]),
    ),
  );
  lines.push('');
  const stats = pairStatistics(questions);
  lines.push(
    `The ${pairs} known pairs: median word 5-gram Jaccard ${fixed(stats.jaccard, 2)}, median overlap coefficient ` +
      `(shared 5-grams ÷ the smaller set) ${fixed(stats.overlap, 2)}; ${stats.jaccardAtLeast08} of them reach Jaccard 0.8, ` +
      'the packer\'s default near-duplicate threshold. Most chunks contain their paragraph plus more text, which Jaccard ' +
      'scores low.',
  );
  lines.push('');
  lines.push(
    'LangChain.js ships no LongContextReorder; the last baseline applies LangChain Python\'s `_litm_reordering` rule, ' +
      'reimplemented in bench/baselines/langchain.ts (it puts the best item last when the count is even).',
  );
  lines.push('');
  const at1024 = rows.find((r) => r.budget === 1024 && r.system === systems[0])!;
  const check = (ok: boolean) => (ok ? 'met' : 'missed');
  lines.push('#### Targets (litm-pack at 1024 tokens)');
  lines.push('');
  lines.push(
    markdownTable(
      ['Target', 'Result'],
      [
        ['both gold in ≥ 90% of packs', `${pct(at1024.bothGold)}: ${check(at1024.bothGold >= 0.9)}`],
        ['≥ 80% of gold items at the edges', `${pct(at1024.edgeShare)}: ${check(at1024.edgeShare >= 0.8)}`],
        ['no surviving duplicate pair', `${at1024.knownPairs} known, ${at1024.nearDuplicatePairs} near-dup: ${check(at1024.knownPairs + at1024.nearDuplicatePairs === 0)}`],
      ],
    ),
  );
  lines.push('');
  lines.push(`Run took ${((now() - started) / 1000).toFixed(0)} s; ${loadNote()}.`);
  const md = lines.join('\n');
  process.stdout.write(`${md}\n`);
  if (args.write) {
    if (args['limit-questions'] || args.fusion) progress('not writing BENCHMARKS.md: --limit-questions or --fusion is an exploratory run');
    else writeSection('packing', md);
  }
}

await main();
