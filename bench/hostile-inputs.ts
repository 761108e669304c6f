/**
 * Hostile inputs against ordinary ones of the same size: CPU seconds, peak RSS and the bytes a store saves, for each
 * adversarial shape (a regex that backtracks over a run, a flate bomb, messages nested in messages,
 * a flat page tree, a flood of tiny definitions or sections, a citation check by hash alone), each run in a child
 * process of its own (so peak RSS is the shape's), the ordinary file of the same kind and size beside it.
 *
 *   npx tsx bench/hostile-inputs.ts [--before DIR] [--timeout 120] [--only name,name]
 *
 * `--before DIR` also runs every shape against another checkout of the package (e.g. `git worktree add /tmp/before
 * main`, with node_modules linked), for a before/after table in the same run. A child past `--timeout` seconds is
 * killed and shown as `>N s`. Prints markdown on stdout.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { makeFlatTreePdf, makeFlateBombPdf, makeNestedEmail } from '../test/helpers/hostile-files.js';
import { makeEmail, makePdf } from '../test/helpers/real-files.js';
import { loadNote } from './lib/report.js';
import { markdownTable } from './lib/table.js';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    timeout: { type: 'string', default: '120' },
    only: { type: 'string' },
    child: { type: 'string' },
    root: { type: 'string' },
    dir: { type: 'string' },
  },
});

const HERE = resolve(import.meta.dirname, '..');

// -------------------------------------------------------------------------------------------------
// The shapes: a hostile folder and an ordinary one of the same kind and size, made once by the parent.

interface Shape {
  name: string;
  /** What it is, for the table. */
  what: string;
  /** Writes the hostile file(s) into `hostile` and an ordinary one of the same size into `ordinary`. */
  make(hostile: string, ordinary: string): Promise<void> | void;
  /** `verify`: the child checks citations instead of ingesting. */
  verify?: true;
}

const prose = (length: number) => {
  const words = ['refunds', 'are', 'issued', 'within', 'fourteen', 'days', 'of', 'a', 'return', 'being', 'received'];
  let out = '';
  for (let i = 0; out.length < length; i += 1) out += i % 12 === 11 ? `${words[i % words.length]}.\n` : `${words[i % words.length]} `;
  return out.slice(0, length);
};
const headers =
  'From: Alice <alice@example.com>\r\nTo: bob@example.com\r\nSubject: Renewal\r\nMessage-ID: <m1@example.com>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n';
const run = (piece: string, length: number) => `${piece.repeat(Math.ceil(length / piece.length)).slice(0, length - 4)} end`;
const pdfPage = (p: number) => [`Page ${p + 1}.`, 'Refunds are issued within fourteen days of a return being received. '.repeat(20)];

/** A pdf-lib PDF of text pages about `bytes` long. */
async function ordinaryPdf(bytes: number): Promise<Uint8Array> {
  const sample = await makePdf(Array.from({ length: 10 }, (_, p) => pdfPage(p)));
  return makePdf(Array.from({ length: Math.max(1, Math.ceil((10 * bytes) / sample.length)) }, (_, p) => pdfPage(p)));
}

const SIZE = 160 * 1024;

const SHAPES: Shape[] = [
  {
    name: 'email-trim',
    what: 'e-mail body: 160 KB of spaces then a word (`/\\s+$/`)',
    make(h, o) {
      writeFileSync(join(h, 'm.eml'), headers + run(' ', SIZE));
      writeFileSync(join(o, 'm.eml'), headers + prose(SIZE));
    },
  },
  {
    name: 'mbox-split',
    what: 'mailbox: 160 KB of line breaks inside a message (`/\\n+$/`)',
    make(h, o) {
      const box = (body: string) => `From alice@example.com Fri Mar 15 10:00:00 2024\n${headers.replace(/\r\n/gu, '\n')}${body}\n`;
      writeFileSync(join(h, 'inbox.mbox'), box(run('\n', SIZE)));
      writeFileSync(join(o, 'inbox.mbox'), box(prose(SIZE)));
    },
  },
  {
    name: 'vtt-tags',
    what: 'WebVTT cue: 160 KB of `<` (`/<[^>]*>/g`)',
    make(h, o) {
      const vtt = (cue: string) => `WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n${cue}\n`;
      writeFileSync(join(h, 't.vtt'), vtt(run('<', SIZE)));
      writeFileSync(join(o, 't.vtt'), vtt(prose(SIZE).replace(/\n/gu, ' ')));
    },
  },
  {
    name: 'nested-eml',
    what: 'a message forwarded inside messages 1,000 deep',
    async make(h, o) {
      const nested = await makeNestedEmail(1000);
      writeFileSync(join(h, 'chain.eml'), nested);
      writeFileSync(join(o, 'm.eml'), headers + prose(nested.length));
    },
  },
  {
    name: 'flate-bomb',
    what: 'PDF: a page stream inflating to 2 GiB',
    async make(h, o) {
      const bomb = await makeFlateBombPdf(2 * 1024 ** 3);
      writeFileSync(join(h, 'bomb.pdf'), bomb);
      writeFileSync(join(o, 'text.pdf'), await ordinaryPdf(bomb.length));
    },
  },
  {
    name: 'flat-page-tree',
    what: 'PDF: a page tree listing one page 100,000 times',
    async make(h, o) {
      const flat = await makeFlatTreePdf(100_000);
      writeFileSync(join(h, 'flat.pdf'), flat);
      writeFileSync(join(o, 'text.pdf'), await ordinaryPdf(flat.length));
    },
  },
  {
    name: 'one-liners',
    what: 'TypeScript: 4 MB of one-line functions',
    make(h, o) {
      const fns = [];
      for (let i = 0, length = 0; length < 4e6; i += 1) {
        const line = `export function f${i}(): number { return ${i}; }`;
        fns.push(line);
        length += line.length + 1;
      }
      const source = fns.join('\n');
      writeFileSync(join(h, 'many.ts'), source);
      // Ordinary code of the same size: functions of a dozen lines each.
      const body = (i: number) =>
        `/** Computes step ${i}. */\nexport function step${i}(input: number[]): number {\n  let total = 0;\n  for (const value of input) {\n    if (value > ${i}) total += value;\n    else total -= ${i};\n  }\n  return total;\n}\n`;
      const normal = [];
      for (let i = 0, length = 0; length < source.length; i += 1) {
        normal.push(body(i));
        length += body(i).length;
      }
      writeFileSync(join(o, 'steps.ts'), normal.join('\n'));
    },
  },
  {
    name: 'tiny-sections',
    what: 'markdown: 80,000 one-line sections',
    make(h, o) {
      const text = Array.from({ length: 80_000 }, (_, i) => `# S${i}\nx\n`).join('');
      writeFileSync(join(h, 'many.md'), text);
      writeFileSync(join(o, 'doc.md'), `# Doc\n\n${prose(text.length).replace(/\n/gu, '\n\n')}`);
    },
  },
  {
    name: 'crowd-headers',
    what: 'e-mail To: 60,000 recipients (metadata over 1 MiB)',
    async make(h, o) {
      const crowd = Array.from({ length: 60_000 }, (_, i) => `person${i}@example.com`).join(', ');
      const big = `From: eve@example.com\r\nTo: ${crowd}\r\nSubject: Everyone\r\nMessage-ID: <crowd@example.com>\r\n\r\nHello all.\r\n`;
      writeFileSync(join(h, 'crowd.eml'), big);
      writeFileSync(
        join(o, 'm.eml'),
        await makeEmail({
          from: 'a@example.com',
          to: 'b@example.com',
          subject: 'Long',
          messageId: '<long@example.com>',
          text: prose(big.length),
        }),
      );
    },
  },
  {
    name: 'verify-by-hash',
    what: 'verify: 50 hash-only citations of text nowhere, a 3,000-chunk source',
    verify: true,
    make(h, o) {
      writeFileSync(join(h, 'kind'), 'nowhere');
      writeFileSync(join(o, 'kind'), 'current');
    },
  },
];

// -------------------------------------------------------------------------------------------------
// The child: one load (or one verification) of one folder with the package at `root`, measured.

interface Measured {
  cpu: number;
  rssMb: number;
  storedBytes: number | null;
  note: string;
}

async function child(name: string, root: string, dir: string): Promise<void> {
  const lib = (await import(pathToFileURL(join(root, 'src/index.js')).href)) as typeof import('../src/index.js');
  const shape = SHAPES.find((s) => s.name === name)!;
  let note: string;
  let storedBytes: number | null = null;
  let cpu: number;
  if (shape.verify === true) {
    const words = [
      'alpha',
      'bravo',
      'charlie',
      'delta',
      'echo',
      'foxtrot',
      'golf',
      'hotel',
      'india',
      'juliet',
      'kilo',
      'lima',
      'refund',
      'policy',
    ];
    let state = 1;
    const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31), state / 2 ** 31);
    const sentence = () => `${Array.from({ length: 12 }, () => words[Math.floor(random() * words.length)]).join(' ')}.`;
    const text = Array.from({ length: 9000 }, () => Array.from({ length: 4 }, sentence).join(' ')).join('\n\n');
    const store = new lib.MemoryHybridStore();
    await store.addDocuments([{ id: 'big.md', text, version: 'v1' }]);
    const chunks = (await store.getChunks({ sourceIds: ['big.md'] })).slice(0, 50);
    const kind = (await import('node:fs')).readFileSync(join(dir, 'kind'), 'utf8');
    const citations = chunks.map((c, i) =>
      kind === 'nowhere'
        ? { sourceId: c.sourceId, chunkId: c.id, span: { start: c.span.start, end: c.span.end + 1 + i }, textSha256: 'f'.repeat(64) }
        : { sourceId: c.sourceId, chunkId: c.id, span: c.span, textSha256: c.textSha256 },
    );
    const before = process.cpuUsage();
    const checks = await lib.verifyCitations({ store, citations });
    const used = process.cpuUsage(before);
    cpu = (used.user + used.system) / 1e6;
    note = `${store.size} chunks; ${checks.filter((c) => c.status !== 'current').length} not current`;
  } else {
    const skipped: string[] = [];
    const warnings: string[] = [];
    const before = process.cpuUsage();
    try {
      const docs = await lib.loadDocuments([dir], {
        base: dir,
        allowEmpty: true,
        onSkip: (s) => skipped.push(s.reason),
        onWarning: (w) => warnings.push(w.message),
      });
      const store = new lib.MemoryHybridStore();
      await store.addDocuments(docs);
      const file = join(dir, '..', `${name}-${Math.random().toString(36).slice(2)}.json`);
      await store.save(file);
      storedBytes = statSync(file).size;
      rmSync(file, { force: true });
      note = `${docs.length} docs, ${store.size} chunks${skipped.length > 0 ? `; skipped: ${skipped.join(', ')}` : ''}${warnings.length > 0 ? `; ${warnings.length} warning${warnings.length === 1 ? '' : 's'}` : ''}`;
    } catch (error) {
      note = `failed: ${(error as Error).message.split('\n')[0]!.slice(0, 80)}`;
    }
    const used = process.cpuUsage(before);
    cpu = (used.user + used.system) / 1e6;
  }
  const result: Measured = { cpu, rssMb: process.resourceUsage().maxRSS / 1024, storedBytes, note };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

// -------------------------------------------------------------------------------------------------
// The parent: make the folders, run every shape in a child per variant and root, print the table.

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

function measure(name: string, root: string, dir: string, timeoutS: number): Promise<Measured | { timedOut: number }> {
  return new Promise((done) => {
    const proc = spawn(process.execPath, ['--import', TSX, import.meta.filename, '--child', name, '--root', root, '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutS * 1000);
    proc.on('close', () => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      try {
        done(JSON.parse(line) as Measured);
      } catch {
        done(err.includes('heap') ? { timedOut: -1 } : { timedOut: timeoutS });
      }
    });
  });
}

const cell = (m: Measured | { timedOut: number }) =>
  'timedOut' in m
    ? { cpu: m.timedOut === -1 ? 'out of memory' : `>${m.timedOut} s`, rss: '–', stored: '–', note: 'killed' }
    : {
        cpu: m.cpu.toFixed(2),
        rss: m.rssMb.toFixed(0),
        stored:
          m.storedBytes === null
            ? '–'
            : m.storedBytes >= 1e6
              ? `${(m.storedBytes / 1e6).toFixed(1)} MB`
              : `${(m.storedBytes / 1e3).toFixed(0)} KB`,
        note: m.note,
      };

async function parent(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'litm-bench-hostile-'));
  const timeoutS = Number(args.timeout);
  const roots: [string, string][] = [
    ['after', HERE],
    ...(args.before === undefined ? [] : ([['before', resolve(args.before)]] as [string, string][])),
  ];
  const only = args.only?.split(',');
  const rows: string[][] = [];
  try {
    for (const shape of SHAPES.filter((s) => only === undefined || only.includes(s.name))) {
      const hostile = join(work, shape.name, 'hostile');
      const ordinary = join(work, shape.name, 'ordinary');
      mkdirSync(hostile, { recursive: true });
      mkdirSync(ordinary, { recursive: true });
      await shape.make(hostile, ordinary);
      const bytes = readdirSync(hostile).reduce((sum, file) => sum + statSync(join(hostile, file)).size, 0);
      for (const [label, root] of roots) {
        const base = cell(await measure(shape.name, root, ordinary, timeoutS));
        const hit = cell(await measure(shape.name, root, hostile, timeoutS));
        process.stderr.write(`${shape.name} ${label}: ordinary ${base.cpu} s, hostile ${hit.cpu} s (${hit.note})\n`);
        rows.push([
          shape.what,
          label,
          shape.verify === true ? '–' : `${(bytes / 1e3).toFixed(0)} KB`,
          base.cpu,
          hit.cpu,
          base.rss,
          hit.rss,
          hit.stored,
          hit.note,
        ]);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(
    `Hostile inputs against ordinary ones of the same kind and size (${loadNote()}; each run a child process of its own)\n\n`,
  );
  process.stdout.write(
    `${markdownTable(['shape', 'code', 'input', 'ordinary CPU s', 'hostile CPU s', 'ordinary peak RSS MB', 'hostile peak RSS MB', 'hostile stored', 'what happened'], rows)}\n`,
  );
}

if (args.child !== undefined) await child(args.child, args.root!, args.dir!);
else await parent();
