// examples/promptfoo runs through promptfoo itself (its Node API on the Node 22 it needs, installed by
// scripts/setup-promptfoo.mjs): the config validates against promptfoo's schema, every test passes, and the
// same config fails an answer with an invented quote and contexts in the model's (LITM) order instead of rank.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTests } from '../../examples/promptfoo/make-tests.js';

const ROOT = resolve(import.meta.dirname, '../..');
const EXAMPLE = join(ROOT, 'examples/promptfoo');
const work = mkdtempSync(join(tmpdir(), 'litm-promptfoo-'));
let tools: { node: string; promptfoo: string };

interface Summary {
  passed: number;
  failed: number;
  results: { description: string; success: boolean; score: number; reason: string; assertions: { pass: boolean; reason: string }[] }[];
}

function runExample(extra: string[] = []): Summary {
  const run = spawnSync(tools.node, [join(EXAMPLE, 'run.mjs'), ...extra], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      PROMPTFOO_DIR: tools.promptfoo,
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_CONFIG_DIR: join(work, 'config'),
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as Summary;
}

beforeAll(() => {
  tools = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'scripts/setup-promptfoo.mjs')], { encoding: 'utf8' })) as typeof tools;
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('examples/promptfoo', () => {
  it('tests.json is what make-tests.ts builds from the example corpus (contexts in rank order, recorded answers)', async () => {
    const committed = JSON.parse(readFileSync(join(EXAMPLE, 'tests.json'), 'utf8')) as unknown;
    expect(JSON.parse(JSON.stringify(await buildTests()))).toEqual(committed);
  });

  it('runs offline through promptfoo: the config validates and every test passes both assertions', () => {
    const summary = runExample();
    expect(summary.failed).toBe(0);
    expect(summary.passed).toBe(3);
    for (const result of summary.results) {
      expect(result.assertions).toHaveLength(2);
      expect(result.assertions[0]!.reason).toMatch(/^2 refs, 2 quotes found$/u);
    }
  });

  it('the same config fails an invented quote and contexts handed over in LITM order', () => {
    const tests = JSON.parse(readFileSync(join(EXAMPLE, 'tests.json'), 'utf8')) as {
      vars: { answer: string; context: string[]; pack: { items: { text: string }[] } };
    }[];
    tests[0]!.vars.answer = tests[0]!.vars.answer.replace(/"[^"]+" \[1\]/u, '"Token counts always add up across joins." [1]');
    tests[1]!.vars.context = tests[1]!.vars.pack.items.map((item) => item.text);
    const file = join(work, 'broken-tests.json');
    writeFileSync(file, JSON.stringify(tests));
    const summary = runExample(['--tests', file]);
    expect(summary.passed).toBe(1);
    expect(summary.results[0]!.success).toBe(false);
    expect(summary.results[0]!.assertions[0]).toMatchObject({
      pass: false,
      reason: 'quote "Token counts always add up across joins." is not in source [1]',
    });
    expect(summary.results[1]!.success).toBe(false);
    expect(summary.results[1]!.assertions.map((a) => a.pass)).toEqual([true, false]);
  });
});
