/** Normalised form used for exact-duplicate detection: NFKC, lower case, whitespace collapsed. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Word shingles of width `size` as 32-bit FNV-1a hashes (a set, sorted ascending).
 * Texts shorter than `size` words give one shingle of all their words, so short texts still compare.
 */
export function shingleHashes(normalised: string, size: number): Uint32Array {
  const words = normalised.match(WORD) ?? [];
  if (words.length === 0) return new Uint32Array(0);
  const count = Math.max(1, words.length - size + 1);
  const out = new Set<number>();
  for (let i = 0; i < count; i += 1) {
    let hash = 0x811c9dc5;
    const end = Math.min(words.length, i + size);
    for (let w = i; w < end; w += 1) {
      const word = words[w] as string;
      for (let c = 0; c < word.length; c += 1) {
        hash ^= word.charCodeAt(c);
        hash = Math.imul(hash, 0x01000193);
      }
      hash ^= 0x20; // word separator
      hash = Math.imul(hash, 0x01000193);
    }
    out.add(hash >>> 0);
  }
  return Uint32Array.from(out).sort();
}

/** Number of hashes two sorted hash sets share. */
export function sharedCount(a: Uint32Array, b: Uint32Array): number {
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      shared += 1;
      i += 1;
      j += 1;
    } else if (x < y) i += 1;
    else j += 1;
  }
  return shared;
}

// A sentence ends after terminal punctuation (optionally followed by closing quotes or brackets) that is
// followed by whitespace, or at a line break. Fixed rules, no locale data: the cut must be the same on
// every machine.
const SENTENCE_END = /[.!?…。！？](?:["'”’)\]]*)(?=\s)|\n/gu;
const WORD_END = /\S(?=\s)/gu;

/**
 * Offsets (exclusive ends) where `text` may be cut, ascending: sentence ends, or, when `unit` is `word`,
 * word ends. Prefixes cut there are trimmed of trailing whitespace by the caller.
 */
export function cutPoints(text: string, unit: 'sentence' | 'word'): number[] {
  const pattern = unit === 'sentence' ? SENTENCE_END : WORD_END;
  const points: number[] = [];
  pattern.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    const end = unit === 'sentence' && match[0] === '\n' ? match.index : match.index + match[0].length;
    if (end > 0 && text.slice(0, end).trim().length > 0) points.push(end);
  }
  return [...new Set(points)].sort((x, y) => x - y);
}

/** Code-point-safe cut points for text with no whitespace at all (e.g. CJK runs), every `step` code units. */
export function characterCutPoints(text: string, step: number): number[] {
  const points: number[] = [];
  for (let i = step; i < text.length; i += step) {
    // never split a surrogate pair
    const code = text.charCodeAt(i - 1);
    points.push(code >= 0xd800 && code <= 0xdbff ? i + 1 : i);
  }
  return points;
}
