// One budget limit for every door: the library, the service's requests (so the HTTP API and
// the MCP tools, whose own tests check their schemas), and the CLI accept the same largest budget and refuse
// one token more, naming the limit. The value is declared once (the packer's schema) and read everywhere.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLitmPackError } from '../src/base/errors.js';
import { packBundle } from '../src/core/bundle.js';
import { MAX_BUDGET_TOKENS, PackSchema } from '../src/core/schemas.js';
import { MemoryHybridStore } from '../src/memory/memory-hybrid-store.js';
import { assembleBundle } from '../src/pipeline/bundle.js';
import { PIPELINE_LIMITS } from '../src/pipeline/defaults.js';
import { parseRequest } from '../src/service/errors.js';
import { DEFAULT_LIMITS } from '../src/service/limits.js';
import { bundleRequestShape, briefingRequestShape, packRequestShape } from '../src/service/requests.js';
import { z } from 'zod';
import { runCli } from './helpers/cli.js';

const LIMIT = MAX_BUDGET_TOKENS;
const candidates = [{ id: 'a', text: 'Refunds take 14 days.', score: 1 }];

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isLitmPackError(error, 'invalid_input')) return error.message;
    throw error;
  }
  throw new Error('not refused');
}

describe('the one budget limit', () => {
  it('is the same number in the pipeline table and every service request kind', () => {
    expect(PIPELINE_LIMITS.maxBudget).toBe(LIMIT);
    expect([DEFAULT_LIMITS.bundleMaxBudget, DEFAULT_LIMITS.briefingMaxBudget, DEFAULT_LIMITS.packMaxBudget]).toEqual([LIMIT, LIMIT, LIMIT]);
  });

  it('the library takes it and refuses one more', async () => {
    expect(packBundle({ query: 'refunds', candidates, maxTokens: LIMIT }).budget.maxTokens).toBe(LIMIT);
    expect(refusal(() => packBundle({ query: 'refunds', candidates, maxTokens: LIMIT + 1 }))).toMatch(`maxTokens must be at most ${LIMIT}`);
    const store = new MemoryHybridStore();
    await store.addDocuments([{ id: 'policy.md', text: 'Refunds take 14 days.' }]);
    expect((await assembleBundle({ store, query: 'refunds', maxTokens: LIMIT })).pack.budget.maxTokens).toBe(LIMIT);
    await expect(assembleBundle({ store, query: 'refunds', maxTokens: LIMIT + 1 })).rejects.toThrow(`at most ${LIMIT}`);
  });

  it('the service (HTTP and MCP) takes it for bundles, briefings and packs and refuses one more', () => {
    const shapes = { bundle: bundleRequestShape, briefing: briefingRequestShape, pack: packRequestShape };
    for (const [kind, shape] of Object.entries(shapes)) {
      const schema = z.strictObject(shape(DEFAULT_LIMITS));
      const base = kind === 'bundle' ? { query: 'x' } : kind === 'briefing' ? { prompt: 'x' } : { query: 'x', candidates };
      expect((parseRequest(schema, { ...base, budget: LIMIT }) as { budget: number }).budget, kind).toBe(LIMIT);
      expect(
        refusal(() => parseRequest(schema, { ...base, budget: LIMIT + 1 })),
        kind,
      ).toBe(`budget must be at most ${LIMIT}`);
    }
  });

  describe('the CLI, in process', () => {
    let work: string;
    let store: string;
    beforeAll(async () => {
      work = await mkdtemp(join(tmpdir(), 'litm-budget-limit-'));
      store = join(work, 'store');
      const ingest = await runCli(['ingest', 'examples/corpus', '--store', store, '--quiet']);
      expect(ingest.code, ingest.stderr).toBe(0);
    });
    afterAll(async () => {
      await rm(work, { recursive: true, force: true });
    });

    it('bundle and briefing take it (once capped at 24000) and refuse one more, naming --budget', async () => {
      for (const command of [
        ['bundle', 'rank fusion'],
        ['briefing', '--prompt', 'rank fusion'],
      ]) {
        const ok = await runCli([...command, '--store', store, '--budget', String(LIMIT), '--json']);
        expect(ok.code, ok.stderr).toBe(0);
        expect(PackSchema.parse(JSON.parse(ok.stdout)).budget.maxTokens).toBe(LIMIT);
        const over = await runCli([...command, '--store', store, '--budget', String(LIMIT + 1), '--json']);
        expect(over.code).toBe(2);
        expect(over.stderr).toContain(`--budget must be at most ${LIMIT}`);
      }
    });

    it('--help states the limit', async () => {
      const help = await runCli(['bundle', '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout.replace(/\s+/gu, ' ')).toContain(`token budget for the context (default 2000, at most ${LIMIT})`);
    });
  });
});
