/**
 * Golden packs that stay honest: an evaluation harness stores packs, the corpus changes, and before trusting
 * an old pack the harness checks its citations against the current corpus. Ingests examples/corpus, stores
 * two golden packs, edits one document (a sentence added at the top, a sentence rewritten further down) and
 * withdraws another, then verifies: each citation is current, moved, changed or missing. Exits 1 if any
 * verdict disagrees with what the texts themselves say.
 *
 *   npx tsx examples/verify-golden-packs.ts
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MemoryHybridStore, packBundle, toCanonicalJson, verifyCitations, type Pack } from '../src/index.js';
import { readFrontMatter } from '../src/sources/index.js';

const corpusDir = fileURLToPath(new URL('./corpus/', import.meta.url));
const texts = new Map(
  readdirSync(corpusDir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .sort()
    .map((file) => [file, readFrontMatter(readFileSync(corpusDir + file, 'utf8'), file).text] as const),
);

const original = new Map(texts);
const store = new MemoryHybridStore();
await store.addDocuments([...texts].map(([id, text]) => ({ id, text, version: 'v1' })));

// The harness's golden set: canonical JSON, one pack a line.
const golden: string[] = [];
for (const query of ['How do content hashes show that a citation is stale?', 'lexical BM25 term frequency saturation']) {
  const candidates = await store.search({ text: query, limit: 20 });
  golden.push(toCanonicalJson(packBundle({ query, candidates, maxTokens: 900 })));
}

const before = await Promise.all(golden.map((line) => verifyCitations({ store, pack: JSON.parse(line) as Pack })));
console.log(`Before any edit: ${before.flat().length} citations, all current: ${before.flat().every((c) => c.status === 'current')}\n`);

// The corpus changes: one document is edited, another withdrawn.
const provenance = texts.get('citations-and-provenance.md')!;
const edited = provenance
  .replace('Citations make those sources visible.', 'Citations make those sources visible, and they cost little to produce.')
  .replace(
    'Documents change: policies are revised and manuals are rewritten.',
    'Documents change all the time: policies are revised, manuals are rewritten.',
  );
await store.addDocuments([{ id: 'citations-and-provenance.md', text: edited, version: 'v2' }]);
texts.set('citations-and-provenance.md', edited);
await store.deleteSources(['lost-in-the-middle.md']);
texts.delete('lost-in-the-middle.md');

let disagreements = 0;
const seen = new Set<string>();
for (const [index, line] of golden.entries()) {
  const pack = JSON.parse(line) as Pack;
  const checks = await verifyCitations({ store, pack });
  console.log(`Pack ${index + 1}: "${pack.query}"`);
  for (const check of checks) {
    seen.add(check.status);
    const where =
      check.status === 'moved'
        ? `now at ${check.span!.start}-${check.span!.end}`
        : check.status === 'changed'
          ? `closest ${check.closest!.span.start}-${check.closest!.span.end}, score ${check.closest!.score.toFixed(2)}`
          : '';
    console.log(
      `  [${check.ref}] ${check.status.padEnd(7)} ${check.sourceId} (${check.citedVersion} → ${check.currentVersion ?? '-'}) ${where}`,
    );
    // What the texts say: is the cited text still at its span, elsewhere, or gone?
    const citation = pack.citations[check.ref! - 1]!;
    const cited = original.get(citation.sourceId)!.slice(citation.span!.start, citation.span!.end);
    const now = texts.get(citation.sourceId);
    const expected =
      now === undefined
        ? 'missing'
        : now.slice(citation.span!.start, citation.span!.end) === cited
          ? 'current'
          : now.includes(cited)
            ? 'moved'
            : 'changed';
    if (expected !== check.status) {
      disagreements += 1;
      console.log(`  DISAGREES: the texts say ${expected}`);
    }
  }
}

if (disagreements > 0 || seen.size !== 4) {
  console.error(`\n${disagreements} verdicts disagree with the texts; statuses seen: ${[...seen].join(', ')}`);
  process.exit(1);
}
console.log('\nEvery verdict agrees with the texts; current, moved, changed and missing all occur.');
