/**
 * Query-aware sentence selection: within each candidate, the sentences most relevant to the query, in their
 * original order. Pure and synchronous given the sentence vectors (the pipeline embeds; see
 * `sentence-vectors.ts`), so `packBundle` can run it.
 *
 * Relevance of a sentence = BM25 of the query against it, with IDF and average length taken over all the
 * pool's sentences and the store's own analyser (`tokenizeBm25`), normalised by the pool's best; blended,
 * when vectors are given, with the query–sentence cosine (clamped at 0, normalised by the pool's best).
 * A candidate keeps: sentences at or above `minRelevance` × the pool's best relevance; its best
 * `minSentences`; any sentence that is the pool's only mention of a query term; and `window` neighbours on
 * each side of those.
 */
import { sha256Hex } from '../core/canonical.js';
import { tokenizeBm25 } from '../retrieve/bm25.js';
import { splitSentences, type SentenceRange } from './split.js';

/** What joins two kept sentences that are not neighbours in the source. */
export const ELISION = ' … ';

const BM25_K = 1.2;
const BM25_B = 0.75;

/** Sentence vectors computed before packing: the query's, and each sentence's keyed by `sentenceKey(text)`. */
export interface SentenceVectors {
  query: readonly number[];
  sentences: ReadonlyMap<string, readonly number[]>;
}

export interface SentenceSelectionSettings {
  /** Blend of the lexical (BM25) and dense (cosine) relevance when vectors are given. */
  weights: { lexical: number; dense: number };
  /** A sentence is kept when its relevance is at least this fraction of the pool's best sentence. */
  minRelevance: number;
  /** Neighbours kept on each side of a kept sentence. */
  window: number;
  /** Every selected candidate keeps at least this many of its best sentences. */
  minSentences: number;
  vectors?: SentenceVectors | undefined;
}

/** The key a sentence's vector is stored under: sha256 of its exact text. */
export function sentenceKey(text: string): string {
  return sha256Hex(text);
}

/** One candidate's selection: its kept sentences in source order, and the order to give them up in. */
export class Selection {
  /** Offsets of every kept sentence in the candidate's text, in order. */
  readonly kept: readonly SentenceRange[];
  /** The text the pack shows: kept sentences joined by their source gap (neighbours) or an elision marker. */
  readonly text: string;
  readonly #source: string;
  /** Sentence index (in the candidate's sentence list) of each kept range. */
  readonly #indices: readonly number[];
  /** Positions into `kept`, most important first: what a budget cut keeps longest. */
  readonly #priority: readonly number[];
  /** Every text this selection produced (whole or cut) and the ranges it shows. */
  readonly #variants = new Map<string, SentenceRange[]>();

  /** Relevance of each kept sentence, most important first (the pool-normalised score, 0..1). */
  readonly relevance: readonly number[];

  constructor(
    source: string,
    sentences: readonly SentenceRange[],
    keptIndices: readonly number[],
    priority: readonly number[],
    relevance: readonly number[] = [],
  ) {
    this.relevance = relevance;
    this.#source = source;
    this.#indices = keptIndices;
    this.kept = keptIndices.map((i) => sentences[i] as SentenceRange);
    this.#priority = priority;
    this.text = this.#join(this.kept.map((_, position) => position));
  }

  get source(): string {
    return this.#source;
  }

  /** How many sentences a budget cut may keep, at most (all of them). */
  get size(): number {
    return this.kept.length;
  }

  /** Kept sentences' texts, most important first. */
  get byPriority(): string[] {
    return this.#priority.map((p) => {
      const range = this.kept[p] as SentenceRange;
      return this.#source.slice(range.start, range.end);
    });
  }

  /** The same selection keeping only its `count` most important sentences. */
  narrowed(count: number): Selection {
    if (count >= this.kept.length) return this;
    const positions = this.#priority.slice(0, count);
    const keptIndices = [...positions].sort((a, b) => a - b).map((p) => this.#indices[p] as number);
    const order = new Map(keptIndices.map((index, p) => [index, p] as const));
    const priority = positions.map((p) => order.get(this.#indices[p] as number) as number);
    const sentences: SentenceRange[] = [];
    this.#indices.forEach((index, p) => {
      sentences[index] = this.kept[p] as SentenceRange;
    });
    return new Selection(this.#source, sentences, keptIndices, priority, this.relevance.slice(0, count));
  }

  /** The text of the `count` most important kept sentences, in source order. */
  textOfBest(count: number): string {
    const positions = this.#priority.slice(0, count).sort((a, b) => a - b);
    return this.#join(positions);
  }

  /** The most important sentence's range (what a cut inside a sentence starts from). */
  get first(): SentenceRange {
    return this.kept[this.#priority[0] as number] as SentenceRange;
  }

  /** Records a prefix of the most important sentence shown on its own (a cut inside it). */
  registerPrefix(body: string): void {
    const range = this.first;
    this.#variants.set(body, [{ start: range.start, end: range.start + body.length }]);
  }

  /** Ranges (offsets in the candidate's text) of what `body`, a text this selection produced, shows. */
  rangesOf(body: string): SentenceRange[] | undefined {
    return this.#variants.get(body);
  }

  #join(positions: readonly number[]): string {
    let text = '';
    positions.forEach((position, n) => {
      const range = this.kept[position] as SentenceRange;
      if (n > 0) {
        const previous = positions[n - 1] as number;
        const adjacent = (this.#indices[position] as number) === (this.#indices[previous] as number) + 1;
        text += adjacent ? this.#source.slice((this.kept[previous] as SentenceRange).end, range.start) : ELISION;
      }
      text += this.#source.slice(range.start, range.end);
    });
    this.#variants.set(
      text,
      positions.map((p) => ({ ...(this.kept[p] as SentenceRange) })),
    );
    return text;
  }
}

// Stems and repeat keys per sentence text, remembered across packs (the same chunks come back query after query).
const ANALYSIS_CACHE_LIMIT = 50_000;
const analysisCache = new Map<string, { stems: readonly string[]; key: string | undefined }>();

function analysisOf(text: string): { stems: readonly string[]; key: string | undefined } {
  let analysis = analysisCache.get(text);
  if (analysis === undefined) {
    analysis = { stems: tokenizeBm25(text), key: undefined };
    if (analysisCache.size >= ANALYSIS_CACHE_LIMIT) analysisCache.clear();
    analysisCache.set(text, analysis);
  }
  return analysis;
}

// Sentence ranges per candidate text, remembered across packs like the analyses.
const rangesCache = new Map<string, SentenceRange[]>();

function splitCached(text: string): SentenceRange[] {
  let ranges = rangesCache.get(text);
  if (ranges === undefined) {
    ranges = splitSentences(text);
    if (rangesCache.size >= ANALYSIS_CACHE_LIMIT) rangesCache.clear();
    rangesCache.set(text, ranges);
  }
  return ranges;
}

// Word-boundary suffixes of repeat keys (the key itself first), remembered like the analyses.
const suffixCache = new Map<string, readonly string[]>();

function suffixes(key: string): readonly string[] {
  let out = suffixCache.get(key);
  if (out === undefined) {
    const list = [key];
    for (let i = key.indexOf(' '); i >= 0; i = key.indexOf(' ', i + 1)) {
      if (key.length - i - 1 < MIN_REPEAT_LENGTH) break;
      list.push(key.slice(i + 1));
    }
    out = list;
    if (suffixCache.size >= ANALYSIS_CACHE_LIMIT) suffixCache.clear();
    suffixCache.set(key, out);
  }
  return out;
}

function stemsOf(text: string): readonly string[] {
  return analysisOf(text).stems;
}

function repeatKeyOf(text: string): string {
  const analysis = analysisOf(text);
  analysis.key ??= repeatKey(text);
  return analysis.key;
}

/** The largest value, at least 0 (a loop: spreading a pool of many thousand sentences into Math.max overflows the stack). */
function largest(values: readonly number[]): number {
  let max = 0;
  for (const value of values) if (value > max) max = value;
  return max;
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Sentences shorter than this (normalised) are never treated as repeats: "Yes." may well be said twice. */
const MIN_REPEAT_LENGTH = 24;

/** What two sentences must share to count as the same: letters and digits, case and punctuation aside. */
function repeatKey(sentence: string): string {
  return sentence.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

interface PoolSentence {
  item: number;
  /** Index in its candidate's sentence list. */
  index: number;
  range: SentenceRange;
  /** Query terms it contains (indices into the query's unique stems). */
  terms: number[];
  relevance: number;
}

/**
 * Selects sentences in each of `texts` (null where `skip[i]` is true, e.g. a briefing's pins, or where the
 * text has no sentence). Deterministic: the result depends only on the query, the texts and the settings.
 */
export function selectSentences(
  query: string,
  texts: readonly string[],
  settings: SentenceSelectionSettings,
  skip: readonly boolean[] = [],
): (Selection | null)[] {
  const queryStems = [...new Set(tokenizeBm25(query))];
  const termIndex = new Map(queryStems.map((stem, i) => [stem, i] as const));
  const pool: PoolSentence[] = [];
  const sentencesOf: SentenceRange[][] = [];
  const lengths: number[] = [];
  const termFrequencies: Map<number, number>[] = [];

  texts.forEach((text, item) => {
    const ranges = skip[item] === true ? [] : splitCached(text);
    sentencesOf.push(ranges);
    ranges.forEach((range, index) => {
      const stems = stemsOf(text.slice(range.start, range.end));
      const tf = new Map<number, number>();
      for (const stem of stems) {
        const term = termIndex.get(stem);
        if (term !== undefined) tf.set(term, (tf.get(term) ?? 0) + 1);
      }
      pool.push({ item, index, range, terms: [...tf.keys()].sort((a, b) => a - b), relevance: 0 });
      lengths.push(stems.length);
      termFrequencies.push(tf);
    });
  });
  if (pool.length === 0) return texts.map(() => null);

  // BM25 over the pool's sentences.
  const documentFrequency = new Array<number>(queryStems.length).fill(0);
  for (const sentence of pool) for (const term of sentence.terms) documentFrequency[term] = (documentFrequency[term] as number) + 1;
  const n = pool.length;
  const idf = documentFrequency.map((df) => Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  const averageLength = Math.max(1, lengths.reduce((a, b) => a + b, 0) / n);
  const lexical = pool.map((sentence, s) => {
    let score = 0;
    const norm = BM25_K * (1 - BM25_B + (BM25_B * (lengths[s] as number)) / averageLength);
    for (const [term, tf] of termFrequencies[s] as Map<number, number>) {
      score += (idf[term] as number) * ((tf * (BM25_K + 1)) / (tf + norm));
    }
    return score;
  });
  const maxLexical = largest(lexical);

  let dense: number[] | undefined;
  const vectors = settings.vectors;
  if (vectors !== undefined) {
    dense = pool.map((sentence) => {
      const text = texts[sentence.item] as string;
      const vector = vectors.sentences.get(sentenceKey(text.slice(sentence.range.start, sentence.range.end)));
      return vector === undefined ? 0 : Math.max(0, cosine(vectors.query, vector));
    });
  }
  const maxDense = dense === undefined ? 0 : largest(dense);
  const { lexical: wl, dense: wd } = settings.weights;
  pool.forEach((sentence, s) => {
    const lex = maxLexical > 0 ? (lexical[s] as number) / maxLexical : 0;
    if (dense === undefined || wl + wd === 0) {
      sentence.relevance = lex;
      return;
    }
    const cos = maxDense > 0 ? (dense[s] as number) / maxDense : 0;
    sentence.relevance = (wl * lex + wd * cos) / (wl + wd);
  });
  const best = largest(pool.map((s) => s.relevance));
  const threshold = settings.minRelevance * best;

  // The pool's only mention of a query term is kept whatever its score.
  const onlyMention = new Set<PoolSentence>();
  documentFrequency.forEach((df, term) => {
    if (df !== 1) return;
    const sentence = pool.find((s) => s.terms.includes(term));
    if (sentence !== undefined) onlyMention.add(sentence);
  });

  const byItem: PoolSentence[][] = texts.map(() => []);
  for (const sentence of pool) (byItem[sentence.item] as PoolSentence[]).push(sentence);

  // Sentences already shown by a better-ranked candidate (texts come best first) are not repeated.
  // A sentence repeats a shown one when one of the two ends with the other at a word boundary (the same
  // sentence, or it behind a heading or title: "Joe Elliott Joseph Thomas Elliott..." for "Joseph Thomas
  // Elliott..."). Word-boundary suffixes go into sets, so the check costs the sentence's length, not the pool's.
  const shownKeys = new Set<string>();
  const shownSuffixes = new Set<string>();
  const repeats = (key: string) => key.length >= MIN_REPEAT_LENGTH && (shownSuffixes.has(key) || suffixes(key).some((s) => shownKeys.has(s)));
  const show = (key: string) => {
    if (key.length < MIN_REPEAT_LENGTH) return;
    shownKeys.add(key);
    for (const suffix of suffixes(key)) shownSuffixes.add(suffix);
  };

  return texts.map((text, item) => {
    const sentences = byItem[item] as PoolSentence[];
    if (sentences.length === 0) return null;
    // Most relevant first; ties by position, so the result never depends on anything but the input.
    const ranked = [...sentences].sort((a, b) => b.relevance - a.relevance || a.index - b.index);
    const rank = new Map<number, number>();
    const put = (index: number, klass: number) => {
      const current = rank.get(index);
      if (current === undefined || klass < current) rank.set(index, klass);
    };
    for (const sentence of ranked) if (onlyMention.has(sentence)) put(sentence.index, 0);
    ranked.slice(0, settings.minSentences).forEach((sentence) => put(sentence.index, 1));
    for (const sentence of ranked) if (sentence.relevance > 0 && sentence.relevance >= threshold) put(sentence.index, 1);
    const anchors = [...rank.keys()];
    for (const anchor of anchors) {
      for (let d = 1; d <= settings.window; d += 1) {
        if (anchor - d >= 0) put(anchor - d, 2);
        if (anchor + d < sentences.length) put(anchor + d, 2);
      }
    }
    const keyOf = (index: number) => repeatKeyOf(text.slice((sentences[index] as PoolSentence).range.start, (sentences[index] as PoolSentence).range.end));
    const repeated = [...rank.keys()].filter((index) => repeats(keyOf(index)));
    if (repeated.length < rank.size) for (const index of repeated) rank.delete(index);
    for (const index of rank.keys()) {
      const key = keyOf(index);
      show(key);
    }
    const keptIndices = [...rank.keys()].sort((a, b) => a - b);
    const position = new Map(keptIndices.map((index, p) => [index, p] as const));
    const relevance = new Map(sentences.map((s) => [s.index, s.relevance] as const));
    const priority = [...keptIndices]
      .sort(
        (a, b) =>
          (rank.get(a) as number) - (rank.get(b) as number) ||
          (relevance.get(b) as number) - (relevance.get(a) as number) ||
          a - b,
      )
      .map((index) => position.get(index) as number);
    const keptRelevance = priority.map((p) => relevance.get(keptIndices[p] as number) as number);
    return new Selection(text, sentencesOf[item] as SentenceRange[], keptIndices, priority, keptRelevance);
  });
}
