// Citation checks under hostile requests: citations whose text is nowhere in a large source (the hash alone, or
// a text of someone's choosing) cost about what ordinary checks of the same number of citations cost; a large
// check lets other requests run while it goes on; a check past its work budget is `too_large`. The indexes the
// checks use change no answer: a brute-force reference (every word start, every chunk scored) agrees.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLitmPackError, MemoryHybridStore, verifyCitations, type ChunkRecord, type VerifiableCitation } from '../src/index.js';
import { sha256Hex } from '../src/base/canonical.js';
import { normalizeText, sharedCount, shingleHashes } from '../src/core/text.js';

const WORDS = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
  'refund',
  'policy',
];

/** A source of `paragraphs` paragraphs of four sentences of twelve words, the same for a given seed. */
function corpus(paragraphs: number, seed = 1): string {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31), state / 2 ** 31);
  const sentence = () => `${Array.from({ length: 12 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ')}.`;
  return Array.from({ length: paragraphs }, () => Array.from({ length: 4 }, sentence).join(' ')).join('\n\n');
}

async function storeOf(text: string): Promise<{ store: MemoryHybridStore; chunks: ChunkRecord[] }> {
  const store = new MemoryHybridStore();
  await store.addDocuments([{ id: 'big.md', text, version: 'v1' }]);
  return { store, chunks: await store.getChunks({ sourceIds: ['big.md'] }) };
}

/** Citations of these chunks as they are (each current). */
const current = (chunks: readonly ChunkRecord[]): VerifiableCitation[] =>
  chunks.map((c) => ({ sourceId: c.sourceId, chunkId: c.id, span: c.span, textSha256: c.textSha256 }));

/** Citations by hash alone of text that is nowhere: spans a little longer than real chunks, a hash of nothing. */
const nowhere = (chunks: readonly ChunkRecord[]): VerifiableCitation[] =>
  chunks.map((c, i) => ({
    sourceId: c.sourceId,
    chunkId: c.id,
    span: { start: c.span.start, end: c.span.end + 1 + i },
    textSha256: 'f'.repeat(64),
  }));

/** Median CPU seconds (user + system) of `runs` calls, after one call to warm up. */
async function cpuOf(run: () => Promise<unknown>, runs = 3): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const before = process.cpuUsage();
    await run();
    const used = process.cpuUsage(before);
    times.push((used.user + used.system) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

describe('verifyCitations under hostile requests', () => {
  it('citations whose text is nowhere cost about what current ones cost (CPU ratio in the same run, not per offset of the source)', async () => {
    const { store, chunks } = await storeOf(corpus(600));
    const some = chunks.slice(0, 20);
    const ordinary = await cpuOf(() => verifyCitations({ store, citations: current(some) }));
    const hostile = await cpuOf(async () => {
      const checks = await verifyCitations({ store, citations: nowhere(some) });
      expect(checks.every((check) => check.status === 'changed')).toBe(true);
    });
    // Before the indexes, each such citation tried every word start of the source: over 1,000 times the
    // ordinary request here. Now it is one pass over the source for all of them.
    expect(hostile / Math.max(ordinary, 1e-3)).toBeLessThan(60);
  });

  it('a large check yields to the event loop: a small request started beside it finishes first', async () => {
    const { store, chunks } = await storeOf(corpus(6000));
    const small = await storeOf('Refunds are issued within 14 days.');
    const finished: string[] = [];
    const large = verifyCitations({ store, citations: nowhere(chunks.slice(0, 5)) }).then(() => finished.push('large'));
    const quick = verifyCitations({ store: small.store, citations: current(small.chunks) }).then(() => finished.push('small'));
    await Promise.all([large, quick]);
    expect(finished).toEqual(['small', 'large']);
  });

  it('a check past its work budget is too_large, saying how to fix it; the default budget takes an ordinary pack', async () => {
    const { store, chunks } = await storeOf(corpus(600));
    const error = await verifyCitations({ store, citations: nowhere(chunks.slice(0, 5)), workBudget: 10_000 }).catch((e: unknown) => e);
    expect(isLitmPackError(error, 'too_large')).toBe(true);
    expect((error as Error).message).toMatch(/workBudget/u);
    const checks = await verifyCitations({ store, citations: current(chunks) });
    expect(checks.map((check) => check.status)).toEqual(chunks.map(() => 'current'));
  });
});

// -------------------------------------------------------------------------------------------------
// The reference: the checks as they were before the indexes (every word start tried, every chunk scored).

function sameSection(a: ChunkRecord, b: ChunkRecord): boolean {
  return a.section.length === b.section.length && a.section.every((title, i) => title === b.section[i]);
}

function referenceTextAt(chunks: readonly ChunkRecord[], start: number, end: number, cited: string): string | null {
  let out = '';
  let position = start;
  let index = chunks.findIndex((chunk) => chunk.span.end > start);
  if (index === -1) return null;
  for (; index < chunks.length; index += 1) {
    const chunk = chunks[index]!;
    if (chunk.span.start > position) {
      const previous = chunks[index - 1];
      if (previous === undefined || chunk.span.start >= end || !sameSection(previous, chunk)) return null;
      for (let offset = position; offset < chunk.span.start; offset += 1) {
        const char = cited.charAt(offset - start);
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

function referenceMoved(chunks: readonly ChunkRecord[], text: string, anchor: number): number | null {
  const found: number[] = [];
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.text.length; i += 1) {
      if (i !== 0 && !(/\s/u.test(chunk.text[i - 1]!) && !/\s/u.test(chunk.text[i]!))) continue;
      const start = chunk.span.start + i;
      if (referenceTextAt(chunks, start, start + text.length, text) === text) found.push(start);
    }
  }
  return found.sort((a, b) => Math.abs(a - anchor) - Math.abs(b - anchor) || a - b)[0] ?? null;
}

function referenceClosest(chunks: readonly ChunkRecord[], text: string, anchor: number): { chunkId: string; score: number } | null {
  const grams = [1, 2, 3, 4, 5].map((n) => shingleHashes(normalizeText(text), n));
  if (grams[0]!.length === 0) return null;
  let best: { chunk: ChunkRecord; score: number } | null = null;
  for (const chunk of chunks) {
    let sum = 0;
    [1, 2, 3, 4, 5].forEach((n, i) => {
      if (grams[i]!.length > 0) sum += sharedCount(grams[i]!, shingleHashes(normalizeText(chunk.text), n)) / grams[i]!.length;
    });
    const score = sum / 5;
    if (
      best === null ||
      score > best.score ||
      (score === best.score && Math.abs(chunk.span.start - anchor) < Math.abs(best.chunk.span.start - anchor))
    ) {
      best = { chunk, score };
    }
  }
  return best === null ? null : { chunkId: best.chunk.id, score: best.score };
}

describe('the indexes change no answer', () => {
  const sentence = fc.array(fc.constantFrom(...WORDS.slice(0, 6)), { minLength: 1, maxLength: 6 }).map((w) => `${w.join(' ')}.`);
  const paragraph = fc.array(sentence, { minLength: 1, maxLength: 3 }).map((s) => s.join(' '));
  const page = fc.array(paragraph, { minLength: 1, maxLength: 8 }).map((p) => p.join('\n\n'));
  // A cited text: a run of words of the vocabulary (found or not), or a piece of the page itself.
  const citedText = fc.oneof(
    sentence,
    paragraph,
    fc.array(fc.constantFrom(...WORDS.slice(0, 6), 'al', 'ph', 'a.'), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')),
  );

  it('moved placements and closest passages are those of the brute-force reference', async () => {
    const seen = { moved: 0, changed: 0 };
    await fc.assert(
      fc.asyncProperty(page, fc.array(fc.tuple(citedText, fc.nat(400)), { minLength: 1, maxLength: 6 }), async (text, cites) => {
        const store = new MemoryHybridStore({ chunkTokens: 12 });
        await store.addDocuments([{ id: 'a.md', text, version: 'v1' }]);
        const chunks = [...(await store.getChunks({ sourceIds: ['a.md'] }))].sort((a, b) => a.span.start - b.span.start);
        const citations: VerifiableCitation[] = cites.map(([cited, at]) => ({
          sourceId: 'a.md',
          chunkId: 'a.md#0',
          // Never at its span: the check has to look elsewhere.
          span: { start: text.length + at, end: text.length + at + cited.length },
          textSha256: sha256Hex(cited),
          text: cited,
        }));
        const checks = await verifyCitations({ store, citations });
        checks.forEach((check, i) => {
          const [cited] = cites[i]!;
          const anchor = citations[i]!.span!.start;
          const moved = chunks.some((c) => c.textSha256 === sha256Hex(cited))
            ? chunks
                .filter((c) => c.textSha256 === sha256Hex(cited))
                .map((c) => c.span.start)
                .sort((a, b) => Math.abs(a - anchor) - Math.abs(b - anchor) || a - b)[0]!
            : referenceMoved(chunks, cited, anchor);
          seen[moved === null ? 'changed' : 'moved'] += 1;
          if (moved !== null) {
            expect(check.status).toBe('moved');
            expect(check.span!.start).toBe(moved);
          } else {
            expect(check.status).toBe('changed');
            const closest = referenceClosest(chunks, cited, anchor);
            expect(check.closest === null ? null : { chunkId: check.closest.chunkId, score: check.closest.score }).toEqual(closest);
          }
        });
      }),
      { numRuns: 200 },
    );
    // Both outcomes are exercised, many times.
    expect(seen.moved).toBeGreaterThan(50);
    expect(seen.changed).toBeGreaterThan(50);
  });
});
