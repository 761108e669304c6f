import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackSchema, MemoryHybridStore } from '../src/index.js';
import { runCli } from './helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-briefing-'));
const store = join(work, 'store');
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(async () => {
  // The example corpus names its clusters in front matter (retrieval, packing, provenance).
  const out = await runCli(['ingest', 'examples/corpus', '--store', store, '--quiet']);
  expect(out.code, out.stderr).toBe(0);
});

const prompt = 'Where should the strongest passage go in a long prompt?';

describe('litm-pack briefing', () => {
  it('from pins + one cluster + a prompt: the pinned page first, the cluster and the prompt results after', async () => {
    const out = await runCli([
      'briefing',
      '--store',
      store,
      '--pins',
      'token-budgets.md',
      '--clusters',
      'retrieval',
      '--prompt',
      prompt,
      '--budget',
      '2000',
      '--json',
    ]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const pack = PackSchema.parse(JSON.parse(out.stdout));
    const sources = pack.items.map((i) => i.sourceId);
    expect(sources[0]).toBe('examples/corpus/token-budgets.md');
    expect(pack.items[0]!.role).toBe('grounding');
    expect(sources.some((s) => /(bm25|dense-retrieval|hybrid-fusion)\.md$/.test(s))).toBe(true);
    expect(sources).toContain('examples/corpus/lost-in-the-middle.md');
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(2000);
  });

  it('from pins alone or a cluster alone (no prompt); strict scope keeps prompt results inside them', async () => {
    const pins = await runCli(['briefing', '--store', store, '--pins', 'examples/corpus/bm25.md', '--json']);
    expect(pins.code, pins.stderr).toBe(0);
    const pinned = PackSchema.parse(JSON.parse(pins.stdout));
    expect(pinned.query).toBe('');
    expect(new Set(pinned.items.map((i) => i.sourceId))).toEqual(new Set(['examples/corpus/bm25.md']));
    const cluster = await runCli(['briefing', '--store', store, '--clusters', 'packing', '--budget', '800']);
    expect(cluster.code, cluster.stderr).toBe(0);
    expect(cluster.stdout).toMatch(/## Grounding/);
    expect(cluster.stdout).not.toMatch(/bm25\.md|hybrid-fusion\.md|dense-retrieval\.md|citations-and-provenance\.md/);
    const strict = await runCli([
      'briefing',
      '--store',
      store,
      '--clusters',
      'packing',
      '--prompt',
      'lexical term weighting',
      '--scope',
      'strict',
      '--json',
    ]);
    const scoped = PackSchema.parse(JSON.parse(strict.stdout));
    for (const item of scoped.items) expect(item.sourceId).toMatch(/(lost-in-the-middle|token-budgets)\.md$/);
  });

  it('rejects a briefing of nothing, an ambiguous pin and too many pins with exit 2 and one line', async () => {
    const nothing = await runCli(['briefing', '--store', store]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/needs at least one of prompt, pins or clusters/);
    const twins = join(work, 'twins');
    for (const folder of ['a', 'b']) {
      mkdirSync(join(twins, folder), { recursive: true });
      writeFileSync(join(twins, folder, 'policy.md'), `Policy of team ${folder}.`);
    }
    const twinStore = join(work, 'twin-store');
    expect((await runCli(['ingest', twins, '--store', twinStore, '--quiet'])).code).toBe(0);
    const ambiguous = await runCli(['briefing', '--store', twinStore, '--pins', 'policy.md']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr.trim().split('\n')).toHaveLength(1);
    expect(ambiguous.stderr).toMatch(/Pin "policy\.md" is ambiguous: it could be .*a\/policy\.md, .*b\/policy\.md/);
    const one = await runCli(['briefing', '--store', twinStore, '--pins', 'a/policy.md', '--json']);
    expect(PackSchema.parse(JSON.parse(one.stdout)).items.map((i) => i.text)).toEqual(['Policy of team a.']);
    const tooMany = await runCli(['briefing', '--store', store, '--pins', 'a,b,c', '--max-pins', '2']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toMatch(/^litm-pack: --pins must list at most 2 pins$/m);
  });
});

describe('litm-pack rankings', () => {
  it('prints each arm beside the fused ranking; --json equals the library answer', async () => {
    const json = await runCli(['rankings', 'term frequency saturation', '--store', store, '--k', '5', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const loaded = await MemoryHybridStore.load(join(store, 'store.json'));
    expect(JSON.parse(json.stdout)).toEqual(await loaded.rankings({ text: 'term frequency saturation', limit: 5 }));
    expect(JSON.parse(json.stdout)).toMatchObject({ mode: 'lexical', dense: null });
    const table = await runCli(['rankings', 'term frequency saturation', '--store', store, '--k', '3']);
    expect(table.stdout).toMatch(/^mode lexical \(no dense arm\)\n#\s+fused\s+lexical\n1\s+examples\/corpus\/bm25\.md#/);
    expect(table.stdout.trim().split('\n')).toHaveLength(5);
    const hidden = await runCli(['rankings', 'x', '--store', store, '--limit', '3']);
    expect(hidden.code).not.toBe(0);
  });
});
