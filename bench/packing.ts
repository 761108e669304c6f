/**
 * Packing quality on the HotpotQA distractor dev sample. Per question the corpus is its 10 context paragraphs
 * (2 gold, 8 distractors) plus the gold paragraphs' near-duplicate 100-word retrieval chunks; we retrieve,
 * pack to 512/1024/2048 tokens (o200k_base) and measure whether the gold made it in, where it sits, and whether
 * duplicates survive. Baselines: LangChain's EnsembleRetriever ranking cut to the budget, with and without
 * LangChain Python's LongContextReorder rule.
 *
 * In the same run: header styles (full, compact, minimal) in markdown and xml, their framing tokens and gold
 * recall (the default header was chosen on it), and rag-chunk-reorder (npm) as a peer at 256 to 2048 tokens,
 * fitted to the budget and unfitted, beside our whole-item and sentence-selection packs.
 *
 * A second section measures sentence selection (`compress: { mode: 'sentences' }`): HotpotQA with lexical
 * retrieval at 256 / 512 / 1024 tokens, with and without selection (both supporting paragraphs represented,
 * supporting-sentence recall, tokens, pack time), the grid its defaults were chosen on, and SciFact train
 * at 1,024 tokens (relevant abstracts kept per pack).
 *
 * A third section (`--fill`, in place of the first) measures the fill rule (rule 2) on HotpotQA without the
 * LangChain baselines: both-gold rates of whole-item and sentence-selection packs beside rag-chunk-reorder fitted
 * to the budget at 256 to 2,048 tokens, and rank faithfulness: how often one of the three best candidates is
 * dropped for budget while a lower one is kept, and whether removing every lower candidate would have kept it.
 *
 *   npx tsx bench/packing.ts [--limit-questions N] [--write] [--selection-only] [--fill] [--no-grid] [--skip-scifact]
 *   npx tsx bench/packing.ts --write-sentences FILE   # the HotpotQA sentences to embed (see BENCHMARKS.md)
 *
 * The stores index each paragraph with its title in front (contextual indexing), so the vectors looked up are of
 * those indexed texts: the `indexed-text` cache (bench/indexed-text.ts) and `packing-indexed`, the chunks of long
 * paragraphs, made by a dry run that lists what is missing and then embed.py:
 *   LITM_BENCH_COLLECT_MISSING=/tmp/missing.jsonl npx tsx bench/packing.ts
 *   .venv-bench/bin/python bench/python/embed.py --texts /tmp/missing.jsonl --name packing-indexed
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { packBundle } from '../src/core/bundle.js';
import { compareCandidates } from '../src/core/finish.js';
import { sentenceKey } from '../src/core/sentences.js';
import { splitSentences } from '../src/index.js';
import {
  CompressOptionsSchema,
  type CompressOptions,
  type Candidate,
  type Pack,
  HeaderSchema,
  type HeaderStyle,
} from '../src/core/schemas.js';
import { escapeBody } from '../src/render/escape.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import type { Fusion } from '../src/store/schemas.js';
import { getTokenizer } from '../src/tokenize/tiktoken.js';
import * as ragChunkReorder from 'rag-chunk-reorder';
// rag-chunk-reorder's ESM declarations import extensionless paths that NodeNext resolution cannot follow (its
// classes type as any there); its CommonJS declarations describe the same API, so the types are read from those.
import type * as RagChunkReorder from 'rag-chunk-reorder' with { 'resolution-mode': 'require' };
import { buildLangChainBaseline, langchainPythonLongContextReorder } from './baselines/langchain.js';
import { CachedEmbeddings } from './lib/cached-embeddings.js';
import { REPO_ROOT } from './lib/paths.js';
import { loadHotpot, loadSciFact, type HotpotParagraph, type HotpotQuestion } from './lib/datasets.js';
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
    'selection-only': { type: 'boolean', default: false },
    fill: { type: 'boolean', default: false },
    'no-grid': { type: 'boolean', default: false },
    'skip-scifact': { type: 'boolean', default: false },
    'write-sentences': { type: 'string' },
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
    const body = escapeBody(pack.format, packed.text, packed.truncated);
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

/**
 * rag-chunk-reorder (npm) with its defaults (scoreSpread), over the same ranked pool as ours. It has no
 * exact budget of its own unless given a counter: fitted, its order is rendered with a one-line `[n] title`
 * header per chunk, counted with the same tokenizer, and chunks are dropped from the end of its order until
 * the whole fits; unfitted, every chunk it returns is kept (the overshoot is reported).
 */
type Chunk = RagChunkReorder.Chunk;
const peer = new (ragChunkReorder as unknown as typeof RagChunkReorder).Reorderer();
function peerPack(question: string, ranked: Candidate[], byId: Map<string, HotpotParagraph>, budget: number | null): PackedContext {
  const ordered: Chunk[] = peer.reorderSync(
    ranked.map((c) => ({ id: c.id, text: c.text, score: c.score })),
    question,
  );
  const render = (chunks: Chunk[]) => chunks.map((c, i) => `[${i + 1}] ${byId.get(c.id)!.title}\n${c.text}`).join('\n\n');
  let kept = ordered;
  if (budget !== null) while (kept.length > 0 && tokenizer.count(render(kept)) > budget) kept = kept.slice(0, -1);
  const items: PackedContext['items'] = [];
  let offset = 0;
  kept.forEach((chunk: Chunk, i: number) => {
    const start = offset + `[${i + 1}] ${byId.get(chunk.id)!.title}\n`.length;
    items.push({ item: byId.get(chunk.id)!, start, end: start + chunk.text.length });
    offset = start + chunk.text.length + 2;
  });
  const context = render(kept);
  return { context, items, usedTokens: context.length === 0 ? 0 : tokenizer.count(context) };
}

/** Tokens of a pack that are not passage text: headers, separators, wrappers (the context less its escaped bodies). */
function framingTokens(pack: Pack): number {
  const bodies = pack.items.reduce((sum, item) => sum + tokenizer.count(escapeBody(pack.format, item.text)), 0);
  return Math.max(0, pack.budget.usedTokens - bodies);
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
  const embeddings = new CachedEmbeddings({ datasets: ['hotpotqa', 'indexed-text', 'packing-indexed'] });
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

  const PEER_BUDGETS = [256, 512, 1024, 2048] as const;
  const peerSystems = [
    'litm-pack, whole items',
    'litm-pack, sentence selection (BM25, defaults)',
    'rag-chunk-reorder 0.1.7, fitted (drop from the end)',
    'rag-chunk-reorder 0.1.7, unfitted',
  ] as const;
  const peerScores = new Map<string, QuestionScore[]>();
  for (const s of peerSystems) for (const b of PEER_BUDGETS) peerScores.set(key(s, b), []);
  const headerRuns = new Map<string, { both: number[]; framing: number; used: number; formats: number }>();
  const FORMAT_NAMES = ['markdown', 'xml'] as const;
  for (const h of HeaderSchema.options)
    for (const f of FORMAT_NAMES) for (const b of BUDGETS) headerRuns.set(`${h}/${f}@${b}`, { both: [], framing: 0, used: 0, formats: 0 });

  let done = 0;
  for (const question of questions) {
    const byId = new Map(question.items.map((i) => [i.id, i]));
    const docs = question.items.map((i) => ({ id: i.id, text: i.text, title: i.title }));

    // Ours: every item is one chunk (chunkTokens large), so ids map back to items.
    const store = new MemoryHybridStore({ embeddings, chunkTokens: 8192, ...(FUSION ? { fusion: FUSION } : {}) });
    await store.addDocuments(docs);
    const candidates: Candidate[] = (await store.search({ text: question.question, mode: 'hybrid', limit: docs.length })).map((c) => ({
      ...c,
      id: c.sourceId ?? c.id,
    }));

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
      scores.get(key(systems[4], budget))!.push(score(question, cutToBudget(ranked, budget, langchainPythonLongContextReorder)));
      for (const header of HeaderSchema.options) {
        for (const format of FORMAT_NAMES) {
          const pack = packBundle({ query: question.question, candidates, maxTokens: budget, encoding: ENCODING, header, format });
          const run = headerRuns.get(`${header}/${format}@${budget}`)!;
          run.both.push(score(question, oursFromPack(pack, byId)).bothGold ? 1 : 0);
          run.framing += framingTokens(pack);
          run.used += pack.budget.usedTokens;
        }
      }
    }
    for (const budget of PEER_BUDGETS) {
      const whole = packBundle({ query: question.question, candidates, maxTokens: budget, encoding: ENCODING });
      const selected = packBundle({
        query: question.question,
        candidates,
        maxTokens: budget,
        encoding: ENCODING,
        compress: { mode: 'sentences' },
      });
      peerScores.get(key(peerSystems[0], budget))!.push(score(question, oursFromPack(whole, byId)));
      peerScores.get(key(peerSystems[1], budget))!.push(score(question, oursFromPack(selected, byId)));
      peerScores.get(key(peerSystems[2], budget))!.push(score(question, peerPack(question.question, candidates, byId, budget)));
      peerScores.get(key(peerSystems[3], budget))!.push(score(question, peerPack(question.question, candidates, byId, null)));
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
      [
        'Budget',
        'System',
        'Both gold',
        'Gold at edges',
        'start',
        'end',
        'middle',
        'Known pairs',
        'Near-dup pairs',
        'Mean tokens',
        'Mean items',
      ],
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
      "the packer's default near-duplicate threshold. Most chunks contain their paragraph plus more text, which Jaccard " +
      'scores low.',
  );
  lines.push('');
  lines.push(
    "LangChain.js ships no LongContextReorder; the last baseline applies LangChain Python's `_litm_reordering` rule, " +
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
        [
          'no surviving duplicate pair',
          `${at1024.knownPairs} known, ${at1024.nearDuplicatePairs} near-dup: ${check(at1024.knownPairs + at1024.nearDuplicatePairs === 0)}`,
        ],
      ],
    ),
  );
  lines.push('');
  lines.push(...headerSection(headerRuns, questions.length));
  lines.push(...peerSection(peerSystems, PEER_BUDGETS, peerScores, questions.length));
  lines.push(`Run took ${((now() - started) / 1000).toFixed(0)} s; ${loadNote()}.`);
  const md = lines.join('\n');
  process.stdout.write(`${md}\n`);
  if (args.write) {
    if (args['limit-questions'] || args.fusion) progress('not writing BENCHMARKS.md: --limit-questions or --fusion is an exploratory run');
    else writeSection('packing', md);
  }
}

function headerSection(runs: Map<string, { both: number[]; framing: number; used: number }>, questionCount: number): string[] {
  const lines: string[] = [];
  lines.push(`### Headers: framing tokens and gold recall by header style (${questionCount} questions, hybrid retrieval, whole items)`);
  lines.push('');
  lines.push(
    '"Framing": the share of the context\'s tokens that are not passage text (headers, separators and, in xml, the ' +
      'tags), i.e. the context\'s exact count less the escaped bodies counted alone, summed over packs. "Both gold" as above. ' +
      'Rule, fixed before the run: the default is the style with the best both-gold rate summed over the three budgets and ' +
      'both formats; within one question of it (1 pt here) the one that still shows the locator, then the least framing.',
  );
  lines.push('');
  const rows: string[][] = [];
  const totals = new Map<HeaderStyle, number>();
  for (const header of HeaderSchema.options) {
    for (const format of ['markdown', 'xml'] as const) {
      for (const budget of BUDGETS) {
        const run = runs.get(`${header}/${format}@${budget}`)!;
        totals.set(header, (totals.get(header) ?? 0) + mean(run.both));
        rows.push([
          String(budget),
          format,
          header,
          pct(mean(run.both)),
          pct(run.framing / run.used),
          fixed(run.framing / run.both.length, 0),
        ]);
      }
    }
  }
  lines.push(markdownTable(['Budget', 'Format', 'Header', 'Both gold', 'Framing share', 'Framing tokens per pack'], rows));
  lines.push('');
  lines.push(
    `Both gold summed over budgets and formats: ${HeaderSchema.options.map((h) => `${h} ${fixed((totals.get(h) ?? 0) * 100, 0)}`).join(', ')} (of 600).`,
  );
  lines.push('');
  return lines;
}

function peerSection(
  systems: readonly string[],
  budgets: readonly number[],
  scores: Map<string, QuestionScore[]>,
  questionCount: number,
): string[] {
  const lines: string[] = [];
  lines.push(`### Peers: rag-chunk-reorder at 256 / 512 / 1024 / 2048 tokens (${questionCount} questions, the same hybrid pool)`);
  lines.push('');
  lines.push(
    'rag-chunk-reorder 0.1.7 (npm, `new Reorderer()`: its defaults, scoreSpread) reorders the same ranked pool our packer ' +
      'gets. Fitted: its order rendered with a one-line `[n] title` header per chunk, counted with o200k_base, chunks ' +
      'dropped from the end of its order until it fits. Unfitted: everything it returns; "Over budget" is the share of packs ' +
      'above the budget and the mean overshoot in tokens. Ours: `packBundle` with the defaults, without and with ' +
      "`compress: { mode: 'sentences' }`.",
  );
  lines.push('');
  const rows: string[][] = [];
  const verdicts: string[][] = [];
  for (const budget of budgets) {
    const fitted = aggregate(systems[2]!, budget, scores.get(`${systems[2]}@${budget}`)!).bothGold;
    for (const system of systems) {
      const list = scores.get(`${system}@${budget}`)!;
      const row = aggregate(system, budget, list);
      const over = list.filter((q) => q.usedTokens > budget);
      const overshoot = over.length === 0 ? 0 : mean(over.map((q) => q.usedTokens - budget));
      rows.push([
        String(budget),
        system,
        pct(row.bothGold),
        pct(row.edgeShare),
        fixed(row.meanTokens, 0),
        fixed(row.meanItems, 1),
        `${pct(over.length / list.length)} (+${fixed(overshoot, 0)})`,
      ]);
      if (system === systems[0] || system === systems[1]) {
        verdicts.push([
          `${budget}: ${system} ≥ fitted peer`,
          `${pct(row.bothGold)} vs ${pct(fitted)}: ${row.bothGold >= fitted ? 'met' : 'missed'}`,
        ]);
      }
    }
  }
  lines.push(markdownTable(['Budget', 'System', 'Both gold', 'Gold at edges', 'Mean tokens', 'Mean items', 'Over budget'], rows));
  lines.push('');
  lines.push('#### Targets (both gold at least as often as the fitted peer)');
  lines.push('');
  lines.push(markdownTable(['Target', 'Result'], verdicts));
  lines.push('');
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Sentence selection

// ---------------------------------------------------------------------------------------------
// The fill rule (rule 2): gold kept at every budget, and the three best never dropped for lower ones

const FILL_BUDGETS = [256, 384, 512, 768, 1024, 1536, 2048] as const;

interface FillRun {
  both: number[];
  truncated: number;
  items: number;
  /** Packs where one of the three best survivors was dropped for budget while a lower-ranked one is kept. */
  topDroppedBesideLower: number;
  /** ... and where packing without every lower-ranked candidate keeps it: dropped for lower ones. */
  topDroppedForLower: number;
}

/**
 * Rank faithfulness of one pack: the three best candidates that reach the budget (not dropped as duplicates, over
 * a source cap or below the minimum score), each dropped for budget while a lower-ranked candidate is kept; and of
 * those, the ones a pack of only the candidates ranked at or above them would keep.
 */
function rankFaithfulness(
  pack: Pack,
  candidates: readonly Candidate[],
  repack: (subset: Candidate[]) => Pack,
): { beside: boolean; forLower: boolean } {
  const ranked = [...candidates].sort(compareCandidates);
  const reasons = new Map(pack.dropped.map((d) => [d.id, d.reason] as const));
  const kept = new Set(pack.items.map((i) => i.id));
  const survivors = ranked.filter((c) => kept.has(c.id) || reasons.get(c.id) === 'budget');
  let beside = false;
  let forLower = false;
  survivors.slice(0, 3).forEach((top) => {
    if (reasons.get(top.id) !== 'budget') return;
    const position = ranked.indexOf(top);
    if (!ranked.slice(position + 1).some((c) => kept.has(c.id))) return;
    beside = true;
    if (repack(ranked.slice(0, position + 1)).items.some((i) => i.id === top.id)) forLower = true;
  });
  return { beside, forLower };
}

async function fillSection(): Promise<string> {
  const started = now();
  let questions = loadHotpot();
  if (args['limit-questions']) questions = questions.slice(0, Number(args['limit-questions']));
  const embeddings = new CachedEmbeddings({ datasets: ['hotpotqa', 'indexed-text', 'packing-indexed'] });
  const systems = ['whole items', 'sentence selection (BM25, defaults)', 'rag-chunk-reorder 0.1.7, fitted'] as const;
  const runs = new Map<string, FillRun>();
  for (const s of systems)
    for (const b of FILL_BUDGETS)
      runs.set(`${s}@${b}`, { both: [], truncated: 0, items: 0, topDroppedBesideLower: 0, topDroppedForLower: 0 });
  let done = 0;
  for (const question of questions) {
    const byId = new Map(question.items.map((i) => [i.id, i]));
    const store = new MemoryHybridStore({ embeddings, chunkTokens: 8192, ...(FUSION ? { fusion: FUSION } : {}) });
    await store.addDocuments(question.items.map((i) => ({ id: i.id, text: i.text, title: i.title })));
    const candidates: Candidate[] = (await store.search({ text: question.question, mode: 'hybrid', limit: question.items.length })).map(
      (c) => ({ ...c, id: c.sourceId ?? c.id }),
    );
    for (const budget of FILL_BUDGETS) {
      const options = { query: question.question, maxTokens: budget, encoding: ENCODING };
      const packs: [string, Pack | null, ((subset: Candidate[]) => Pack) | null][] = [
        [systems[0], packBundle({ ...options, candidates }), (subset) => packBundle({ ...options, candidates: subset })],
        [
          systems[1],
          packBundle({ ...options, candidates, compress: { mode: 'sentences' } }),
          (subset) => packBundle({ ...options, candidates: subset, compress: { mode: 'sentences' } }),
        ],
      ];
      for (const [system, pack, repack] of packs) {
        const run = runs.get(`${system}@${budget}`)!;
        run.both.push(score(question, oursFromPack(pack!, byId)).bothGold ? 1 : 0);
        run.truncated += pack!.items.filter((i) => i.truncated).length;
        run.items += pack!.items.length;
        const faith = rankFaithfulness(pack!, candidates, repack!);
        if (faith.beside) run.topDroppedBesideLower += 1;
        if (faith.forLower) run.topDroppedForLower += 1;
      }
      const peerRun = runs.get(`${systems[2]}@${budget}`)!;
      const fitted = peerPack(question.question, candidates, byId, budget);
      peerRun.both.push(score(question, fitted).bothGold ? 1 : 0);
      peerRun.items += fitted.items.length;
    }
    done += 1;
    if (done % 25 === 0) progress(`  fill: ${done}/${questions.length} questions`);
  }
  const rows: string[][] = [];
  const verdicts: string[][] = [];
  for (const budget of FILL_BUDGETS) {
    for (const system of systems) {
      const run = runs.get(`${system}@${budget}`)!;
      const peer = system === systems[2];
      rows.push([
        String(budget),
        system,
        pct(mean(run.both)),
        fixed(run.items / run.both.length, 1),
        peer ? '—' : fixed(run.truncated / run.both.length, 2),
        peer ? '—' : String(run.topDroppedBesideLower),
        peer ? '—' : String(run.topDroppedForLower),
      ]);
    }
    const whole = mean(runs.get(`${systems[0]}@${budget}`)!.both);
    const fitted = mean(runs.get(`${systems[2]}@${budget}`)!.both);
    verdicts.push([
      `${budget}: whole items ≥ rag-chunk-reorder fitted`,
      `${pct(whole)} vs ${pct(fitted)}: ${whole >= fitted ? 'met' : 'missed'}`,
    ]);
  }
  const selection512 = mean(runs.get(`${systems[1]}@512`)!.both);
  verdicts.push([
    '512: sentence selection both gold ≥ 90% (this hybrid pool)',
    `${pct(selection512)}: ${selection512 >= 0.9 ? 'met' : 'missed'}`,
  ]);
  const forLower = [...runs.values()].reduce((n, r) => n + r.topDroppedForLower, 0);
  verdicts.push([
    'one of the three best dropped for lower ones, any budget and system',
    `${forLower} packs: ${forLower === 0 ? 'met' : 'missed'}`,
  ]);
  return [
    `### Fill (rule 2) on HotpotQA (${questions.length} questions, hybrid pool, ${FILL_BUDGETS.join(' / ')} tokens)`,
    '',
    "The same hybrid pool as the peer section (10 paragraphs and the gold paragraphs' chunks per question, one chunk each). " +
      '"Both gold" as above. "Cut items": items truncated per pack. "Top-3 dropped beside lower": packs where one of the three ' +
      'best candidates that reached the budget (not a duplicate, not over a cap) was dropped for budget while a lower-ranked one ' +
      'was kept; "for lower": of those, packs where packing without every lower-ranked candidate keeps it (the lower ones took ' +
      'its place). rag-chunk-reorder fitted as in the peer section.',
    '',
    markdownTable(['Budget', 'Pack', 'Both gold', 'Mean items', 'Cut items', 'Top-3 dropped beside lower', 'for lower'], rows),
    '',
    markdownTable(['Target', 'Result'], verdicts),
    '',
    `Run took ${((now() - started) / 1000).toFixed(0)} s; ${loadNote()}.`,
  ].join('\n');
}

const SELECTION_BUDGETS = [256, 512, 1024] as const;
const SENTENCE_CACHE = 'hotpotqa-sentences';
const PACK_REPEATS = 5;

interface SelectionScore {
  bothGold: boolean;
  supporting: number;
  supportingKept: number;
  /** Supporting sentences kept in either revision (see `sameSentence`). */
  supportingKeptEither: number;
  usedTokens: number;
  items: number;
  packMs: number;
  firstMs: number;
}

interface QuestionPool {
  question: HotpotQuestion;
  candidates: Candidate[];
  /** Supporting sentences (the dataset's own sentence texts). */
  supporting: string[];
  vectors?: { query: number[]; sentences: Map<string, number[]> };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Packs `repeats` times and keeps the last pack with the median time (warm caches, as in a running service). */
function timedPack(pack: () => Pack, repeats = PACK_REPEATS): { pack: Pack; ms: number; firstMs: number } {
  const times: number[] = [];
  let result: Pack | undefined;
  for (let i = 0; i < repeats; i += 1) {
    const started = now();
    result = pack();
    times.push(now() - started);
  }
  return { pack: result!, ms: median(times), firstMs: times[0]! };
}

/** The distinct words of a sentence, letters and digits only. */
function wordSet(text: string): Set<string> {
  return new Set(loose(text).split(' ').filter(Boolean));
}

/**
 * Diagnostic only (not the target's metric): the retrieval chunks come from another revision of the
 * articles, so a pack may show a supporting sentence in the chunk's wording ("A right-handed player ...,
 * his ... serve earned him ..." for "He was a right-handed player ... that earned him ..."). It counts
 * here when a kept sentence holds at least 80% of its words.
 */
function sameSentence(words: Set<string>, other: Set<string>): boolean {
  if (words.size === 0) return false;
  let shared = 0;
  for (const word of words) if (other.has(word)) shared += 1;
  return shared / words.size >= 0.8;
}

function loose(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function scoreSelection(pool: QuestionPool, pack: Pack, ms: number, firstMs: number): SelectionScore {
  const byId = new Map(pool.question.items.map((i) => [i.id, i]));
  const kept = pack.items.map((item) => ({ item, source: byId.get(item.id)! }));
  const present = new Set(kept.filter((k) => k.source.goldTitle !== null).map((k) => k.source.goldTitle!));
  // Letters and digits only: a chunk from another revision of the article writes "Elliott, Jr." for "Elliott Jr.".
  const texts = kept.map((k) => loose(k.item.text));
  const supportingKept = pool.supporting.filter((sentence) => texts.some((t) => t.includes(loose(sentence)))).length;
  const keptSentences = kept.flatMap((k) => splitSentences(k.item.text).map((r) => wordSet(k.item.text.slice(r.start, r.end))));
  const supportingKeptEither = pool.supporting.filter((sentence) => {
    const words = wordSet(sentence);
    return keptSentences.some((other) => sameSentence(words, other));
  }).length;
  return {
    bothGold: pool.question.goldTitles.every((t) => present.has(t)),
    supporting: pool.supporting.length,
    supportingKept,
    supportingKeptEither,
    usedTokens: pack.budget.usedTokens,
    items: pack.items.length,
    packMs: ms,
    firstMs,
  };
}

interface SelectionAggregate {
  bothGold: number;
  recall: number;
  recallEither: number;
  meanTokens: number;
  meanItems: number;
  packMs: number;
  firstMs: number;
}

function aggregateSelection(scores: SelectionScore[]): SelectionAggregate {
  const supporting = scores.reduce((n, s) => n + s.supporting, 0);
  return {
    bothGold: mean(scores.map((s) => (s.bothGold ? 1 : 0))),
    recall: supporting === 0 ? Number.NaN : scores.reduce((n, s) => n + s.supportingKept, 0) / supporting,
    recallEither: supporting === 0 ? Number.NaN : scores.reduce((n, s) => n + s.supportingKeptEither, 0) / supporting,
    meanTokens: mean(scores.map((s) => s.usedTokens)),
    meanItems: mean(scores.map((s) => s.items)),
    packMs: mean(scores.map((s) => s.packMs)),
    firstMs: mean(scores.map((s) => s.firstMs)),
  };
}

/** Lexical retrieval per question over its paragraphs and chunks (one chunk each), as the store does it. */
async function hotpotPools(questions: HotpotQuestion[]): Promise<QuestionPool[]> {
  const pools: QuestionPool[] = [];
  for (const question of questions) {
    const store = new MemoryHybridStore({ chunkTokens: 8192 });
    await store.addDocuments(question.items.map((i) => ({ id: i.id, text: i.text, title: i.title })));
    const candidates = (await store.search({ text: question.question, mode: 'lexical', limit: question.items.length })).map((c) => ({
      ...c,
      id: c.sourceId ?? c.id,
    }));
    const supporting = [...new Set(hotpotSupporting(question))];
    pools.push({ question, candidates, supporting });
  }
  return pools;
}

/** The dataset's supporting sentences of a question, stripped as the paragraphs' sentences are. */
function hotpotSupporting(question: HotpotQuestion): string[] {
  return question.supportingSentences.map((s) => s.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, '')).filter((s) => s.length > 0);
}

/** Every sentence (as the selector splits them) of every question's items: what the sentence cache must hold. */
function hotpotSentenceTexts(questions: HotpotQuestion[]): string[] {
  const out = new Set<string>();
  for (const q of questions)
    for (const item of q.items) for (const r of splitSentences(item.text)) out.add(item.text.slice(r.start, r.end));
  return [...out];
}

function attachVectors(pools: QuestionPool[]): boolean {
  let sentences: CachedEmbeddings;
  let questions: CachedEmbeddings;
  try {
    sentences = new CachedEmbeddings({ datasets: [SENTENCE_CACHE] });
    questions = new CachedEmbeddings({ datasets: ['hotpotqa'] });
  } catch {
    return false;
  }
  for (const pool of pools) {
    const map = new Map<string, number[]>();
    for (const c of pool.candidates) {
      for (const r of splitSentences(c.text)) {
        const text = c.text.slice(r.start, r.end);
        if (!sentences.has(text)) return false;
        map.set(sentenceKey(text), Array.from(sentences.vector(text)));
      }
    }
    pool.vectors = { query: Array.from(questions.vector(pool.question.question)), sentences: map };
  }
  return true;
}

type Setting = Omit<CompressOptions, 'vectors' | 'mode'> & { dense: boolean };

function settingName(s: Setting): string {
  const w = s.dense ? `, dense ${s.weights?.dense ?? 0.5}` : ', BM25 only';
  return `minRelevance ${s.minRelevance}, minSentences ${s.minSentences}, window ${s.window}, spread ${s.spread}${w}`;
}

function runSetting(pools: QuestionPool[], budget: number, setting: Setting | null, repeats: number): SelectionScore[] {
  return pools.map((pool) => {
    let compress: CompressOptions | undefined;
    if (setting !== null) {
      const { dense, ...rest } = setting;
      compress = { mode: 'sentences', ...rest, ...(dense && pool.vectors ? { vectors: pool.vectors } : {}) };
      if (!dense) compress.weights = { lexical: 1, dense: 0 };
    }
    const { pack, ms, firstMs } = timedPack(
      () =>
        packBundle({
          query: pool.question.question,
          candidates: pool.candidates,
          maxTokens: budget,
          encoding: ENCODING,
          ...(compress ? { compress } : {}),
        }),
      repeats,
    );
    return scoreSelection(pool, pack, ms, firstMs);
  });
}

/** The rule the defaults are chosen by (fixed before the grid ran): best worst margin over the four targets. */
function targetMargin(at256: SelectionAggregate, at512: SelectionAggregate): number {
  return Math.min(at512.bothGold - 0.9, at512.recall - 0.85, at256.bothGold - 0.75, at256.recall - 0.7);
}

async function scifactSelection(): Promise<string> {
  const data = loadSciFact();
  const queries = args['limit-questions'] ? data.queries.slice(0, Number(args['limit-questions'])) : data.queries;
  const store = new MemoryHybridStore({ chunkTokens: 8192 });
  await store.addDocuments(data.corpus.map((d) => ({ id: d.id, text: d.text, title: d.title })));
  const defaults = CompressOptionsSchema.parse({ mode: 'sentences' });
  const rows: { system: string; relevant: number; anyRelevant: number; tokens: number; items: number }[] = [];
  const totals = {
    without: [] as number[],
    with: [] as number[],
    anyWithout: [] as number[],
    anyWith: [] as number[],
    tokWithout: [] as number[],
    tokWith: [] as number[],
    itemsWithout: [] as number[],
    itemsWith: [] as number[],
  };
  let more = 0;
  let fewer = 0;
  for (const query of queries) {
    const relevant = data.qrels.get(query.id)!;
    const candidates = (await store.search({ text: query.text, mode: 'lexical', limit: 50 })).map((c) => ({
      ...c,
      id: c.sourceId ?? c.id,
    }));
    const plain = packBundle({ query: query.text, candidates, maxTokens: 1024, encoding: ENCODING });
    const selected = packBundle({
      query: query.text,
      candidates,
      maxTokens: 1024,
      encoding: ENCODING,
      compress: {
        mode: 'sentences',
        weights: { lexical: 1, dense: 0 },
        minRelevance: defaults.minRelevance,
        window: defaults.window,
        minSentences: defaults.minSentences,
        spread: defaults.spread,
      },
    });
    const count = (pack: Pack) => pack.items.filter((i) => relevant.has(i.id)).length;
    const a = count(plain);
    const b = count(selected);
    if (b > a) more += 1;
    if (b < a) fewer += 1;
    totals.without.push(a / relevant.size);
    totals.with.push(b / relevant.size);
    totals.anyWithout.push(a > 0 ? 1 : 0);
    totals.anyWith.push(b > 0 ? 1 : 0);
    totals.tokWithout.push(plain.budget.usedTokens);
    totals.tokWith.push(selected.budget.usedTokens);
    totals.itemsWithout.push(plain.items.length);
    totals.itemsWith.push(selected.items.length);
  }
  rows.push({
    system: 'whole abstracts',
    relevant: mean(totals.without),
    anyRelevant: mean(totals.anyWithout),
    tokens: mean(totals.tokWithout),
    items: mean(totals.itemsWithout),
  });
  rows.push({
    system: 'sentence selection (defaults, BM25 only)',
    relevant: mean(totals.with),
    anyRelevant: mean(totals.anyWith),
    tokens: mean(totals.tokWith),
    items: mean(totals.itemsWith),
  });
  return [
    `### SciFact train (${queries.length} queries): relevant abstracts kept in a 1,024-token pack`,
    '',
    'Lexical retrieval of 50 abstracts per query from the whole corpus (one chunk each), packed at 1,024 tokens (o200k_base). "Relevant kept": the share of the query\'s judged-relevant abstracts that are items of the pack (any of their sentences), averaged over queries.',
    '',
    markdownTable(
      ['Pack', 'Relevant kept', 'Packs with ≥ 1 relevant', 'Mean items', 'Mean tokens'],
      rows.map((r) => [r.system, pct(r.relevant), pct(r.anyRelevant), fixed(r.items, 1), fixed(r.tokens, 0)]),
    ),
    '',
    `With selection a pack keeps more relevant abstracts than without for ${more} queries and fewer for ${fewer} (same for the rest).`,
  ].join('\n');
}

async function selectionMain(): Promise<{ selection: string; grid: string }> {
  const started = now();
  let questions = loadHotpot();
  if (args['limit-questions']) questions = questions.slice(0, Number(args['limit-questions']));
  if (args['write-sentences']) {
    const texts = hotpotSentenceTexts(loadHotpot());
    writeFileSync(args['write-sentences'], texts.map((text) => JSON.stringify({ text })).join('\n') + '\n');
    progress(`wrote ${texts.length} sentences to ${args['write-sentences']}`);
    process.exit(0);
  }
  const pools = await hotpotPools(questions);
  const haveVectors = attachVectors(pools);
  progress(
    `HotpotQA selection: ${pools.length} questions, sentence vectors ${haveVectors ? 'cached' : 'missing (dense rows left out; see BENCHMARKS.md, How to regenerate)'}`,
  );
  const defaults = CompressOptionsSchema.parse({ mode: 'sentences' });
  const chosen: Setting = {
    minRelevance: defaults.minRelevance,
    window: defaults.window,
    minSentences: defaults.minSentences,
    spread: defaults.spread,
    weights: defaults.weights,
    dense: false,
  };

  const lines: string[] = [];
  lines.push(`### Sentence selection on HotpotQA (${pools.length} questions), lexical retrieval, ${SELECTION_BUDGETS.join(' / ')} tokens`);
  lines.push('');
  lines.push(
    "Per question its 10 paragraphs and the gold paragraphs' retrieval chunks are retrieved lexically (BM25, one chunk each) and packed " +
      'with `packBundle`, without and with `compress: { mode: \'sentences\' }` (defaults). "Both gold": both supporting paragraphs are ' +
      'represented (an item of each, or of its chunk). "Sentence recall": the share of the dataset\'s supporting sentences that appear ' +
      'whole in a kept item (letters and digits compared: the chunks come from another revision of the articles); "either revision" ' +
      "(a diagnostic, not the target's metric) also counts a kept sentence holding at least 80% of its words, i.e. the chunk's " +
      'wording of the same sentence. Pack time: ' +
      `median of ${PACK_REPEATS} packs of the same pool (warm caches: a running service sees the same chunks again), averaged over ` +
      'questions, after one untimed pass of every system; "first pack": the first of the five. Dense rows: the sentence ' +
      'vectors come from the offline cache (no model time in the pack time).',
  );
  lines.push('');
  const rows: (string | number)[][] = [];
  const results = new Map<string, SelectionAggregate>();
  const systems: { name: string; setting: Setting | null }[] = [
    { name: 'whole items (no selection)', setting: null },
    { name: 'sentence selection, BM25 only (defaults)', setting: chosen },
  ];
  if (haveVectors) {
    systems.push({
      name: 'sentence selection + dense (MiniLM sentence vectors)',
      setting: { ...chosen, weights: defaults.weights, dense: true },
    });
  }
  // One untimed pass of every system first, so no row pays for the first compilation of its code.
  for (const system of systems) runSetting(pools, SELECTION_BUDGETS[0], system.setting, 1);
  for (const budget of SELECTION_BUDGETS) {
    const base = aggregateSelection(runSetting(pools, budget, null, PACK_REPEATS));
    for (const system of systems) {
      const agg = system.setting === null ? base : aggregateSelection(runSetting(pools, budget, system.setting, PACK_REPEATS));
      results.set(`${system.name}@${budget}`, agg);
      rows.push([
        budget,
        system.name,
        pct(agg.bothGold),
        pct(agg.recall),
        pct(agg.recallEither),
        fixed(agg.meanTokens, 0),
        fixed(agg.meanItems, 1),
        fixed(agg.packMs, 2),
        `${fixed(agg.packMs / base.packMs, 2)}×`,
        fixed(agg.firstMs, 2),
      ]);
    }
  }
  lines.push(
    markdownTable(
      [
        'Budget',
        'Pack',
        'Both gold',
        'Sentence recall',
        'Recall, either revision',
        'Mean tokens',
        'Mean items',
        'Pack ms',
        'vs whole',
        'First pack ms',
      ],
      rows,
    ),
  );
  lines.push('');
  const sel = (b: number) => results.get(`${systems[1]!.name}@${b}`)!;
  const check = (ok: boolean) => (ok ? 'met' : 'missed');
  lines.push('#### Targets (selection with the defaults)');
  lines.push('');
  lines.push(
    markdownTable(
      ['Target', 'Result'],
      [
        ['512: both gold ≥ 90%', `${pct(sel(512).bothGold)}: ${check(sel(512).bothGold >= 0.9)}`],
        ['512: sentence recall ≥ 85%', `${pct(sel(512).recall)}: ${check(sel(512).recall >= 0.85)}`],
        ['256: both gold ≥ 75%', `${pct(sel(256).bothGold)}: ${check(sel(256).bothGold >= 0.75)}`],
        ['256: sentence recall ≥ 70%', `${pct(sel(256).recall)}: ${check(sel(256).recall >= 0.7)}`],
        ...SELECTION_BUDGETS.map((b) => {
          const ratio = sel(b).packMs / results.get(`${systems[0]!.name}@${b}`)!.packMs;
          return [`${b}: pack time ≤ 2× whole`, `${fixed(ratio, 2)}×: ${check(ratio <= 2)}`];
        }),
      ],
    ),
  );
  lines.push('');

  // The grid goes to docs/benchmarks.md (BENCHMARKS.md holds the current figures within its size).
  const gridLines: string[] = [];
  if (!args['no-grid']) {
    lines.push('How the defaults were chosen: [docs/benchmarks.md](docs/benchmarks.md#how-the-sentence-selection-defaults-were-chosen).');
    lines.push('');
    gridLines.push('### How the sentence-selection defaults were chosen');
    gridLines.push('');
    gridLines.push('The HotpotQA sample is the dev data; no held-out figures here. Written by `npx tsx bench/packing.ts --write`.');
    gridLines.push('');
    gridLines.push(
      'Rule, fixed before the grid ran: the setting with the best worst margin over the four targets ' +
        '(min of both-gold − 90% and recall − 85% at 512, both-gold − 75% and recall − 70% at 256); ties to the smaller ' +
        'mean tokens at 512. BM25 only (no vectors), since retrieval here is lexical and a pack needs no model to select.',
    );
    gridLines.push('');
    const grid: { setting: Setting; at256: SelectionAggregate; at512: SelectionAggregate; margin: number }[] = [];
    const measure = (setting: Setting) => {
      const at256 = aggregateSelection(runSetting(pools, 256, setting, 1));
      const at512 = aggregateSelection(runSetting(pools, 512, setting, 1));
      grid.push({ setting, at256, at512, margin: targetMargin(at256, at512) });
    };
    for (const spread of [0, 0.3, 1]) {
      for (const minRelevance of [0.2, 0.4, 0.6]) {
        for (const minSentences of [1, 2]) measure({ minRelevance, minSentences, window: 0, spread, dense: false });
      }
      measure({ minRelevance: 0.4, minSentences: 1, window: 1, spread, dense: false });
    }
    if (haveVectors) {
      for (const dense of [0.25, 0.5, 0.75]) {
        for (const spread of [0, 1])
          measure({ minRelevance: 0.4, minSentences: 2, window: 0, spread, dense: true, weights: { lexical: 1 - dense, dense } });
      }
    }
    const best = [...grid].sort((a, b) => b.margin - a.margin || a.at512.meanTokens - b.at512.meanTokens)[0]!;
    gridLines.push(
      markdownTable(
        ['Setting', '256 both gold', '256 recall', '512 both gold', '512 recall', 'Worst margin'],
        grid.map((g) => [
          settingName(g.setting) + (g === best ? ' **(best)**' : ''),
          pct(g.at256.bothGold),
          pct(g.at256.recall),
          pct(g.at512.bothGold),
          pct(g.at512.recall),
          `${(g.margin * 100).toFixed(1)} pt`,
        ]),
      ),
    );
  }
  if (!args['skip-scifact']) {
    progress('SciFact selection...');
    lines.push(await scifactSelection());
    lines.push('');
  }
  lines.push(`Run took ${((now() - started) / 1000).toFixed(0)} s; ${loadNote()}.`);
  return { selection: lines.join('\n'), grid: gridLines.join('\n') };
}

if (args.fill) process.stdout.write(`${await fillSection()}\n\n`);
else if (!args['selection-only']) await main();
const { selection, grid } = await selectionMain();
process.stdout.write(`${selection}\n\n${grid}\n`);
if (args.write) {
  if (args['limit-questions'] || args.fusion) progress('not writing BENCHMARKS.md: --limit-questions or --fusion is an exploratory run');
  else {
    writeSection('packing-selection', selection);
    if (grid !== '') writeSection('packing-selection-grid', grid, join(REPO_ROOT, 'docs', 'benchmarks.md'));
  }
}
