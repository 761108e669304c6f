import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PackSchema } from '../src/index.js';
import { runCli } from './helpers/cli.js';

const readme = readFileSync(resolve(import.meta.dirname, '../README.md'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'litm-readme-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Splits a documented shell line into arguments (double quotes, a trailing comment). */
function words(line: string): string[] {
  const args: string[] = [];
  for (const match of line.replace(/\s+#.*$/, '').matchAll(/"([^"]*)"|(\S+)/g)) args.push(match[1] ?? match[2]!);
  return args;
}

/** The `npx litm-pack <command> …` line of the CLI section's first shell block. */
function documented(command: string): string[] {
  const section = readme.slice(readme.indexOf('### The CLI'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  const line = block.split('\n').find((l) => l.startsWith(`npx litm-pack ${command} `))!;
  return words(line).slice(2);
}

describe('the README tells the truth', () => {
  it('its briefing --pins example names a source id that its ingest example produces, and pins it first', async () => {
    const docs = join(work, 'docs');
    mkdirSync(docs, { recursive: true });
    writeFileSync(join(docs, 'policy.md'), '# Refund policy\n\nRefunds are paid within 14 days; complaints go to the support desk.');
    writeFileSync(join(docs, 'faq.md'), '# FAQ\n\nRefund complaints are answered within two days.');
    const ingest = await runCli(documented('ingest'), undefined, { cwd: work });
    expect(ingest.code).toBe(0);
    const briefing = await runCli([...documented('briefing'), '--json'], undefined, { cwd: work });
    expect(briefing.code).toBe(0);
    const pins = documented('briefing');
    const pin = pins[pins.indexOf('--pins') + 1];
    const pack = PackSchema.parse(JSON.parse(briefing.stdout));
    expect(pack.citations[0]?.sourceId).toBe(pin);
  });

  it('lists @langchain/classic where its examples need it, and states the first-use costs once', () => {
    const install = readme.slice(readme.indexOf('## Install'), readme.indexOf('## Quick start'));
    expect(install).toContain('npm install @langchain/classic');
    expect(readme.match(/First use costs/g)).toHaveLength(1);
    expect(install).toMatch(/the first pack reads the encoding's vocabulary/);
  });
});
