import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryHybridStore, type ChunkRecord, verifyCitations, type CitationStatus, type VerifiableCitation } from '../src/index.js';

// Documents are sections of paragraphs of sentences over a small vocabulary (so texts repeat and edits can
// recreate text found elsewhere); small chunks make re-ingest regroup paragraphs across chunk boundaries.
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
type Doc = { title: string; paragraphs: string[] }[];

const sentence = fc
  .array(fc.constantFrom(...WORDS), { minLength: 2, maxLength: 7 })
  .map((words) => `${words.join(' ')}.`.replace(/^./, (c) => c.toUpperCase()));
const paragraph = fc.array(sentence, { minLength: 1, maxLength: 4 }).map((s) => s.join(' '));
const doc: fc.Arbitrary<Doc> = fc.array(
  fc.record({ title: fc.constantFrom('Intro', 'Usage', 'Notes'), paragraphs: fc.array(paragraph, { minLength: 1, maxLength: 5 }) }),
  { minLength: 1, maxLength: 3 },
);

function render(d: Doc): string {
  return d.map((s) => `## ${s.title}\n\n${s.paragraphs.join('\n\n')}`).join('\n\n');
}

type Edit =
  | { op: 'insert'; section: number; at: number; text: string }
  | { op: 'delete'; section: number; at: number }
  | { op: 'replace-word'; section: number; at: number; word: number; with: string }
  | { op: 'move'; section: number; at: number; to: number }
  | { op: 'heading'; section: number; at: number; title: string }
  | { op: 'delete-source' };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant('insert' as const), section: fc.nat(), at: fc.nat(), text: paragraph }),
  fc.record({ op: fc.constant('delete' as const), section: fc.nat(), at: fc.nat() }),
  fc.record({ op: fc.constant('replace-word' as const), section: fc.nat(), at: fc.nat(), word: fc.nat(), with: fc.constantFrom(...WORDS) }),
  fc.record({ op: fc.constant('move' as const), section: fc.nat(), at: fc.nat(), to: fc.nat() }),
  fc.record({ op: fc.constant('heading' as const), section: fc.nat(), at: fc.nat(), title: fc.constantFrom('Intro', 'Usage', 'Extra') }),
  { arbitrary: fc.constant({ op: 'delete-source' as const }), weight: 1 },
);

function apply(d: Doc, e: Edit): Doc | null {
  if (e.op === 'delete-source') return null;
  const out = d.map((s) => ({ title: s.title, paragraphs: [...s.paragraphs] }));
  const section = out[e.section % out.length]!;
  const at = e.at % (section.paragraphs.length + (e.op === 'insert' ? 1 : 0));
  switch (e.op) {
    case 'insert':
      section.paragraphs.splice(at, 0, e.text);
      break;
    case 'delete':
      if (section.paragraphs.length > 1) section.paragraphs.splice(at, 1);
      break;
    case 'replace-word': {
      const words = section.paragraphs[at]!.split(' ');
      words[e.word % words.length] = e.with;
      section.paragraphs[at] = words.join(' ');
      break;
    }
    case 'move': {
      const [moved] = section.paragraphs.splice(at, 1);
      section.paragraphs.splice(e.to % (section.paragraphs.length + 1), 0, moved!);
      break;
    }
    case 'heading': {
      if (at === 0) break;
      const rest = section.paragraphs.splice(at);
      out.splice(out.indexOf(section) + 1, 0, { title: e.title, paragraphs: rest });
      break;
    }
  }
  return out;
}

/** Ground truth from the texts alone: where is the cited text now? (It began at a word start before.) */
function truth(after: string | null, chunk: ChunkRecord): { status: CitationStatus; starts: number[] } {
  if (after === null) return { status: 'missing', starts: [] };
  if (after.slice(chunk.span.start, chunk.span.end) === chunk.text) return { status: 'current', starts: [chunk.span.start] };
  const starts: number[] = [];
  for (let i = after.indexOf(chunk.text); i !== -1; i = after.indexOf(chunk.text, i + 1)) {
    if (i === 0 || /\s/.test(after[i - 1]!)) starts.push(i);
  }
  return { status: starts.length > 0 ? 'moved' : 'changed', starts };
}

describe('verifyCitations against ground truth from the texts (random edits, re-ingest)', () => {
  it('agrees with the texts on every citation, and reports where moved text is now', async () => {
    let seen = { current: 0, moved: 0, changed: 0, missing: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(doc, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), edit), { minLength: 1, maxLength: 4 }),
        async (docs, edits) => {
          const store = new MemoryHybridStore({ chunkTokens: 24 });
          const ids = docs.map((_, i) => `docs/${i}.md`);
          await store.addDocuments(docs.map((d, i) => ({ id: ids[i]!, text: render(d), version: 'v1' })));
          const cited = await store.getChunks({ sourceIds: ids });

          const after: (Doc | null)[] = [...docs];
          for (const [which, e] of edits) {
            const i = which % after.length;
            if (after[i] !== null) after[i] = apply(after[i]!, e);
          }
          const removed = ids.filter((_, i) => after[i] === null);
          if (removed.length > 0) await store.deleteSources(removed);
          await store.addDocuments(after.flatMap((d, i) => (d === null ? [] : [{ id: ids[i]!, text: render(d), version: 'v2' }])));

          const citations: VerifiableCitation[] = cited.map((c, i) => ({
            ref: i + 1,
            sourceId: c.sourceId,
            chunkId: c.id,
            version: c.version,
            span: c.span,
            textSha256: c.textSha256,
            text: c.text,
          }));
          const withText = await verifyCitations({ store, citations });
          const hashOnly = await verifyCitations({ store, citations: citations.map(({ text: _text, ...rest }) => rest) });
          cited.forEach((chunk, i) => {
            const d = after[ids.indexOf(chunk.sourceId)];
            const text = d === null || d === undefined ? null : render(d);
            const expected = truth(text, chunk);
            const check = withText[i]!;
            expect(check.status, `${chunk.id} ${JSON.stringify(chunk.text)}`).toBe(expected.status);
            seen = { ...seen, [check.status]: seen[check.status] + 1 };
            expect(check.citedVersion).toBe('v1');
            expect(check.currentVersion).toBe(expected.status === 'missing' ? null : 'v2');
            if (check.status === 'current' || check.status === 'moved') {
              expect(expected.starts).toContain(check.span!.start);
              expect(text!.slice(check.span!.start, check.span!.end)).toBe(chunk.text);
            }
            if (check.status === 'changed') {
              expect(check.closest).not.toBeNull();
              expect(text!.slice(check.closest!.span.start, check.closest!.span.end)).toBe(check.closest!.text);
            }
            // With the hash alone the gaps between chunks are guessed, never trusted blindly: a claim of
            // current or moved is still true of the texts.
            const blind = hashOnly[i]!;
            if (blind.status === 'current' || blind.status === 'moved') {
              expect(text!.slice(blind.span!.start, blind.span!.end)).toBe(chunk.text);
            }
            if (blind.status === 'current') expect(expected.status).toBe('current');
            if (expected.status === 'missing') expect(blind.status).toBe('missing');
          });
        },
      ),
      { numRuns: 150 },
    );
    // The edits exercise every outcome.
    for (const status of ['current', 'moved', 'changed', 'missing'] as const) expect(seen[status]).toBeGreaterThan(0);
  }, 120_000);
});
