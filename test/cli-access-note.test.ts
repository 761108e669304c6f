// The CLI reads anonymously unless told otherwise. When that is why a pack is empty (the chunks that match
// have an ACL), it says so on stderr, naming --principals and --all-principals; the pack itself is unchanged.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackSchema } from '../src/core/schemas.js';
import { runCli } from './helpers/cli.js';

let work: string;
let store: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'litm-access-note-'));
  store = join(work, 'store');
  const ingest = await runCli(['ingest', 'examples/corpus', '--store', store, '--acl', 'hr', '--quiet']);
  expect(ingest.code, ingest.stderr).toBe(0);
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const NOTE =
  /note: the pack is empty: it was read (.+), and the chunks that match have an ACL\. Give --principals LIST .* or --all-principals/u;

describe('an empty pack because of access', () => {
  it('is noted on stderr for an anonymous read, and the pack is still printed (exit 0)', async () => {
    const out = await runCli(['bundle', 'reciprocal rank fusion', '--store', store, '--json']);
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(NOTE);
    expect(out.stderr.match(NOTE)?.[1]).toBe('anonymously (documents without an ACL only)');
    expect(PackSchema.parse(JSON.parse(out.stdout)).items).toEqual([]);
  });

  it('names the principals read as; none with the right ones, or --all-principals', async () => {
    const wrong = await runCli(['bundle', 'reciprocal rank fusion', '--store', store, '--principals', 'eng,ops']);
    expect(wrong.stderr.match(NOTE)?.[1]).toBe('as eng, ops');
    for (const flags of [['--principals', 'hr'], ['--all-principals']]) {
      const right = await runCli(['bundle', 'reciprocal rank fusion', '--store', store, '--json', ...flags]);
      expect(right.stderr).not.toMatch(NOTE);
      expect(PackSchema.parse(JSON.parse(right.stdout)).items.length).toBeGreaterThan(0);
    }
  });

  it('is not given when nothing matches at all, and is given for a briefing prompt', async () => {
    const nothing = await runCli(['bundle', 'xylophonequartz', '--store', store]);
    expect(nothing.code).toBe(0);
    expect(nothing.stderr).not.toMatch(NOTE);
    const briefing = await runCli(['briefing', '--prompt', 'reciprocal rank fusion', '--store', store]);
    expect(briefing.code).toBe(0);
    expect(briefing.stderr).toMatch(NOTE);
  });
});
