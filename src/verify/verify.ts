/**
 * Citations over time: checks each citation of a pack against the source's current chunks in a store.
 * A citation pins a source, a version, a span and the sha256 of the cited text; the store keeps the
 * current chunk texts with their spans, which is all the check needs (no history of old versions).
 */
import { StoreSchema } from '../store/types.js';
import { z } from 'zod';
import { sha256Hex } from '../base/canonical.js';
import { invalidInput, LitmPackError, parseOrThrow } from '../base/errors.js';
import { CitationSchema, PACK_SCHEMA_ID, SpanSchema, type Span } from '../core/schemas.js';
import { normalizeText, shingleHashes } from '../core/text.js';
import { GET_CHUNKS_MAX_LIMIT, type ChunkRecord, PrincipalsSchema } from '../store/schemas.js';
import { AbortSignalSchema, runBounded, throwIfAborted } from '../base/abort.js';

export const CitationStatusSchema = z.enum(['current', 'moved', 'changed', 'missing']);
/**
 * - `current`: the source's current version holds the cited text at the cited span;
 * - `moved`: the exact cited text is in the source at another span (an edit elsewhere in the page);
 * - `changed`: the cited text is gone; `closest` is the nearest passage of the current version;
 * - `missing`: the source does not exist, or the caller's principals may not read it (the two are one answer).
 */
export type CitationStatus = z.infer<typeof CitationStatusSchema>;

export const ClosestPassageSchema = z.object({
  chunkId: z.string(),
  span: SpanSchema,
  /** Share of the cited text's word n-grams found in the passage, averaged over n = 1..5 (0..1). */
  score: z.number().min(0).max(1),
  text: z.string(),
});
export type ClosestPassage = z.infer<typeof ClosestPassageSchema>;

export const CitationCheckSchema = z.object({
  /** The citation's `[ref]` in its pack; null when the citation carried none. */
  ref: z.number().int().positive().nullable(),
  sourceId: z.string(),
  chunkId: z.string(),
  status: CitationStatusSchema,
  citedVersion: z.string().nullable(),
  /** The version the store holds now; null when `missing` (or when the source records none). */
  currentVersion: z.string().nullable(),
  citedSpan: SpanSchema.nullable(),
  /** Where the cited text is now: the cited span when `current`, the new one when `moved`; else null. */
  span: SpanSchema.nullable(),
  /** `changed` only: the closest current passage; null when the cited text itself is not known. */
  closest: ClosestPassageSchema.nullable(),
});
export type CitationCheck = z.infer<typeof CitationCheckSchema>;

/** A citation to check; `text` (the cited text, when known) lets a `changed` check report the closest passage. */
export const VerifiableCitationSchema = z.strictObject({
  ...CitationSchema.shape,
  ref: CitationSchema.shape.ref.optional(),
  text: z.string().optional(),
});
export type VerifiableCitation = z.input<typeof VerifiableCitationSchema>;

/**
 * The parts of a pack verification reads. Loose on purpose: a golden pack written by an older or newer
 * version of the package still verifies.
 */
export const VerifiablePackSchema = z
  .looseObject({
    schema: z.literal(PACK_SCHEMA_ID),
    items: z.array(z.looseObject({ text: z.string(), truncated: z.boolean(), pointer: z.boolean().optional() })),
    citations: z.array(CitationSchema),
  })
  .refine((pack) => pack.items.length === pack.citations.length, { message: 'a pack has one citation per item' });
export type VerifiablePack = z.input<typeof VerifiablePackSchema>;

export const VerifyCitationsOptionsSchema = z.strictObject({
  store: StoreSchema,
  citations: z.array(VerifiableCitationSchema).optional(),
  pack: VerifiablePackSchema.optional(),
  /** Read the store as these principals (a source they may not see is `missing`); `'all'`: a full view. Absent: anonymous. */
  principals: PrincipalsSchema.optional(),
  signal: AbortSignalSchema.optional(),
  /**
   * The most work one call may do, in characters of source text examined (indexes built, placements compared,
   * passages scored); past it the call fails with `too_large` (default `DEFAULT_VERIFY_WORK_BUDGET`).
   */
  workBudget: z.number().int().positive().optional(),
});
export type VerifyCitationsOptions = z.input<typeof VerifyCitationsOptionsSchema>;

/**
 * The default work budget of one `verifyCitations` call: enough for a pack's citations over sources of
 * megabytes each, while one request of hostile citations stops at about a second of CPU.
 */
const DEFAULT_VERIFY_WORK_BUDGET = 200_000_000;

/** Sources read at once: each is one store round trip. */
const CONCURRENCY = 4;
/** Work between two yields to the event loop, so other requests run while a large check goes on. */
const YIELD_EVERY = 500_000;

interface Cited {
  ref: number | null;
  sourceId: string;
  chunkId: string;
  version: string | null;
  span: Span | null;
  textSha256: string;
  /** The exact cited text, when known (its hash matches). */
  text: string | null;
  /** Some of the cited text (a cut or sentence-selected item), for the closest passage only. */
  hint: string | null;
}

/**
 * Checks each citation against the source's current chunks, in input order: `current`, `moved`,
 * `changed` (with the closest passage: word 1- to 5-gram containment) or `missing`. Reads each distinct source once with
 * `store.getChunks` under `principals`, so restricted sources answer `missing` like deleted ones.
 *
 * A moved text is found through indexes of the source (its chunk hashes, the words its chunks start with, its
 * sentence boundaries) rather than by trying every offset, and the closest passage through an index of the
 * chunks' word n-grams; the work of one call is bounded by `workBudget` (`too_large` past it), and the call
 * yields to the event loop as it goes, so a large check never holds up other requests.
 *
 * @example
 * const checks = await verifyCitations({ store, pack });
 * checks.filter((c) => c.status === 'changed' || c.status === 'missing');
 */
export async function verifyCitations(options: VerifyCitationsOptions): Promise<CitationCheck[]> {
  const parsed = parseOrThrow(VerifyCitationsOptionsSchema, options, 'verifyCitations options');
  if ((parsed.citations === undefined) === (parsed.pack === undefined)) throw invalidInput('Give exactly one of pack or citations');
  const store = parsed.store;
  if (typeof store.getChunks !== 'function') {
    throw new LitmPackError('unsupported', 'verifyCitations needs a store with getChunks (MemoryHybridStore or QdrantHybridStore)');
  }
  const work = new Work(parsed.workBudget ?? DEFAULT_VERIFY_WORK_BUDGET, parsed.signal);
  const cited =
    parsed.pack !== undefined ? fromPack(parsed.pack, work) : (parsed.citations ?? []).map((citation) => fromCitation(citation, work));
  const sourceIds = [...new Set(cited.map((c) => c.sourceId))];
  const views = new Map<string, SourceView>();
  await runBounded(sourceIds, CONCURRENCY, parsed.signal, async (sourceId) => {
    const request = {
      sourceIds: [sourceId],
      limit: GET_CHUNKS_MAX_LIMIT,
      ...(parsed.principals ? { principals: parsed.principals } : {}),
      ...(parsed.signal ? { signal: parsed.signal } : {}),
    };
    const chunks = await store.getChunks!(request);
    if (chunks.length >= GET_CHUNKS_MAX_LIMIT) {
      throw new LitmPackError(
        'too_large',
        `Source ${sourceId} has more than ${GET_CHUNKS_MAX_LIMIT} chunks; it cannot be verified in one read`,
      );
    }
    views.set(
      sourceId,
      new SourceView(
        [...chunks].sort((a, b) => a.span.start - b.span.start),
        work,
      ),
    );
  });
  const checks: CitationCheck[] = [];
  for (const c of cited) {
    checks.push(await checkOne(c, views.get(c.sourceId) ?? EMPTY));
    await work.pause();
  }
  return checks;
}

/**
 * The work of one call, in characters examined: charged as it is done, a `too_large` past the budget, and a
 * yield to the event loop every `YIELD_EVERY` (the checks are synchronous in between).
 */
class Work {
  private done = 0;
  private sinceYield = 0;

  constructor(
    private readonly budget: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  charge(units: number): void {
    this.done += units;
    this.sinceYield += units;
    if (this.done > this.budget) {
      throw new LitmPackError(
        'too_large',
        `Verifying these citations needs more than ${this.budget.toLocaleString('en-US')} characters of work (citations × the size of their sources); verify fewer citations at once, or raise workBudget`,
        { details: { workBudget: this.budget } },
      );
    }
  }

  /** Lets other work run when enough was done since the last pause. */
  async pause(): Promise<void> {
    if (this.sinceYield < YIELD_EVERY) return;
    this.sinceYield = 0;
    // A macrotask, not a microtask: timers and I/O callbacks of other requests run in between.
    await new Promise<void>((resolve) => (globalThis.setImmediate === undefined ? setTimeout(resolve, 0) : setImmediate(resolve)));
    throwIfAborted(this.signal);
  }
}

function fromCitation(citation: z.output<typeof VerifiableCitationSchema>, work: Work): Cited {
  if (citation.text !== undefined) work.charge(citation.text.length);
  const text = citation.text !== undefined && sha256Hex(citation.text) === citation.textSha256 ? citation.text : null;
  return {
    ref: citation.ref ?? null,
    sourceId: citation.sourceId,
    chunkId: citation.chunkId,
    version: citation.version ?? null,
    span: citation.span ?? null,
    textSha256: citation.textSha256,
    text,
    hint: text === null && citation.text !== undefined && citation.text !== '' ? citation.text : null,
  };
}

/** A pack item's text is the cited text when whole; a cut or selected one still helps find the closest passage. */
function fromPack(pack: z.output<typeof VerifiablePackSchema>, work: Work): Cited[] {
  return pack.citations.map((citation, index) => {
    const item = pack.items[index]!;
    return fromCitation({ ...citation, ...(item.text === '' ? {} : { text: item.text }) }, work);
  });
}

async function checkOne(cited: Cited, view: SourceView): Promise<CitationCheck> {
  const chunks = view.chunks;
  // One key order for every status, so JSON lines of checks line up.
  const check = (status: CitationStatus, span: Span | null, closest: ClosestPassage | null): CitationCheck => ({
    ref: cited.ref,
    sourceId: cited.sourceId,
    chunkId: cited.chunkId,
    status,
    citedVersion: cited.version,
    currentVersion: status === 'missing' ? null : (chunks[0]!.version ?? null),
    citedSpan: cited.span === null ? null : { start: cited.span.start, end: cited.span.end },
    span,
    closest,
  });
  if (chunks.length === 0) return check('missing', null, null);
  if (cited.span !== null && view.holds(cited.span.start, cited.span.end, cited)) return check('current', { ...cited.span }, null);
  if (cited.span === null) {
    // A citation without a span (from a foreign store) is current while its chunk is, unchanged.
    const same = view.chunkById(cited.chunkId);
    if (same !== undefined && same.textSha256 === cited.textSha256) return check('current', { ...same.span }, null);
  }
  const found = await findElsewhere(view, cited);
  if (found !== null) return check('moved', found, null);
  return check('changed', null, await view.closestPassage(cited));
}

/**
 * Where the cited text is now, nearest the cited span: a chunk with the cited hash (an index of chunk hashes),
 * else a placement at a word start whose first word is the cited text's (an index of chunk words), or, with the
 * hash alone, a placement from a sentence boundary to one the cited length away (an index of sentence
 * boundaries). Candidates are tried nearest first, so the first that holds the text is the answer.
 */
async function findElsewhere(view: SourceView, cited: Cited): Promise<Span | null> {
  const anchor = cited.span?.start ?? 0;
  const whole = view.spansWithHash(cited.textSha256);
  if (whole.length > 0)
    return {
      ...whole[
        nearest(
          whole.map((span) => span.start),
          anchor,
          () => true,
        )
      ]!,
    };
  const placed = (starts: readonly number[], length: number, accept: (at: number) => boolean): Span | null => {
    const index = nearest(starts, anchor, accept, view.work);
    return index === -1 ? null : { start: starts[index]!, end: starts[index]! + length };
  };
  if (cited.text !== null) {
    const length = cited.text.length;
    if (length === 0) return null;
    return placed(await view.startsLike(cited.text), length, (at) => view.holds(at, at + length, cited));
  }
  const length = cited.span === null ? null : cited.span.end - cited.span.start;
  if (length === null || length === 0) return null;
  const { starts, ends } = await view.sentenceBoundaries();
  return placed(starts, length, (at) => ends.has(at + length) && view.holds(at, at + length, cited));
}

/**
 * The index of the first of `positions` (ascending) for which `accept` holds, nearest `anchor` first (ties: the
 * earlier), or -1.
 */
function nearest(positions: readonly number[], anchor: number, accept: (at: number) => boolean, work?: Work): number {
  // Two cursors walking outward from the anchor.
  let right = lowerBound(positions, anchor);
  let left = right - 1;
  let tried = 0;
  try {
    while (left >= 0 || right < positions.length) {
      const takeLeft = right >= positions.length || (left >= 0 && anchor - positions[left]! <= positions[right]! - anchor);
      const index = takeLeft ? left-- : right++;
      tried += 1;
      if (accept(positions[index]!)) return index;
    }
    return -1;
  } finally {
    work?.charge(tried);
  }
}

/** The first index of `sorted` whose value is >= `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Word n-gram widths the closest-passage score averages over. */
const GRAMS = [1, 2, 3, 4, 5] as const;

/** A word's first characters, the key of the word index (a word shorter than this is its own key). */
const KEY_CHARS = 6;

const isSpace = (code: number) => code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code > 0x7f && /\s/u.test(String.fromCharCode(code)));
/** Sentence-ending punctuation, and the closing quotes and brackets that may follow it (as the chunker cuts). */
const TERMINAL = new Set(['.', '!', '?', '…', '。', '！', '？']);
const CLOSERS = new Set(['"', "'", '”', '’', ')', ']']);

/**
 * A word's key: the run of non-space characters at `at`, at most `KEY_CHARS` of it, and whether the word ended
 * there (at a space; at the end of the text too when `endIsWordEnd`: a chunk's last word ends with it, a cited
 * text's may go on in the source).
 */
function keyAt(text: string, at: number, endIsWordEnd: boolean): { key: string; whole: boolean } {
  let end = at;
  while (end < text.length && end - at < KEY_CHARS && !isSpace(text.charCodeAt(end))) end += 1;
  return { key: text.slice(at, end), whole: end === text.length ? endIsWordEnd : isSpace(text.charCodeAt(end)) };
}

interface GramIndex {
  /** Per n (1..5): gram hash → the chunks holding it, ascending. */
  postings: Map<number, number[]>[];
}

/**
 * A source's current text as the store keeps it: chunk texts at their spans. Between two chunks lies
 * text no chunk holds (the whitespace between paragraphs, headings). A placement across such a gap is
 * only accepted between chunks of the same section (so no heading lies between them), with the gap
 * read as the whitespace the cited text has there (or, when the cited text is not known, as line
 * breaks): the store does not keep that whitespace, so a change of it alone is not seen.
 *
 * The indexes are built on first use, each once per call, and charged to the call's work.
 */
class SourceView {
  readonly chunks: readonly ChunkRecord[];
  readonly work: Work;
  private byHash: Map<string, Span[]> | undefined;
  private byId: Map<string, ChunkRecord> | undefined;
  private words: Map<string, number[]> | undefined;
  private shortStarts: number[] | undefined;
  private boundaries: { starts: number[]; ends: Set<number> } | undefined;
  private grams: GramIndex | undefined;

  constructor(chunks: readonly ChunkRecord[], work: Work) {
    this.chunks = chunks;
    this.work = work;
  }

  chunkById(id: string): ChunkRecord | undefined {
    this.byId ??= new Map(this.chunks.map((chunk) => [chunk.id, chunk]));
    return this.byId.get(id);
  }

  /** The spans of the chunks whose text has this hash, in text order. */
  spansWithHash(textSha256: string): Span[] {
    if (this.byHash === undefined) {
      this.work.charge(this.chunks.length);
      this.byHash = new Map();
      for (const chunk of this.chunks) {
        const list = this.byHash.get(chunk.textSha256) ?? [];
        list.push({ ...chunk.span });
        this.byHash.set(chunk.textSha256, list);
      }
    }
    return this.byHash.get(textSha256) ?? [];
  }

  /**
   * Word starts (a chunk's start, or a non-space after a space) where `text` may begin: those whose word has
   * the key of `text`'s first word, ascending. A text that is one short word without a space may end inside a
   * longer word, so it is tried at every word start.
   */
  async startsLike(text: string): Promise<number[]> {
    await this.buildWordIndex();
    const { key, whole } = keyAt(text, 0, false);
    if (key.length < KEY_CHARS && !whole) return this.shortStarts!;
    return this.words!.get(key) ?? [];
  }

  private async buildWordIndex(): Promise<void> {
    if (this.words !== undefined) return;
    const words = new Map<string, number[]>();
    const shortStarts: number[] = [];
    for (const chunk of this.chunks) {
      const { text } = chunk;
      await this.work.pause();
      this.work.charge(text.length);
      for (let i = 0; i < text.length; i += 1) {
        if (isSpace(text.charCodeAt(i)) || (i > 0 && !isSpace(text.charCodeAt(i - 1)))) continue;
        const start = chunk.span.start + i;
        shortStarts.push(start);
        const { key } = keyAt(text, i, true);
        const list = words.get(key);
        if (list === undefined) words.set(key, [start]);
        else list.push(start);
      }
    }
    this.words = words;
    this.shortStarts = shortStarts;
  }

  /**
   * Sentence starts (ascending: chunk starts, and the first non-space after a sentence boundary) and ends (chunk
   * ends, and the end of the text before a sentence boundary). A sentence boundary is a run of spaces inside a
   * chunk after terminal punctuation (and closing quotes or brackets), or one holding a line break: where the
   * chunker cuts sentences, and where paragraphs meet.
   */
  async sentenceBoundaries(): Promise<{ starts: number[]; ends: Set<number> }> {
    if (this.boundaries !== undefined) return this.boundaries;
    const starts: number[] = [];
    const ends = new Set<number>();
    for (const chunk of this.chunks) {
      const { text } = chunk;
      await this.work.pause();
      this.work.charge(text.length);
      const base = chunk.span.start;
      starts.push(base);
      let terminal = false;
      let runStart = -1;
      let newline = false;
      for (let i = 0; i < text.length; i += 1) {
        const char = text[i]!;
        if (isSpace(text.charCodeAt(i))) {
          if (runStart === -1) {
            runStart = i;
            newline = false;
          }
          if (char === '\n' || char === '\r') newline = true;
          continue;
        }
        if (runStart !== -1) {
          if (terminal || newline) {
            ends.add(base + runStart);
            starts.push(base + i);
          }
          runStart = -1;
          terminal = false;
        }
        terminal = TERMINAL.has(char) || (terminal && CLOSERS.has(char));
      }
      ends.add(chunk.span.end);
    }
    this.boundaries = { starts, ends };
    return this.boundaries;
  }

  /** True when the text at [start, end) is the cited text (its hash, or the text itself when known). */
  holds(start: number, end: number, cited: Cited): boolean {
    if (cited.text !== null) {
      if (end - start !== cited.text.length) return false;
      return this.equalsAt(start, cited.text);
    }
    // Without the cited text, the commonest separators: a space or a line break within a paragraph,
    // blank lines between paragraphs, or all line breaks, or CRLF line breaks.
    const fills: Fill[] = [
      (_, gap) => (gap.end - gap.start === 1 ? ' ' : '\n'),
      () => '\n',
      (offset, gap) => ((offset - gap.start) % 2 === 0 ? '\r' : '\n'),
    ];
    for (const fill of fills) {
      const text = this.textAt(start, end, fill);
      if (text === null) continue;
      this.work.charge(text.length);
      if (sha256Hex(text) === cited.textSha256) return true;
    }
    return false;
  }

  /**
   * Whether the text at `start` is `text`: chunk texts compared character by character, gaps between two chunks
   * of one section accepted where `text` has whitespace. Stops at the first difference (charged what it read).
   */
  private equalsAt(start: number, text: string): boolean {
    const end = start + text.length;
    let index = this.chunkAtOrAfter(start);
    let position = start;
    let compared = 0;
    try {
      for (; index < this.chunks.length; index += 1) {
        const chunk = this.chunks[index]!;
        if (chunk.span.start > position) {
          const previous = this.chunks[index - 1];
          if (previous === undefined || chunk.span.start >= end || !sameSection(previous, chunk)) return false;
          for (; position < chunk.span.start; position += 1, compared += 1) {
            if (!/^\s$/u.test(text.charAt(position - start))) return false;
          }
        }
        const to = Math.min(end, chunk.span.end);
        const offset = chunk.span.start;
        for (; position < to; position += 1, compared += 1) {
          if (chunk.text.charCodeAt(position - offset) !== text.charCodeAt(position - start)) return false;
        }
        if (position >= end) return true;
      }
      return false;
    } finally {
      this.work.charge(compared + 1);
    }
  }

  /** The index of the first chunk that ends after `start` (chunks are sorted and do not overlap). */
  private chunkAtOrAfter(start: number): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.chunks[mid]!.span.end <= start) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The text at [start, end), with gaps read through `fill`; null when some of it is not known. */
  textAt(start: number, end: number, fill: Fill): string | null {
    if (end <= start) return null;
    let out = '';
    let position = start;
    for (let index = this.chunkAtOrAfter(start); index < this.chunks.length; index += 1) {
      const chunk = this.chunks[index]!;
      if (chunk.span.start > position) {
        // A gap: only between two chunks of one section, only whitespace, and never at either end.
        const previous = this.chunks[index - 1];
        if (previous === undefined || chunk.span.start >= end || !sameSection(previous, chunk)) return null;
        const gap = { start: previous.span.end, end: chunk.span.start };
        for (let offset = position; offset < chunk.span.start; offset += 1) {
          const char = fill(offset, gap);
          if (!/^\s$/u.test(char)) return null;
          out += char;
        }
        position = chunk.span.start;
      }
      const to = Math.min(end, chunk.span.end);
      out += chunk.text.slice(position - chunk.span.start, to - chunk.span.start);
      position = to;
      if (position >= end) return out;
    }
    return null;
  }

  /**
   * The current chunk most like the cited text (ties: nearest the cited span, then the earlier): the share of the
   * cited text's word n-grams each chunk holds, counted through an index of the chunks' n-grams, so only chunks
   * sharing some n-gram are looked at.
   */
  async closestPassage(cited: Cited): Promise<ClosestPassage | null> {
    const text = cited.text ?? cited.hint;
    if (text === null) return null;
    this.work.charge(text.length * GRAMS.length);
    const normalised = normalizeText(text);
    const grams = GRAMS.map((n) => shingleHashes(normalised, n));
    if (grams[0]!.length === 0) return null;
    const index = await this.gramIndex();
    // shared[n][chunk]: how many of the cited n-grams the chunk holds.
    const shared = GRAMS.map(() => new Map<number, number>());
    GRAMS.forEach((_, i) => {
      for (const gram of grams[i]!) {
        const holders = index.postings[i]!.get(gram);
        if (holders === undefined) continue;
        this.work.charge(holders.length);
        const counts = shared[i]!;
        for (const holder of holders) counts.set(holder, (counts.get(holder) ?? 0) + 1);
      }
    });
    const anchor = cited.span?.start ?? 0;
    const distance = (chunk: ChunkRecord) => Math.abs(chunk.span.start - anchor);
    // Chunks sharing nothing score 0: the nearest of all chunks stands for them.
    let best: { index: number; score: number } = { index: this.nearestChunk(anchor), score: 0 };
    const touched = new Set<number>();
    for (const counts of shared) for (const holder of counts.keys()) touched.add(holder);
    for (const holder of touched) {
      // The score as the old full scan summed it (n = 1..5 in order), so scores stay the same to the bit.
      let sum = 0;
      GRAMS.forEach((_, i) => {
        const length = grams[i]!.length;
        if (length > 0) sum += (shared[i]!.get(holder) ?? 0) / length;
      });
      const score = sum / GRAMS.length;
      const chunk = this.chunks[holder]!;
      const incumbent = this.chunks[best.index]!;
      if (
        score > best.score ||
        (score === best.score &&
          (distance(chunk) < distance(incumbent) || (distance(chunk) === distance(incumbent) && holder < best.index)))
      ) {
        best = { index: holder, score };
      }
    }
    const chunk = this.chunks[best.index]!;
    return { chunkId: chunk.id, span: { ...chunk.span }, score: best.score, text: chunk.text };
  }

  /** The chunk nearest `anchor` by its start (ties: the earlier). */
  private nearestChunk(anchor: number): number {
    return nearest(
      this.chunks.map((chunk) => chunk.span.start),
      anchor,
      () => true,
    );
  }

  private async gramIndex(): Promise<GramIndex> {
    if (this.grams !== undefined) return this.grams;
    const postings = GRAMS.map(() => new Map<number, number[]>());
    for (const [index, chunk] of this.chunks.entries()) {
      await this.work.pause();
      this.work.charge(chunk.text.length * GRAMS.length);
      const normalised = normalizeText(chunk.text);
      GRAMS.forEach((n, i) => {
        for (const gram of shingleHashes(normalised, n)) {
          const list = postings[i]!.get(gram);
          if (list === undefined) postings[i]!.set(gram, [index]);
          else list.push(index);
        }
      });
    }
    this.grams = { postings };
    return this.grams;
  }
}

const EMPTY = new SourceView([], new Work(Number.POSITIVE_INFINITY, undefined));

/** The character assumed at `offset` of a gap between two chunks. */
type Fill = (offset: number, gap: Span) => string;

function sameSection(a: ChunkRecord, b: ChunkRecord): boolean {
  return a.section.length === b.section.length && a.section.every((title, i) => title === b.section[i]);
}
