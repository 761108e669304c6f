// Files shaped like those real corpora hold, made the way the tools that make them do: subtitles saved as UTF-16
// with a byte order mark (Windows tools), Teams meeting transcripts, manuals written by pdfkit with running
// headers, footers and hyphenated line ends, PDFs with printed page labels (pdf-lib), and HTML pages as Sphinx,
// rustdoc and an old DocBook generator write them. Used by test/sources-corpora.test.ts and bench/real-corpora.ts.

/** A WebVTT file saved as UTF-16 little-endian with a byte order mark (what Notepad and many Windows tools write). */
export function utf16Vtt(): Uint8Array {
  const text = 'WEBVTT - Stand-up\r\n\r\n00:00:01.000 --> 00:00:03.500\r\n<v Alice>Bonjour à tous, the café opens at nine.</v>\r\n\r\n00:00:03.500 --> 00:00:06.500\r\n<v Bob>東京 office joins at ten.</v>\r\n';
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
}

/**
 * A Teams meeting transcript: a cue id line above each timing, hours unpadded (`0:00:01.000`), voice tags; one
 * cue written by another tool with unpadded minutes and seconds and a comma, one with more than three decimals,
 * and one whose seconds read 75 (a bad cue: left out, the others kept).
 */
export function teamsVtt(): string {
  return [
    'WEBVTT',
    '',
    '6c4f1a2e-8b1d-4c53-9f0e-1a2b3c4d5e6f/12-0',
    '0:00:01.000 --> 0:00:04.250',
    '<v Alice Smith>Welcome to the quarterly planning call.</v>',
    '',
    '6c4f1a2e-8b1d-4c53-9f0e-1a2b3c4d5e6f/13-0',
    '0:00:04.250 --> 0:00:09.500',
    '<v Bob Jones>Thanks, I will share the roadmap.</v>',
    '',
    '6c4f1a2e-8b1d-4c53-9f0e-1a2b3c4d5e6f/14-0',
    '1:2:5,04 --> 1:2:10,0',
    '<v Alice Smith>The launch moves to March.</v>',
    '',
    '0:00:75.000 --> 0:01:02.000',
    '<v Bob Jones>This cue has no valid time.</v>',
    '',
    '1:02:11.5000000 --> 1:02:15.1234567',
    '<v Bob Jones>Then the beta closes in February.</v>',
    '',
  ].join('\n');
}
