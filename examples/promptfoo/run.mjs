// Runs promptfooconfig.yaml through promptfoo's Node API (`evaluate`) and prints one JSON summary: each test's
// description, pass/fail, score and reason. promptfoo's command line needs its SQLite binding (an optional
// native dependency) to start even when nothing is written; the Node API does not, so the test suite runs the
// example this way, with the config validated by promptfoo's own UnifiedConfigSchema first.
//
//   <node 22> examples/promptfoo/run.mjs [--tests FILE]     (promptfoo from PROMPTFOO_DIR, default .promptfoo/tool/node_modules/promptfoo)
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import YAML from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../..');
const promptfooDir = process.env.PROMPTFOO_DIR ?? join(root, '.promptfoo/tool/node_modules/promptfoo');
const { default: promptfoo } = await import(pathToFileURL(join(promptfooDir, 'dist/src/index.js')).href);

const args = process.argv.slice(2);
const testsOverride = args[0] === '--tests' ? resolve(args[1]) : undefined;
const config = YAML.parse(await readFile(join(here, 'promptfooconfig.yaml'), 'utf8'));
if (testsOverride !== undefined) config.tests = `file://${testsOverride}`;
const valid =
  promptfoo.UnifiedConfigSchema ?? (await import(pathToFileURL(join(promptfooDir, 'dist/src/index.js')).href)).UnifiedConfigSchema;
const parsed = valid.safeParse(config);
if (!parsed.success) {
  console.error(`promptfooconfig.yaml does not validate: ${JSON.stringify(parsed.error.issues)}`);
  process.exit(2);
}
// Relative file:// paths (tests, assertions) are read from the config's folder.
process.chdir(here);
const summary = await promptfoo.evaluate(
  { ...config, writeLatestResults: false },
  { maxConcurrency: 1, cache: false, showProgressBar: false },
);
const results = summary.results.map((r) => ({
  description: r.testCase?.description ?? null,
  success: r.success,
  score: r.score,
  reason: r.gradingResult?.reason ?? r.error ?? null,
  assertions: (r.gradingResult?.componentResults ?? []).map((c) => ({ pass: c.pass, reason: c.reason })),
}));
console.log(JSON.stringify({ passed: results.filter((r) => r.success).length, failed: results.filter((r) => !r.success).length, results }));
