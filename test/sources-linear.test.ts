// Every loader reads in time linear in what it is given: a file holding a long run of one special character
// (whitespace, markup, punctuation a pattern looks for) costs about what an ordinary file of the same size and
// kind costs. Measured as a ratio of CPU time in the same run, so a loaded or slow machine moves both sides;
// a pattern that backtracks over such a run (`/\s+$/`, `/\n+$/`, `/<[^>]*>/`) costs hundreds of times more.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutBlankRuns } from '../src/sources/email.js';
import { pageText } from '../src/sources/pdf.js';
import { defaultLoaders, parseCues, splitMbox, type Loader, type LoaderContext } from '../src/sources/index.js';
import { DEFAULT_LOAD_LIMITS } from '../src/sources/limits.js';
import { makePdf } from './helpers/real-files.js';
import { linesPdf } from './helpers/corpus-files.js';

/** Bytes of each file: large enough that a quadratic pass costs seconds, small enough that a linear one is quick. */
const SIZE = 64 * 1024;

/** The characters and short sequences the loaders' patterns and parsers look for. */
const RUNS = [
  ' ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  '\n\n',
  '\u00a0',
  '\u2028',
  '<',
  '>',
  '</',
  '<v ',
  '<a ',
  '&',
  '&amp;',
  '#',
  '# ',
  '-',
  '--',
  '-->',
  '=',
  '=?',
  '?=',
  ':',
  '00:',
  '.',
  '. ',
  ',',
  '"',
  "'",
  '\\',
  '/',
  '*',
  '`',
  '(',
  '[',
  '{',
  '}',
  ';',
  '|',
  '0',
  'a',
  'From ',
  '>From ',
  '\nFrom ',
  '@',
  '%',
  '_',
  '~',
] as const;

/** Ordinary text: words and sentences. */
function prose(length: number): string {
  const words = ['refunds', 'are', 'issued', 'within', 'fourteen', 'days', 'of', 'a', 'return', 'being', 'received'];
  let out = '';
  for (let i = 0; out.length < length; i += 1) out += i % 12 === 11 ? `${words[i % words.length]}.\n` : `${words[i % words.length]} `;
  return out.slice(0, length);
}

/**
 * A run of `piece`, then a word: `length` characters in all. The word matters: a pattern anchored at the end
 * (`/\s+$/`) backtracks over a run only when something else follows it.
 */
const run = (piece: string, length: number) => `${piece.repeat(Math.ceil(length / piece.length)).slice(0, length - 4)} end`;

interface Shape {
  name: string;
  extension: string;
  /** The file with `filler` (a run, or prose of the same length) where the loader's patterns read it. */
  file(filler: string): Uint8Array | Promise<Uint8Array>;
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const headers =
  'From: Alice <alice@example.com>\r\nTo: bob@example.com\r\nDate: Fri, 15 Mar 2024 10:00:00 +0000\r\nMessage-ID: <m1@example.com>\r\n';

const SHAPES: Shape[] = [
  { name: 'markdown', extension: '.md', file: (f) => utf8(`# Title\n\n${f}\n\nThe end.\n`) },
  {
    name: 'markdown front matter',
    extension: '.md',
    file: (f) => utf8(`---\ntitle: "${f.replace(/["\\\n\r]/gu, ' ')}"\n---\n# Title\n\nText.\n`),
  },
  { name: 'text', extension: '.txt', file: (f) => utf8(f) },
  {
    name: 'HTML',
    extension: '.html',
    file: (f) => utf8(`<html><head><title>T</title></head><body><main><h1>H</h1><p>${f}</p><p>The end.</p></main></body></html>`),
  },
  {
    name: 'TypeScript',
    extension: '.ts',
    file: (f) => utf8(`export const a = 1;\n/* ${f.replace(/\*\//gu, '* ')} */\nexport function b(): number {\n  return 2;\n}\n`),
  },
  {
    name: 'Python',
    extension: '.py',
    file: (f) => utf8(`def a():\n    return 1\n\n# ${f.replace(/[\r\n]/gu, ' ')}\ndef b():\n    return 2\n`),
  },
  { name: 'C (by lines)', extension: '.c', file: (f) => utf8(`int a(void) { return 1; }\n\n${f}\n`) },
  {
    name: 'e-mail body',
    extension: '.eml',
    file: (f) => utf8(`${headers}Subject: Renewal\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${f}`),
  },
  {
    name: 'e-mail subject',
    extension: '.eml',
    file: (f) => utf8(`${headers}Subject: ${f.replace(/[\r\n]/gu, ' ')}\r\nContent-Type: text/plain\r\n\r\nBody.\r\n`),
  },
  {
    name: 'e-mail HTML body',
    extension: '.eml',
    file: (f) => utf8(`${headers}Subject: Renewal\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>${f}</p>`),
  },
  {
    name: 'mailbox',
    extension: '.mbox',
    file: (f) =>
      utf8(
        `From alice@example.com Fri Mar 15 10:00:00 2024\n${headers}Subject: One\n\n${f}\n\nFrom bob@example.com Fri Mar 15 11:00:00 2024\nFrom: bob@example.com\nSubject: Two\n\nSecond.\n`,
      ),
  },
  {
    name: 'WebVTT cue',
    extension: '.vtt',
    file: (f) => utf8(`WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n${f}\n\n00:00:03.000 --> 00:00:04.000\nThe end.\n`),
  },
  {
    name: 'WebVTT timing',
    extension: '.vtt',
    file: (f) => utf8(`WEBVTT\n\n${f.replace(/[\r\n]/gu, ' ')} --> 00:00:02.000\nText.\n\n00:00:03.000 --> 00:00:04.000\nThe end.\n`),
  },
  {
    name: 'SRT',
    extension: '.srt',
    file: (f) => utf8(`1\n00:00:01,000 --> 00:00:02,000\n${f}\n\n2\n00:00:03,000 --> 00:00:04,000\nThe end.\n`),
  },
  { name: 'JSON Lines', extension: '.jsonl', file: (f) => utf8(`{"id":"1","text":${JSON.stringify(f)}}\n{"id":"2","text":"The end."}\n`) },
  { name: 'JSON', extension: '.json', file: (f) => utf8(JSON.stringify([{ id: '1', text: f, title: f.slice(0, 1000) }])) },
  {
    name: 'HTML without landmarks',
    extension: '.html',
    file: (f) =>
      utf8(
        `<html><body><div class="nav"><a href="/">Home</a></div><div><p>${f}</p><a class="src" href="#">Source</a></div><h2>Next</h2><p>The end.</p></body></html>`,
      ),
  },
  {
    name: 'WebVTT in UTF-16',
    extension: '.vtt',
    file: (f) =>
      Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n${f}\n\n0:0:3,5 --> 0:0:4,25\nThe end.\n`, 'utf16le'),
      ]),
  },
  {
    // Six pages with a running header each, and lines that end in a hyphen (a chain of cut words to join).
    name: 'PDF pages with headers and hyphens',
    extension: '.pdf',
    file: (f) => {
      const lines = f
        .replace(/[^\x20-\x7e\n]/gu, ' ')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .slice(0, 3000);
      const per = Math.ceil(lines.length / 6);
      return linesPdf(
        Array.from({ length: 6 }, (_, p) => [
          `Manual chapter ${p + 1}`,
          ...lines.slice(p * per, (p + 1) * per).map((line) => `${line.slice(0, 70)}-`),
        ]),
      );
    },
  },
  {
    name: 'PDF',
    extension: '.pdf',
    // pdf-lib draws what its standard font encodes: line breaks become separate lines of the page.
    file: (f) =>
      makePdf([
        f
          .replace(/[^\x20-\x7e\n]/gu, ' ')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .slice(0, 3000),
      ]),
  },
];

const loaders = new Map(defaultLoaders().flatMap((loader) => loader.extensions.map((extension) => [extension, loader] as const)));
const context = (): LoaderContext => ({
  limits: { ...DEFAULT_LOAD_LIMITS },
  loaderFor: (extension) => loaders.get(extension),
  state: new Map(),
});

/** CPU seconds (user + system) of one load of `bytes`; whatever the loader answers (documents or a skip). */
async function cpuOfLoad(loader: Loader, extension: string, bytes: Uint8Array): Promise<number> {
  const before = process.cpuUsage();
  await loader.load({ path: `/tmp/file${extension}`, sourceId: `file${extension}`, extension, bytes }, context());
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

/** Generous: a linear pass stays within a few times the ordinary file; a quadratic one is hundreds of times over. */
const MAX_RATIO = 25;
/** Below this many CPU seconds, a measurement is noise: the ordinary side is never taken as less. */
const FLOOR = 0.005;

describe('every loader is linear in runs of special characters (CPU ratio against an ordinary file of the same size)', () => {
  for (const shape of SHAPES) {
    it(
      shape.name,
      async () => {
        const loader = loaders.get(shape.extension)!;
        const ordinaryFile = await shape.file(prose(SIZE));
        await cpuOfLoad(loader, shape.extension, ordinaryFile); // warm up the parser and the JIT
        const samples = [];
        for (let i = 0; i < 3; i += 1) samples.push(await cpuOfLoad(loader, shape.extension, ordinaryFile));
        const ordinary = Math.max(FLOOR, samples.sort((a, b) => a - b)[1]!);
        const slow: string[] = [];
        for (const piece of RUNS) {
          const bytes = await shape.file(run(piece, SIZE));
          let cost = await cpuOfLoad(loader, shape.extension, bytes);
          // One retry before calling it slow: a burst of other work on the machine lands on one sample, not two.
          if (cost / ordinary > MAX_RATIO) cost = Math.min(cost, await cpuOfLoad(loader, shape.extension, bytes));
          if (cost / ordinary > MAX_RATIO)
            slow.push(`${JSON.stringify(piece)}: ${(cost / ordinary).toFixed(0)}× (${cost.toFixed(3)} s against ${ordinary.toFixed(3)} s)`);
        }
        expect(slow, `${shape.name}: runs that cost over ${MAX_RATIO}× an ordinary file`).toEqual([]);
      },
      600_000,
    );
  }
});

// -------------------------------------------------------------------------------------------------
// The loops that replaced the patterns read what the patterns read (on inputs short enough for the patterns).

/** Strings over the characters the patterns care about. */
const tricky = fc.string({
  unit: fc.constantFrom('<', '>', 'v', '.', ' ', '\t', '\n', '\r', 'a', 'B', '&', 'l', 't', ';', 'F', 'r', 'o', 'm'),
  maxLength: 40,
});

describe('the linear helpers agree with the patterns they replaced', () => {
  it('cue text: tags dropped and the voice named as /<[^>]*>/g and /^<v(?:\\.[^\\s>]*)?\\s+([^>]+)>/ did', () => {
    const reference = (joined: string) => {
      const voice = /^<v(?:\.[^\s>]*)?\s+([^>]+)>/u.exec(joined);
      const body = joined
        .replace(/<[^>]*>/gu, '')
        .replace(/&lt;/gu, '<')
        .replace(/&gt;/gu, '>')
        .replace(/&nbsp;/gu, '\u00a0')
        .replace(/&lrm;|&rlm;/gu, '')
        .replace(/&amp;/gu, '&')
        .replace(/\s+/gu, ' ')
        .trim();
      return voice ? `${voice[1]!.trim()}: ${body}` : body;
    };
    fc.assert(
      fc.property(
        fc.oneof(
          tricky,
          tricky.map((t) => `<v${t}`),
          tricky.map((t) => `<v.${t}`),
        ),
        (line) => {
          const text = line.replace(/[\r\n]/gu, ' ');
          const { cues } = parseCues(`WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n${text}\n`);
          expect(cues.map((cue) => cue.text)).toEqual(reference(text) === '' ? [] : [reference(text)]);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('mailbox messages end in one line break, as /\\n+$/ left them', () => {
    const reference = (text: string) => {
      // The old split, with the pattern.
      const lines = text.split('\n');
      const messages: string[] = [];
      let current: string[] | null = null;
      let previousBlank = true;
      for (const raw of lines) {
        const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
        if (previousBlank && line.startsWith('From ')) {
          if (current !== null) messages.push(current.join('\n'));
          current = [];
        } else if (current !== null) current.push(/^>+From /u.test(line) ? raw.slice(1) : raw);
        previousBlank = line.trim() === '';
      }
      if (current !== null) messages.push(current.join('\n'));
      return messages.map((message) => message.replace(/\n+$/u, '\n')).filter((message) => message.trim() !== '');
    };
    fc.assert(
      fc.property(
        fc.array(fc.oneof(tricky, fc.constant('From a@b'), fc.constant('')), { maxLength: 12 }).map((l) => l.join('\n')),
        (text) => {
          expect(splitMbox(text)).toEqual(reference(text));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a PDF page's text is what trimming the whole text at each line break gave", () => {
    const reference = (items: { str: string; hasEOL?: boolean; transform: number[]; height: number }[]) => {
      let text = '';
      let lastY: number | undefined;
      let lastHeight = 0;
      let pendingBreak = false;
      for (const item of items) {
        const y = item.transform[5] ?? 0;
        if (item.str !== '') {
          if (pendingBreak && lastY !== undefined)
            text = text.trimEnd() + (Math.abs(lastY - y) > 1.8 * Math.max(lastHeight, item.height, 1) ? '\n\n' : '\n');
          pendingBreak = false;
          text += item.str;
          lastY = y;
          lastHeight = item.height;
        }
        if (item.hasEOL === true) pendingBreak = true;
      }
      return text.trim();
    };
    const item = fc.record({
      str: fc.string({ unit: fc.constantFrom(' ', 'a', '\t', '\n', 'b'), maxLength: 6 }),
      hasEOL: fc.boolean(),
      transform: fc.tuple(fc.constant(1), fc.constant(0), fc.constant(0), fc.constant(1), fc.constant(0), fc.integer({ min: 0, max: 60 })),
      height: fc.integer({ min: 0, max: 20 }),
    });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 12 }), (items) => {
        expect(pageText(items)).toBe(reference(items));
      }),
      { numRuns: 2000 },
    );
  });

  it('runs of blank lines are cut to the bound and nothing else changes', () => {
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    const reference = (text: string, max: number) => {
      // Line by line: a blank line (empty, or a lone CR) past `max` in a row is dropped.
      const lines = text.split('\n');
      const last = lines.pop()!;
      let blanks = 0;
      const kept = lines.filter((line) => {
        blanks = line === '' || line === '\r' ? blanks + 1 : 0;
        return blanks <= max;
      });
      return [...kept, last].join('\n');
    };
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('\n', '\r', 'a', ' '), maxLength: 60 }),
        fc.integer({ min: 0, max: 4 }),
        (text, max) => {
          expect(decode(cutBlankRuns(new TextEncoder().encode(text), max))).toBe(reference(text, max));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
