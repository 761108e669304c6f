// `litm-pack ingest` on folders with hostile files in them: a bad file is a warning line and a count in the summary,
// exit 0, never a stack trace; `--prune` removes only sources whose files are gone (not a message of another
// mailbox that a forged Message-ID named, not what a file that is skipped today held).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryHybridStore } from '../src/index.js';
import { runCli } from './helpers/cli.js';
import { makeEmail } from './helpers/real-files.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-hostile-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const sourcesIn = async (store: string) =>
  (await MemoryHybridStore.load(join(store, 'store.json')))
    .sources()
    .map((s) => s.sourceId)
    .sort();
const mbox = (from: string, raw: Buffer) => `From ${from} Mon Apr  1 10:00:00 2024\n${raw.toString().replace(/\r\n/gu, '\n')}\n`;

describe('litm-pack ingest with bad files among good ones', () => {
  it('exits 0 with the good files ingested, one warning line per bad file and the count in the summary', async () => {
    const dir = join(work, 'mixed');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 5; i += 1) writeFileSync(join(dir, `good-${i}.md`), `# Good ${i}\n\nRefunds are issued within ${i + 10} days.\n`);
    writeFileSync(join(dir, 'deep.html'), `<html><body>${'<div>'.repeat(20_000)}deep${'</div>'.repeat(20_000)}</body></html>`);
    writeFileSync(join(dir, 'talk.vtt'), `WEBVTT\n\n${'9'.repeat(400)}:00:01.000 --> ${'9'.repeat(400)}:00:02.000\nNever.\n`);
    writeFileSync(join(dir, 'secret.md'), '---\nacl: []\n---\n# Salaries\n\nBands.\n');
    const store = join(work, 'mixed-store');
    const out = await runCli(['ingest', dir, '--store', store, '--quiet']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).not.toMatch(/\n\s+at /u);
    expect(
      out.stderr
        .trim()
        .split('\n')
        .map((line) => line.split(`${dir}/`).join('')),
    ).toEqual([
      expect.stringMatching(/skipped deep\.html: the html loader ran out of stack/u),
      expect.stringMatching(/skipped secret\.md: Front matter of secret\.md: acl: acl must name at least one principal/u),
      expect.stringMatching(/skipped talk\.vtt: no cues with a timing line/u),
    ]);
    expect(out.stdout).toMatch(/^Ingested 5 files into /u);
    expect(out.stdout).toContain('Skipped 3 files: 1 with bad front matter, 1 a loader failed on, 1 unreadable.');
    expect(await sourcesIn(store)).toEqual([0, 1, 2, 3, 4].map((i) => `mixed/good-${i}.md`));
  });
});

describe('litm-pack ingest --prune removes only sources whose files are gone', () => {
  it('a forged Message-ID in a new mailbox neither hides nor prunes the real message of another', async () => {
    const dir = join(work, 'mail');
    mkdirSync(dir, { recursive: true });
    const real = await makeEmail({
      from: 'ceo@acme.com',
      to: 'all@acme.com',
      subject: 'Q3 results',
      messageId: '<q3@acme.com>',
      text: 'Revenue grew 12% in Q3.',
    });
    writeFileSync(join(dir, 'b-inbox.mbox'), mbox('ceo@acme.com', real));
    const store = join(work, 'mail-store');
    expect((await runCli(['ingest', dir, '--store', store, '--quiet'])).code).toBe(0);
    // Someone mails a message claiming the same Message-ID; it lands in a mailbox read first.
    const forged = await makeEmail({
      from: 'eve@evil.example',
      to: 'all@acme.com',
      subject: 'Q3 results',
      messageId: '<q3@acme.com>',
      text: 'Nothing to see.',
    });
    writeFileSync(join(dir, 'a-spam.mbox'), mbox('eve@evil.example', forged));
    const out = await runCli(['ingest', dir, '--store', store, '--quiet', '--prune']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).not.toMatch(/Pruned [1-9]/u);
    expect(await sourcesIn(store)).toEqual(['mail/a-spam.mbox/q3@acme.com', 'mail/b-inbox.mbox/q3@acme.com']);
    const hits = (await MemoryHybridStore.load(join(store, 'store.json'))).search({ text: 'revenue grew', mode: 'lexical', limit: 5 });
    expect((await hits).map((hit) => hit.sourceId)).toEqual(['mail/b-inbox.mbox/q3@acme.com']);
  });

  it('the same message in two mailboxes is read once, and the copy stored before stays', async () => {
    const dir = join(work, 'copies');
    mkdirSync(dir, { recursive: true });
    const message = await makeEmail({
      from: 'sam@example.com',
      to: 'ops@example.com',
      subject: 'Webhooks',
      messageId: '<w1@example.com>',
      text: 'Retry webhooks eight times.',
    });
    writeFileSync(join(dir, 'b.mbox'), mbox('sam@example.com', message));
    const store = join(work, 'copies-store');
    expect((await runCli(['ingest', dir, '--store', store, '--quiet'])).code).toBe(0);
    writeFileSync(join(dir, 'a.mbox'), mbox('sam@example.com', message));
    const out = await runCli(['ingest', dir, '--store', store, '--quiet', '--prune']);
    expect(out.code, out.stderr).toBe(0);
    expect(await sourcesIn(store)).toEqual(['copies/a.mbox/w1@example.com', 'copies/b.mbox/w1@example.com']);
  });

  it('a file skipped today (being written, unreadable) keeps what it held; a deleted one loses it', async () => {
    const dir = join(work, 'skipped');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'policy.md'), '# Policy\n\nRefunds within 14 days.\n');
    writeFileSync(join(dir, 'old.md'), '# Old\n\nTo be deleted.\n');
    const store = join(work, 'skipped-store');
    expect((await runCli(['ingest', dir, '--store', store, '--quiet'])).code).toBe(0);
    // An edit that breaks the front matter: the file is skipped, and its last good version stays.
    writeFileSync(join(dir, 'policy.md'), '---\ntitle: [unclosed\n---\n# Policy\n\nRefunds within 14 days.\n');
    writeFileSync(join(dir, 'new.md'), '# New\n\nA new page.\n');
    rmSync(join(dir, 'old.md'));
    const out = await runCli(['ingest', dir, '--store', store, '--quiet', '--prune']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/Pruned 1 source whose files are gone/u);
    expect(await sourcesIn(store)).toEqual([`${basename(dir)}/new.md`, `${basename(dir)}/policy.md`]);
  });
});
