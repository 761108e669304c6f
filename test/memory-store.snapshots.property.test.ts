// Reads that interleave with writes: every search, rankings and getChunks answers exactly as it would on the
// store before or after each write (never a throw, never a mix of two versions), whatever the tick a write
// completes in relative to the read (same tick, after an await, a queued microtask, setImmediate).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import type { GetChunksRequest, IngestDocument, SearchRequest } from '../src/store/schemas.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';

const FIXED = new Date(Date.UTC(2025, 0, 1));

const WORDS = ['amber', 'basalt', 'cedar', 'delta', 'ember', 'fjord', 'granite', 'harbor', 'indigo', 'juniper'];
const SOURCES = ['a.md', 'b.md', 'c.md', 'd.md'];

/** Version `v` of a source: paragraphs that differ between versions, so a replacement adds and removes chunks. */
function documentOf(sourceId: string, v: number): IngestDocument {
  const seed = SOURCES.indexOf(sourceId) * 7 + v * 3;
  const paragraphs = Array.from(
    { length: 1 + ((seed + v) % 4) },
    (_, p) => Array.from({ length: 5 }, (_, w) => WORDS[(seed + p * 3 + w * (v + 1)) % WORDS.length]).join(' ') + '.',
  );
  const doc: IngestDocument = { id: sourceId, version: `v${v}`, text: `# ${sourceId}\n\n${paragraphs.join('\n\n')}` };
  if (sourceId === 'c.md' || (sourceId === 'd.md' && v % 2 === 1)) doc.acl = ['hr'];
  return doc;
}

type Write = { kind: 'add'; docs: [string, number][] } | { kind: 'delete'; sourceIds: string[] };
type Read =
  | { kind: 'search'; request: SearchRequest }
  | { kind: 'rankings'; request: SearchRequest }
  | { kind: 'getChunks'; request: GetChunksRequest };
/** When the next step is issued: in the same tick, after an await, a queued microtask, setImmediate, or once everything issued so far has settled. */
type Tick = 'sync' | 'await' | 'microtask' | 'immediate' | 'idle';
type Step = { tick: Tick; op: { write: Write } | { read: Read } };

const principals = fc.constantFrom<string[] | undefined>(undefined, [], ['hr']);
const searchRequest: fc.Arbitrary<SearchRequest> = fc
  .record({
    text: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
    mode: fc.constantFrom('hybrid' as const, 'dense' as const, 'lexical' as const),
    limit: fc.integer({ min: 1, max: 8 }),
    principals,
  })
  .map(({ principals: p, ...rest }) => (p === undefined ? rest : { ...rest, principals: p }));
const read: fc.Arbitrary<Read> = fc.oneof(
  searchRequest.map((request) => ({ kind: 'search' as const, request })),
  searchRequest.map((request) => ({ kind: 'rankings' as const, request })),
  fc.record({ sourceIds: fc.subarray(SOURCES, { minLength: 1 }), principals }).map(({ sourceIds, principals: p }) => ({
    kind: 'getChunks' as const,
    request: p === undefined ? { sourceIds } : { sourceIds, principals: p },
  })),
  principals.map((p) => ({
    kind: 'getChunks' as const,
    request: { filter: { must: [{ key: 'version', match: { any: ['v0', 'v1', 'v2'] } }] }, ...(p === undefined ? {} : { principals: p }) },
  })),
);
const write: fc.Arbitrary<Write> = fc.oneof(
  fc
    .uniqueArray(fc.tuple(fc.constantFrom(...SOURCES), fc.integer({ min: 0, max: 2 })), {
      minLength: 1,
      maxLength: 3,
      selector: ([id]) => id,
    })
    .map((docs) => ({ kind: 'add' as const, docs })),
  fc.subarray(SOURCES, { minLength: 1 }).map((sourceIds) => ({ kind: 'delete' as const, sourceIds })),
);
const step: fc.Arbitrary<Step> = fc.record({
  tick: fc.constantFrom<Tick>('sync', 'sync', 'await', 'microtask', 'immediate', 'idle'),
  op: fc.oneof(
    write.map((w) => ({ write: w })),
    read.map((r) => ({ read: r })),
  ),
});

/** Embeddings that answer after a few turns of the event loop, so writes and reads overlap in time. */
class SlowEmbeddings extends FakeEmbeddings {
  #turn = 0;
  async #pause(): Promise<void> {
    this.#turn += 1;
    const turns = this.#turn % 3;
    for (let i = 0; i < turns; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  override async embedQuery(text: string): Promise<number[]> {
    await this.#pause();
    return super.embedQuery(text);
  }
  override async embedDocuments(texts: string[]): Promise<number[][]> {
    await this.#pause();
    return super.embedDocuments(texts);
  }
}

function newStore(embeddings: FakeEmbeddings): MemoryHybridStore {
  return new MemoryHybridStore({ embeddings, now: () => FIXED, chunkTokens: 16 });
}

function runWrite(store: MemoryHybridStore, w: Write): Promise<unknown> {
  return w.kind === 'add' ? store.addDocuments(w.docs.map(([id, v]) => documentOf(id, v))) : store.deleteSources(w.sourceIds);
}

async function runRead(store: MemoryHybridStore, r: Read): Promise<unknown> {
  if (r.kind === 'search') return store.search(r.request);
  if (r.kind === 'rankings') return store.rankings(r.request);
  return store.getChunks(r.request);
}

async function pause(tick: Tick, pending: readonly Promise<unknown>[]): Promise<void> {
  if (tick === 'idle') await Promise.all(pending);
  else if (tick === 'await') await Promise.resolve();
  else if (tick === 'microtask') await new Promise<void>((resolve) => queueMicrotask(resolve));
  else if (tick === 'immediate') await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('snapshots: reads interleaved with writes', () => {
  it('every read equals the read on the store before or after some write it overlapped', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 24 }), async (steps) => {
        const store = newStore(new SlowEmbeddings());
        const writes: Write[] = [];
        let settledWrites = 0;
        const pending: Promise<void>[] = [];
        const observed: { read: Read; from: number; to: () => number; result: unknown; error: unknown }[] = [];
        for (const { tick, op } of steps) {
          await pause(tick, pending);
          if ('write' in op) {
            writes.push(op.write);
            // Writes run one after another, so they settle in order.
            pending.push(
              runWrite(store, op.write).then(() => {
                settledWrites += 1;
              }),
            );
          } else {
            const entry = {
              read: op.read,
              from: settledWrites,
              to: () => writes.length,
              result: undefined as unknown,
              error: undefined as unknown,
            };
            let issuedWhenDone = -1;
            entry.to = () => issuedWhenDone;
            observed.push(entry);
            pending.push(
              runRead(store, op.read).then(
                (result) => {
                  entry.result = result;
                  issuedWhenDone = writes.length;
                },
                (error: unknown) => {
                  entry.error = error;
                  issuedWhenDone = writes.length;
                },
              ),
            );
          }
        }
        await Promise.all(pending);

        // The reference: the same writes one at a time, every read answered after each of them.
        const reference = newStore(new FakeEmbeddings());
        const states: Map<Read, string>[] = [];
        const answerAll = async () => {
          const answers = new Map<Read, string>();
          for (const { read } of observed) answers.set(read, JSON.stringify(await runRead(reference, read)));
          states.push(answers);
        };
        await answerAll();
        for (const w of writes) {
          await runWrite(reference, w);
          await answerAll();
        }
        for (const entry of observed) {
          expect(entry.error, `${entry.read.kind} threw`).toBeUndefined();
          const got = JSON.stringify(entry.result);
          const candidates = states.slice(entry.from, entry.to() + 1).map((answers) => answers.get(entry.read));
          expect(
            candidates,
            `${entry.read.kind} ${JSON.stringify(entry.read.request)}: no state between writes ${entry.from} and ${entry.to()} gives this answer`,
          ).toContain(got);
        }
        // And the writes themselves: the final state is the reference's.
        expect(store.sources()).toEqual(reference.sources());
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it('a search started in the same tick as a delete or a replacing ingest reads one version, without throwing', async () => {
    const store = newStore(new FakeEmbeddings());
    await store.addDocuments(SOURCES.map((id) => documentOf(id, 0)));
    const before = await store.search({ text: 'amber cedar', mode: 'lexical', limit: 50 });
    expect(before.length).toBeGreaterThan(0);

    const deleting = store.deleteSources(['a.md']);
    const during = store.search({ text: 'amber cedar', mode: 'lexical', limit: 50 });
    await deleting;
    const after = await store.search({ text: 'amber cedar', mode: 'lexical', limit: 50 });
    expect([before, after].map((r) => JSON.stringify(r))).toContain(JSON.stringify(await during));
    expect(after.some((c) => c.sourceId === 'a.md')).toBe(false);

    const replacing = store.addDocuments([documentOf('b.md', 2)]);
    const rankingsDuring = store.rankings({ text: 'amber cedar', mode: 'hybrid', limit: 50 });
    const chunksDuring = store.getChunks({ sourceIds: ['b.md'] });
    await replacing;
    const ranked = await rankingsDuring;
    expect(ranked.fused.length).toBeGreaterThan(0);
    expect((await chunksDuring).every((c) => c.version === 'v0')).toBe(true);
    expect((await store.getChunks({ sourceIds: ['b.md'] })).every((c) => c.version === 'v2')).toBe(true);
  });
});
