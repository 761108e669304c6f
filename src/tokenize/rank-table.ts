import { createHash } from 'node:crypto';

/**
 * A byte-pair vocabulary as flat arrays: every token's bytes in rank order in one buffer, and an
 * open-addressing hash index over them, so a rank is found from a byte range without building a string.
 *
 * js-tiktoken keeps its vocabulary as a Map keyed by the bytes joined with commas, built from base64
 * text on every start (about a second for o200k_base). This table is built from the same data in a few
 * milliseconds: from a compact file written at package build time (`npm run build`, checked against
 * js-tiktoken's own table there), or, when that file is absent (running from source), decoded straight
 * from js-tiktoken's rank module.
 */
export class RankTable {
  /** Ranks run from 0 to `size - 1`; a rank with no token has an empty byte range. */
  readonly size: number;
  /** Length of the longest token, in bytes: no longer byte range can have a rank. */
  readonly maxTokenBytes: number;
  readonly #blob: Uint8Array;
  /** Token `r` is `blob[offsets[r], offsets[r + 1])`. */
  readonly #offsets: Uint32Array;
  /** Rank + 1 per slot, 0 for an empty slot; linear probing, at most half full. */
  readonly #slots: Int32Array;
  readonly #mask: number;
  /** Rank of every two-byte token by its bytes (-1 when not a token): the first merges of every piece. */
  readonly #pairs = new Int32Array(65536).fill(-1);

  constructor(lengths: Uint16Array, blob: Uint8Array) {
    this.size = lengths.length;
    this.#blob = blob;
    const offsets = new Uint32Array(lengths.length + 1);
    let longest = 0;
    for (let r = 0; r < lengths.length; r += 1) {
      const length = lengths[r]!;
      offsets[r + 1] = offsets[r]! + length;
      if (length > longest) longest = length;
    }
    if (offsets[lengths.length] !== blob.length) throw new Error('rank table: token lengths do not add up to the data');
    this.#offsets = offsets;
    this.maxTokenBytes = longest;
    let capacity = 1024;
    while (capacity < lengths.length * 2) capacity *= 2;
    const slots = new Int32Array(capacity);
    const mask = capacity - 1;
    for (let r = 0; r < lengths.length; r += 1) {
      const start = offsets[r]!;
      const end = offsets[r + 1]!;
      if (end === start) continue;
      let slot = hashBytes(blob, start, end) & mask;
      while (slots[slot] !== 0) {
        if (this.#equals(slots[slot]! - 1, blob, start, end)) throw new Error(`rank table: token ${r} appears twice`);
        slot = (slot + 1) & mask;
      }
      slots[slot] = r + 1;
      if (end - start === 2) this.#pairs[(blob[start]! << 8) | blob[start + 1]!] = r;
    }
    this.#slots = slots;
    this.#mask = mask;
  }

  /** The rank of `bytes[start, end)`, or -1 when that byte string is not a token. */
  rank(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    if (length > this.maxTokenBytes || length <= 0) return -1;
    const slots = this.#slots;
    const mask = this.#mask;
    for (let slot = hashBytes(bytes, start, end) & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return -1;
      if (this.#equals(entry - 1, bytes, start, end)) return entry - 1;
    }
  }

  /** The rank of the two bytes `first`, `second` as one token, or -1. */
  pairRank(first: number, second: number): number {
    return this.#pairs[(first << 8) | second]!;
  }

  /** The bytes of the token with rank `rank` (empty when there is none). */
  tokenBytes(rank: number): Uint8Array {
    return this.#blob.subarray(this.#offsets[rank], this.#offsets[rank + 1]);
  }

  /** Length in bytes of the token with rank `rank` (0 when there is none). */
  tokenLength(rank: number): number {
    return this.#offsets[rank + 1]! - this.#offsets[rank]!;
  }

  /** Writes the token's bytes into `out` at `at`; returns the position after them. */
  copyToken(rank: number, out: Uint8Array, at: number): number {
    const from = this.#offsets[rank]!;
    const to = this.#offsets[rank + 1]!;
    const blob = this.#blob;
    for (let i = from; i < to; i += 1) out[at + i - from] = blob[i]!;
    return at + to - from;
  }

  /** The rank of `bytes[start, end)` by its `suffixHash` `hash`, reading the bytes, or -1. */
  suffixRank(bytes: Uint8Array, start: number, end: number, hash: number): number {
    const { entries } = this.suffixIndex();
    const mask = (entries.length >> 1) - 1;
    for (let slot = hash & mask; entries[2 * slot + 1] !== 0; slot = (slot + 1) & mask) {
      const rank = (entries[2 * slot + 1]! >>> SUFFIX_RANK_SHIFT) - 1;
      if (entries[2 * slot] === hash && this.#equals(rank, bytes, start, end)) return rank;
    }
    return -1;
  }

  /** Whether the token with rank `rank` is `bytes[start, end)`. */
  matches(rank: number, bytes: Uint8Array, start: number, end: number): boolean {
    return this.#equals(rank, bytes, start, end);
  }

  /** The index of tokens by their last bytes (built on first use: only long pieces need it). */
  suffixIndex(): SuffixIndex {
    return (this.#suffixIndex ??= buildSuffixIndex(this, this.#blob, this.#offsets));
  }

  #suffixIndex: SuffixIndex | undefined;

  #equals(rank: number, bytes: Uint8Array, start: number, end: number): boolean {
    const from = this.#offsets[rank]!;
    if (this.#offsets[rank + 1]! - from !== end - start) return false;
    const blob = this.#blob;
    for (let i = 0; i < end - start; i += 1) if (blob[from + i] !== bytes[start + i]) return false;
    return true;
  }
}

export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;
/** 2^24 bits (2 MB): with about a million token suffixes, a few in a hundred lookups are false positives. */
export const SUFFIX_FILTER_MASK = (1 << 24) - 1;

/** 32-bit FNV-1a over a byte range. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i += 1) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

/**
 * Tokens by `suffixHash` (FNV-1a of their bytes read from the last to the first, so that a walk back from
 * a position in a text extends the hash one byte at a time), in open addressing over pairs of integers (one
 * memory read finds both): the hash, then (rank + 1) << SUFFIX_RANK_SHIFT | length, with AMBIGUOUS in it
 * when another token has the same hash and length (the bytes then decide); 0 for an empty slot. `longer` is
 * a bit filter of the hashes of every token's proper suffixes: a clear bit means no longer token ends with
 * what was read, so a walk back can stop (a set bit may be a collision).
 */
export interface SuffixIndex {
  entries: Int32Array;
  longer: Int32Array;
}

export const SUFFIX_RANK_SHIFT = 9;
export const SUFFIX_LENGTH_MASK = 0xff;
export const AMBIGUOUS = 0x100;

function buildSuffixIndex(table: RankTable, blob: Uint8Array, offsets: Uint32Array): SuffixIndex {
  if (table.maxTokenBytes > SUFFIX_LENGTH_MASK || table.size >= 1 << (31 - SUFFIX_RANK_SHIFT)) {
    throw new Error('rank table: tokens too long or too many for the suffix index');
  }
  let capacity = 1024;
  while (capacity < table.size * 2) capacity *= 2;
  const entries = new Int32Array(capacity * 2);
  const mask = capacity - 1;
  const longer = new Int32Array((SUFFIX_FILTER_MASK + 1) / 32);
  const size = table.size;
  for (let r = 0; r < size; r += 1) {
    const start = offsets[r]!;
    const end = offsets[r + 1]!;
    if (end === start) continue;
    let hash = FNV_OFFSET;
    for (let i = end - 1; i > start; i -= 1) {
      hash = Math.imul(hash ^ blob[i]!, FNV_PRIME);
      const bit = hash & SUFFIX_FILTER_MASK;
      longer[bit >>> 5]! |= 1 << (bit & 31);
    }
    hash = Math.imul(hash ^ blob[start]!, FNV_PRIME);
    const length = end - start;
    let flags = 0;
    let slot = hash & mask;
    for (; entries[2 * slot + 1] !== 0; slot = (slot + 1) & mask) {
      if (entries[2 * slot] === hash && (entries[2 * slot + 1]! & SUFFIX_LENGTH_MASK) === length) {
        entries[2 * slot + 1]! |= AMBIGUOUS;
        flags = AMBIGUOUS;
      }
    }
    entries[2 * slot] = hash;
    entries[2 * slot + 1] = ((r + 1) << SUFFIX_RANK_SHIFT) | flags | length;
  }
  return { entries, longer };
}

/** FNV-1a over `bytes[start, end)` read from the last byte to the first (what `suffixRank` takes). */
export function suffixHash(bytes: Uint8Array, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let i = end - 1; i >= start; i -= 1) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
  return hash;
}

/** What a rank table file holds besides the table: the pre-tokenising pattern. */
export interface Vocabulary {
  patStr: string;
  table: RankTable;
}

/** js-tiktoken's rank module: `bpe_ranks` is lines of `! <first rank> <base64 token> <base64 token> ...`. */
export interface TiktokenRanks {
  pat_str: string;
  bpe_ranks: string;
}

const BASE64 = new Int16Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[c.charCodeAt(0)] = i;

/**
 * Decodes js-tiktoken's text form of a vocabulary. Written out rather than calling a base64 decoder per
 * token: one pass into one buffer is what makes this take milliseconds instead of a large part of a second.
 */
export function vocabularyFromTiktoken(ranks: TiktokenRanks): Vocabulary {
  const text = ranks.bpe_ranks;
  const tokens: Array<[rank: number, start: number, end: number]> = [];
  let blob = new Uint8Array(Math.ceil((text.length * 3) / 4));
  let written = 0;
  let maxRank = -1;
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    const fields = line.split(' ');
    let rank = Number.parseInt(fields[1] ?? '', 10);
    if (!Number.isInteger(rank) || rank < 0) throw new Error('rank table: malformed js-tiktoken ranks');
    for (let f = 2; f < fields.length; f += 1) {
      const token = fields[f]!;
      const start = written;
      let bits = 0;
      let buffered = 0;
      for (let i = 0; i < token.length; i += 1) {
        const code = token.charCodeAt(i);
        if (code === 61) break; // '=' padding
        const value = code < 128 ? BASE64[code]! : -1;
        if (value < 0) throw new Error('rank table: malformed base64 in js-tiktoken ranks');
        bits = (bits << 6) | value;
        buffered += 6;
        if (buffered >= 8) {
          buffered -= 8;
          blob[written] = (bits >> buffered) & 0xff;
          written += 1;
        }
      }
      tokens.push([rank, start, written]);
      if (rank > maxRank) maxRank = rank;
      rank += 1;
    }
  }
  blob = blob.subarray(0, written);
  tokens.sort((a, b) => a[0] - b[0]);
  const lengths = new Uint16Array(maxRank + 1);
  const ordered = new Uint8Array(written);
  let at = 0;
  for (const [rank, start, end] of tokens) {
    if (lengths[rank] !== 0) throw new Error(`rank table: rank ${rank} appears twice`);
    lengths[rank] = end - start;
    ordered.set(blob.subarray(start, end), at);
    at += end - start;
  }
  return { patStr: ranks.pat_str, table: new RankTable(lengths, ordered) };
}

// ---------------------------------------------------------------------------------------------
// The file form: a magic line, a JSON header line, then the token lengths (u16, little-endian) and the
// token bytes in rank order. The header's sha256 covers everything after it.

const MAGIC = 'litm-pack rank table 1\n';

interface FileHeader {
  encoding: string;
  patStr: string;
  size: number;
  bytes: number;
  sha256: string;
}

/** Serialises a vocabulary (the build writes one file per shipped encoding). */
export function encodeRankTableFile(encoding: string, vocabulary: Vocabulary): Uint8Array {
  const { table, patStr } = vocabulary;
  const lengths = new Uint16Array(table.size);
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (let r = 0; r < table.size; r += 1) {
    const token = table.tokenBytes(r);
    lengths[r] = token.length;
    parts.push(token);
    bytes += token.length;
  }
  const payload = new Uint8Array(table.size * 2 + bytes);
  const view = new DataView(payload.buffer);
  for (let r = 0; r < table.size; r += 1) view.setUint16(r * 2, lengths[r]!, true);
  let at = table.size * 2;
  for (const part of parts) {
    payload.set(part, at);
    at += part.length;
  }
  const header: FileHeader = {
    encoding,
    patStr,
    size: table.size,
    bytes,
    sha256: createHash('sha256').update(payload).digest('hex'),
  };
  const head = new TextEncoder().encode(`${MAGIC}${JSON.stringify(header)}\n`);
  const out = new Uint8Array(head.length + payload.length);
  out.set(head, 0);
  out.set(payload, head.length);
  return out;
}

/**
 * Reads a file written by `encodeRankTableFile`. Throws when it is not one, names another encoding, or its
 * data does not match the checksum in its header.
 */
export function decodeRankTableFile(file: Uint8Array, encoding: string): Vocabulary {
  const decoder = new TextDecoder();
  const magicEnd = MAGIC.length;
  const headerEnd = file.indexOf(10, magicEnd);
  if (decoder.decode(file.subarray(0, magicEnd)) !== MAGIC || headerEnd < 0) throw new Error('not a rank table file');
  const header = JSON.parse(decoder.decode(file.subarray(magicEnd, headerEnd))) as FileHeader;
  if (header.encoding !== encoding) throw new Error(`rank table file is for ${header.encoding}, not ${encoding}`);
  const payload = file.subarray(headerEnd + 1);
  if (payload.length !== header.size * 2 + header.bytes) throw new Error('rank table file is truncated');
  if (createHash('sha256').update(payload).digest('hex') !== header.sha256) throw new Error('rank table file is damaged');
  const lengths = new Uint16Array(header.size);
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  for (let r = 0; r < header.size; r += 1) lengths[r] = view.getUint16(r * 2, true);
  return { patStr: header.patStr, table: new RankTable(lengths, payload.subarray(header.size * 2)) };
}
