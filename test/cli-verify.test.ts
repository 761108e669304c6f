import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore } from '../src/index.js';
import { runCli } from './helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-verify-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const docs = join(work, 'docs');
const store = join(work, 'store');
// Outside the working directory a source id is the path below the folder holding the folder ingested.
const idOf = (name: string) => `${basename(docs)}/${name}`;

const refunds = [
  '# Refunds',
  '## Timing',
  'Refunds are issued within 14 days of a return being received.',
  '## Gift cards',
  'Gift cards are never refunded, whatever the reason.',
].join('\n\n');
const shipping = '# Shipping\n\nParcels with refunds labels leave the warehouse within two days.';

beforeAll(async () => {
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, 'refunds.md'), refunds);
  writeFileSync(join(docs, 'shipping.md'), shipping);
  const out = await runCli(['ingest', docs, '--store', store, '--quiet']);
  expect(out.code, out.stderr).toBe(0);
});

async function bundle(query: string): Promise<string> {
  const out = await runCli(['bundle', query, '--store', store, '--json', '--mode', 'lexical']);
  expect(out.code, out.stderr).toBe(0);
  return out.stdout;
}

describe('litm-pack verify / remove / ingest --prune', () => {
  it('prints a table and exits 0 while every citation holds; JSON lines with --json', async () => {
    const pack = await bundle('refunds gift cards parcels');
    writeFileSync(join(work, 'pack.json'), pack);
    const table = await runCli(['verify', join(work, 'pack.json'), '--store', store]);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ref\s+status\s+source\s+version\s+span/m);
    expect(table.stdout).toMatch(/3 current, 0 moved, 0 changed, 0 missing/);
    const json = await runCli(['verify', join(work, 'pack.json'), '--store', store, '--json']);
    expect(json.code).toBe(0);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l.type === 'citation').map((l) => l.status)).toEqual(['current', 'current', 'current']);
    expect(lines.at(-1)).toMatchObject({ type: 'summary', pack: 1, current: 3, moved: 0, changed: 0, missing: 0 });
  });

  it('after an edit and a removal: moved, changed and missing, exit 3; a golden set of packs is summarised per pack', async () => {
    const first = await bundle('refunds gift cards parcels');
    const second = await bundle('warehouse parcels');
    writeFileSync(join(work, 'golden.jsonl'), `${first}${second}`);
    writeFileSync(
      join(docs, 'refunds.md'),
      refunds
        .replace('# Refunds', '# Refunds\n\nUpdated in May.')
        .replace('Gift cards are never refunded, whatever the reason.', 'Gift cards are refunded as store credit, whatever the reason.'),
    );
    expect((await runCli(['ingest', docs, '--store', store, '--quiet'])).code).toBe(0);
    const removed = await runCli(['remove', idOf('shipping.md'), 'not-there.md', '--store', store]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/Removed 1 of 2 sources \(1 chunk\) .*; 1 not in the store\./);

    const json = await runCli(['verify', join(work, 'golden.jsonl'), '--store', store, '--json']);
    expect(json.code).toBe(3);
    // A line of `verify --json`, as far as this test reads it.
    type VerifyLine = Record<string, unknown> & {
      type: string;
      pack?: number;
      sourceId?: string;
      status?: string;
      closest?: { text: string } | null;
    };
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as VerifyLine);
    const statusOf = (pack: number, text: string) =>
      lines.find((l) => l.type === 'citation' && l.pack === pack && (l.sourceId as string).endsWith(text));
    const citations = lines.filter((l) => l.type === 'citation' && l.pack === 1);
    expect(citations.map((c) => c.status).sort()).toEqual(['changed', 'missing', 'moved']);
    const changed = citations.find((c) => c.status === 'changed')!;
    expect(changed.closest?.text).toBe('Gift cards are refunded as store credit, whatever the reason.');
    expect(statusOf(2, 'shipping.md')!.status).toBe('missing');
    expect(lines.filter((l) => l.type === 'summary')).toEqual([
      expect.objectContaining({ pack: 1, current: 0, moved: 1, changed: 1, missing: 1 }),
      expect.objectContaining({ pack: 2, current: 0, moved: 0, changed: 0, missing: 1 }),
    ]);
    const table = await runCli(['verify', join(work, 'golden.jsonl'), '--store', store]);
    expect(table.code).toBe(3);
    expect(table.stdout).toMatch(/Pack 1: 0 current, 1 moved, 1 changed, 1 missing/);
    expect(table.stdout).toMatch(/Pack 2: 0 current, 0 moved, 0 changed, 1 missing/);
    expect(table.stdout).toMatch(/changed .*closest \d+-\d+ \(score 0\.\d\d\): "Gift cards are refunded/);
  });

  it('ingest --prune removes sources whose files are gone, and they verify as missing', async () => {
    const dir = join(work, 'prune-docs');
    const pruneStore = join(work, 'prune-store');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'keep.md'), 'Refunds are kept here.');
    writeFileSync(join(dir, 'gone.md'), 'Refunds were written here once.');
    expect((await runCli(['ingest', dir, '--store', pruneStore, '--quiet'])).code).toBe(0);
    const pack = (await runCli(['bundle', 'refunds', '--store', pruneStore, '--json'])).stdout;
    writeFileSync(join(work, 'prune-pack.json'), pack);
    unlinkSync(join(dir, 'gone.md'));
    const plain = await runCli(['ingest', dir, '--store', pruneStore, '--quiet']);
    expect(plain.stdout).not.toMatch(/Pruned/);
    expect((await runCli(['verify', join(work, 'prune-pack.json'), '--store', pruneStore])).code).toBe(0);
    const pruned = await runCli(['ingest', dir, '--store', pruneStore, '--quiet', '--prune']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/Pruned 1 source whose files are gone \(1 chunk\)\./);
    const loaded = await MemoryHybridStore.load(join(pruneStore, 'store.json'));
    expect(loaded.sources().map((s) => s.sourceId)).toEqual([`${basename(dir)}/keep.md`]);
    const verify = await runCli(['verify', join(work, 'prune-pack.json'), '--store', pruneStore, '--json']);
    expect(verify.code).toBe(3);
    expect(verify.stdout).toMatch(/"status":"missing"/);
    // Everything gone: --prune empties the folder's sources instead of failing on "no files".
    unlinkSync(join(dir, 'keep.md'));
    const emptied = await runCli(['ingest', dir, '--store', pruneStore, '--quiet', '--prune']);
    expect(emptied.code, emptied.stderr).toBe(0);
    expect((await MemoryHybridStore.load(join(pruneStore, 'store.json'))).size).toBe(0);
  });

  it('verifies as the given principals: a restricted source is missing', async () => {
    const aclStore = join(work, 'acl-store');
    mkdirSync(aclStore, { recursive: true });
    const memory = new MemoryHybridStore();
    await memory.addDocuments([{ id: 'hr.md', acl: ['hr'], text: 'Salaries are reviewed in March.' }]);
    await memory.save(join(aclStore, 'store.json'));
    const pack = (await runCli(['bundle', 'salaries', '--store', aclStore, '--json', '--principals', 'hr'])).stdout;
    writeFileSync(join(work, 'acl-pack.json'), pack);
    expect((await runCli(['verify', join(work, 'acl-pack.json'), '--store', aclStore, '--principals', 'hr'])).code).toBe(0);
    const hidden = await runCli(['verify', join(work, 'acl-pack.json'), '--store', aclStore, '--principals', 'sales', '--json']);
    expect(hidden.code).toBe(3);
    expect(hidden.stdout).toMatch(/"status":"missing"/);
  });

  it('rejects input that is not a pack with exit 2 and one line naming where', async () => {
    writeFileSync(join(work, 'bad.jsonl'), `${readFileSync(join(work, 'pack.json'), 'utf8')}{"schema":"x"}\n`);
    const out = await runCli(['verify', join(work, 'bad.jsonl'), '--store', store]);
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(/line 2: not a pack/);
  });
});
