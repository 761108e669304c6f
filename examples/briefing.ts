/**
 * A session briefing from pins + one cluster + a prompt. Ingests examples/corpus (each file's front matter
 * names its cluster), then asks for a briefing that pins the token-budget page verbatim, draws a fair share
 * of the `retrieval` cluster, and fills the rest with what the prompt finds. Prints the context and exits 1
 * if the pins do not open the grounding zone or the cluster is not represented.
 *
 *   npx tsx examples/briefing.ts
 * The same from the command line:
 *   npx litm-pack ingest examples/corpus
 *   npx litm-pack briefing --pins token-budgets.md --clusters retrieval \
 *     --prompt "Where should the strongest passage go in a long prompt?" --budget 2000
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MemoryHybridStore, assembleBriefing } from '../src/index.js';
import { readFrontMatter } from '../src/sources/index.js';

const corpusDir = fileURLToPath(new URL('./corpus/', import.meta.url));
const store = new MemoryHybridStore();
await store.addDocuments(
  readdirSync(corpusDir)
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => {
      const { text, frontMatter } = readFrontMatter(readFileSync(corpusDir + file, 'utf8'), file);
      return { id: `examples/corpus/${file}`, text, ...(frontMatter.clusters ? { clusters: frontMatter.clusters } : {}) };
    }),
);

const { pack } = await assembleBriefing({
  store,
  prompt: 'Where should the strongest passage go in a long prompt?',
  pins: ['token-budgets.md'], // the path as ingested: an unambiguous suffix of examples/corpus/token-budgets.md
  clusters: ['retrieval'],
  maxTokens: 2000,
});

console.log(pack.context);
console.log(`\n${pack.budget.usedTokens}/${pack.budget.maxTokens} tokens; items:`);
for (const item of pack.items) console.log(`  [${item.ref}] ${item.role.padEnd(9)} ${item.sourceId}${item.truncated ? ' (cut)' : ''}`);

const retrieval = ['bm25.md', 'dense-retrieval.md', 'hybrid-fusion.md'].map((f) => `examples/corpus/${f}`);
const pinnedFirst = pack.items[0]?.sourceId === 'examples/corpus/token-budgets.md' && pack.items[0].role === 'grounding';
const clusterShown = pack.items.some((item) => retrieval.includes(item.sourceId));
const promptShown = pack.items.some((item) => item.sourceId === 'examples/corpus/lost-in-the-middle.md');
if (!pinnedFirst || !clusterShown || !promptShown) {
  console.error(`\nUnexpected briefing: pin first ${pinnedFirst}, cluster shown ${clusterShown}, prompt result shown ${promptShown}`);
  process.exit(1);
}
