import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as cli } from './helpers/cli.js';
import { PackSchema } from '../src/index.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('litm-pack pack', () => {
  it('prints the same canonical bytes for the same input, from a file or stdin, JSON or JSON lines', async () => {
    const file = 'examples/candidates.json';
    const a = await cli(['pack', '--query', 'refunds', '--budget', '300', file]);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    const pack = PackSchema.parse(JSON.parse(a.stdout));
    expect(pack.items.length).toBeGreaterThan(0);
    expect(pack.dropped.some((d) => d.reason === 'duplicate' || d.reason === 'near-duplicate')).toBe(true);
    const b = await cli(['pack', '--query', 'refunds', '--budget', '300'], readFileSync(file, 'utf8'));
    const lines = (JSON.parse(readFileSync(file, 'utf8')) as unknown[]).map((c) => JSON.stringify(c)).join('\n');
    const c = await cli(['pack', '--query', 'refunds', '--budget', '300', '-'], lines);
    expect(b.stdout).toBe(a.stdout);
    expect(c.stdout).toBe(a.stdout);
  });

  it('prints only the context with --output context, and packs briefings', async () => {
    const ctx = await cli([
      'pack',
      '--query',
      'refunds',
      '--budget',
      '300',
      '--output',
      'context',
      '--format',
      'xml',
      'examples/candidates.json',
    ]);
    expect(ctx.code).toBe(0);
    expect(ctx.stdout.startsWith('<documents>\n<document index="1">')).toBe(true);
    const brief = await cli([
      'pack',
      '--query',
      'refunds',
      '--budget',
      '400',
      '--kind',
      'briefing',
      '--pins',
      'shipping.md',
      'examples/candidates.json',
    ]);
    const pack = PackSchema.parse(JSON.parse(brief.stdout));
    expect(pack.kind).toBe('briefing');
    expect(pack.items[0]?.sourceId).toBe('shipping.md');
  });

  it('names the line and the field of bad JSON lines, with one line and a non-zero exit', async () => {
    const input = '{"id":"a","text":"ok","score":1}\n{"id":"b","text":"bad","score":"high"}\n';
    const out = await cli(['pack', '--query', 'q'], input);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(/line 2: score:/);
  });

  it('rejects a budget out of range and an unknown format with one clear line', async () => {
    const budget = await cli(['pack', '--query', 'q', '--budget', '0', 'examples/candidates.json']);
    expect(budget.code).toBe(2);
    expect(budget.stderr).toMatch(/--budget must be at least 1/);
    const format = await cli(['pack', '--query', 'q', '--format', 'html', 'examples/candidates.json']);
    expect(format.code).not.toBe(0);
    expect(format.stderr).toMatch(/format/);
    const missing = await cli(['pack', '--query', 'q', join(work, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/Cannot read .*nope\.json: ENOENT/);
  });
});

describe('npm run demo (the main job on the embedded store)', () => {
  it('ingests the example corpus into a temporary store and prints a cited LITM bundle', async () => {
    const out = await cli(['demo']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^Ingested \d+ files into .*: [1-9]\d* chunks added/);
    expect(out.stdout).toMatch(/\n\[1\] \S.*\n/);
    expect(out.stdout).toMatch(/Citations \(\d+\/700 o200k_base tokens, confidence unknown\):\n {2}\[1\] lost-in-the-middle\.md/);
    // Which rank sits where (best first, second best last), and why the confidence is unknown.
    const positions = /\n {2}position((?: +\[\d+\])+)\n {2}rank +((?: *\d+)+)\n/.exec(out.stdout);
    expect(positions).not.toBeNull();
    const ranks = positions![2]!.trim().split(/ +/).map(Number);
    expect(ranks[0]).toBe(1);
    expect(ranks.at(-1)).toBe(2);
    expect(out.stdout).toMatch(/best passage \(rank 1\) goes first and the second best last/);
    expect(out.stdout).toMatch(/Confidence unknown: this store has no embeddings, so the search ran on BM25/);
  });
});

describe('the main job: ingest, bundle, briefing', () => {
  const store = join(work, 'store');

  it('ingests a folder, then answers a bundle with citations, idempotently', async () => {
    const first = await cli(['ingest', 'examples/corpus', '--store', store]);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/Ingested \d+ files .* [1-9]\d* chunks added, 0 unchanged, 0 removed/);
    const again = await cli(['ingest', 'examples/corpus', '--store', store]);
    expect(again.stdout).toMatch(/0 chunks added, [1-9]\d* unchanged, 0 removed/);

    const bundle = await cli(['bundle', 'reciprocal rank fusion', '--store', store, '--budget', '400']);
    expect(bundle.code).toBe(0);
    expect(bundle.stdout).toMatch(/^\[1\] /);
    expect(bundle.stdout).toMatch(/Citations \(\d+\/400 o200k_base tokens/);
    expect(bundle.stdout).toContain('examples/corpus/hybrid-fusion.md');

    const json = await cli(['bundle', 'reciprocal rank fusion', '--store', store, '--budget', '400', '--json']);
    const pack = PackSchema.parse(JSON.parse(json.stdout));
    expect(pack.citations[0]?.sourceId).toBe('examples/corpus/hybrid-fusion.md');
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(400);
  });

  it('prints a briefing with grounding, evidence and caveats', async () => {
    const out = await cli([
      'briefing',
      '--prompt',
      'token budgets and truncation',
      '--store',
      store,
      '--budget',
      '600',
      '--pins',
      'examples/corpus/citations-and-provenance.md',
    ]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('## Grounding');
    expect(out.stdout).toContain('## Caveats');
    expect(out.stdout.indexOf('citations-and-provenance.md')).toBeLessThan(
      out.stdout.indexOf('## Evidence') === -1 ? Infinity : out.stdout.indexOf('## Evidence'),
    );
  });

  it('fails clearly on a missing store, an empty query and an unreadable file, leaving the store as it was', async () => {
    const missing = await cli(['bundle', 'anything', '--store', join(work, 'absent')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/No store at .*absent: run "litm-pack ingest/);
    const empty = await cli(['bundle', '  ', '--store', store]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/query must not be empty/);

    const before = readFileSync(join(store, 'store.json'));
    const dir = join(work, 'docs');
    mkdirSync(dir);
    writeFileSync(join(dir, 'good.md'), '# Good\n\nA readable file.');
    // one good folder and one missing path: the ingest fails before anything is written
    const failure = await cli(['ingest', dir, join(dir, 'missing.md'), '--store', store]);
    expect(failure.code).toBe(2);
    expect(failure.stderr).toMatch(/Cannot read .*missing\.md: ENOENT/);
    expect(readFileSync(join(store, 'store.json')).equals(before)).toBe(true);
    expect(existsSync(join(store, 'store.json'))).toBe(true);
  });
});
