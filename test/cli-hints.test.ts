// The CLI's notes and suggestions: an empty context says why on stderr (and still exits 0), and the flags
// other tools use for "how many results" point at --limit.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';

let work: string;
let store: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'litm-cli-hints-'));
  store = join(work, 'store');
  const ingested = await runCli(['ingest', 'examples/corpus', '--store', store, '--quiet']);
  expect(ingested.code, ingested.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('an empty context', () => {
  it('--budget 10: exit 0, an empty context, and a note on stderr with the smallest useful budget', async () => {
    const out = await runCli(['bundle', 'token budgets', '--store', store, '--budget', '10', '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect((JSON.parse(out.stdout) as { context: string }).context).toBe('');
    expect(out.stderr).toMatch(
      /^litm-pack: note: the context is empty: none of the \d+ candidates found fits in 10 tokens\..*try a budget of 64 tokens or more\.\n$/su,
    );
  });

  it('says nothing when the context is not empty', async () => {
    const out = await runCli(['bundle', 'token budgets', '--store', store, '--budget', '300', '--json']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toBe('');
  });
});

describe('flags of other tools', () => {
  it('--k and --top-k get "did you mean --limit"', async () => {
    for (const flag of ['--k', '--top-k']) {
      const out = await runCli(['bundle', 'token budgets', '--store', store, flag, '5']);
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(`unknown option '${flag}'`);
      expect(out.stderr).toContain('Did you mean --limit?');
    }
  });

  it('rankings keeps its own --k', async () => {
    const out = await runCli(['rankings', 'token budgets', '--store', store, '--k', '3', '--json']);
    expect(out.code, out.stderr).toBe(0);
  });
});
