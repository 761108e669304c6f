import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PackSchema } from '../src/index.js';
import { runCli } from './helpers/cli.js';

const ROOT = resolve(import.meta.dirname, '..');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'litm-readme-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The text of the README's `## heading` section, up to the next `## `. */
function section(heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  expect(start, `README section "${heading}"`).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** Text with every run of white space (line breaks included) as one space, for statements that wrap. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** Splits a documented shell line into arguments (double quotes, a trailing comment). */
function words(line: string): string[] {
  const args: string[] = [];
  for (const match of line.replace(/\s+#.*$/, '').matchAll(/"([^"]*)"|(\S+)/g)) args.push(match[1] ?? match[2]!);
  return args;
}

/** The `npx litm-pack <command> …` line of the CLI section's first shell block. */
function documented(command: string): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(section('The CLI'))![1]!;
  const line = block.split('\n').find((l) => l.startsWith(`npx litm-pack ${command} `))!;
  return words(line).slice(2);
}

describe('the README tells the truth', () => {
  it('its briefing --pins example names a source id that its ingest example produces, and pins it first', async () => {
    const docs = join(work, 'pins', 'docs');
    mkdirSync(docs, { recursive: true });
    writeFileSync(join(docs, 'policy.md'), '# Refund policy\n\nRefunds are paid within 14 days; complaints go to the support desk.');
    writeFileSync(join(docs, 'faq.md'), '# FAQ\n\nRefund complaints are answered within two days.');
    const cwd = join(work, 'pins');
    const ingest = await runCli(documented('ingest'), undefined, { cwd });
    expect(ingest.code).toBe(0);
    const briefing = await runCli([...documented('briefing'), '--json'], undefined, { cwd });
    expect(briefing.code).toBe(0);
    const pins = documented('briefing');
    const pin = pins[pins.indexOf('--pins') + 1];
    const pack = PackSchema.parse(JSON.parse(briefing.stdout));
    expect(pack.citations[0]?.sourceId).toBe(pin);
  });

  it('says what the CLI reads by default, and the CLI does read that: documents without an ACL only', async () => {
    const cli = flat(section('The CLI'));
    expect(cli).toContain('**Every reading command reads anonymously by default: documents without an ACL only.**');
    expect(cli).toMatch(/`--principals hr,legal` adds what those principals may read; `--all-principals` reads everything/);
    const cwd = join(work, 'access');
    mkdirSync(join(cwd, 'docs'), { recursive: true });
    writeFileSync(join(cwd, 'docs', 'public.md'), '# Refunds\n\nRefunds are paid within 14 days.');
    writeFileSync(join(cwd, 'docs', 'hr.md'), '---\nacl: [hr]\n---\n# Refund fraud\n\nRefund fraud cases go to HR within a day.');
    expect((await runCli(documented('ingest'), undefined, { cwd })).code).toBe(0);
    const sources = async (...flags: string[]) => {
      const out = await runCli(['bundle', 'refund', '--json', ...flags], undefined, { cwd });
      expect(out.code).toBe(0);
      return PackSchema.parse(JSON.parse(out.stdout))
        .citations.map((c) => c.sourceId)
        .sort();
    };
    expect(await sources()).toEqual(['docs/public.md']);
    expect(await sources('--principals', 'hr')).toEqual(['docs/hr.md', 'docs/public.md']);
    expect(await sources('--all-principals')).toEqual(['docs/hr.md', 'docs/public.md']);
    // What only restricted text matches: an empty pack, and a note naming both flags.
    const fraud = await runCli(['bundle', 'fraud'], undefined, { cwd });
    expect(fraud.code).toBe(0);
    expect(fraud.stderr).toMatch(/--principals.*--all-principals/);
  });

  it('no page says a call without principals reads everything', () => {
    const pages = [
      join(ROOT, 'README.md'),
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(ROOT, 'docs', f)),
    ];
    const claims = pages.flatMap((page) =>
      [...flat(readFileSync(page, 'utf8')).matchAll(/without `?--principals`?[^.]*\breads? (?:everything|every document|all)\b/gi)].map(
        (m) => `${page}: ${m[0]}`,
      ),
    );
    expect(claims).toEqual([]);
    for (const page of ['docs/store.md', 'docs/cli.md', 'docs/server.md'])
      expect(flat(readFileSync(join(ROOT, page), 'utf8'))).toMatch(/anonymous(ly)? by default/i);
  });

  it('names the peers its examples import in the install block, and what npm test installs with its size', () => {
    const install = /```sh\n([\s\S]*?)```/.exec(section('Install'))![1]!;
    const code = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
    const imported = new Set(
      [...code.matchAll(/from '((?:@[\w.-]+\/)?[\w.-]+)[^']*'/g)].map((m) => m[1]!).filter((name) => name !== 'litm-pack'),
    );
    expect([...imported]).toEqual(expect.arrayContaining(['@langchain/classic', '@langchain/core', '@llamaindex/core']));
    // The Qdrant example imports litm-pack/qdrant, whose peer is the Qdrant client.
    for (const peer of [...imported, '@qdrant/js-client-rest']) expect(install, peer).toContain(peer);
    const commands = section('The two commands');
    expect(commands).toContain('npm ci && npm test');
    for (const venv of ['.venv-qdrant', '.conformance', '.venv-model'])
      expect(commands).toMatch(new RegExp(`\`${venv.replace('.', '\\.')}\` \\(about [\\d.]+ [MG]B\\)`));
    expect(commands).toContain('npm run test:model');
  });
});
