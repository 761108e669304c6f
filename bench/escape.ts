/**
 * npm run bench:escape — the cost of escaping item bodies (rule 9), per text, against the pattern-list
 * escaper litm-pack used before its CommonMark-exact escaping. Both run in the same process, in alternating
 * rounds; each row reports the best round.
 *
 * Texts: SciFact abstracts from ../shared/data ($LITM_BENCH_DATA) when present (else generated prose), markdown
 * chunks of the repository's own docs cut by `chunkDocument` (headings, lists, code, blank lines: what ingested
 * markdown looks like), and chunks of its TypeScript sources (code as a code loader's chunk holds it: indented
 * lines after blank lines, `<` generics, `#private` fields). "changed" counts texts that escaping alters (their
 * token hints no longer apply); "lines escaped" the lines that get a backslash; "tokens added" is what escaping
 * costs in o200k_base tokens over the texts' own count (and as a share of it).
 * Usage: tsx bench/escape.ts [--rounds N]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { escapeBody } from '../src/render/escape.js';
import { getTokenizer, type PackFormat } from '../src/index.js';
import { chunkDocument } from '../src/store/chunk.js';
import { DATA_DIR } from './lib/paths.js';

const argIndex = process.argv.indexOf('--rounds');
const ROUNDS = argIndex > 0 ? Number(process.argv[argIndex + 1]) : 15;
const CORPUS = `${DATA_DIR}/scifact/corpus.jsonl`;

/** The previous escaper: a list of line-start patterns (it missed setext underlines of one or two characters, HTML, quotes, lists...). */
const PREVIOUS_MARKDOWN = /^([ \t]*)(\[\d+\]|#|=+[ \t]*$|-{3,}[ \t]*$|\*{3,}[ \t]*$|_{3,}[ \t]*$|`{3,}|~{3,})/gmu;
const PREVIOUS_TEXT = /^([ \t]*)(\[\d+\]|==)/gmu;
function previousEscape(format: PackFormat, text: string): string {
  if (format === 'xml') return text.replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;');
  return text.replace(format === 'markdown' ? PREVIOUS_MARKDOWN : PREVIOUS_TEXT, '$1\\$2');
}

function abstracts(): string[] {
  if (existsSync(CORPUS)) {
    return readFileSync(CORPUS, 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(0, 2000)
      .map((line) => JSON.parse(line) as { title: string; text: string })
      .map((d) => `${d.title}. ${d.text}`);
  }
  const words = 'retrieval budget context token model evidence source passage answer query dense sparse'.split(' ');
  return Array.from({ length: 2000 }, (_, i) =>
    Array.from(
      { length: 30 },
      (_, s) => `${words[(i + s) % words.length]} ${words[(i * s) % words.length]} number ${i}-${s} is noted.`,
    ).join(' '),
  );
}

function markdownChunks(): string[] {
  const corpus = new URL('../examples/corpus/', import.meta.url);
  const files = [
    new URL('../README.md', import.meta.url),
    ...readdirSync(corpus)
      .filter((f) => f.endsWith('.md'))
      .map((f) => new URL(f, corpus)),
  ];
  return files.flatMap((file) =>
    chunkDocument({ id: file.pathname, text: readFileSync(file, 'utf8') }, { indexedAt: '2024-01-01T00:00:00Z' }).map((c) => c.text),
  );
}

function sourceChunks(): string[] {
  const root = new URL('../src/', import.meta.url);
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => new URL(f, root));
  return files.flatMap((file) =>
    chunkDocument({ id: file.pathname, text: readFileSync(file, 'utf8') }, { indexedAt: '2024-01-01T00:00:00Z' }).map((c) => c.text),
  );
}

/** Lines of `escaped` that differ from the same line of `text` (escaping inserts backslashes only, so lines pair up). */
function linesEscaped(text: string, escaped: string): number {
  const before = text.split('\n');
  const after = escaped.split('\n');
  return after.filter((line, i) => line !== before[i]).length;
}

function nsPerText(escape: (format: PackFormat, text: string) => string, format: PackFormat, texts: readonly string[]): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let r = 0; r < 10; r += 1) for (const text of texts) sink += escape(format, text).length;
  const elapsed = Number(process.hrtime.bigint() - start) / (10 * texts.length);
  return sink < 0 ? Number.NaN : elapsed;
}

const sets: Array<[string, string[]]> = [
  [existsSync(CORPUS) ? 'SciFact abstracts' : 'generated prose', abstracts()],
  ['markdown doc chunks', markdownChunks()],
  ['TypeScript source chunks', sourceChunks()],
];
const tokenizer = getTokenizer('o200k_base');
const rows: string[][] = [];
for (const [name, texts] of sets) {
  const chars = Math.round(texts.reduce((sum, t) => sum + t.length, 0) / texts.length);
  for (const format of ['markdown', 'xml', 'text'] as const) {
    let previous = Infinity;
    let current = Infinity;
    for (let round = 0; round < ROUNDS; round += 1) {
      previous = Math.min(previous, nsPerText(previousEscape, format, texts));
      current = Math.min(current, nsPerText(escapeBody, format, texts));
    }
    const changed = texts.filter((t) => escapeBody(format, t) !== t).length;
    const lines = texts.reduce((n, t) => n + linesEscaped(t, escapeBody(format, t)), 0);
    // The token cost of escaping: o200k_base tokens escapeBody adds, over the texts' own.
    let plain = 0;
    let added = 0;
    for (const text of texts) {
      const own = tokenizer.count(text);
      plain += own;
      added += tokenizer.count(escapeBody(format, text)) - own;
    }
    rows.push([
      `${name} (${texts.length}, ~${chars} chars)`,
      format,
      previous.toFixed(0),
      current.toFixed(0),
      (current / previous).toFixed(2),
      `${changed}`,
      `${lines}`,
      `${added} (${((100 * added) / plain).toFixed(2)}%)`,
    ]);
  }
}

const header = ['texts', 'format', 'previous ns/text', 'escapeBody ns/text', 'ratio', 'changed', 'lines escaped', 'tokens added'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(
  `litm-pack bench:escape — best of ${ROUNDS} rounds, node ${process.version}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log('');
console.log(line(header));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const row of rows) console.log(line(row));
