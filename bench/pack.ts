/**
 * npm run bench:pack — packBundle speed beside a naive budget cut and beside the floor, on four pools of 300
 * candidates, with token hints that lie, and on first use in a fresh process.
 *
 * Pools (o200k_base, ~250 tokens per candidate; SciFact from ../shared/data):
 *   scifact            300 distinct SciFact abstracts cut to 250 tokens
 *   small-vocab        300 distinct paragraphs drawn from a 64-word vocabulary of one-token words
 *   scifact-dups       20 SciFact abstracts and 280 copies of them: exact, re-cased and re-spaced, quoted as
 *                      e-mail replies, forwarded, trimmed by a sentence, overlapping windows of two abstracts
 *   small-vocab-dups   the same from 20 small-vocabulary paragraphs
 * Rows, timed in the same run, warm (encoder built, a few packs first):
 *   ours+hints   packBundle with each candidate's o200k_base count as a hint (as the stores give it)
 *   ours         packBundle without hints
 *   naive        tokenise every candidate with js-tiktoken, sort by score, take while the sum fits
 *   floor        one js-tiktoken pass over the final context alone (what any exact packer must pay)
 * Lying hints: 1,200 SciFact abstracts at a 120,000-token budget, with honest hints, hints of 0, and none.
 * First use: child processes of the built package (dist/, built first when older than src/): bare `node`,
 * `import('litm-pack')`, and the first pack of a process, beside building js-tiktoken's o200k_base encoder.
 * Long runs: one text of 1 MiB (UTF-8) per kind, prose beside texts without spaces (one letter repeated,
 * random base64, CJK without punctuation, emoji), each packed alone at a 2k budget, packed with sentence
 * selection, chunked (chunkDocument) and ingested (MemoryHybridStore.addDocuments); CPU time per call, with
 * the counting caches cleared and a fresh text each time, so that every call starts cold.
 *
 *   npx tsx bench/pack.ts [--iterations 25] [--no-first-use] [--write]
 *   npx tsx bench/pack.ts --long-only [--long-size 1048576] [--long-iterations 3] [--long-kinds prose,letter]
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryHybridStore, chunkDocument, getTokenizer, packBundle, type CandidateInput } from '../src/index.js';
import { loadSciFact } from './lib/datasets.js';
import { DATA_DIR, REPO_ROOT } from './lib/paths.js';
import { ensureBuilt } from './lib/build.js';
import { loadNote, writeSection } from './lib/report.js';
import { mulberry32 } from './lib/random.js';
import { markdownTable } from './lib/table.js';
import { progress } from './lib/timing.js';

const { values: args } = parseArgs({
  options: {
    iterations: { type: 'string', default: '25' },
    'no-first-use': { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    'long-only': { type: 'boolean', default: false },
    'long-size': { type: 'string', default: String(2 ** 20) },
    'long-iterations': { type: 'string', default: '3' },
    'long-kinds': { type: 'string', default: 'prose,letter,base64,cjk,emoji' },
    'long-ops': { type: 'string', default: 'pack,sentences,chunk,ingest' },
  },
});
const ITERATIONS = Number(args.iterations);
const HAS_SCIFACT = existsSync(join(DATA_DIR, 'scifact', 'corpus.jsonl'));

const require = createRequire(import.meta.url);
const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
const encoder = new Tiktoken(require('js-tiktoken/ranks/o200k_base') as import('js-tiktoken/lite').TiktokenBPE);
const tokenizer = getTokenizer('o200k_base');

interface Timing {
  p50: number;
  p95: number;
}

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function time(fn: () => unknown, iterations: number, warmup = 5): Timing {
  for (let i = 0; i < warmup; i += 1) fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return { p50: quantile(samples, 0.5), p95: quantile(samples, 0.95) };
}

const f = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));
const ratio = (value: number) => `${value.toFixed(2)}×`;

// ---------------------------------------------------------------------------------------------
// Pools

const TOKENS = 250;

/** The first `tokens` tokens of `text` (null when it is shorter or the cut splits a character). */
function cut(text: string, tokens: number): string | null {
  const encoded = encoder.encode(text, [], []);
  if (encoded.length < tokens) return null;
  const out = encoder.decode(encoded.slice(0, tokens));
  return out.includes('\uFFFD') ? null : out;
}

function sciFactTexts(count: number, tokens = TOKENS): string[] {
  const out: string[] = [];
  for (const doc of loadSciFact().corpus) {
    if (out.length === count) break;
    const text = cut(doc.text, tokens);
    if (text !== null) out.push(text);
  }
  return out;
}

const SMALL_VOCABULARY = (
  'the of and to in is was for on that with as by at from are be this an which or have has not were but can its ' +
  'also may more all been their they these other than into only one two new such some most each both used made ' +
  'any after over same first between under high low'
).split(' ');

/** Paragraphs of about `tokens` tokens: sentences of 6–15 words drawn uniformly from the 64-word vocabulary. */
function smallVocabularyTexts(count: number, seed: number, tokens = TOKENS): string[] {
  const rand = mulberry32(seed);
  const out: string[] = [];
  while (out.length < count) {
    const sentences: string[] = [];
    let words = 0;
    while (words < tokens - 25) {
      const length = 6 + Math.floor(rand() * 10);
      const sentence = Array.from({ length }, () => SMALL_VOCABULARY[Math.floor(rand() * SMALL_VOCABULARY.length)]!);
      sentence[0] = sentence[0]![0]!.toUpperCase() + sentence[0]!.slice(1);
      sentences.push(`${sentence.join(' ')}.`);
      words += length;
    }
    out.push(sentences.join(' '));
  }
  return out;
}

function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+/u).filter((s) => s.length > 0);
}

/**
 * 20 base texts and 280 copies (93% of the pool duplicates one base, exactly or nearly): copy k of base b
 * cycles through seven kinds, so every base has copies of each kind.
 */
function withCopies(bases: string[], seed: number): string[] {
  const rand = mulberry32(seed);
  const kinds: Array<(text: string, other: string) => string> = [
    (text) => text,
    (text) => `  ${text.toUpperCase().replace(/\. /g, '.\n\n')}  `,
    (text) =>
      `On Tue, 4 Mar 2025 at 09:12, A. Writer <a.writer@example.org> wrote:\n${sentencesOf(text)
        .map((s) => `> ${s}`)
        .join('\n')}`,
    (text) => `Thanks, see below.\n\n---------- Forwarded message ----------\nSubject: Re: results\n\n${text}`,
    (text) => sentencesOf(text).slice(1).join(' '),
    (text) => sentencesOf(text).slice(0, -1).join(' '),
    (text, other) => [...sentencesOf(text).slice(2), ...sentencesOf(other).slice(0, 2)].join(' '),
  ];
  const out = [...bases];
  for (let k = 0; out.length < 300; k += 1) {
    const b = Math.floor(rand() * bases.length);
    out.push(kinds[k % kinds.length]!(bases[b]!, bases[(b + 1) % bases.length]!));
  }
  return out;
}

/** Candidates with scores that interleave bases and copies, ids in a shuffled order, hints on request. */
function candidatesFrom(texts: string[], seed: number): CandidateInput[] {
  const rand = mulberry32(seed);
  return texts.map((text, i) => ({
    id: `doc-${String(Math.floor(rand() * 1e6)).padStart(6, '0')}-${i}`,
    sourceId: `src-${i % 60}`,
    title: `Document ${i}`,
    text,
    score: Math.round((1 - i / texts.length / 2 + rand() / 4) * 1e6) / 1e6,
  }));
}

const withHints = (candidates: CandidateInput[]): CandidateInput[] =>
  candidates.map((c) => ({ ...c, tokens: { o200k_base: tokenizer.count(c.text) } }));

function naivePack(candidates: readonly CandidateInput[], maxTokens: number): string {
  const counted = candidates.map((c) => ({ c, n: encoder.encode(c.text, [], []).length })).sort((a, b) => b.c.score - a.c.score);
  const kept: string[] = [];
  let used = 0;
  for (const { c, n } of counted) {
    if (used + n > maxTokens) continue;
    kept.push(c.text);
    used += n;
  }
  return kept.join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// Packing speed per pool

interface PoolRun {
  pool: string;
  budget: number;
  rows: Array<{ name: string; t: Timing }>;
  floor: Timing;
  naive: Timing;
}

function runPool(pool: string, candidates: CandidateInput[], budget: number): PoolRun {
  progress(`${pool}, budget ${budget}`);
  const hinted = withHints(candidates);
  const context = packBundle({ query: 'q', candidates: hinted, maxTokens: budget }).context;
  const floor = time(() => encoder.encode(context, [], []), ITERATIONS);
  const oursHints = time(() => packBundle({ query: 'q', candidates: hinted, maxTokens: budget }), ITERATIONS);
  const ours = time(() => packBundle({ query: 'q', candidates, maxTokens: budget }), ITERATIONS);
  const naive = time(() => naivePack(candidates, budget), Math.max(5, Math.ceil(ITERATIONS / 3)), 1);
  return {
    pool,
    budget,
    rows: [
      { name: 'ours+hints', t: oursHints },
      { name: 'ours', t: ours },
      { name: 'naive', t: naive },
      { name: 'floor', t: floor },
    ],
    floor,
    naive,
  };
}

/** Share of a pool that rule 4 drops as a duplicate of another of its texts (packed with room for all). */
function duplicateShare(candidates: CandidateInput[]): number {
  const pack = packBundle({ query: 'q', candidates, maxTokens: 1_000_000 });
  return pack.dropped.filter((d) => d.reason === 'duplicate' || d.reason === 'near-duplicate').length / candidates.length;
}

// ---------------------------------------------------------------------------------------------
// Lying hints

function runLyingHints(): { rows: Array<{ name: string; t: Timing; items: number; used: number }>; count: number; budget: number } {
  const count = 1200;
  const budget = 120_000;
  progress(`lying hints: ${count} candidates, budget ${budget}`);
  const texts = HAS_SCIFACT
    ? loadSciFact()
        .corpus.slice(0, count)
        .map((d) => d.text)
    : smallVocabularyTexts(count, 51, 300);
  const plain = candidatesFrom(texts, 7);
  const honest = withHints(plain);
  const lying = plain.map((c) => ({ ...c, tokens: 0 }));
  const iterations = Math.max(5, Math.ceil(ITERATIONS / 3));
  const rows = (
    [
      ['honest hints', honest],
      ['hints of 0 (lying)', lying],
      ['no hints', plain],
    ] as const
  ).map(([name, candidates]) => {
    const pack = packBundle({ query: 'q', candidates, maxTokens: budget });
    const t = time(() => packBundle({ query: 'q', candidates, maxTokens: budget }), iterations, 1);
    return { name, t, items: pack.items.length, used: pack.budget.usedTokens };
  });
  return { rows, count, budget };
}

// ---------------------------------------------------------------------------------------------
// First use

/** Wall time of a fresh `node` running `args`, and what the script printed (JSON), `runs` times. */
function processRuns(args: string[], runs: number): Array<{ wall: number; out: Record<string, number> }> {
  const out: Array<{ wall: number; out: Record<string, number> }> = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    const child = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8' });
    const wall = performance.now() - start;
    if (child.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${child.stderr}`);
    out.push({ wall, out: child.stdout.trim() ? (JSON.parse(child.stdout) as Record<string, number>) : {} });
  }
  return out;
}

const FIRST_PACK = `
const t0 = performance.now();
const m = await import('litm-pack');
const t1 = performance.now();
m.packBundle({ query: 'refunds', maxTokens: 200, candidates: [
  { id: 'a', text: 'Refunds are issued within 14 days of a return being received. Store credit is immediate.', score: 0.9 },
  { id: 'b', text: 'Can I get a refund without a receipt? Only as store credit, at the lowest recent price.', score: 0.8 } ] });
const t2 = performance.now();
console.log(JSON.stringify({ import: t1 - t0, firstPack: t2 - t1 }));`;

const TIKTOKEN_BUILD = `
const t0 = performance.now();
const { Tiktoken } = require('js-tiktoken/lite');
const encoder = new Tiktoken(require('js-tiktoken/ranks/o200k_base'));
encoder.encode('Refunds are issued within 14 days of a return being received.');
console.log(JSON.stringify({ build: performance.now() - t0 }));`;

interface FirstUse {
  runs: number;
  bare: Timing;
  imported: Timing;
  firstPack: Timing;
  importInProcess: Timing;
  fromSource: Timing;
  tiktoken: Timing;
}

function runFirstUse(): FirstUse {
  ensureBuilt('the first-use rows');
  const runs = 15;
  progress(`first use: ${runs} fresh processes per row`);
  const timing = (values: number[]): Timing => ({ p50: quantile(values, 0.5), p95: quantile(values, 0.95) });
  const bare: number[] = [];
  const imported: number[] = [];
  // Interleaved, so load on the machine falls on every row alike.
  for (let i = 0; i < runs; i += 1) {
    bare.push(processRuns(['-e', '0'], 1)[0]!.wall);
    imported.push(processRuns(['--input-type=module', '-e', "await import('litm-pack')"], 1)[0]!.wall);
  }
  const packs = processRuns(['--input-type=module', '-e', FIRST_PACK], runs);
  const source = processRuns(['--import', 'tsx', '--input-type=module', '-e', FIRST_PACK.replace("'litm-pack'", "'./src/index.ts'")], 5);
  const tiktoken = processRuns(['-e', TIKTOKEN_BUILD], 5);
  return {
    runs,
    bare: timing(bare),
    imported: timing(imported),
    firstPack: timing(packs.map((r) => r.out.firstPack!)),
    importInProcess: timing(packs.map((r) => r.out.import!)),
    fromSource: timing(source.map((r) => r.out.firstPack!)),
    tiktoken: timing(tiktoken.map((r) => r.out.build!)),
  };
}

// ---------------------------------------------------------------------------------------------
// Long runs without spaces

const LONG_KINDS = ['prose', 'letter', 'base64', 'cjk', 'emoji'] as const;
type LongKind = (typeof LONG_KINDS)[number];
const LONG_OPS = ['pack', 'sentences', 'chunk', 'ingest'] as const;
type LongOp = (typeof LONG_OPS)[number];

const LONG_KIND_NAMES: Record<LongKind, string> = {
  prose: 'prose (sentences of a 64-word vocabulary)',
  letter: "one letter repeated ('aaaa…')",
  base64: 'random base64',
  cjk: 'CJK ideographs, no punctuation',
  emoji: 'emoji',
};

/** A text of `bytes` UTF-8 bytes (or just under) of one kind; `variant` changes it (a fresh text per call). */
function longText(kind: LongKind, bytes: number, variant: number): string {
  const rand = mulberry32(1000 + variant);
  const parts: string[] = [];
  let size = 0;
  const push = (part: string, partBytes: number) => {
    parts.push(part);
    size += partBytes;
  };
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  switch (kind) {
    case 'prose': {
      let sentences = 0;
      while (size < bytes) {
        const words = Array.from(
          { length: 6 + Math.floor(rand() * 10) },
          () => SMALL_VOCABULARY[Math.floor(rand() * SMALL_VOCABULARY.length)]!,
        );
        words[0] = words[0]![0]!.toUpperCase() + words[0]!.slice(1);
        sentences += 1;
        const sentence = `${words.join(' ')}.${sentences % 8 === 0 ? '\n\n' : ' '}`;
        push(sentence, sentence.length);
      }
      break;
    }
    case 'letter':
      push('abcdefghijklmnopqrstuvwxyz'[variant % 26]!.repeat(bytes), bytes);
      break;
    case 'base64':
      while (size < bytes) push(alphabet[Math.floor(rand() * 64)]!, 1);
      break;
    case 'cjk':
      while (size + 3 <= bytes) push(String.fromCharCode(0x4e00 + Math.floor(rand() * 0x5000)), 3);
      break;
    case 'emoji':
      while (size + 4 <= bytes) push(String.fromCodePoint(0x1f600 + Math.floor(rand() * 0x50)), 4);
      break;
  }
  const text = parts.join('');
  return kind === 'prose' ? text.slice(0, bytes) : text;
}

/** CPU milliseconds (user + system) of one call of `fn`. */
async function cpuTime(fn: () => unknown): Promise<number> {
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function clearCounting(): void {
  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    (getTokenizer(encoding) as unknown as { clearCache(): void }).clearCache();
  }
}

const LONG_OP_CALLS: Record<LongOp, (text: string) => unknown> = {
  pack: (text) => packBundle({ query: 'refunds within days', maxTokens: 2000, candidates: [{ id: 'long', text, score: 1 }] }),
  sentences: (text) =>
    packBundle({
      query: 'refunds within days',
      maxTokens: 2000,
      compress: { mode: 'sentences' },
      candidates: [{ id: 'long', text, score: 1 }],
    }),
  chunk: (text) => chunkDocument({ id: 'long.md', text }, { indexedAt: '2025-01-01T00:00:00.000Z' }),
  ingest: (text) => new MemoryHybridStore().addDocuments([{ id: 'long.md', text }]),
};

interface LongRun {
  bytes: number;
  iterations: number;
  kinds: LongKind[];
  ops: LongOp[];
  /** Median CPU ms per kind and operation. */
  p50: Map<string, number>;
}

async function runLongRuns(): Promise<LongRun> {
  const bytes = Number(args['long-size']);
  const iterations = Number(args['long-iterations']);
  const kinds = args['long-kinds'].split(',').filter((k): k is LongKind => (LONG_KINDS as readonly string[]).includes(k));
  const ops = args['long-ops'].split(',').filter((o): o is LongOp => (LONG_OPS as readonly string[]).includes(o));
  const p50 = new Map<string, number>();
  // Every path compiled first, on small texts.
  for (const kind of kinds) for (const op of ops) await LONG_OP_CALLS[op](longText(kind, 4096, 0));
  for (const op of ops) {
    for (const kind of kinds) {
      progress(`long runs: ${op}, ${kind}, ${bytes} bytes`);
      const samples: number[] = [];
      for (let i = 0; i < iterations; i += 1) {
        const text = longText(kind, bytes, i + 1);
        clearCounting();
        samples.push(await cpuTime(() => LONG_OP_CALLS[op](text)));
      }
      p50.set(`${kind}:${op}`, quantile(samples, 0.5));
    }
  }
  return { bytes, iterations, kinds, ops, p50 };
}

function longRunsSection(run: LongRun): string[] {
  const lines: string[] = [];
  const size = run.bytes === 2 ** 20 ? '1 MiB' : `${run.bytes.toLocaleString('en-US')} bytes`;
  lines.push(`#### Long runs without spaces: one text of ${size} per kind`);
  lines.push('');
  lines.push(
    `CPU ms per call (median of ${run.iterations}; counting caches cleared and a fresh text each call). ` +
      '"pack": packBundle of the one candidate at a 2,000-token budget; "sentences": the same with sentence selection; ' +
      '"chunk": chunkDocument at 256 tokens; "ingest": MemoryHybridStore.addDocuments. "× prose" divides by the prose row.',
  );
  lines.push('');
  const headers = ['Text'];
  for (const op of run.ops) headers.push(`${op} ms`, '× prose');
  const table = run.kinds.map((kind) => {
    const row = [LONG_KIND_NAMES[kind]];
    for (const op of run.ops) {
      const value = run.p50.get(`${kind}:${op}`)!;
      const prose = run.p50.get(`prose:${op}`);
      row.push(f(value), prose === undefined ? '' : ratio(value / prose));
    }
    return row;
  });
  lines.push(markdownTable(headers, table));
  return lines;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (args['long-only']) {
    const started = performance.now();
    const md = [
      ...longRunsSection(await runLongRuns()),
      '',
      `Run took ${((performance.now() - started) / 1000).toFixed(0)} s; node ${process.version}; ${loadNote()}.`,
    ].join('\n');
    process.stdout.write(`${md}\n`);
    return;
  }
  const started = performance.now();
  if (!HAS_SCIFACT) progress(`SciFact not found under ${DATA_DIR}: only the small-vocabulary pools run`);
  const scifact = HAS_SCIFACT ? candidatesFrom(sciFactTexts(300), 1) : [];
  const smallVocab = candidatesFrom(smallVocabularyTexts(300, 11), 2);
  const scifactDups = HAS_SCIFACT ? candidatesFrom(withCopies(sciFactTexts(20), 21), 3) : [];
  const smallVocabDups = candidatesFrom(withCopies(smallVocabularyTexts(20, 31), 41), 4);
  const avgTokens = (pool: CandidateInput[]) => pool.reduce((s, c) => s + tokenizer.count(c.text), 0) / pool.length;

  // Every packing path compiled before anything is timed.
  for (const pool of [scifact, smallVocab, scifactDups, smallVocabDups]) {
    for (let i = 0; i < 5; i += 1) {
      packBundle({ query: 'q', candidates: withHints(pool), maxTokens: 4000 });
      packBundle({ query: 'q', candidates: pool, maxTokens: 4000 });
    }
  }
  const runs: PoolRun[] = [
    ...(HAS_SCIFACT ? [runPool('scifact', scifact, 1000), runPool('scifact', scifact, 4000), runPool('scifact', scifact, 16000)] : []),
    runPool('small-vocab', smallVocab, 4000),
    ...(HAS_SCIFACT ? [runPool('scifact-dups', scifactDups, 4000)] : []),
    runPool('small-vocab-dups', smallVocabDups, 4000),
  ];
  const lying = runLyingHints();
  const longRuns = await runLongRuns();
  const firstUse = args['no-first-use'] ? null : runFirstUse();

  const lines: string[] = [];
  lines.push('### Packing speed (`npm run bench:pack`)');
  lines.push('');
  lines.push(
    `300 candidates per pool, o200k_base, ${ITERATIONS} timed packs per row after warm-up (encoder built); node ${process.version}. ` +
      '"× floor" divides a row\'s p50 by the floor\'s p50, "naive ÷ row" the naive cut\'s p50 by the row\'s.',
  );
  lines.push('');
  lines.push(
    [
      HAS_SCIFACT
        ? `- **scifact**: 300 distinct SciFact abstracts cut to 250 tokens (mean ${avgTokens(scifact).toFixed(0)}).`
        : '- **scifact**, **scifact-dups**: not run (no SciFact data).',
      `- **small-vocab**: 300 distinct paragraphs of sentences drawn uniformly from a 64-word vocabulary of one-token words (mean ${avgTokens(smallVocab).toFixed(0)} tokens); no two are near duplicates.`,
      `- **${HAS_SCIFACT ? 'scifact-dups' : 'small-vocab-dups'}**: 20 ${HAS_SCIFACT ? 'SciFact abstracts' : 'small-vocab paragraphs'} (250 tokens) and 280 copies, seven kinds in turn: exact; upper-cased and re-spaced; quoted as an e-mail reply (\`> \` lines); forwarded under a header; first sentence dropped; last sentence dropped; a window over two of them. Rule 4 drops ${(duplicateShare(HAS_SCIFACT ? scifactDups : smallVocabDups) * 100).toFixed(0)}% of the pool as duplicates or near duplicates (packed with room for all).`,
      ...(HAS_SCIFACT
        ? [
            `- **small-vocab-dups**: the same copies of 20 small-vocab paragraphs; rule 4 drops ${(duplicateShare(smallVocabDups) * 100).toFixed(0)}% of it.`,
          ]
        : []),
    ].join('\n'),
  );
  lines.push('');
  const table: string[][] = [];
  for (const run of runs) {
    for (const { name, t } of run.rows) {
      table.push([run.pool, String(run.budget), name, f(t.p50), f(t.p95), ratio(t.p50 / run.floor.p50), ratio(run.naive.p50 / t.p50)]);
    }
  }
  lines.push(markdownTable(['Pool', 'Budget', 'Row', 'p50 ms', 'p95 ms', '× floor (p50)', 'naive ÷ row (p50)'], table));
  lines.push('');
  lines.push(
    `#### Hints that lie: ${lying.count.toLocaleString('en-US')} ${HAS_SCIFACT ? 'SciFact abstracts' : 'small-vocab paragraphs'}, budget ${lying.budget.toLocaleString('en-US')}`,
  );
  lines.push('');
  const honest = lying.rows[0]!;
  lines.push(
    markdownTable(
      ['Hints', 'p50 ms', 'p95 ms', '÷ honest (p50)', '÷ honest (p95)', 'Items', 'Used tokens'],
      lying.rows.map((r) => [
        r.name,
        f(r.t.p50),
        f(r.t.p95),
        ratio(r.t.p50 / honest.t.p50),
        ratio(r.t.p95 / honest.t.p95),
        String(r.items),
        String(r.used),
      ]),
    ),
  );
  lines.push('');
  lines.push(...longRunsSection(longRuns));
  if (firstUse) {
    lines.push('');
    lines.push(`#### First use (${firstUse.runs} fresh processes per row; the built package)`);
    lines.push('');
    lines.push(
      markdownTable(
        ['Measure', 'p50 ms', 'p95 ms'],
        [
          ['`node -e 0` (bare node, wall)', f(firstUse.bare.p50), f(firstUse.bare.p95)],
          ["`import('litm-pack')` (wall)", f(firstUse.imported.p50), f(firstUse.imported.p95)],
          [
            "`import('litm-pack')` above bare node",
            f(firstUse.imported.p50 - firstUse.bare.p50),
            f(firstUse.imported.p95 - firstUse.bare.p95),
          ],
          ['import, inside the process', f(firstUse.importInProcess.p50), f(firstUse.importInProcess.p95)],
          ['first pack of a process (o200k_base cold: vocabulary read, first count)', f(firstUse.firstPack.p50), f(firstUse.firstPack.p95)],
          [
            'first pack, running from source (tsx; vocabulary decoded from js-tiktoken)',
            f(firstUse.fromSource.p50),
            f(firstUse.fromSource.p95),
          ],
          [
            'js-tiktoken: o200k_base encoder built, one encode (how the first pack began before)',
            f(firstUse.tiktoken.p50),
            f(firstUse.tiktoken.p95),
          ],
        ],
      ),
    );
  }
  lines.push('');
  const at = (pool: string, budget: number) => runs.find((r) => r.pool === pool && r.budget === budget)!;
  const row = (run: PoolRun, name: string) => run.rows.find((r) => r.name === name)!.t;
  const check = (ok: boolean) => (ok ? 'met' : 'missed');
  const targets: string[][] = [];
  for (const pool of HAS_SCIFACT ? ['scifact', 'small-vocab'] : ['small-vocab']) {
    const run = at(pool, 4000);
    const x = row(run, 'ours+hints').p50 / run.floor.p50;
    targets.push([`${pool} 4k: ours+hints ≤ 1.5× floor`, `${ratio(x)}: ${check(x <= 1.5)}`]);
    const y = run.naive.p50 / row(run, 'ours').p50;
    targets.push([`${pool} 4k: ours (no hints) ≥ 4× faster than naive`, `${ratio(y)}: ${check(y >= 4)}`]);
  }
  for (const pool of HAS_SCIFACT ? ['scifact-dups', 'small-vocab-dups'] : ['small-vocab-dups']) {
    const run = at(pool, 4000);
    const x = row(run, 'ours+hints').p50 / run.floor.p50;
    targets.push([`${pool} 4k: ours+hints ≤ 3× floor`, `${ratio(x)}: ${check(x <= 3)}`]);
  }
  const lie = lying.rows[1]!.t.p50 / honest.t.p50;
  targets.push(['hints of 0 within 2× of honest hints (p50)', `${ratio(lie)}: ${check(lie <= 2)}`]);
  if (firstUse) {
    targets.push(['first pack ≤ 300 ms (o200k_base, cold)', `${f(firstUse.firstPack.p50)} ms: ${check(firstUse.firstPack.p50 <= 300)}`]);
    const above = firstUse.imported.p50 - firstUse.bare.p50;
    targets.push(["import('litm-pack') ≤ 100 ms above bare node", `${f(above)} ms: ${check(above <= 100)}`]);
  }
  lines.push(markdownTable(['Target', 'Result'], targets));
  lines.push('');
  lines.push(`Run took ${((performance.now() - started) / 1000).toFixed(0)} s; ${loadNote()}.`);
  const md = lines.join('\n');
  process.stdout.write(`${md}\n`);
  if (args.write) writeSection('pack', md);
}

await main();
