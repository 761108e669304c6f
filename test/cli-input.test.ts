import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSaved } from './helpers/store-files.js';
import { decodeText } from '../src/sources/text.js';
import { runCli } from './helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'litm-cli-input-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A folder of files: text, binary, Latin-1 and a BOM file. */
function garbageFolder(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'good.md'), '# Good\n\nRefunds are paid within 14 days.\n');
  writeFileSync(join(dir, 'bom.md'), `\uFEFF# Heading after a BOM\n\nShipping is free above 50 euros.\n`);
  writeFileSync(join(dir, 'random.md'), Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 151 + 7) % 256)));
  writeFileSync(join(dir, 'program.txt'), Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]), Buffer.alloc(64)]));
  writeFileSync(join(dir, 'latin1.txt'), Buffer.from('Caf\xe9 cr\xe8me br\xfbl\xe9e: a dessert.\n', 'latin1'));
  return dir;
}

describe('ingest refuses what is not UTF-8 text', () => {
  it('skips binary and non-UTF-8 files with a warning naming each, counts them, and strips a BOM', async () => {
    garbageFolder('mixed');
    const store = join(work, 'mixed-store');
    const out = await runCli(['ingest', 'mixed', '--store', store, '--quiet'], undefined, { cwd: work });
    expect(out.code).toBe(0);
    const warnings = out.stderr.trim().split('\n');
    expect(warnings).toEqual([
      'litm-pack: skipped mixed/latin1.txt: not UTF-8 text (convert it first, e.g. iconv -f latin1 -t utf-8)',
      'litm-pack: skipped mixed/program.txt: binary content',
      'litm-pack: skipped mixed/random.md: binary content',
    ]);
    expect(out.stdout).toMatch(
      /^Ingested 2 files into .*mixed-store: \d+ chunks added, 0 unchanged, 0 removed \(\d+ chunks in all\)\.\nSkipped 3 files: 2 binary, 1 not UTF-8\.\n$/,
    );

    const saved = await readSaved(join(store, 'store.json'));
    const bom = saved.chunks.find((c) => c.record.sourceId === 'mixed/bom.md')!.record;
    expect(bom.title).toBe('Heading after a BOM');
    expect(bom.section).toEqual(['Heading after a BOM']);
    expect(bom.text.includes('\uFEFF')).toBe(false);
    expect(saved.chunks.every((c) => !c.record.text.includes('\uFFFD'))).toBe(true);
  });

  it('fails with --strict before touching the store', async () => {
    garbageFolder('strict');
    const store = join(work, 'strict-store');
    const out = await runCli(['ingest', 'strict', '--store', store, '--strict'], undefined, { cwd: work });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('litm-pack: skipped strict/program.txt: binary content');
    expect(out.stderr).toContain('litm-pack: --strict: Skipped 3 files: 2 binary, 1 not UTF-8. Nothing was ingested.');
    expect(existsSync(store)).toBe(false);
  });

  it('says "1 file" and fails plainly when nothing is left to ingest', async () => {
    const dir = join(work, 'single');
    mkdirSync(dir);
    writeFileSync(join(dir, 'one.md'), 'One line.');
    const one = await runCli(['ingest', dir, '--store', join(work, 'single-store')], undefined, { cwd: work });
    expect(one.stdout).toMatch(/^Ingested 1 file into .*: 1 chunk added, 0 unchanged, 0 removed \(1 chunk in all\)\.\n$/);

    const only = join(work, 'only-binary');
    mkdirSync(only);
    writeFileSync(join(only, 'x.md'), Buffer.from([0, 1, 2, 3]));
    const none = await runCli(['ingest', 'only-binary', '--store', join(work, 'none-store')], undefined, { cwd: work });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No documents to ingest in only-binary (Skipped 1 file: 1 binary)');
  });
});

describe('ingest and symbolic links', () => {
  function linkedTree(name: string) {
    const root = join(work, name);
    const docs = join(root, 'docs');
    mkdirSync(join(docs, 'sub'), { recursive: true });
    writeFileSync(join(root, 'secret.txt'), 'The launch code is 0000.');
    writeFileSync(join(docs, 'policy.md'), '# Policy\n\nRefunds are paid within 14 days.');
    writeFileSync(join(docs, 'sub', 'faq.md'), '# FAQ\n\nShipping is free.');
    symlinkSync(join(root, 'secret.txt'), join(docs, 'notes.md')); // leads outside docs/
    symlinkSync('.', join(docs, 'self')); // a loop
    symlinkSync('..', join(docs, 'up')); // the parent
    symlinkSync(join(docs, 'missing.md'), join(docs, 'dangling.md')); // to nothing
    symlinkSync(join(docs, 'sub'), join(docs, 'alias')); // inside: its files are already there
    return { root, docs };
  }

  const sources = async (store: string) => (await readSaved(join(store, 'store.json'))).sources.map((s) => s.sourceId);

  it('by default follows none that leave the folder, never loops, and skips dangling links with a warning', async () => {
    const { root } = linkedTree('links');
    const store = join(work, 'links-store');
    const out = await runCli(['ingest', 'docs', '--store', store], undefined, { cwd: root });
    expect(out.code).toBe(0);
    expect(await sources(store)).toEqual(['docs/policy.md', 'docs/sub/faq.md']);
    expect(out.stderr).toContain('litm-pack: skipped docs/dangling.md: a symbolic link to nothing');
    expect(out.stderr).toContain(
      'litm-pack: skipped docs/notes.md: a symbolic link leading outside docs (not followed; --follow-symlinks follows it)',
    );
    expect(out.stderr).toContain('litm-pack: skipped docs/up: a symbolic link leading outside docs');
    expect(out.stdout).toContain('Skipped 3 files: 1 dangling symlink, 2 symlinks leading outside the folders given.');
  });

  it('follows them with --follow-symlinks, still without loops or duplicates', async () => {
    const { root } = linkedTree('follow');
    const store = join(work, 'follow-store');
    const out = await runCli(['ingest', 'docs', '--store', store, '--follow-symlinks'], undefined, { cwd: root });
    expect(out.code).toBe(0);
    // up -> .. reaches secret.txt in the parent (docs/ itself is not walked twice); notes.md is the same file.
    expect(await sources(store)).toEqual(['docs/notes.md', 'docs/policy.md', 'docs/sub/faq.md']);
  });

  it('fails on a dangling link with --strict', async () => {
    const { root } = linkedTree('strict-links');
    const out = await runCli(['ingest', 'docs', '--store', join(work, 'strict-links-store'), '--strict', '--follow-symlinks'], undefined, {
      cwd: root,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--strict: Skipped 1 file: 1 dangling symlink. Nothing was ingested.');
  });
});

describe('decodeText', () => {
  it('tells text from binary and invalid UTF-8, and drops a BOM', () => {
    expect(decodeText(Buffer.from('\uFEFFhé', 'utf8'))).toEqual({ text: 'hé' });
    expect(decodeText(Buffer.from([0x68, 0x00, 0x69]))).toEqual({ problem: 'binary' });
    expect(decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9]))).toEqual({ problem: 'not-utf8' });
    expect(decodeText(Buffer.from('\u0001\u0002\u0003 text', 'utf8'))).toEqual({ problem: 'binary' });
    expect(decodeText(Buffer.from('tab\tand\fform feed\r\n\u001b[1mbold\u001b[0m', 'utf8'))).toHaveProperty('text');
  });
});
