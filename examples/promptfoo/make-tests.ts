/**
 * Writes tests.json for promptfooconfig.yaml: for each question, the pack litm-pack makes from the example
 * corpus (BM25 in the embedded store, offline), its contexts in RANK order (`toPromptfooTestCase`), and a
 * recorded answer that cites the pack's `[n]` blocks and quotes them, which the config replays through
 * promptfoo's echo provider. The answers are written here from the packs (each quotes the first sentence of
 * the two best items), standing in for a model's output so the example needs no API key.
 *
 *   npx tsx examples/promptfoo/make-tests.ts        (rewrites tests.json)
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { splitSentences } from '../../src/core/split.js';
import type { Pack } from '../../src/core/schemas.js';
import { packBundle, MemoryHybridStore, type IngestDocument } from '../../src/index.js';
import { toEvalSample, toPromptfooTestCase, type PromptfooTestCase } from '../../src/llm/index.js';

const here = import.meta.dirname;
const root = join(here, '../..');

export const QUESTIONS = [
  'How are token budgets counted exactly?',
  'Why put the strongest passages first and last?',
  'How does hybrid search fuse BM25 and dense rankings?',
];

/** A recorded answer: the first sentence of the two best-ranked items, quoted and cited by their refs. */
export function recordedAnswer(pack: Pack): string {
  const best = [...pack.items].sort((a, b) => a.rank - b.rank).slice(0, 2);
  return best
    .map((item, i) => {
      const first = splitSentences(item.text)[0]!;
      const sentence = item.text.slice(first.start, first.end).replace(/\s+/gu, ' ');
      return `${i === 0 ? 'The sources say' : 'They add'}: "${sentence}" [${item.ref}]`;
    })
    .join(' ');
}

export async function buildTests(): Promise<(PromptfooTestCase & { vars: { pack: Pack } })[]> {
  const dir = join(root, 'examples/corpus');
  const files = (await readdir(dir)).filter((file) => file.endsWith('.md') && file !== 'README.md').sort();
  const docs: IngestDocument[] = [];
  for (const file of files)
    docs.push({ id: relative(root, join(dir, file)), text: await readFile(join(dir, file), 'utf8'), version: 'v1' });
  // A fixed index time: the packs (and tests.json) stay the same bytes run after run.
  const store = new MemoryHybridStore({ now: () => new Date('2026-01-01T00:00:00Z') });
  await store.addDocuments(docs);
  const tests = [];
  for (const question of QUESTIONS) {
    const candidates = await store.search({ text: question, mode: 'lexical', limit: 20 });
    const pack = packBundle({ query: question, candidates, maxTokens: 500 });
    const test = toPromptfooTestCase(toEvalSample(pack, { answer: recordedAnswer(pack) }));
    // The whole pack rides along for the citation assertion (var expansion is off, so it stays one object).
    tests.push({ ...test, vars: { ...test.vars, pack } });
  }
  return tests;
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  await writeFile(join(here, 'tests.json'), `${JSON.stringify(await buildTests(), null, 2)}\n`);
  console.log(`wrote ${relative(process.cwd(), join(here, 'tests.json'))}`);
}
