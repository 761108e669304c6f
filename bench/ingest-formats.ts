/**
 * Ingest speed per kind of file: `loadDocuments` (read, parse, regions) and `MemoryHybridStore.addDocuments`
 * (chunk, count tokens, BM25-encode; lexical, no vectors), in files/s and MB/s, with markdown, the kind ingest
 * read before, as the baseline in the same run; then the mixed corpus of examples/mixed. Files are made by the
 * tools that make them (pdf-lib, nodemailer) or copied from examples/mixed with their names and words varied.
 *
 *   npx tsx bench/ingest-formats.ts [--files 200] [--rounds 3]
 *
 * Prints markdown on stdout (the median of the rounds; every round a fresh store in a warm process).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MemoryHybridStore, loadDocuments } from '../src/index.js';
import { defaultLoaders, recordsLoader } from '../src/sources/index.js';
import { makeEmail, makeMbox, makePdf } from '../test/helpers/real-files.js';
import { loadNote } from './lib/report.js';
import { markdownTable } from './lib/table.js';

const { values: args } = parseArgs({ options: { files: { type: 'string', default: '200' }, rounds: { type: 'string', default: '3' } } });
const FILES = Number(args.files);
const ROUNDS = Number(args.rounds);
const MIXED = join(import.meta.dirname, '../examples/mixed');
const work = mkdtempSync(join(tmpdir(), 'litm-bench-ingest-'));

const WORDS = 'refund webhook retry backoff jitter breaker deploy rollback invoice ledger queue latency cache token bucket'.split(' ');
const words = (seed: number, n: number) => Array.from({ length: n }, (_, i) => WORDS[(seed * 7 + i * 13) % WORDS.length]).join(' ');
const paragraph = (seed: number) => `${words(seed, 1)[0]!.toUpperCase()}${words(seed, 40).slice(1)}.`;

async function makeCorpus(): Promise<Record<string, string>> {
  const dirs: Record<string, string> = {};
  const dir = (kind: string) => {
    const path = join(work, kind);
    mkdirSync(path, { recursive: true });
    dirs[kind] = path;
    return path;
  };
  const md = dir('markdown');
  const html = dir('html');
  const pdf = dir('pdf');
  const code = dir('code');
  const mail = dir('email');
  const vtt = dir('transcript');
  const records = dir('records');
  const codeFiles = readdirSync(join(MIXED, 'code'));
  for (let i = 0; i < FILES; i += 1) {
    const paras = Array.from({ length: 6 }, (_, p) => paragraph(i * 10 + p));
    writeFileSync(
      join(md, `doc-${i}.md`),
      `# Document ${i}\n\n${paras.slice(0, 3).join('\n\n')}\n\n## Details\n\n${paras.slice(3).join('\n\n')}\n`,
    );
    writeFileSync(
      join(html, `page-${i}.html`),
      `<!DOCTYPE html><html><head><title>Page ${i}</title><script>track()</script></head><body><nav><a href="/">Home</a></nav><main><h1>Page ${i}</h1>${paras
        .slice(0, 3)
        .map((p) => `<p>${p}</p>`)
        .join('')}<h2>Details</h2>${paras
        .slice(3)
        .map((p) => `<p>${p}</p>`)
        .join('')}</main><footer>footer</footer></body></html>`,
    );
    const source = codeFiles[i % codeFiles.length]!;
    const text = readFileSync(join(MIXED, 'code', source), 'utf8').replace(
      /\b(CircuitBreaker|Limiter|LRUCache|Backoff|RetryPolicy)\b/gu,
      `$1${i}`,
    );
    writeFileSync(join(code, source.replace(/(\.\w+)$/u, `-${i}$1`)), text);
    const cues = Array.from(
      { length: 30 },
      (_, c) =>
        `${String(Math.floor((c * 4) / 60)).padStart(2, '0')}:${String((c * 4) % 60).padStart(2, '0')}.000 --> ${String(Math.floor((c * 4 + 4) / 60)).padStart(2, '0')}:${String((c * 4 + 4) % 60).padStart(2, '0')}.000\n<v Speaker>${words(i + c, 14)}.\n`,
    );
    writeFileSync(join(vtt, `talk-${i}.vtt`), `WEBVTT\n\n${cues.join('\n')}`);
    writeFileSync(
      join(records, `export-${i}.jsonl`),
      Array.from({ length: 20 }, (_, r) => JSON.stringify({ id: `R-${r}`, text: paragraph(i * 20 + r), title: `Record ${r}` })).join('\n'),
    );
  }
  // PDFs and mail are slower to make: fewer files, each of several pages or messages.
  for (let i = 0; i < Math.max(1, FILES / 4); i += 1) {
    writeFileSync(
      join(pdf, `manual-${i}.pdf`),
      await makePdf(
        Array.from({ length: 5 }, (_, p) => [paragraph(i * 5 + p), paragraph(i * 5 + p + 1)]),
        `Manual ${i}`,
      ),
    );
    const messages = [];
    for (let m = 0; m < 4; m += 1) {
      const date = new Date(Date.UTC(2024, 0, 1 + m));
      const raw = await makeEmail({
        from: `a${m}@example.com`,
        to: 'b@example.com',
        subject: `Thread ${i} message ${m}`,
        date,
        messageId: `<m${i}-${m}@example.com>`,
        text: `${paragraph(i + m)}\n\n${paragraph(i + m + 1)}`,
      });
      messages.push({ from: `a${m}@example.com`, date, raw });
    }
    writeFileSync(join(mail, `box-${i}.mbox`), makeMbox(messages));
  }
  return dirs;
}

function bytesUnder(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += statSync(join(entry.parentPath, entry.name)).size;
  }
  return { files, bytes };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(dir: string, loaders = defaultLoaders()) {
  const load: number[] = [];
  const add: number[] = [];
  let chunks = 0;
  let documents = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const t0 = performance.now();
    const docs = await loadDocuments([dir], { base: dir, loaders });
    const t1 = performance.now();
    const store = new MemoryHybridStore();
    await store.addDocuments(docs);
    const t2 = performance.now();
    load.push(t1 - t0);
    add.push(t2 - t1);
    chunks = store.size;
    documents = docs.length;
  }
  return { load: median(load), add: median(add), chunks, documents };
}

const dirs = await makeCorpus();
// Warm-up: every library imported and every tokenizer built once, so rounds time the work alone.
await measure(MIXED, [...defaultLoaders(), recordsLoader({ idField: 'key', textField: 'description', titleField: 'summary' })]);

const rows: (string | number)[][] = [];
for (const [kind, dir] of Object.entries(dirs)) {
  const { files, bytes } = bytesUnder(dir);
  const result = await measure(dir);
  const seconds = (result.load + result.add) / 1000;
  rows.push([
    kind === 'markdown' ? 'markdown (baseline)' : kind,
    files,
    (bytes / 2 ** 20).toFixed(2),
    result.documents,
    result.chunks,
    result.load.toFixed(0),
    result.add.toFixed(0),
    (files / seconds).toFixed(0),
    (bytes / 2 ** 20 / seconds).toFixed(2),
  ]);
  process.stderr.write(`${kind} done\n`);
}
const mixed = bytesUnder(MIXED);
const mixedResult = await measure(MIXED, [
  ...defaultLoaders(),
  recordsLoader({ idField: 'key', textField: 'description', titleField: 'summary', metadataFields: ['status', 'priority'] }),
]);
rmSync(work, { recursive: true, force: true });

console.log(
  `### Ingest speed per kind (${FILES} files of most kinds, ${Math.max(1, FILES / 4)} PDFs of 5 pages and mailboxes of 4 messages)\n`,
);
console.log(
  `loadDocuments + MemoryHybridStore.addDocuments (lexical), median of ${ROUNDS} rounds in a warm process; node ${process.version}, ${loadNote()}.\n`,
);
console.log(markdownTable(['kind', 'files', 'MB', 'sources', 'chunks', 'load ms', 'add ms', 'files/s', 'MB/s'], rows));
console.log(
  `\nThe mixed corpus (examples/mixed: ${mixed.files} files, ${(mixed.bytes / 1024).toFixed(1)} KiB): ${mixedResult.documents} sources, ${mixedResult.chunks} chunks, load ${mixedResult.load.toFixed(0)} ms + add ${mixedResult.add.toFixed(0)} ms.`,
);
