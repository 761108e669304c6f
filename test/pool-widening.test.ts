// Pools that fit the budget: when a bundle stops because its pool ran out (the store filled
// the pool and the budget did not bind), the pipeline doubles the pool, up to the pool limit, until the budget
// binds or the store has no more; the pack records the pool it used (`pack.pool`).
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { PackSchema } from '../src/core/schemas.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { assembleBriefing } from '../src/pipeline/briefing.js';
import { assembleBundle } from '../src/pipeline/bundle.js';
import { PIPELINE_DEFAULTS } from '../src/pipeline/defaults.js';
import { DEFAULT_LIMITS } from '../src/service/limits.js';
import { requestSchemas } from '../src/service/requests.js';
import { parseRequest } from '../src/service/errors.js';
import { serveBriefing, serveBundle } from '../src/service/service.js';

const PARAGRAPHS = 400;
let store: MemoryHybridStore;

beforeAll(async () => {
  store = new MemoryHybridStore();
  // 400 paragraphs that all match "harbor", each a document of its own (one chunk each).
  await store.addDocuments(
    Array.from({ length: PARAGRAPHS }, (_, i) => ({
      id: `notes/harbor-${String(i).padStart(3, '0')}.md`,
      text: `The harbor log entry ${i} records vessel ${i * 7} arriving with cargo lot ${i * 13} at berth ${i % 17}.`,
    })),
  );
});

/** The pool sizes the store was asked for, in order. */
function searchLimits(spy: { mock: { calls: readonly (readonly unknown[])[] } }): number[] {
  return spy.mock.calls.map((call) => (call[0] as { limit: number }).limit);
}

describe('a bundle whose budget the default pool cannot fill', () => {
  it('doubles the pool until the store has no more, and records the pool it used', async () => {
    const spy = vi.spyOn(store, 'search');
    try {
      const { pack } = await assembleBundle({ store, query: 'harbor log', maxTokens: 20_000 });
      expect(searchLimits(spy)).toEqual([50, 100, 200, 400, 800]);
      expect(pack.pool).toEqual({ candidates: PARAGRAPHS, limit: 800 });
      expect(pack.items).toHaveLength(PARAGRAPHS);
      expect(pack.truncated).toBe(false);
      expect(PackSchema.parse(pack).pool).toEqual(pack.pool);
    } finally {
      spy.mockRestore();
    }
    // The pool as asked, without widening: what the pack used to be.
    const { pack: fixed } = await assembleBundle({ store, query: 'harbor log', maxTokens: 20_000, maxPool: 50 });
    expect(fixed.pool).toEqual({ candidates: 50, limit: 50 });
    expect(fixed.items).toHaveLength(50);
    expect(fixed.truncated).toBe(false);
  });

  it('stops as soon as the budget binds', async () => {
    const spy = vi.spyOn(store, 'search');
    try {
      const { pack } = await assembleBundle({ store, query: 'harbor log', maxTokens: 3000 });
      // 50 paragraphs fit in 3000 tokens, 100 do not: the second pool binds.
      expect(searchLimits(spy)).toEqual([50, 100]);
      expect(pack.pool).toEqual({ candidates: 100, limit: 100 });
      expect(pack.truncated).toBe(true);
      expect(pack.dropped.some((d) => d.reason === 'budget')).toBe(true);
      expect(pack.budget.usedTokens).toBeGreaterThan(2800);
    } finally {
      spy.mockRestore();
    }
  });

  it('does not widen when the budget binds in the first pool, or the store returned less than the pool', async () => {
    const small = await assembleBundle({ store, query: 'harbor log', maxTokens: 500 });
    expect(small.pack.pool).toEqual({ candidates: 50, limit: 50 });
    expect(small.pack.truncated).toBe(true);
    const few = await assembleBundle({
      store,
      query: 'berth 3 vessel',
      maxTokens: 20_000,
      mode: 'lexical',
      filter: { must: [{ key: 'sourceId', match: { any: ['notes/harbor-003.md', 'notes/harbor-020.md'] } }] },
    });
    expect(few.pack.pool).toEqual({ candidates: 2, limit: 50 });
  });

  it('stops at maxPool, and when candidates fall below minScore (a wider pool holds only lower scores)', async () => {
    const capped = await assembleBundle({ store, query: 'harbor log', maxTokens: 20_000, maxPool: 120 });
    expect(capped.pack.pool).toEqual({ candidates: 120, limit: 120 });
    const spy = vi.spyOn(store, 'search');
    try {
      const first = await store.search({ text: 'harbor berth 3', mode: 'lexical', limit: 50 });
      spy.mockClear();
      // Between the best and the 50th score: the first pool already holds candidates below it.
      expect(first[0]!.score).toBeGreaterThan(first[49]!.score);
      const minScore = (first[0]!.score + first[49]!.score) / 2;
      const { pack } = await assembleBundle({ store, query: 'harbor berth 3', mode: 'lexical', maxTokens: 20_000, minScore });
      expect(searchLimits(spy)).toEqual([50]);
      expect(pack.dropped.some((d) => d.reason === 'below-min-score')).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it("through the service, widens up to the server's pool limit (the context's maxPool), else the default limit", async () => {
    const request = parseRequest(requestSchemas(DEFAULT_LIMITS).bundle, { query: 'harbor log', budget: 20_000 });
    const serverPack = await serveBundle(request, { store, principals: [], maxPool: 200 });
    expect(serverPack.pool).toEqual({ candidates: 200, limit: 200 });
    const cliPack = await serveBundle(request, { store, principals: [] });
    expect(cliPack.pool).toEqual({ candidates: PARAGRAPHS, limit: 800 });
    expect(DEFAULT_LIMITS.defaultPool).toBe(PIPELINE_DEFAULTS.pool);
  });

  it("widens a briefing's prompt pool the same way; a briefing without a prompt records no pool", async () => {
    const spy = vi.spyOn(store, 'search');
    try {
      const { pack } = await assembleBriefing({ store, prompt: 'harbor log', maxTokens: 20_000 });
      expect(searchLimits(spy)).toEqual([50, 100, 200, 400, 800]);
      expect(pack.pool).toEqual({ candidates: PARAGRAPHS, limit: 800 });
      expect(pack.items).toHaveLength(PARAGRAPHS);
    } finally {
      spy.mockRestore();
    }
    const request = parseRequest(requestSchemas(DEFAULT_LIMITS).briefing, { prompt: 'harbor log', budget: 20_000 });
    expect((await serveBriefing(request, { store, principals: [], maxPool: 100 }, DEFAULT_LIMITS)).pool).toEqual({
      candidates: 100,
      limit: 100,
    });
    const pinsOnly = await assembleBriefing({ store, pins: ['notes/harbor-001.md'], maxTokens: 20_000 });
    expect(pinsOnly.pack.pool).toBeUndefined();
  });
});
