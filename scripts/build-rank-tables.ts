/**
 * Part of `npm run build`: writes each shipped encoding's vocabulary as a compact rank table next to the
 * compiled tokenizer (dist/tokenize/ranks/<encoding>.ranks), which the tokenizer reads on first use instead of
 * decoding js-tiktoken's rank module. Every table is checked before it is kept: each of js-tiktoken's own
 * ranks (as its Tiktoken class builds them) must be found at the same rank, the table must hold nothing else,
 * the pattern must be js-tiktoken's, and counts through the file must equal js-tiktoken's encode.
 *
 *   tsx scripts/build-rank-tables.ts [--out dist/tokenize/ranks]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { decodeRankTableFile, encodeRankTableFile, vocabularyFromTiktoken } from '../src/tokenize/rank-table.js';
import { loadTiktokenRanks, tokenizerFromVocabulary } from '../src/tokenize/tiktoken.js';
import { ENCODINGS } from '../src/tokenize/types.js';

const { values } = parseArgs({ options: { out: { type: 'string', default: 'dist/tokenize/ranks' } } });
const out = resolve(values.out!);
const require = createRequire(import.meta.url);
const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');

const SAMPLE = [
  'Refunds are issued within 14 days of a return being received.',
  "Don't panic: it's 3.14159 — naïve café, 日本語のテキスト, emoji 😀, <|endoftext|> and CRLF\r\n\r\n  indented.",
  'x'.repeat(500),
  'aGVsbG8gd29ybGQ='.repeat(40),
].join('\n\n');

mkdirSync(out, { recursive: true });
for (const encoding of ENCODINGS) {
  const ranks = loadTiktokenRanks(encoding);
  const reference = new Tiktoken(ranks as ConstructorParameters<typeof Tiktoken>[0]);
  const file = encodeRankTableFile(encoding, vocabularyFromTiktoken(ranks));
  const target = join(out, `${encoding}.ranks`);
  writeFileSync(`${target}.tmp`, file);
  const { patStr, table } = decodeRankTableFile(readFileSync(`${target}.tmp`), encoding);

  const fail = (message: string): never => {
    throw new Error(`rank table for ${encoding}: ${message}`);
  };
  if (patStr !== ranks.pat_str) fail('the pattern differs from js-tiktoken’s');
  const referenceRanks = (reference as unknown as { rankMap: Map<string, number> }).rankMap;
  let tokens = 0;
  for (let rank = 0; rank < table.size; rank += 1) if (table.tokenBytes(rank).length > 0) tokens += 1;
  if (tokens !== referenceRanks.size) fail(`${tokens} tokens, js-tiktoken has ${referenceRanks.size}`);
  for (const [key, rank] of referenceRanks) {
    const bytes = Uint8Array.from(key.split(',').map(Number));
    if (table.rank(bytes, 0, bytes.length) !== rank) fail(`bytes ${key} should have rank ${rank}`);
  }
  const counted = tokenizerFromVocabulary(encoding, { patStr, table }).count(SAMPLE);
  const expected = reference.encode(SAMPLE, [], []).length;
  if (counted !== expected) fail(`counts ${counted} tokens in the sample, js-tiktoken ${expected}`);

  renameSync(`${target}.tmp`, target);
  console.log(`${target}: ${tokens} tokens, ${(file.length / 2 ** 20).toFixed(1)} MiB, checked against js-tiktoken`);
}

// The compiled tokenizer beside the tables must read them (not fall back to decoding js-tiktoken's module).
const compiled = resolve(out, '..', 'tiktoken.js');
if (existsSync(compiled)) {
  const script = `const m = await import(${JSON.stringify(pathToFileURL(compiled).href)});
for (const e of ${JSON.stringify(ENCODINGS)}) { m.getTokenizer(e); if (m.vocabularySource(e) !== 'rank table') throw new Error(e + ' not read from its rank table'); }`;
  const check = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`the compiled tokenizer does not read the rank tables: ${check.stderr}`);
  console.log(`${compiled} reads them`);
}
