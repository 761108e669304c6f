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
import { normalizeText, shingleHashes, sharedCount } from '../core/text.js';
import { GET_CHUNKS_MAX_LIMIT, type ChunkRecord, PrincipalsSchema } from '../store/schemas.js';
import { AbortSignalSchema, runBounded } from '../base/abort.js';

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

export const VerifyCitationsOptionsSchema = z
  .strictObject({
    store: StoreSchema,
    citations: z.array(VerifiableCitationSchema).optional(),
    pack: VerifiablePackSchema.optional(),
    /** Read the store as these principals (a source they may not see is `missing`); `'all'`: a full view. Absent: anonymous. */
    principals: PrincipalsSchema.optional(),
    signal: AbortSignalSchema.optional(),
  });
export type VerifyCitationsOptions = z.input<typeof VerifyCitationsOptionsSchema>;

/** Sources read at once: each is one store round trip. */
const CONCURRENCY = 4;

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
  const cited = parsed.pack !== undefined ? fromPack(parsed.pack) : (parsed.citations ?? []).map(fromCitation);
  const sourceIds = [...new Set(cited.map((c) => c.sourceId))];
  const views = new Map<string, ChunkRecord[]>();
  await runBounded(sourceIds, CONCURRENCY, parsed.signal, async (sourceId) => {
    const request = { sourceIds: [sourceId], limit: GET_CHUNKS_MAX_LIMIT, ...(parsed.principals ? { principals: parsed.principals } : {}), ...(parsed.signal ? { signal: parsed.signal } : {}) };
    const chunks = await store.getChunks!(request);
    if (chunks.length >= GET_CHUNKS_MAX_LIMIT) {
      throw new LitmPackError('too_large', `Source ${sourceId} has more than ${GET_CHUNKS_MAX_LIMIT} chunks; it cannot be verified in one read`);
    }
    views.set(sourceId, [...chunks].sort((a, b) => a.span.start - b.span.start));
  });
  return cited.map((c) => checkOne(c, views.get(c.sourceId) ?? []));
}

function fromCitation(citation: z.output<typeof VerifiableCitationSchema>): Cited {
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
function fromPack(pack: z.output<typeof VerifiablePackSchema>): Cited[] {
  return pack.citations.map((citation, index) => {
    const item = pack.items[index]!;
    return fromCitation({ ...citation, ...(item.text === '' ? {} : { text: item.text }) });
  });
}

function checkOne(cited: Cited, chunks: readonly ChunkRecord[]): CitationCheck {
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
  const view = new SourceView(chunks);
  const matches = (start: number, end: number) => view.holds(start, end, cited);
  if (cited.span !== null && matches(cited.span.start, cited.span.end)) return check('current', { ...cited.span }, null);
  if (cited.span === null) {
    // A citation without a span (from a foreign store) is current while its chunk is, unchanged.
    const same = chunks.find((c) => c.id === cited.chunkId && c.textSha256 === cited.textSha256);
    if (same !== undefined) return check('current', { ...same.span }, null);
  }
  const found = findElsewhere(view, cited, matches);
  if (found !== null) return check('moved', found, null);
  return check('changed', null, closestPassage(chunks, cited));
}

/**
 * Where the cited text is now, nearest the cited span: a chunk with the cited hash, else any placement
 * starting at a word start inside a chunk.
 */
function findElsewhere(view: SourceView, cited: Cited, matches: (start: number, end: number) => boolean): Span | null {
  const near = (spans: Span[]) => {
    const anchor = cited.span?.start ?? 0;
    return spans.sort((a, b) => Math.abs(a.start - anchor) - Math.abs(b.start - anchor) || a.start - b.start)[0] ?? null;
  };
  const whole = view.chunks.filter((c) => c.textSha256 === cited.textSha256).map((c) => ({ ...c.span }));
  if (whole.length > 0) return near(whole);
  const length = cited.text?.length ?? (cited.span === null ? null : cited.span.end - cited.span.start);
  if (length === null || length === 0) return null;
  const found: Span[] = [];
  for (const start of view.wordStarts()) {
    if (matches(start, start + length)) found.push({ start, end: start + length });
  }
  return near(found);
}

/** Word n-gram widths the closest-passage score averages over. */
const GRAMS = [1, 2, 3, 4, 5] as const;

/**
 * Share of `cited`'s word n-grams found in `passage`, averaged over n = 1..5: 5-gram containment alone
 * scores 0 for a sentence with one word changed every few words; the shorter grams still rank it first.
 */
function containment(cited: readonly Uint32Array[], passage: string): number {
  const normalised = normalizeText(passage);
  let sum = 0;
  GRAMS.forEach((n, i) => {
    const grams = cited[i]!;
    if (grams.length > 0) sum += sharedCount(grams, shingleHashes(normalised, n)) / grams.length;
  });
  return sum / GRAMS.length;
}

/** The current chunk most like the cited text (ties: nearest the cited span). */
function closestPassage(chunks: readonly ChunkRecord[], cited: Cited): ClosestPassage | null {
  const text = cited.text ?? cited.hint;
  if (text === null) return null;
  const normalised = normalizeText(text);
  const grams = GRAMS.map((n) => shingleHashes(normalised, n));
  if (grams[0]!.length === 0) return null;
  const anchor = cited.span?.start ?? 0;
  let best: { chunk: ChunkRecord; score: number } | null = null;
  for (const chunk of chunks) {
    const score = containment(grams, chunk.text);
    if (
      best === null ||
      score > best.score ||
      (score === best.score && Math.abs(chunk.span.start - anchor) < Math.abs(best.chunk.span.start - anchor))
    ) {
      best = { chunk, score };
    }
  }
  if (best === null) return null;
  return { chunkId: best.chunk.id, span: { ...best.chunk.span }, score: best.score, text: best.chunk.text };
}

/**
 * A source's current text as the store keeps it: chunk texts at their spans. Between two chunks lies
 * text no chunk holds (the whitespace between paragraphs, headings). A placement across such a gap is
 * only accepted between chunks of the same section (so no heading lies between them), with the gap
 * read as the whitespace the cited text has there (or, when the cited text is not known, as line
 * breaks): the store does not keep that whitespace, so a change of it alone is not seen.
 */
class SourceView {
  readonly chunks: readonly ChunkRecord[];

  constructor(chunks: readonly ChunkRecord[]) {
    this.chunks = chunks;
  }

  /** Word starts inside chunks: where a cited text can begin (it began at a chunk or word start). */
  *wordStarts(): Generator<number> {
    for (const chunk of this.chunks) {
      const { text } = chunk;
      for (let i = 0; i < text.length; i += 1) {
        if (i === 0 || (/\s/u.test(text[i - 1]!) && !/\s/u.test(text[i]!))) yield chunk.span.start + i;
      }
    }
  }

  /** True when the text at [start, end) is the cited text (its hash, or the text itself when known). */
  holds(start: number, end: number, cited: Cited): boolean {
    const fills: Fill[] = cited.text !== null
      ? [(offset) => cited.text!.charAt(offset - start)]
      : // Without the cited text, the commonest separators: a space or a line break within a paragraph,
        // blank lines between paragraphs, or all line breaks, or CRLF line breaks.
        [
          (_, gap) => (gap.end - gap.start === 1 ? ' ' : '\n'),
          () => '\n',
          (offset, gap) => ((offset - gap.start) % 2 === 0 ? '\r' : '\n'),
        ];
    for (const fill of fills) {
      const text = this.textAt(start, end, fill);
      if (text === null) continue;
      if (cited.text !== null ? text === cited.text : sha256Hex(text) === cited.textSha256) return true;
    }
    return false;
  }

  /** The text at [start, end), with gaps read through `fill`; null when some of it is not known. */
  textAt(start: number, end: number, fill: Fill): string | null {
    if (end <= start) return null;
    // The first chunk that ends after `start` (chunks are sorted and do not overlap).
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.chunks[mid]!.span.end <= start) lo = mid + 1;
      else hi = mid;
    }
    let out = '';
    let position = start;
    for (let index = lo; index < this.chunks.length; index += 1) {
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
}

/** The character assumed at `offset` of a gap between two chunks. */
type Fill = (offset: number, gap: Span) => string;

function sameSection(a: ChunkRecord, b: ChunkRecord): boolean {
  return a.section.length === b.section.length && a.section.every((title, i) => title === b.section[i]);
}
