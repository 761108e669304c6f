// `litm-pack reindex`: an embedded store indexed with chunk text alone moves to the current recipe under its lock,
// and the reading commands say how to get there until it does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore } from '../src/index.js';
import { runCli } from './helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-reindex-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function oldStore(name: string): Promise<string> {
  const dir = join(work, name);
  const store = new MemoryHybridStore({ indexedText: 'chunk-text' });
  await store.addDocuments([{ id: 'report.md', title: 'Quarterly Zebrafish Report', text: 'Growth rates rose in the second tank.' }]);
  await store.save(join(dir, 'store.json'));
  return dir;
}

describe('litm-pack reindex', () => {
  it('a reading command says the store is indexed the old way and names the command; reindex moves it; the title is then found', async () => {
    const dir = await oldStore('old');
    const before = await runCli(['bundle', 'zebrafish', '--store', dir, '--mode', 'lexical', '--json']);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stderr).toContain(`indexed-text recipe "chunk-text"`);
    expect(before.stderr).toContain(`run "litm-pack reindex --store ${dir}"`);
    expect((JSON.parse(before.stdout) as { items: unknown[] }).items).toEqual([]);

    const out = await runCli(['reindex', '--store', dir, '--quiet']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout.trim()).toBe(`Re-indexed 1 chunk of ${dir} from "chunk-text" to "title-headings@1".`);
    expect((await MemoryHybridStore.load(join(dir, 'store.json'))).indexedText).toBe('title-headings@1');

    const after = await runCli(['bundle', 'zebrafish', '--store', dir, '--mode', 'lexical', '--json']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).not.toContain('indexed-text recipe');
    const pack = JSON.parse(after.stdout) as { items: { sourceId: string; text: string }[] };
    // Found by its title, cited by its own text.
    expect(pack.items.map((item) => [item.sourceId, item.text])).toEqual([['report.md', 'Growth rates rose in the second tank.']]);

    const again = await runCli(['reindex', '--store', dir]);
    expect(again.stdout.trim()).toBe(`${dir} is indexed with "title-headings@1" already: nothing to do.`);
  });

  it('refuses a Qdrant collection, naming the way it is re-indexed, and a store that does not exist', async () => {
    const qdrant = await runCli(['reindex', '--store', 'qdrant://localhost:6333/docs']);
    expect(qdrant.code).toBe(2);
    expect(qdrant.stderr).toContain('--reindex --alias NAME');
    const missing = await runCli(['reindex', '--store', join(work, 'nowhere')]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/No store at .*nowhere/u);
  });
});
