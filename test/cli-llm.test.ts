// The command line's half of the citation loop: `bundle --as anthropic` prints the search_result blocks of
// the same pack `bundle --json` prints; `check-answer` checks a [n] answer or resolves a Messages API
// response against a pack file, exiting 3 when the answer fails.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pack } from '../src/core/schemas.js';
import { toAnthropicSearchResults, type AnthropicSearchResultBlock } from '../src/llm/index.js';
import { runCli } from './helpers/cli.js';
import { messageResponse, searchResultCitation } from './helpers/llm-packs.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-llm-'));
const store = join(work, 'store.json');
const corpus = resolve(import.meta.dirname, '../examples/corpus');
const QUERY = 'How are token budgets counted exactly?';
let pack: Pack;
const packFile = join(work, 'pack.json');

beforeAll(async () => {
  expect((await runCli(['ingest', corpus, '--store', store, '--quiet'])).code).toBe(0);
  const out = await runCli(['bundle', QUERY, '--store', store, '--json', '--mode', 'lexical', '--budget', '600']);
  expect(out.code).toBe(0);
  pack = JSON.parse(out.stdout) as Pack;
  writeFileSync(packFile, out.stdout);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('litm-pack bundle --as anthropic', () => {
  it('prints the search_result blocks of the pack bundle --json gives for the same request', async () => {
    const out = await runCli(['bundle', QUERY, '--store', store, '--mode', 'lexical', '--budget', '600', '--as', 'anthropic']);
    expect(out.code, out.stderr).toBe(0);
    const printed = JSON.parse(out.stdout) as AnthropicSearchResultBlock[];
    expect(printed).toEqual(toAnthropicSearchResults(pack));
    const whole = await runCli([
      'bundle',
      QUERY,
      '--store',
      store,
      '--mode',
      'lexical',
      '--budget',
      '600',
      '--as',
      'anthropic',
      '--granularity',
      'item',
    ]);
    expect((JSON.parse(whole.stdout) as AnthropicSearchResultBlock[]).map((r) => r.content.length)).toEqual(pack.items.map(() => 1));
  });

  it('refuses --json with --as anthropic and --granularity without it (usage errors, exit 2)', async () => {
    expect((await runCli(['bundle', QUERY, '--store', store, '--as', 'anthropic', '--json'])).code).toBe(2);
    const lone = await runCli(['bundle', QUERY, '--store', store, '--granularity', 'line']);
    expect(lone.code).toBe(2);
    expect(lone.stderr).toMatch(/--granularity needs --as anthropic/u);
    expect((await runCli(['bundle', QUERY, '--store', store, '--as', 'openai'])).code).toBe(2);
  });
});

describe('litm-pack check-answer', () => {
  it('exit 0 and "ok" for a well-cited answer, from a file or stdin', async () => {
    const quote = pack.items[0]!.text.split(/(?<=\.)\s/u)[0]!;
    const answer = `Counts are exact: "${quote}" [1].`;
    writeFileSync(join(work, 'good.txt'), answer);
    const out = await runCli(['check-answer', '--pack', packFile, join(work, 'good.txt')]);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toMatch(/Refs: \[1\] ok/u);
    expect(out.stdout).toMatch(/^ {2}found +\[1\] "/mu);
    expect(out.stdout).toMatch(/Answer check: ok/u);
    const piped = await runCli(['check-answer', '--pack', packFile, '--json'], answer);
    expect(JSON.parse(piped.stdout)).toMatchObject({ ok: true, unknownRefs: [] });
  });

  it('exit 3 with the problems listed for unknown refs, invented quotes and uncited sentences', async () => {
    writeFileSync(
      join(work, 'bad.txt'),
      `Budgets are "summed per passage" [1]. See source [${pack.items.length + 5}]. Nothing cites this.`,
    );
    const out = await runCli(['check-answer', '--pack', packFile, join(work, 'bad.txt')]);
    expect(out.code).toBe(3);
    expect(out.stdout).toContain(`[${pack.items.length + 5}] UNKNOWN`);
    expect(out.stdout).toMatch(/NOT FOUND {2}\[1\] "summed per passage"/u);
    expect(out.stdout).toMatch(/- Nothing cites this\./u);
    expect(out.stdout).toMatch(/Answer check: 3 problems/u);
  });

  it('resolves a Messages API response with citations (exit 3 when one is not verified)', async () => {
    const results = toAnthropicSearchResults(pack);
    const good = messageResponse([{ type: 'text', text: 'Counts are exact.', citations: [searchResultCitation(results, 0, 0, 1)] }]);
    writeFileSync(join(work, 'response.json'), JSON.stringify(good));
    const out = await runCli(['check-answer', '--pack', packFile, join(work, 'response.json')]);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toMatch(/\[1\] examples\/corpus\/\S+ chars \d+-\d+ verified/u);
    const forged = messageResponse([
      { type: 'text', text: 'x', citations: [{ ...searchResultCitation(results, 0, 0, 1), cited_text: 'made up' }] },
    ]);
    writeFileSync(join(work, 'forged.json'), JSON.stringify(forged));
    const bad = await runCli(['check-answer', '--pack', packFile, join(work, 'forged.json'), '--json']);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout)).toMatchObject({ via: 'anthropic', verified: false });
  });

  it('a pack file that is not a pack is an input error (exit 2)', async () => {
    writeFileSync(join(work, 'notpack.json'), '{"hello": 1}');
    const out = await runCli(['check-answer', '--pack', join(work, 'notpack.json')], 'x [1]');
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/Invalid pack/u);
    expect((await runCli(['check-answer', '--pack', join(work, 'missing.json')], 'x')).code).toBe(2);
  });
});
