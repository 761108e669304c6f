/**
 * The transcript loader: WebVTT (.vtt) and SubRip (.srt). Each cue becomes one line of the document's text
 * and one region with its start and end time; the chunker merges neighbouring cues into segments up to the
 * chunk bound, so every chunk is a run of whole cues with the time from its first cue's start to its last
 * one's end. Documents are of kind `segment`.
 *
 * Parsed here rather than by a package: both formats are a timing line (`00:01:00.000 --> 00:01:05.000`) and
 * text lines between blank lines, and what is needed (cue times, text with voice tags turned into names,
 * nothing else) is less code than adapting a parser's cue objects; the WebVTT parsers on npm also cover
 * styling and regions that ingest has no use for, and those that read SRT as well are stream-based.
 */
import type { IngestDocument, Region } from '../store/schemas.js';
import { fileTitle, versionOfBytes } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { decodeText, notText } from './text.js';

export interface Cue {
  start: number;
  end: number;
  text: string;
}

// hh:mm:ss.mmm as real tools write it: hours optional (WebVTT), hours, minutes and seconds padded or not (Teams
// writes `0:00:01.000`, some tools `0:0:1.5`), a dot or a comma before the fraction (SRT writes a comma), and
// fractions of any length (read to the millisecond). Anchored at the line's start: one start, so no backtracking
// over a long run of digits or colons.
const TIME = String.raw`(?:(\d+):)?(\d{1,2}):(\d{1,2})(?:[.,](\d+))?`;
const TIMING = new RegExp(`^\\s*${TIME}\\s*-->\\s*${TIME}`, 'u');

/** Seconds of a time, or NaN when its minutes or seconds are not below 60 (no clock reads 00:75). */
function seconds(h: string | undefined, m: string, s: string, fraction: string | undefined): number {
  if (Number(m) >= 60 || Number(s) >= 60) return Number.NaN;
  return (
    Number(h ?? 0) * 3600 + Number(m) * 60 + Number(s) + (fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0')) / 1000)
  );
}

/** `<v Alice>Hello</v>` → `Alice: Hello`; other tags (`<i>`, `<c.red>`, timestamps) dropped; entities of WebVTT decoded. */
function cueText(lines: readonly string[]): string {
  const joined = lines.join(' ');
  const voice = voiceOf(joined);
  const body = withoutTags(joined)
    .replace(/&lt;/gu, '<')
    .replace(/&gt;/gu, '>')
    .replace(/&nbsp;/gu, '\u00a0')
    .replace(/&lrm;|&rlm;/gu, '')
    .replace(/&amp;/gu, '&')
    .replace(/\s+/gu, ' ')
    .trim();
  return voice !== null ? `${voice.trim()}: ${body}` : body;
}

// The two helpers below are loops rather than the patterns they replace (`/<[^>]*>/g` and
// `/^<v(?:\.[^\s>]*)?\s+([^>]+)>/`), which backtrack over a long run of `<` or of spaces: quadratic in the run.

/** The text without its tags: each `<` up to the next `>` (a `<` with no `>` after it is kept). */
function withoutTags(text: string): string {
  let out = '';
  let from = 0;
  for (;;) {
    const open = text.indexOf('<', from);
    const close = open === -1 ? -1 : text.indexOf('>', open);
    if (close === -1) return out + text.slice(from);
    out += text.slice(from, open);
    from = close + 1;
  }
}

const isSpace = (char: string | undefined) => char !== undefined && /\s/u.test(char);

/** The speaker of a cue that starts with a voice tag (`<v Alice>`, `<v.loud Bob>`), or null. */
function voiceOf(text: string): string | null {
  if (!text.startsWith('<v')) return null;
  let at = 2;
  if (text[at] === '.') {
    at += 1;
    while (at < text.length && !isSpace(text[at]) && text[at] !== '>') at += 1;
  }
  const spaces = at;
  while (isSpace(text[at])) at += 1;
  if (at === spaces) return null;
  const close = text.indexOf('>', at);
  if (close === -1) return null;
  // The name is what lies between the spaces and the `>` (as the pattern read it, a space when nothing else does).
  if (close === at) return at - spaces >= 2 ? text[at - 1]! : null;
  return text.slice(at, close);
}

/** A bad timing line as a warning shows it: its line number and its first characters. */
export interface BadCue {
  line: number;
  text: string;
}

/**
 * The cues of a WebVTT or SRT file, in file order; `malformed` counts timing lines that could not be read (each
 * such cue is left out, its neighbours kept), `firstBad` names the first of them.
 */
export function parseCues(text: string): { cues: Cue[]; malformed: number; firstBad?: BadCue } {
  const lines = text.split(/\r\n|\r|\n/u);
  const cues: Cue[] = [];
  let malformed = 0;
  let firstBad: BadCue | undefined;
  const bad = (at: number) => {
    malformed += 1;
    firstBad ??= { line: at + 1, text: lines[at]!.trim().slice(0, 60) };
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    // WebVTT blocks that are not cues: NOTE, STYLE and REGION blocks run to the next blank line.
    if (/^(NOTE|STYLE|REGION)(\s|$)/u.test(line)) {
      while (i < lines.length && lines[i]!.trim() !== '') i += 1;
      continue;
    }
    const timing = TIMING.exec(line);
    if (timing === null) {
      if (line.includes('-->')) bad(i);
      i += 1;
      continue;
    }
    const at = i;
    const [, h1, m1, s1, ms1, h2, m2, s2, ms2] = timing;
    const start = seconds(h1, m1!, s1!, ms1);
    const end = seconds(h2, m2!, s2!, ms2);
    const body: string[] = [];
    i += 1;
    while (i < lines.length && lines[i]!.trim() !== '' && !TIMING.test(lines[i]!)) body.push(lines[i++]!);
    const cue = cueText(body);
    // An hour of hundreds of digits is Infinity seconds: no time a locator can hold.
    if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) bad(at);
    else if (cue !== '') cues.push({ start, end, text: cue });
  }
  return { cues, malformed, ...(firstBad === undefined ? {} : { firstBad }) };
}

/** A transcript document: one line per cue, one region per cue (they merge into segments when chunked). */
export function transcriptDocument(id: string, cues: readonly Cue[], title: string): IngestDocument & { regions: Region[] } {
  let text = '';
  const regions: Region[] = [];
  for (const cue of cues) {
    if (text !== '') text += '\n';
    const start = text.length;
    text += cue.text;
    regions.push({ start, end: text.length, time: [cue.start, cue.end], unit: 'whole', merge: true });
  }
  return { id, text, title, kind: 'segment', regions };
}

export const transcriptLoader: Loader = {
  name: 'transcript',
  extensions: ['.vtt', '.srt'],
  load(input): LoaderResult {
    const decoded = decodeText(input.bytes);
    if ('problem' in decoded) return notText(decoded.problem);
    if (input.extension === '.vtt' && !/^WEBVTT(?:[ \t]|$)/mu.test(decoded.text.slice(0, 64))) {
      return { skip: { reason: 'unreadable', message: 'not WebVTT (the file must start with WEBVTT)' } };
    }
    const { cues, malformed, firstBad } = parseCues(decoded.text);
    if (cues.length === 0) return { skip: { reason: 'unreadable', message: 'no cues with a timing line (00:00:01.000 --> 00:00:04.000)' } };
    const header =
      input.extension === '.vtt' ? /^WEBVTT[ \t]+-?[ \t]*(.+)$/mu.exec(decoded.text.split(/\r?\n/u)[0] ?? '')?.[1]?.trim() : undefined;
    const doc = { ...transcriptDocument(input.sourceId, cues, header || fileTitle(input.path)), version: versionOfBytes(input.bytes) };
    const where =
      firstBad === undefined ? '' : ` (${malformed === 1 ? '' : 'the first '}at line ${firstBad.line}: ${JSON.stringify(firstBad.text)})`;
    const warnings =
      malformed > 0
        ? [
            `${malformed} cue timing line${malformed === 1 ? '' : 's'} could not be read and ${malformed === 1 ? 'was' : 'were'} left out${where}`,
          ]
        : [];
    return { documents: [doc], ...(warnings.length > 0 ? { warnings } : {}) };
  },
};
