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
import { BoundedCache } from '../base/bounded-cache.js';
import { sha256Hex } from '../base/canonical.js';
import { cosineSimilarity } from '../base/vectors.js';
import { tokenizeBm25 } from '../tokenize/bm25.js';
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

interface SentenceSelectionSettings {
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
  /** Text of each kept sentence (the analysis cache's strings, so lookups keyed by them need not rehash). */
  readonly #keptTexts: readonly string[];
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
    sentenceTexts?: readonly string[],
  ) {
    this.relevance = relevance;
    this.#source = source;
    this.#indices = keptIndices;
    this.kept = keptIndices.map((i) => sentences[i] as SentenceRange);
    this.#keptTexts = keptIndices.map(
      (i, p) => sentenceTexts?.[i] ?? source.slice((this.kept[p] as SentenceRange).start, (this.kept[p] as SentenceRange).end),
    );
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
    return this.#priority.map((p) => this.#keptTexts[p] as string);
  }

  /** The same selection keeping only its `count` most important sentences. */
  narrowed(count: number): Selection {
    if (count >= this.kept.length) return this;
    const positions = this.#priority.slice(0, count);
    const keptIndices = [...positions].sort((a, b) => a - b).map((p) => this.#indices[p] as number);
    const order = new Map(keptIndices.map((index, p) => [index, p] as const));
    const priority = positions.map((p) => order.get(this.#indices[p] as number) as number);
    const sentences: SentenceRange[] = [];
    const texts: string[] = [];
    this.#indices.forEach((index, p) => {
      sentences[index] = this.kept[p] as SentenceRange;
      texts[index] = this.#keptTexts[p] as string;
    });
    return new Selection(this.#source, sentences, keptIndices, priority, this.relevance.slice(0, count), texts);
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

/**
 * A candidate text split and analysed once: its sentences' ranges and texts, each sentence's stems, and its
 * repeat key (computed when first needed). The same chunks come back query after query, so packs reuse it;
 * it is a pure function of the text, so remembering it changes nothing but the time.
 */
interface TextAnalysis {
  ranges: readonly SentenceRange[];
  sentences: readonly string[];
  /** Per stem, where it occurs: sentence index and count, pairs flattened (an inverted index of the text). */
  postings: ReadonlyMap<string, readonly number[]>;
  /** How many stems each sentence has. */
  lengths: readonly number[];
  keys: (string | undefined)[];
  /** Each sentence's `sentenceKey` (the vector lookup key), computed when first needed. */
  vectorKeys: (string | undefined)[];
}

// Up to 10,000 texts of up to 1,000 characters; a longer one weighs by its length (a candidate can be a 1 MiB
// run), so the texts held, and their analyses, stay under about 10 million characters.
const ANALYSIS_CACHE_LIMIT = 10_000;
const analysisCache = new BoundedCache<string, TextAnalysis>(ANALYSIS_CACHE_LIMIT, (text) => Math.max(1, text.length / 1000));

function analyse(text: string): TextAnalysis {
  let analysis = analysisCache.get(text);
  if (analysis === undefined) {
    const ranges = splitSentences(text);
    const sentences = ranges.map((range) => text.slice(range.start, range.end));
    const stems = sentences.map((sentence) => tokenizeBm25(sentence));
    const postings = new Map<string, number[]>();
    stems.forEach((list, index) => {
      for (const stem of list) {
        const posting = postings.get(stem);
        if (posting === undefined) postings.set(stem, [index, 1]);
        else if (posting[posting.length - 2] === index) posting[posting.length - 1] = (posting[posting.length - 1] as number) + 1;
        else posting.push(index, 1);
      }
    });
    analysis = { ranges, sentences, postings, lengths: stems.map((list) => list.length), keys: [], vectorKeys: [] };
    analysisCache.set(text, analysis);
  }
  return analysis;
}

function vectorKeyAt(analysis: TextAnalysis, index: number): string {
  return (analysis.vectorKeys[index] ??= sentenceKey(analysis.sentences[index] as string));
}

/** The sentences of `text` with their vector keys, from the same analysis selection reads (hashed once per text). */
export function keyedSentences(text: string): { key: string; text: string }[] {
  const analysis = analyse(text);
  return analysis.sentences.map((sentence, index) => ({ key: vectorKeyAt(analysis, index), text: sentence }));
}

function repeatKeyAt(analysis: TextAnalysis, index: number): string {
  let key = analysis.keys[index];
  if (key === undefined) {
    key = repeatKey(analysis.sentences[index] as string);
    analysis.keys[index] = key;
  }
  return key;
}

/** True when `a` ends with `b` at a word boundary (repeat keys are words joined by single spaces). */
function endsWithWords(a: string, b: string): boolean {
  if (a.length === b.length) return a === b;
  return a.length > b.length && a.endsWith(b) && a.charCodeAt(a.length - b.length - 1) === 32;
}

/** The largest value, at least 0 (a loop: spreading a pool of many thousand sentences into Math.max overflows the stack). */
function largest(values: readonly number[]): number {
  let max = 0;
  for (const value of values) if (value > max) max = value;
  return max;
}

/** The class of a sentence selection leaves out. */
const NOT_KEPT = 3;

/** Sentences shorter than this (normalised) are never treated as repeats: "Yes." may well be said twice. */
const MIN_REPEAT_LENGTH = 24;

/** What two sentences must share to count as the same: letters and digits, case and punctuation aside. */
function repeatKey(sentence: string): string {
  return sentence
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
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
  const pool: PoolSentence[] = [];
  const analyses: (TextAnalysis | null)[] = [];
  const lengths: number[] = [];
  /** Per pool sentence: the count of each of its `terms`, in the same order. */
  const termFrequencies: number[][] = [];

  texts.forEach((text, item) => {
    const analysis = skip[item] === true ? null : analyse(text);
    analyses.push(analysis);
    if (analysis === null) return;
    const first = pool.length;
    analysis.ranges.forEach((range, index) => {
      pool.push({ item, index, range, terms: [], relevance: 0 });
      lengths.push(analysis.lengths[index] as number);
      termFrequencies.push([]);
    });
    // The query's few terms looked up in the text's inverted index, rather than in every sentence.
    queryStems.forEach((stem, term) => {
      const posting = analysis.postings.get(stem);
      if (posting === undefined) return;
      for (let p = 0; p < posting.length; p += 2) {
        const s = first + (posting[p] as number);
        (pool[s] as PoolSentence).terms.push(term);
        (termFrequencies[s] as number[]).push(posting[p + 1] as number);
      }
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
    const frequencies = termFrequencies[s] as number[];
    sentence.terms.forEach((term, t) => {
      const tf = frequencies[t] as number;
      score += (idf[term] as number) * ((tf * (BM25_K + 1)) / (tf + norm));
    });
    return score;
  });
  const maxLexical = largest(lexical);

  let dense: number[] | undefined;
  const vectors = settings.vectors;
  if (vectors !== undefined) {
    dense = pool.map((sentence) => {
      const vector = vectors.sentences.get(vectorKeyAt(analyses[sentence.item] as TextAnalysis, sentence.index));
      return vector === undefined ? 0 : Math.max(0, cosineSimilarity(vectors.query, vector));
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
  // Elliott..."). Two such keys share their last MIN_REPEAT_LENGTH characters, so shown keys are filed by
  // that tail and a check compares only keys with the same tail.
  const shownByTail = new Map<string, string[]>();
  const tailOf = (key: string) => key.slice(key.length - MIN_REPEAT_LENGTH);
  const repeats = (key: string) =>
    key.length >= MIN_REPEAT_LENGTH &&
    (shownByTail.get(tailOf(key))?.some((shown) => endsWithWords(shown, key) || endsWithWords(key, shown)) ?? false);
  const show = (key: string) => {
    if (key.length < MIN_REPEAT_LENGTH) return;
    const tail = tailOf(key);
    const list = shownByTail.get(tail);
    if (list === undefined) shownByTail.set(tail, [key]);
    else list.push(key);
  };

  return texts.map((text, item) => {
    const sentences = byItem[item] as PoolSentence[];
    if (sentences.length === 0) return null;
    // Most relevant first; ties by position, so the result never depends on anything but the input.
    const ranked = [...sentences].sort((a, b) => b.relevance - a.relevance || a.index - b.index);
    // Each sentence's class (0: only mention, 1: relevant, 2: neighbour; NOT_KEPT otherwise), by index
    // (`sentences` is in index order).
    const rank = new Array<number>(sentences.length).fill(NOT_KEPT);
    const put = (index: number, klass: number) => {
      if (klass < (rank[index] as number)) rank[index] = klass;
    };
    for (const sentence of ranked) if (onlyMention.has(sentence)) put(sentence.index, 0);
    ranked.slice(0, settings.minSentences).forEach((sentence) => put(sentence.index, 1));
    for (const sentence of ranked) if (sentence.relevance > 0 && sentence.relevance >= threshold) put(sentence.index, 1);
    if (settings.window > 0) {
      const anchors = rank.flatMap((klass, index) => (klass === NOT_KEPT ? [] : [index]));
      for (const anchor of anchors) {
        for (let d = 1; d <= settings.window; d += 1) {
          if (anchor - d >= 0) put(anchor - d, 2);
          if (anchor + d < sentences.length) put(anchor + d, 2);
        }
      }
    }
    const analysis = analyses[item] as TextAnalysis;
    let keptIndices = rank.flatMap((klass, index) => (klass === NOT_KEPT ? [] : [index]));
    const fresh = keptIndices.filter((index) => !repeats(repeatKeyAt(analysis, index)));
    if (fresh.length > 0) keptIndices = fresh;
    for (const index of keptIndices) show(repeatKeyAt(analysis, index));
    const position: number[] = [];
    keptIndices.forEach((index, p) => {
      position[index] = p;
    });
    const relevanceOf = (index: number) => (sentences[index] as PoolSentence).relevance;
    const priority = [...keptIndices]
      .sort((a, b) => (rank[a] as number) - (rank[b] as number) || relevanceOf(b) - relevanceOf(a) || a - b)
      .map((index) => position[index] as number);
    const keptRelevance = priority.map((p) => relevanceOf(keptIndices[p] as number));
    return new Selection(text, analysis.ranges, keptIndices, priority, keptRelevance, analysis.sentences);
  });
}
