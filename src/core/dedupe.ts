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
export type DedupeVerdict<T> =
  | { kind: 'duplicate'; of: T }
  | { kind: 'near-duplicate'; of: T }
  | { kind: 'new'; normalised: string; shingles: Uint32Array | undefined };

/**
 * Rule 4 against the texts kept so far, in the order they were kept: a text duplicates the kept text with the
 * same normalised form, else nearly duplicates the first kept text whose shingles it shares enough of.
 *
 * The rule compares a text with every kept one; done pair by pair that is quadratic in what is kept and
 * dominates packing on large budgets and duplicate-heavy pools. Here the kept texts' shingles are indexed
 * (shingle → kept texts holding it), so a text is compared only with the kept texts it shares a shingle with:
 * thresholds are above 0, so a pair sharing none can match only when both have no words at all. Each distinct
 * text is normalised and shingled once per packing, and a text met again gets its earlier verdict (kept texts
 * are never removed, so the first kept text it duplicates stays the same). The verdicts equal the pairwise
 * definition; a property test compares them.
 */
export class Deduper<T> {
  readonly #settings: NearDuplicateSettings;
  readonly #near: boolean;
  readonly #kept: Array<{ value: T; size: number }> = [];
  readonly #byNormalised = new Map<string, T>();
  /** Verdicts of duplicates already seen, by raw text. */
  readonly #seen = new Map<string, DedupeVerdict<T>>();
  /** Shingles by normalised text, for texts met again after a change of the kept set. */
  readonly #shingles = new Map<string, Uint32Array>();
  /** Shingle → indices of the kept texts holding it (ascending). */
  readonly #postings = new Map<number, number[]>();
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
    const normalised = normalizeText(text);
    const exact = this.#byNormalised.get(normalised);
    if (exact !== undefined) return this.#remember(text, { kind: 'duplicate', of: exact });
    if (!this.#near) return { kind: 'new', normalised, shingles: undefined };
    let shingles = this.#shingles.get(normalised);
    if (shingles === undefined) {
      shingles = shingleHashes(normalised, this.#settings.shingleSize);
      this.#shingles.set(normalised, shingles);
    }
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
    for (const shingle of verdict.shingles) {
      const holders = this.#postings.get(shingle);
      if (holders === undefined) this.#postings.set(shingle, [index]);
      else holders.push(index);
    }
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
    for (const shingle of shingles) {
      const holders = this.#postings.get(shingle);
      if (holders === undefined) continue;
      for (const index of holders) {
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
