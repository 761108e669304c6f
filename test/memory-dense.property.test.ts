// The dense arm's fast path (an int8 first pass with error bounds, then f32 rescoring of the rows that may be in
// the top k) must give exactly the ranking of an exact scan: the same ids, the same scores, ties by id, with the
// ACL and filters applied inside the scan, over several segments with dead rows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { denseCosine, toDenseQuery, toDenseVector } from '../src/memory/vectors.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import type { EmbeddingsLike } from '../src/store/embeddings.js';
import type { Filter } from '../src/store/filter.js';
import type { IngestDocument } from '../src/store/schemas.js';

interface Row {
  id: string;
  vector: number[];
  acl?: string[];
  group: string;
}

/** Embeddings that return a given vector for each text. */
class TableEmbeddings implements EmbeddingsLike {
  readonly vectors = new Map<string, number[]>();
  embedQuery(text: string): Promise<number[]> {
    return Promise.resolve(this.vectors.get(text)!);
  }
  embedDocuments(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((text) => this.vectors.get(text)!));
  }
}

const scalar = fc.integer({ min: -1000, max: 1000 }).map((n) => n / 1000);

/** Vectors that make the bounds work hard: random ones, near-duplicates of a few centres, exact duplicates, zeros. */
function vectors(dimension: number, count: number) {
  const centre = fc.array(scalar, { minLength: dimension, maxLength: dimension });
  return fc
    .tuple(
      fc.array(centre, { minLength: 1, maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.array(fc.integer({ min: -3, max: 3 }), { minLength: dimension, maxLength: dimension })), {
        minLength: count,
        maxLength: count,
      }),
    )
    .map(([centres, picks]) =>
      picks.map(([kind, which, noise]) => {
        const base = centres[which % centres.length]!;
        switch (kind % 5) {
          case 0:
            return base.map((x) => x); // a duplicate: ties
          case 1:
            return base.map((x, i) => x + noise[i]! * 1e-4); // nearly a duplicate
          case 2:
            return new Array<number>(dimension).fill(0);
          default:
            return base.map((x, i) => x * ((i * 7 + which) % 5) + noise[i]! / 4); // unrelated
        }
      }),
    );
}

const scenario = fc
  .record({ dimension: fc.constantFrom(8, 12, 30, 96), count: fc.integer({ min: 1, max: 160 }) })
  .chain(({ dimension, count }) =>
    fc.record({
      dimension: fc.constant(dimension),
      vectors: vectors(dimension, count),
      acls: fc.array(fc.constantFrom<string[] | undefined>(undefined, ['hr'], ['eng', 'hr'], ['eng']), {
        minLength: count,
        maxLength: count,
      }),
      groups: fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: count, maxLength: count }),
      batches: fc.integer({ min: 1, max: 5 }),
      deleted: fc.array(fc.nat(), { maxLength: 20 }),
      query: fc.oneof(
        fc.array(scalar, { minLength: dimension, maxLength: dimension }),
        fc.nat().map((n) => ({ copyOf: n })),
      ),
      limit: fc.integer({ min: 1, max: 60 }),
      principals: fc.constantFrom<string[] | 'all' | undefined>(undefined, 'all', [], ['hr'], ['eng']),
      filter: fc.constantFrom<Filter | undefined>(
        undefined,
        { must: [{ key: 'metadata.group', match: { value: 'a' } }] },
        { must_not: [{ key: 'metadata.group', match: { value: 'b' } }] },
      ),
    }),
  );

describe('dense search: the int8 first pass gives exactly the exact ranking', () => {
  it('same ids, scores and tie order as scoring every vector, with ACL, filters, segments and dead rows', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const embeddings = new TableEmbeddings();
        const rows: Row[] = s.vectors.map((vector, i) => ({
          id: `doc-${String(i).padStart(3, '0')}`,
          vector,
          group: s.groups[i]!,
          ...(s.acls[i] ? { acl: s.acls[i] } : {}),
        }));
        const doc = (row: Row): IngestDocument => {
          const text = `text of ${row.id}`;
          embeddings.vectors.set(text, row.vector);
          return { id: row.id, text, metadata: { group: row.group }, ...(row.acl ? { acl: row.acl } : {}) };
        };
        const store = new MemoryHybridStore({ embeddings, chunkTokens: 64 });
        // Several writes: several segments (some merged), then deletions: dead rows.
        const size = Math.ceil(rows.length / s.batches);
        for (let start = 0; start < rows.length; start += size) await store.addDocuments(rows.slice(start, start + size).map(doc));
        const gone = new Set(s.deleted.map((n) => rows[n % rows.length]!.id));
        await store.deleteSources([...gone]);
        const live = rows.filter((row) => !gone.has(row.id));

        const queryVector = Array.isArray(s.query) ? s.query : rows[s.query.copyOf % rows.length]!.vector;
        embeddings.vectors.set('the query', queryVector);
        const query = toDenseQuery(queryVector);
        // No principals is the anonymous view (unrestricted rows only); 'all' is the full view.
        const visible = (row: Row) =>
          s.principals === 'all' || row.acl === undefined || row.acl.length === 0 || row.acl.some((p) => (s.principals ?? []).includes(p));
        const passes = (row: Row) => {
          const must = s.filter?.must as { match: { value: string } }[] | undefined;
          const mustNot = s.filter?.must_not as { match: { value: string } }[] | undefined;
          if (must && row.group !== must[0]!.match.value) return false;
          if (mustNot && row.group === mustNot[0]!.match.value) return false;
          return true;
        };
        const expected = live
          .filter((row) => visible(row) && passes(row))
          .map((row) => ({ id: store ? `${row.id}` : row.id, score: denseCosine(query, toDenseVector(row.vector)) }))
          .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .slice(0, s.limit);

        const results = await store.search({
          text: 'the query',
          mode: 'dense',
          limit: s.limit,
          ...(s.principals ? { principals: s.principals } : {}),
          ...(s.filter ? { filter: s.filter } : {}),
        });
        expect(results.map((c) => [c.sourceId, c.score])).toEqual(expected.map((e) => [e.id, e.score]));
      }),
      { numRuns: 150 },
    );
  }, 180_000);
});
