/**
 * Generators of hostile text for the rendering-safety tests: every piece of syntax that some reader of a
 * context (CommonMark, GFM-style markdown, XML, a line splitter) turns into structure, joined with line
 * terminators, blank and invisible characters, characters XML cannot carry, and arbitrary strings.
 */
import fc from 'fast-check';
import { LINE_TERMINATORS } from './context-structure.js';

/** Blank or invisible prefixes: spaces and tabs (up to code-block indentation), Unicode spaces, zero-width and bidi controls. */
export const INVISIBLES = [
  ' ', '   ', '    ', '\t', '\u00a0', '\u202f', '\u3000', '\u2007', '\u1680',
  '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u180e', '\u034f',
  '\u200e', '\u202e', '\u2066', '\u3164', '\u115f', '\u2800', '\u{e0020}', '\ufe0f',
] as const;

/** Block syntax of CommonMark and common extensions, the formats' own markers, and provenance lookalikes. */
export const MARKERS = [
  // block markers and zone lines of the three formats
  '[2]', '[2] ', '[10] Refund policy (source: policy.md, version: v3)', '[1]', '== Caveats ==', '== Grounding ==', '==',
  '## Caveats', '## Grounding', '## Evidence', '# ', '#', '###### h', '#hashtag',
  // setext underlines, thematic breaks, list items
  '=', '-', '--', '---', '- ', '-\t', '* ', '*', '***', '_ _ _', '___', '+ ', '+', '1. ', '1) ', '1.', '7. ', '123456789) ',
  '- ## Caveats', '> ## Caveats', '> ', '>', '>>',
  // code: fences and indentation
  '```', '```js', '~~~', '````', '    indented code', '\tcode',
  // HTML blocks and inline HTML (CommonMark kinds 1 to 7), autolinks
  '<!--', '-->', '<pre>', '</pre>', '<script>', '</script>', '<style>', '<textarea>', '<div>', '</div>', '<div hidden>',
  '<table>', '<h2>Caveats</h2>', '<?php', '?>', '<!DOCTYPE html>', '<![CDATA[', ']]>', '<a href="x">', '<img src=x>', '<b>',
  '<http://evil.example>', '<a@b.example>', '< div>', '<5',
  // the xml format's own tags
  '</document>', '<document index="9">', '</document_content>', '<document_content>', '</documents>', '<caveats>',
  '</briefing>', '<source>x</source>',
  // link reference definitions, footnotes, tables, definition lists
  '[1]: http://evil.example', '[2]: <x> "t"', '[^1]: note', '| a | b |', '|---|---|', '---|---', ':--', ': def', '::: note',
  // entity and character references, escapes
  '&#10;', '&#x5B;2&#x5D;', '&#91;', '&lt;div&gt;', '&amp;', '&nbsp;', '&', '\\', '\\\\', '\\[', '\\<', '\\\\<div>',
  // inline syntax that could reach into a header
  '*', '_', '`', '``', '![', '](http://x)', '[x](y)', '**',
  // provenance and caveat lookalikes
  '"', '""', '(', ')', ',', ', ', ' > ', '>', '(source: policy.md, version: v3)', ', version: v9', 'source: x', ' — pinned; not shown in full (9 tokens did not fit the budget)',
  'Coverage: 9 items from 9 sources; confidence strong.', '- Coverage: 9 items', 'Pinned but not found: x', 'Gap: none',
  // characters XML 1.0 cannot carry, lone surrogates, replacement characters
  '\u0000', '\u0001', '\u0008', '\u001f', '\u007f', '\u0080', '\u009f', '\ufffe', '\uffff', '\ud800', '\udfff', '\ufffd',
  // words
  'Note.', 'word', ' ', 'café', '東京', '😀',
] as const;

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...MARKERS) },
  { weight: 3, arbitrary: fc.constantFrom(...LINE_TERMINATORS) },
  { weight: 2, arbitrary: fc.constantFrom(...INVISIBLES) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
);

/** A hostile string: pieces of structure, line terminators and invisibles in any order. */
export const hostileString = fc.array(piece, { maxLength: 14 }).map((pieces) => pieces.join(''));
export const hostileNonEmpty = hostileString.filter((s) => s.length > 0);

/** Hostile text that is also long enough to be cut to the budget, at sentence boundaries. */
export const hostileText = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  {
    weight: 1,
    arbitrary: fc.array(hostileString, { minLength: 2, maxLength: 8 }).map((parts) => parts.join(' and some words. More text.\n\n')),
  },
);
