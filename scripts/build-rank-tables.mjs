// Part of `npm run build`, after the compile: writes each shipped encoding's vocabulary as a compact rank table
// into dist/tokenize/ranks/<encoding>.ranks (the bundled ESM build and the CommonJS build read the same files),
// which the tokenizer reads on first use instead of decoding js-tiktoken's rank module. It uses the compiled code, so what
// it checks is what ships: each of js-tiktoken's own ranks (as its Tiktoken class builds them) must be found at
// the same rank, the table must hold nothing else, the pattern must be js-tiktoken's, counts through the table
// must equal js-tiktoken's encode, and both compiled tokenizers (ESM and CommonJS) must read the tables.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);
const { Tiktoken } = require('js-tiktoken/lite');
// The CommonJS build is file by file, so its tokenizer modules can be loaded one by one (the ESM build is bundled).
const { decodeRankTableFile, encodeRankTableFile, vocabularyFromTiktoken } = require(join(dist, 'cjs/tokenize/rank-table.js'));
const { loadTiktokenRanks, tokenizerFromVocabulary } = require(join(dist, 'cjs/tokenize/tiktoken.js'));
const { ENCODINGS } = require(join(dist, 'cjs/tokenize/types.js'));

const SAMPLE = [
  'Refunds are issued within 14 days of a return being received.',
  "Don't panic: it's 3.14159 — naïve café, 日本語のテキスト, emoji 😀, <|endoftext|> and CRLF\r\n\r\n  indented.",
  'x'.repeat(500),
  'aGVsbG8gd29ybGQ='.repeat(40),
].join('\n\n');

const targets = [join(dist, 'tokenize')];
for (const encoding of ENCODINGS) {
  const ranks = loadTiktokenRanks(encoding);
  const reference = new Tiktoken(ranks);
  const file = encodeRankTableFile(encoding, vocabularyFromTiktoken(ranks));
  const { patStr, table } = decodeRankTableFile(file, encoding);
  const fail = (message) => {
    throw new Error(`rank table for ${encoding}: ${message}`);
  };
  if (patStr !== ranks.pat_str) fail('the pattern differs from js-tiktoken’s');
  let tokens = 0;
  for (let rank = 0; rank < table.size; rank += 1) if (table.tokenBytes(rank).length > 0) tokens += 1;
  if (tokens !== reference.rankMap.size) fail(`${tokens} tokens, js-tiktoken has ${reference.rankMap.size}`);
  for (const [key, rank] of reference.rankMap) {
    const bytes = Uint8Array.from(key.split(',').map(Number));
    if (table.rank(bytes, 0, bytes.length) !== rank) fail(`bytes ${key} should have rank ${rank}`);
  }
  const counted = tokenizerFromVocabulary(encoding, { patStr, table }).count(SAMPLE);
  const expected = reference.encode(SAMPLE, [], []).length;
  if (counted !== expected) fail(`counts ${counted} tokens in the sample, js-tiktoken ${expected}`);
  for (const dir of targets) {
    const target = join(dir, 'ranks', `${encoding}.ranks`);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(`${target}.tmp`, file);
    if (!Buffer.from(readFileSync(`${target}.tmp`)).equals(Buffer.from(file))) fail(`${target} was not written whole`);
    renameSync(`${target}.tmp`, target);
  }
  console.log(`rank table ${encoding}: ${tokens} tokens, ${(file.length / 2 ** 20).toFixed(1)} MiB, checked against js-tiktoken`);
}

// The compiled tokenizers must read the tables (not fall back to decoding js-tiktoken's modules).
const check = (specifier, type) => {
  const script =
    type === 'module' ? `const m = await import(${JSON.stringify(specifier)});` : `const m = require(${JSON.stringify(specifier)});`;
  const body = `${script} for (const e of ${JSON.stringify(ENCODINGS)}) { m.getTokenizer(e); if (m.vocabularySource(e) !== 'rank table') { console.error(e + ' not read from its rank table'); process.exit(1); } }`;
  const run = spawnSync(
    process.execPath,
    [...(type === 'module' ? ['--input-type=module'] : []), '-e', type === 'module' ? body : `(async () => { ${body} })()`],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`${specifier} does not read the rank tables: ${run.stderr}`);
};
// Every ESM entry bundles or imports the tokenizer from a shared chunk; the root entry reaches it like the others.
check(pathToFileURL(join(dist, 'index.js')).href, 'module');
check(join(dist, 'cjs', 'index.js'), 'commonjs');
console.log(`rank tables: ${targets.map((dir) => join(dir.slice(root.length + 1), 'ranks')).join(', ')}, read by the compiled tokenizers`);
