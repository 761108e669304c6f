import { LitmPackError } from '../base/errors.js';
import {
  AMBIGUOUS,
  FNV_OFFSET,
  FNV_PRIME,
  SUFFIX_FILTER_MASK,
  SUFFIX_LENGTH_MASK,
  SUFFIX_RANK_SHIFT,
  type RankTable,
} from './rank-table.js';

/**
 * Byte-pair merge counts, as tiktoken merges: repeatedly merge the adjacent pair whose concatenation has
 * the lowest rank, the leftmost one on ties, until no pair is a token; the count is the number of parts.
 *
 * Short pieces (nearly all of them) use flat arrays and a linear scan per merge, as tiktoken's own core
 * does: quadratic in the piece, which is little up to FLAT_MAX bytes. Longer pieces (a base64 blob, a run
 * of one letter, CJK without punctuation, minified code) are counted by `PrefixCounts` below, in time linear
 * in the piece: js-tiktoken's merge is quadratic with a large constant and takes seconds on a 4,000-character
 * run without spaces.
 */

/**
 * The flat merge runs on at most two tokens (checking a pair, below) or one piece of up to this many bytes:
 * quadratic, but under a tenth of a millisecond there, and it needs no index (the prefix counts need the
 * table's suffix index, built on first use).
 */
export const FLAT_MAX = 256;

// Scratch arrays for the flat merge, reused (counting is synchronous).
const starts = new Int32Array(FLAT_MAX + 1);
const pairRanks = new Int32Array(FLAT_MAX + 1);

/**
 * The flat merge of `bytes[0, length)` (at most FLAT_MAX bytes): the number of parts left, or -1 as soon as a
 * merge would join across offset `apart` (pass -1 to merge to the end).
 */
function flatMerge(bytes: Uint8Array, length: number, table: RankTable, apart: number): number {
  if (length <= 1) return length;
  // parts: [starts[i], starts[i + 1]); pairRanks[i]: rank of parts i and i + 1 merged, or -1.
  let parts = length;
  for (let i = 0; i <= length; i += 1) starts[i] = i;
  for (let i = 0; i + 1 < parts; i += 1) pairRanks[i] = table.pairRank(bytes[i]!, bytes[i + 1]!);
  while (parts > 1) {
    let best = -1;
    let bestRank = 0x7fffffff;
    for (let i = 0; i + 1 < parts; i += 1) {
      const rank = pairRanks[i]!;
      if (rank >= 0 && rank < bestRank) {
        bestRank = rank;
        best = i;
      }
    }
    if (best < 0) break;
    if (starts[best + 1] === apart) return -1;
    // Merge parts best and best + 1: drop boundary best + 1.
    for (let i = best + 1; i < parts; i += 1) starts[i] = starts[i + 1]!;
    for (let i = best + 1; i + 1 < parts; i += 1) pairRanks[i] = pairRanks[i + 1]!;
    parts -= 1;
    if (best + 1 < parts) pairRanks[best] = table.rank(bytes, starts[best]!, starts[best + 2]!);
    if (best > 0) pairRanks[best - 1] = table.rank(bytes, starts[best - 1]!, starts[best + 1]!);
  }
  return parts;
}

/** Number of tokens byte-pair encoding gives for `bytes[0, length)` (one pre-tokenised piece). */
export function bytePairCount(bytes: Uint8Array, length: number, table: RankTable): number {
  if (length <= FLAT_MAX) return flatMerge(bytes, length, table, -1);
  const counts = new PrefixCounts(table, bytes, length, RING);
  counts.extend(length, Infinity);
  return counts.at(length);
}

// ---------------------------------------------------------------------------------------------
// Counts of every prefix of a piece, in linear time.
//
// The byte-pair encoding of a text is the only sequence of tokens that spells it in which every two
// neighbours are "compatible": merging the two tokens' bytes alone gives back exactly those two tokens. So
// the encoding of each prefix of a piece ends in the one token t that ends there, is itself the encoding of
// its own bytes, and is compatible with the last token of the encoding of the prefix before t; and the
// count of a prefix is one more than that of the prefix before its last token. (The construction, and the
// proof that a token boundary of the whole is one of every part, are GitHub's `bpe` crate's:
// https://github.com/github/rust-gems/tree/main/crates/bpe.) One pass from the start gives the count of
// every prefix, where merging each prefix afresh would cost a merge per prefix.
//
// A bound comes with it: the last token of any longer text that starts with the first q bytes starts within
// the token covering byte q, at most `maxTokenBytes` - 1 bytes back, and there a boundary of the longer
// text's encoding is one of that prefix's; so every longer text counts at least one more than the smallest
// count of the last `maxTokenBytes` prefixes. Counting up to a limit can stop once those all reach it.

/** Index mask that keeps only the last 256 prefixes (enough: a token has at most 128 bytes). */
export const RING = 255;
/** Index mask that keeps every prefix. */
export const EVERY = 0x7fffffff;

const PAIR_MEMO_SIZE = 1 << 16;
const pairBytes = new Uint8Array(FLAT_MAX);

/**
 * What the prefix counts ask of a table, remembered per table: whether each token is its own encoding (some
 * tokens never come out of a merge), and recent answers of `compatible`, direct-mapped (pairs repeat within
 * a run, e.g. "aaaa" "aaaa").
 */
class Pairs {
  /** Per rank: 0 not known yet, 1 its own encoding, 2 not. */
  readonly #whole: Int8Array;
  readonly #left = new Int32Array(PAIR_MEMO_SIZE).fill(-1);
  readonly #right = new Int32Array(PAIR_MEMO_SIZE);
  readonly #answer = new Int8Array(PAIR_MEMO_SIZE);

  constructor(readonly table: RankTable) {
    this.#whole = new Int8Array(table.size);
  }

  isWhole(rank: number): boolean {
    let state = this.#whole[rank]!;
    if (state === 0) {
      const length = this.table.copyToken(rank, pairBytes, 0);
      state = flatMerge(pairBytes, length, this.table, -1) === 1 ? 1 : 2;
      this.#whole[rank] = state;
    }
    return state === 1;
  }

  /** Whether merging the bytes of `left` then `right` (both whole tokens) leaves exactly those two tokens. */
  compatible(left: number, right: number): boolean {
    const slot = (Math.imul(left, 0x9e3779b1) ^ right) & (PAIR_MEMO_SIZE - 1);
    if (this.#left[slot] === left && this.#right[slot] === right) return this.#answer[slot] === 1;
    const split = this.table.copyToken(left, pairBytes, 0);
    const length = this.table.copyToken(right, pairBytes, split);
    // Both halves are whole tokens, so the pair stays apart exactly when no merge joins across the split.
    const apart = flatMerge(pairBytes, length, this.table, split) !== -1;
    this.#left[slot] = left;
    this.#right[slot] = right;
    this.#answer[slot] = apart ? 1 : 0;
    return apart;
  }
}

const pairsByTable = new WeakMap<RankTable, Pairs>();

function pairsFor(table: RankTable): Pairs {
  let pairs = pairsByTable.get(table);
  if (pairs === undefined) {
    pairs = new Pairs(table);
    pairsByTable.set(table, pairs);
  }
  return pairs;
}

// The tokens that may end at one position, shortest first: rank (not yet compared with the text) and length.
const candidateRanks = new Int32Array(129);
const candidateLengths = new Int32Array(129);

/**
 * Token counts of the prefixes of one piece's bytes, computed from the start as far as asked. With `EVERY`
 * every count is kept (a cut or a chunk asks for many prefixes of the same run); with `RING` only the last
 * 256, for one count of a long piece in constant memory.
 */
export class PrefixCounts {
  /** Counts are known for the prefixes of 0..done bytes. */
  done = 0;
  bytes: Uint8Array;
  length: number;
  #counts: Int32Array;
  #lasts: Int32Array;
  readonly #mask: number;
  readonly #table: RankTable;
  readonly #pairs: Pairs;

  constructor(table: RankTable, bytes: Uint8Array, length: number, mask: number) {
    this.#table = table;
    this.#pairs = pairsFor(table);
    this.bytes = bytes;
    this.length = length;
    this.#mask = mask;
    // Counts are usually wanted for a prefix only (up to a budget): room grows as they are computed.
    const capacity = mask === RING ? RING + 1 : Math.min(length + 1, 1024);
    this.#counts = new Int32Array(capacity);
    this.#lasts = new Int32Array(capacity);
  }

  /** The count of the first `end` bytes (`end` at most `done`, and with `RING` within the last 256). */
  at(end: number): number {
    return this.#counts[end & this.#mask]!;
  }

  /** Longer bytes that start with the current ones (the piece grew); counts known so far stay valid. */
  grow(bytes: Uint8Array, length: number): void {
    this.bytes = bytes;
    this.length = length;
  }

  /** Room for the counts of prefixes up to `end` bytes (with `EVERY`). */
  #reserve(end: number): void {
    if (this.#mask !== EVERY || this.#counts.length > end) return;
    const capacity = Math.min(this.length + 1, Math.max(end + 1, this.#counts.length * 2));
    const counts = new Int32Array(capacity);
    counts.set(this.#counts.subarray(0, this.done + 1));
    const lasts = new Int32Array(capacity);
    lasts.set(this.#lasts.subarray(0, this.done + 1));
    this.#counts = counts;
    this.#lasts = lasts;
  }

  /**
   * The least count any prefix longer than `done` bytes can have (of this piece or of any longer text that
   * starts with its first `done` bytes): one more than the smallest of the last `maxTokenBytes` counts.
   */
  floor(): number {
    let least = Infinity;
    const from = Math.max(0, this.done - this.#table.maxTokenBytes + 1);
    for (let p = from; p <= this.done; p += 1) least = Math.min(least, this.at(p));
    return least + 1;
  }

  /**
   * The first q (at most `upTo`) past which every longer prefix is known to have more than `limit` tokens
   * (the last `maxTokenBytes` counts up to q all reach `limit`), or -1. With `RING`, only where counting
   * stopped for that reason.
   */
  firstProof(limit: number, upTo: number): number {
    const last = Math.min(this.done, upTo);
    if (this.#mask === RING) return this.done <= upTo && this.done < this.length && this.floor() > limit ? this.done : -1;
    const maxTokenBytes = this.#table.maxTokenBytes;
    let below = -1;
    for (let p = 0; p <= last; p += 1) {
      if (this.#counts[p]! < limit) below = p;
      else if (p - below >= maxTokenBytes) return p;
    }
    return -1;
  }

  /**
   * Counts prefixes up to `target` bytes, or fewer once `floor()` exceeds `limit` (no longer prefix can then
   * have `limit` tokens or fewer).
   */
  extend(target: number, limit: number): void {
    const table = this.#table;
    const bytes = this.bytes;
    let counts = this.#counts;
    let lasts = this.#lasts;
    const mask = this.#mask;
    const pairs = this.#pairs;
    const maxTokenBytes = table.maxTokenBytes;
    // The last prefix (so far) with fewer than `limit` tokens: once maxTokenBytes prefixes in a row have
    // `limit` or more, every longer prefix has more than `limit`.
    let below = -1;
    if (limit !== Infinity) {
      const from = Math.max(0, this.done - maxTokenBytes + 1);
      for (let p = from; p <= this.done; p += 1) if (this.at(p) < limit) below = p;
      if (this.done - below >= maxTokenBytes) return;
    }
    const { entries, longer } = table.suffixIndex();
    const slotMask = (entries.length >> 1) - 1;
    for (let end = this.done + 1; end <= target; end += 1) {
      if ((end & mask) >= counts.length) {
        this.#reserve(end);
        counts = this.#counts;
        lasts = this.#lasts;
      }
      // Tokens that may end here, found by walking back one byte at a time until no token ends with what was
      // read. A token is found by its hash and length alone: when the text there is a token, that is the one
      // token with its hash and length (unless AMBIGUOUS); when it is not, a token found is a false match,
      // which the byte comparison below rejects.
      let candidates = 0;
      let hash = FNV_OFFSET;
      const longest = Math.min(end, maxTokenBytes);
      for (let length = 1; length <= longest; length += 1) {
        hash = Math.imul(hash ^ bytes[end - length]!, FNV_PRIME);
        for (let slot = hash & slotMask; ; slot = (slot + 1) & slotMask) {
          const entry = entries[2 * slot + 1]!;
          if (entry === 0) break;
          if (entries[2 * slot] !== hash || (entry & SUFFIX_LENGTH_MASK) !== length) continue;
          let rank = (entry >>> SUFFIX_RANK_SHIFT) - 1;
          if ((entry & AMBIGUOUS) !== 0) rank = table.suffixRank(bytes, end - length, end, hash);
          if (rank >= 0) {
            candidateRanks[candidates] = rank;
            candidateLengths[candidates] = length;
            candidates += 1;
          }
          break;
        }
        const bit = hash & SUFFIX_FILTER_MASK;
        if ((longer[bit >>> 5]! & (1 << (bit & 31))) === 0) break;
      }
      // Exactly one candidate is the last token of this prefix's encoding (the longest is most often it); its
      // bytes are compared with the text only once it passes.
      let found = false;
      for (let c = candidates - 1; c >= 0; c -= 1) {
        const rank = candidateRanks[c]!;
        const before = end - candidateLengths[c]!;
        if (!pairs.isWhole(rank)) continue;
        if (before > 0 && !pairs.compatible(lasts[before & mask]!, rank)) continue;
        if (!table.matches(rank, bytes, before, end)) continue;
        lasts[end & mask] = rank;
        counts[end & mask] = counts[before & mask]! + 1;
        found = true;
        break;
      }
      // Cannot happen with a byte-pair vocabulary that holds every single byte (both shipped ones do).
      if (!found)
        throw new LitmPackError(
          'invalid_input',
          'byte-pair counting found no token ending at a position: the vocabulary lacks a single byte',
        );
      this.done = end;
      if (limit !== Infinity) {
        if (counts[end & mask]! < limit) below = end;
        else if (end - below >= maxTokenBytes) return;
      }
    }
  }
}
