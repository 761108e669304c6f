// packHash across re-ingest: the same files ingested twice, seconds apart, give the same
// packHash for the same request, through the library and the CLI; the pack still says how fresh its index is
// (`coverage.newestIndexedAt`), and that time is the only difference between the two packs.
// Time is a fake clock (the store's `now`, or faked `Date` around the CLI's ingest), never a sleep.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { canonicalStringify, sha256Hex } from '../src/base/canonical.js';
import { packHashOf, toCanonicalJson } from '../src/core/pack.js';
import { PackSchema, type Pack } from '../src/core/schemas.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { assembleBriefing } from '../src/pipeline/briefing.js';
import { assembleBundle } from '../src/pipeline/bundle.js';
import { loadDocuments } from '../src/sources/load.js';
import { runCli } from './helpers/cli.js';

const CORPUS = 'examples/corpus';
const FIRST = new Date('2026-03-01T09:00:00.000Z');
const LATER = new Date('2026-03-01T09:00:07.500Z');
const QUERY = 'how does reciprocal rank fusion combine rankings';

/** The pack with its index time and hash left out: what must be equal between the two ingests. */
function withoutIndexTime(pack: Pack): unknown {
  const rest: Partial<Pack> = { ...pack, coverage: { ...pack.coverage, newestIndexedAt: null } };
  delete rest.packHash;
  return rest;
}

describe('the library: two stores of the same files, indexed 7.5 s apart', () => {
  async function storeAt(at: Date): Promise<MemoryHybridStore> {
    const store = new MemoryHybridStore({ now: () => at });
    await store.addDocuments(await loadDocuments([CORPUS]));
    return store;
  }

  it('give the same packHash for a bundle and a briefing, and keep their own index times', async () => {
    const [a, b] = [await storeAt(FIRST), await storeAt(LATER)];
    const [bundleA, bundleB] = await Promise.all(
      [a, b].map(async (store) => (await assembleBundle({ store, query: QUERY, maxTokens: 800 })).pack),
    );
    expect(bundleA!.items.length).toBeGreaterThan(1);
    expect(bundleA!.coverage.newestIndexedAt).toBe(FIRST.toISOString());
    expect(bundleB!.coverage.newestIndexedAt).toBe(LATER.toISOString());
    expect(toCanonicalJson(bundleA!)).not.toBe(toCanonicalJson(bundleB!));
    expect(withoutIndexTime(bundleA!)).toEqual(withoutIndexTime(bundleB!));
    expect(bundleA!.packHash).toBe(bundleB!.packHash);

    const [briefingA, briefingB] = await Promise.all(
      [a, b].map(
        async (store) => (await assembleBriefing({ store, prompt: QUERY, pins: ['examples/corpus/bm25.md'], maxTokens: 1200 })).pack,
      ),
    );
    expect(briefingA!.coverage.newestIndexedAt).toBe(FIRST.toISOString());
    expect(briefingA!.packHash).toBe(briefingB!.packHash);
  });

  it('hash by the documented rule: the canonical JSON without packHash, the index time written as null', async () => {
    const { pack } = await assembleBundle({ store: await storeAt(FIRST), query: QUERY, maxTokens: 800 });
    expect(pack.packHash).toBe(sha256Hex(canonicalStringify(withoutIndexTime(pack))));
    expect(packHashOf(pack)).toBe(pack.packHash);
    // Everything else is hashed: another budget, another hash.
    const { pack: smaller } = await assembleBundle({ store: await storeAt(FIRST), query: QUERY, maxTokens: 400 });
    expect(smaller.packHash).not.toBe(pack.packHash);
  });
});

describe('the CLI, in process: ingest the same folder twice into two stores, seconds apart', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'litm-reingest-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('bundle --json gives the same packHash from both stores, each with its own newestIndexedAt', async () => {
    const stores = [join(work, 'first'), join(work, 'later')];
    // Only Date is faked: the store's lock and writes keep their real timers.
    vi.useFakeTimers({ toFake: ['Date'] });
    for (const [index, store] of stores.entries()) {
      vi.setSystemTime(index === 0 ? FIRST : LATER);
      const ingest = await runCli(['ingest', CORPUS, '--store', store, '--quiet']);
      expect(ingest.code, ingest.stderr).toBe(0);
    }
    vi.useRealTimers();
    const packs: Pack[] = [];
    for (const store of stores) {
      const out = await runCli(['bundle', QUERY, '--store', store, '--budget', '800', '--json']);
      expect(out.code, out.stderr).toBe(0);
      packs.push(PackSchema.parse(JSON.parse(out.stdout)));
    }
    const [a, b] = packs as [Pack, Pack];
    expect(a.items.length).toBeGreaterThan(1);
    expect(a.coverage.newestIndexedAt).toBe(FIRST.toISOString());
    expect(b.coverage.newestIndexedAt).toBe(LATER.toISOString());
    expect(a.packHash).toBe(b.packHash);
    expect(packHashOf(a)).toBe(a.packHash);
    // The CLI's pack is the library's pack of the same store.
    const library = await assembleBundle({
      store: await MemoryHybridStore.load(join(stores[0]!, 'store.json')),
      query: QUERY,
      maxTokens: 800,
    });
    expect(library.pack.packHash).toBe(a.packHash);
  });
});
