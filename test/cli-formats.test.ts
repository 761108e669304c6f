// `litm-pack ingest` on the mixed corpus (examples/mixed) into the embedded store: every kind read, the record
// flags applied, and bundles whose citations carry locators.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PackSchema } from '../src/index.js';
import { runCli } from './helpers/cli.js';
import { readSaved } from './helpers/store-files.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-formats-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const store = join(work, 'store');

describe('litm-pack ingest on the mixed corpus', () => {
  it('reads every kind, names what it read in part, and bundles cite a PDF page, code lines, an e-mail and a transcript time', async () => {
    const ingest = await runCli([
      'ingest',
      'examples/mixed',
      '--store',
      store,
      '--quiet',
      '--id-field',
      'key',
      '--text-field',
      'description',
      '--title-field',
      'summary',
      '--metadata-fields',
      'status,priority',
    ]);
    expect(ingest.code).toBe(0);
    expect(ingest.stderr).toBe('');
    expect(ingest.stdout).toMatch(
      /^Ingested 12 files \(16 sources\) into .*: \d+ chunks added, 0 unchanged, 0 removed \(\d+ chunks in all\)\.\n$/u,
    );
    const saved = await readSaved(join(store, 'store.json'));
    expect(saved.chunks.find((c) => c.record.sourceId === 'examples/mixed/tickets.jsonl/OPS-101')!.record.metadata).toEqual({
      status: 'open',
      priority: 'high',
    });

    const bundle = await runCli([
      'bundle',
      'how are refund webhook retries spaced out, with backoff and jitter?',
      '--store',
      store,
      '--budget',
      '1200',
      '--json',
    ]);
    expect(bundle.code).toBe(0);
    const pack = PackSchema.parse(JSON.parse(bundle.stdout));
    const page = pack.citations.find((c) => c.locator?.page !== undefined)!;
    const code = pack.citations.find((c) => c.locator?.lines !== undefined)!;
    const time = pack.citations.find((c) => c.locator?.time !== undefined)!;
    const mail = pack.citations.find((c) => c.sourceId.startsWith('examples/mixed/mail/inbox.mbox/'))!;
    expect(page.sourceId).toBe('examples/mixed/manual.pdf');
    expect(code.section).toEqual(expect.any(Array));
    expect(time.sourceId).toBe('examples/mixed/podcast.vtt');
    expect(mail.title).toMatch(/^Email — \S+@example\.com → \S+@example\.com — 2024-04-02 — subject: /u);
    // The header shows each locator compactly.
    const headers = pack.context.split('\n').filter((line) => /^\[\d+\] /u.test(line));
    // (compact headers, the default: the title or the source, then the locator)
    expect(headers[page.ref - 1]).toMatch(/ \(p\. \d+\)$/u);
    expect(headers[code.ref - 1]).toMatch(/ \(lines \d+–\d+\)$/u);
    expect(headers[time.ref - 1]).toMatch(/ \(\d\d:\d\d–\d\d:\d\d\)$/u);

    // The text output's citation lines name them too.
    const text = await runCli(['bundle', 'contract renewal 24 months', '--store', store, '--budget', '600']);
    expect(text.stdout).toMatch(/examples\/mixed\/mail\/renewal\.eml\/renewal-terms\.pdf \(version [0-9a-f]{12}, chars \d+-\d+, p\. 1\)/u);
  });

  it("--prune removes what a file held once the file is gone (a mailbox's messages)", async () => {
    const { cpSync, rmSync: rm } = await import('node:fs');
    const copy = join(work, 'copy');
    cpSync('examples/mixed/mail', join(copy, 'mail'), { recursive: true });
    const st = join(work, 'prune-store');
    await runCli(['ingest', 'copy', '--store', st, '--quiet'], undefined, { cwd: work });
    rm(join(copy, 'mail/inbox.mbox'));
    const pruned = await runCli(['ingest', 'copy', '--store', st, '--quiet', '--prune'], undefined, { cwd: work });
    expect(pruned.stdout).toMatch(/Pruned 2 sources whose files are gone/u);
  });
});
