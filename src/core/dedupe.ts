import { BoundedCache } from '../base/bounded-cache.js';
import { normalizeText, shingleHashes } from './text.js';

/** Near-duplicate rule (rule 4): a threshold of null turns that test off. */
export interface NearDuplicateSettings {
  /** Word-shingle Jaccard at or above which two texts are near duplicates. */
  nearThreshold: number | null;
  /** Shared shingles over the smaller text's shingles at or above which one contains the other. */
  containmentThreshold: number | null;
  shingleSize: number;
}

/** What `Deduper.check` found: a kept text this one duplicates, or the keys to keep it under. */
type DedupeVerdict<T> =
  { kind: 'duplicate'; of: T } | { kind: 'near-duplicate'; of: T } | { kind: 'new'; normalised: string; shingles: Uint32Array | undefined };

/**
 * Normalised texts and their shingles, remembered across packings: the same chunks come back query after query,
 * and normalising and shingling read the whole text. Bounded by the characters of the texts held.
 */
const ANALYSIS_CACHE_CHARS = 8_000_000;
const analyses = new BoundedCache<string, { normalised: string; shingles: Map<number, Uint32Array> }>(
  ANALYSIS_CACHE_CHARS,
  (text) => text.length,
);

function analysisOf(text: string): { normalised: string; shingles: Map<number, Uint32Array> } {
  return analyses.get(text) ?? analyses.set(text, { normalised: normalizeText(text), shingles: new Map() });
}

function shinglesOf(analysis: { normalised: string; shingles: Map<number, Uint32Array> }, size: number): Uint32Array {
  let shingles = analysis.shingles.get(size);
  if (shingles === undefined) {
    shingles = shingleHashes(analysis.normalised, size);
    analysis.shingles.set(size, shingles);
  }
  return shingles;
}

/**
 * Rule 4 against the texts kept so far, in the order they were kept: a text duplicates the kept text with the
 * same normalised form, else nearly duplicates the first kept text whose shingles it shares enough of.
 *
 * The rule compares a text with every kept one; done pair by pair that is quadratic in what is kept and
 * dominates packing on large budgets and duplicate-heavy pools. Here the kept texts' shingles are indexed
 * (shingle → kept texts holding it), so a text is compared only with the kept texts it shares a shingle with:
 * thresholds are above 0, so a pair sharing none can match only when both have no words at all. Each distinct
 * text is normalised and shingled once (remembered across packings), and a text met again gets its earlier
 * verdict (kept texts are never removed, so the first kept text it duplicates stays the same). The verdicts
 * equal the pairwise definition; a property test compares them.
 */
export class Deduper<T> {
  readonly #settings: NearDuplicateSettings;
  readonly #near: boolean;
  readonly #kept: Array<{ value: T; size: number }> = [];
  readonly #byNormalised = new Map<string, T>();
  /** Verdicts of duplicates already seen, by raw text. */
  readonly #seen = new Map<string, DedupeVerdict<T>>();
  /** Shingle → the kept texts holding it, as chains in flat arrays (no allocation per shingle). */
  readonly #postings = new ShingleIndex();
  /** Indices of kept texts without any word. */
  readonly #empty: number[] = [];
  #shared = new Int32Array(64);

  constructor(settings: NearDuplicateSettings) {
    this.#settings = settings;
    this.#near = settings.nearThreshold !== null || settings.containmentThreshold !== null;
  }

  check(text: string): DedupeVerdict<T> {
    const seen = this.#seen.get(text);
    if (seen !== undefined) return seen;
    const analysis = analysisOf(text);
    const normalised = analysis.normalised;
    const exact = this.#byNormalised.get(normalised);
    if (exact !== undefined) return this.#remember(text, { kind: 'duplicate', of: exact });
    if (!this.#near) return { kind: 'new', normalised, shingles: undefined };
    const shingles = shinglesOf(analysis, this.#settings.shingleSize);
    const near = this.#firstNear(shingles);
    if (near !== undefined) return this.#remember(text, { kind: 'near-duplicate', of: near });
    return { kind: 'new', normalised, shingles };
  }

  /** Records a text `check` found new as kept. */
  keep(verdict: Extract<DedupeVerdict<T>, { kind: 'new' }>, value: T): void {
    const index = this.#kept.length;
    this.#kept.push({ value, size: verdict.shingles?.length ?? 0 });
    this.#byNormalised.set(verdict.normalised, value);
    if (verdict.shingles === undefined) return;
    if (verdict.shingles.length === 0) this.#empty.push(index);
    for (const shingle of verdict.shingles) this.#postings.add(shingle, index);
  }

  #remember(text: string, verdict: DedupeVerdict<T>): DedupeVerdict<T> {
    this.#seen.set(text, verdict);
    return verdict;
  }

  /** The first kept text (in keeping order) that `shingles` nearly duplicates or is contained in / contains. */
  #firstNear(shingles: Uint32Array): T | undefined {
    const { nearThreshold, containmentThreshold } = this.#settings;
    if (shingles.length === 0) {
      // Shares nothing with anything: only the Jaccard of two empty sets (union 0) matches.
      const first = this.#empty[0];
      return nearThreshold !== null && first !== undefined ? this.#kept[first]!.value : undefined;
    }
    if (this.#shared.length < this.#kept.length) this.#shared = new Int32Array(this.#kept.length * 2);
    const shared = this.#shared;
    const touched: number[] = [];
    // Shingles are unique within a text, so each holder is counted once per shared shingle.
    const postings = this.#postings;
    for (const shingle of shingles) {
      for (let at = postings.first(shingle); at >= 0; at = postings.next(at)) {
        const index = postings.holder(at);
        if (shared[index] === 0) touched.push(index);
        shared[index] = shared[index]! + 1;
      }
    }
    touched.sort((a, b) => a - b);
    let found: T | undefined;
    for (const index of touched) {
      const count = shared[index]!;
      if (found === undefined) {
        const other = this.#kept[index]!;
        const union = shingles.length + other.size - count;
        const smaller = Math.min(shingles.length, other.size);
        if (
          (nearThreshold !== null && (union === 0 || count / union >= nearThreshold)) ||
          (containmentThreshold !== null && smaller > 0 && count / smaller >= containmentThreshold)
        ) {
          found = other.value;
        }
      }
      shared[index] = 0;
    }
    return found;
  }
}

/**
 * Shingle hash → kept texts, by open addressing over the hashes and a chain of entries per hash, all in
 * typed arrays that grow by doubling (a Map of arrays allocates an array per distinct shingle).
 */
class ShingleIndex {
  /** Per slot: shingle hash, then first entry + 1 (0 for an empty slot). */
  #slots = new Int32Array(2 * 4096);
  #mask = 4095;
  #shingles = 0;
  /** Per entry: the kept text's index, then the next entry with the same shingle + 1 (0 at the end). */
  #entries = new Int32Array(2 * 4096);
  #size = 0;

  add(shingle: number, holder: number): void {
    if (this.#size * 2 === this.#entries.length) {
      const entries = new Int32Array(this.#entries.length * 2);
      entries.set(this.#entries);
      this.#entries = entries;
    }
    let slot = this.#slot(shingle | 0);
    if (this.#slots[slot * 2 + 1] === 0) {
      if ((this.#shingles + 1) * 2 > this.#mask + 1) {
        this.#grow();
        slot = this.#slot(shingle | 0);
      }
      this.#slots[slot * 2] = shingle | 0;
      this.#shingles += 1;
    }
    // Prepended: holders come out newest first (callers sort what they collect).
    const entry = this.#size;
    this.#size += 1;
    this.#entries[entry * 2] = holder;
    this.#entries[entry * 2 + 1] = this.#slots[slot * 2 + 1]!;
    this.#slots[slot * 2 + 1] = entry + 1;
  }

  /** The first entry for `shingle`, or -1. */
  first(shingle: number): number {
    return this.#slots[this.#slot(shingle | 0) * 2 + 1]! - 1;
  }

  next(entry: number): number {
    return this.#entries[entry * 2 + 1]! - 1;
  }

  holder(entry: number): number {
    return this.#entries[entry * 2]!;
  }

  /** The slot holding `key`, or the empty slot where it would go. */
  #slot(key: number): number {
    const mask = this.#mask;
    const mixed = Math.imul(key, 0x9e3779b1);
    let slot = (mixed ^ (mixed >>> 16)) & mask;
    while (this.#slots[slot * 2 + 1] !== 0 && this.#slots[slot * 2] !== key) slot = (slot + 1) & mask;
    return slot;
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Int32Array(old.length * 2);
    this.#mask = old.length - 1;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i + 1] === 0) continue;
      const slot = this.#slot(old[i]!);
      this.#slots[slot * 2] = old[i]!;
      this.#slots[slot * 2 + 1] = old[i + 1]!;
    }
  }
}
