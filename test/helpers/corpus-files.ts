// Files shaped like those real corpora hold, made the way the tools that make them do: subtitles saved as UTF-16
// with a byte order mark (Windows tools), Teams meeting transcripts, manuals written by pdfkit with running
// headers, footers and hyphenated line ends, PDFs with printed page labels (pdf-lib), and HTML pages as Sphinx,
// rustdoc and an old DocBook generator write them. Used by test/sources-corpora.test.ts and bench/real-corpora.ts.
import PDFKit from 'pdfkit';
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';

/** A WebVTT file saved as UTF-16 little-endian with a byte order mark (what Notepad and many Windows tools write). */
export function utf16Vtt(): Uint8Array {
  const text =
    'WEBVTT - Stand-up\r\n\r\n00:00:01.000 --> 00:00:03.500\r\n<v Alice>Bonjour à tous, the café opens at nine.</v>\r\n\r\n00:00:03.500 --> 00:00:06.500\r\n<v Bob>東京 office joins at ten.</v>\r\n';
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

/**
 * The body of a chapter as a typesetter set it: lines as they are broken, words hyphenated at line ends where it
 * fell. Paragraphs are lists of lines. `manip-`/`ulation` is written whole elsewhere (`manipulation`), so is
 * `well-known` (hyphenated), `read-`/`only` and `coordi-`/`nator` nowhere, `non-`/`English` before a capital.
 */
export const MANUAL_PAGES: readonly (readonly (readonly string[])[])[] = [
  [
    ['Chapter 4: Function reference'],
    [
      'This chapter lists the functions of the agent. Each function takes a context',
      'and returns a promise; errors are typed and carry a code.',
    ],
    [
      'The configure function accepts a path and applies the manip-',
      'ulation of settings in order, one file at a time, and reports what changed.',
    ],
  ],
  [
    ['Every host runs the agent as a service. The coordi-', 'nator keeps the inventory of hosts and their last report.'],
    ['The inventory is a read-', 'only view: writes go through the configure function and never to the file.'],
  ],
  [
    [
      'Settings follow a well-known layout: one key per line, sections in brackets.',
      'Comments start with a hash and run to the end of the line.',
    ],
    ['Remote manipulation of settings needs the admin role; the agent logs every', 'change with the user who made it and the time.'],
  ],
  [
    [
      'Messages are translated where a catalogue exists. A non-',
      'English catalogue falls back to the built-in strings for any key it lacks.',
    ],
    ['The status function reports the state of one host: running, stopped or', 'unknown when the host has not reported for ten minutes.'],
  ],
  [
    ['Plugins extend the agent with a well-', 'known interface: a name, a version and a function per event.'],
    [
      'The agent loads plugins from its plugin folder at start and again when the',
      'folder changes; a plugin that throws is disabled with a warning.',
    ],
  ],
  [
    [
      'The shutdown function stops the agent after the reports in flight are sent,',
      'waiting at most thirty seconds before it exits anyway.',
    ],
    ['Read the only copy of the log before you rotate it: rotation deletes the', 'oldest file for good.'],
  ],
];

/** pdfkit's output as bytes. */
function pdfkitBytes(doc: PDFKit.PDFDocument): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => parts.push(chunk));
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(parts))));
    doc.on('error', reject);
    doc.end();
  });
}

/**
 * A manual written by pdfkit: a title page, a contents page, then `MANUAL_PAGES` with a running header
 * (`Chapter 4: Function reference 3`, the printed page number at its end) and a footer (`Acme Agent Manual` and
 * the page number), drawn after the body as pdfkit's documented header/footer recipe does (buffered pages).
 * Printed numbers start at 1 on the first chapter page (physical page 3); the title and contents pages print
 * `i` and `ii`.
 */
export async function runningHeadersPdf(): Promise<Uint8Array> {
  const doc = new PDFKit({
    size: 'A4',
    margins: { top: 72, bottom: 72, left: 72, right: 72 },
    bufferPages: true,
    info: { Title: 'Acme Agent Manual', CreationDate: new Date('2024-01-01T00:00:00Z') },
  });
  doc.font('Helvetica-Bold').fontSize(24).text('Acme Agent Manual', 72, 300, { lineBreak: false });
  doc.font('Helvetica').fontSize(12).text('Version 2.1, for operators', 72, 340, { lineBreak: false });
  doc.addPage();
  doc.font('Helvetica-Bold').fontSize(16).text('Contents', 72, 90, { lineBreak: false });
  doc.font('Helvetica').fontSize(11).text('Chapter 4: Function reference . . . . . 1', 72, 130, { lineBreak: false });
  for (const paragraphs of MANUAL_PAGES) {
    doc.addPage();
    let y = 90;
    for (const lines of paragraphs) {
      for (const line of lines) {
        doc.font('Helvetica').fontSize(11).text(line, 72, y, { lineBreak: false });
        y += 14;
      }
      y += 14;
    }
  }
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i += 1) {
    doc.switchToPage(i);
    const printed = i < 2 ? ['i', 'ii'][i]! : String(i - 1);
    // Drawing in the bottom margin would start a new page: pdfkit's recipe lifts the margin while it draws.
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc.font('Helvetica').fontSize(9);
    if (i >= 2) doc.text(`Chapter 4: Function reference ${printed}`, 72, 40, { lineBreak: false });
    doc.text('Acme Agent Manual', 72, doc.page.height - 50, { lineBreak: false });
    doc.text(printed, doc.page.width - 100, doc.page.height - 50, { lineBreak: false });
    doc.page.margins.bottom = bottom;
  }
  return pdfkitBytes(doc);
}

/** One range of page labels (PDF 32000-1 §12.4.2): from a 0-based page, a style, a prefix, a start value. */
export interface LabelRange {
  from: number;
  style?: 'D' | 'r' | 'R' | 'A' | 'a';
  prefix?: string;
  start?: number;
}

/** The PDF with a /PageLabels number tree set in its catalogue by pdf-lib (as PDF editors write it). */
export async function withPageLabels(bytes: Uint8Array, ranges: readonly LabelRange[]): Promise<Uint8Array> {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  const nums: unknown[] = [];
  for (const range of ranges) {
    const label: Record<string, unknown> = {};
    if (range.style !== undefined) label.S = PDFName.of(range.style);
    if (range.prefix !== undefined) label.P = PDFString.of(range.prefix);
    if (range.start !== undefined) label.St = range.start;
    nums.push(range.from, doc.context.obj(label as never));
  }
  doc.catalog.set(PDFName.of('PageLabels'), doc.context.obj({ Nums: nums as never }));
  return doc.save({ useObjectStreams: false });
}

/** A book written by pdf-lib: one page per entry, each a line of text naming the page. */
export async function labelledBookPdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle('Labelled book');
  doc.setCreationDate(new Date('2024-01-01T00:00:00Z'));
  doc.setModificationDate(new Date('2024-01-01T00:00:00Z'));
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n += 1) {
    const page = doc.addPage([595, 842]);
    page.drawText(`This is physical page ${n} of the labelled book, with its own words.`, { x: 50, y: 700, size: 11, font });
  }
  return doc.save({ useObjectStreams: false });
}

const escapeHtml = (text: string) => text.replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;');

/**
 * A page as Sphinx (3.x–7.x, the classic and alabaster themes) writes it: a related-links bar, the body in
 * `div.body[role=main]` (or without the role, as Sphinx 1.x wrote it), sections with `¶` headerlinks in every
 * heading and API signature, a sidebar with the global table of contents, a footer.
 */
export function sphinxPage(options: { role?: boolean } = {}): string {
  const link = (id: string) => `<a class="headerlink" href="#${id}" title="Link to this heading">¶</a>`;
  const toc = ['IDLE', 'Menus', 'File menu', 'Edit menu', 'Editing and Navigation', 'Startup and Code Execution', 'Help and Preferences']
    .map((t) => `<li class="toctree-l1"><a class="reference internal" href="#${t.toLowerCase().replace(/ /gu, '-')}">${t}</a></li>`)
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en" data-content_root="./">
<head><meta charset="utf-8" /><title>IDLE — Python 3.12.1 documentation</title>
<link rel="stylesheet" type="text/css" href="_static/pygments.css" /><script src="_static/doctools.js"></script></head>
<body>
<div class="related"${options.role === false ? '' : ' role="navigation" aria-label="Related"'}><h3>Navigation</h3><ul>
<li class="right"><a href="genindex.html" title="General Index" accesskey="I">index</a></li>
<li class="right"><a href="py-modindex.html" title="Python Module Index">modules</a> |</li>
<li class="nav-item nav-item-0"><a href="index.html">Python 3.12.1 documentation</a> &#187;</li></ul></div>
<div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body"${options.role === false ? '' : ' role="main"'}>
<section id="idle">
<span id="id1"></span><h1>IDLE${link('idle')}</h1>
<p><strong>Source code:</strong> <a class="reference external" href="https://github.com/python/cpython/tree/3.12/Lib/idlelib/">Lib/idlelib/</a></p>
<hr class="docutils" />
<p>IDLE is Python’s Integrated Development and Learning Environment. It is coded in pure Python using the tkinter GUI toolkit,
works mostly the same on Windows, Unix, and macOS, and has a Python shell window with colorizing of code input, output and error messages.</p>
<section id="menus">
<h2>Menus${link('menus')}</h2>
<p>IDLE has two main window types, the Shell window and the Editor window. It is possible to have multiple editor windows simultaneously.</p>
<section id="file-menu-shell-and-editor">
<h3>File menu (Shell and Editor)${link('file-menu-shell-and-editor')}</h3>
<dl class="simple"><dt>New File</dt><dd><p>Create a new file editing window.</p></dd>
<dt>Open…</dt><dd><p>Open an existing file with an Open dialog.</p></dd></dl>
</section>
<section id="edit-menu-shell-and-editor">
<h3>Edit menu (Shell and Editor)${link('edit-menu-shell-and-editor')}</h3>
<dl class="simple"><dt>Undo</dt><dd><p>Undo the last change to the current window. A maximum of 1000 changes may be undone.</p></dd></dl>
</section>
</section>
<section id="editing-and-navigation">
<h2>Editing and Navigation${link('editing-and-navigation')}</h2>
<dl class="py function">
<dt class="sig sig-object py" id="idlelib.run.main"><span class="sig-prename descclassname"><span class="pre">idlelib.run.</span></span><span class="sig-name descname"><span class="pre">main</span></span><span class="sig-paren">(</span><span class="sig-paren">)</span><a class="headerlink" href="#idlelib.run.main" title="Link to this definition">¶</a></dt>
<dd><p>Start the execution server the shell talks to over a socket; the shell restarts it on a restart request.</p></dd></dl>
</section>
</section>
<div class="clearer"></div>
</div></div></div>
<div class="sphinxsidebar"${options.role === false ? '' : ' role="navigation" aria-label="Main"'}><div class="sphinxsidebarwrapper">
<div><h3><a href="contents.html">Table of Contents</a></h3><ul>${toc}</ul></div>
<div role="note" aria-label="source link"><h3>This Page</h3><ul class="this-page-menu"><li><a href="bugs.html">Report a Bug</a></li>
<li><a href="https://github.com/python/cpython/blob/main/Doc/library/idle.rst" rel="nofollow">Show Source</a></li></ul></div>
</div></div>
<div class="clearer"></div></div>
<div class="footer">&copy; <a href="copyright.html">Copyright</a> 2001-2024, Python Software Foundation. Last updated on Jan 01, 2024.
Created using <a href="https://www.sphinx-doc.org/">Sphinx</a> 7.2.6.</div>
</body></html>
`;
}

/**
 * A page as rustdoc (1.7x–1.8x) writes it for a struct: a sidebar, `<main>` holding the heading (with a copy
 * button and a `Source` link), the docs behind an `Expand description` toggle, `§` anchors before or after every
 * heading, and for every impl and method a `Source` link (with the version it is stable since) beside its header.
 */
export function rustdocPage(methods = 24, traits = 10): string {
  const src = (line: number) => `<a class="src" href="../../src/ring/buffer.rs.html#${line}">Source</a>`;
  const method = (i: number) =>
    `<details class="toggle method-toggle" open><summary><section id="method.op${i}" class="method"><span class="rightside"><span class="since" title="Stable since Rust version 1.${i}.0">1.${i}.0</span>${i % 3 === 0 ? ' (const: 1.61.0)' : ''} · ${src(100 + i)}</span><a href="#method.op${i}" class="anchor">§</a><h4 class="code-header">pub fn <a href="#method.op${i}" class="fn">op${i}</a>(&amp;mut self, n: usize) -&gt; usize</h4></section></summary><div class="docblock"><p>Operation ${i} moves the read cursor of the ring buffer forward by <code>n</code> slots and returns the slots it skipped.</p></div></details>`;
  const trait = (i: number) =>
    `<details class="toggle implementors-toggle" open><summary><section id="impl-Trait${i}-for-RingBuffer" class="impl"><a class="src rightside" href="../../src/ring/buffer.rs.html#${400 + i}">Source</a><a href="#impl-Trait${i}-for-RingBuffer" class="anchor">§</a><h3 class="code-header">impl Trait${i} for <a class="struct" href="struct.RingBuffer.html">RingBuffer</a></h3></section></summary><div class="impl-items"><details class="toggle method-toggle" open><summary><section id="method.hook${i}" class="method trait-impl">${src(500 + i)}<a href="#method.hook${i}" class="anchor">§</a><h4 class="code-header">fn <a href="trait.Trait${i}.html#tymethod.hook" class="fn">hook</a>(&amp;self)</h4></section></summary><div class="docblock">Runs hook ${i} of the trait. <a href="trait.Trait${i}.html#tymethod.hook">Read more</a></div></details></div></details>`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="generator" content="rustdoc"><title>RingBuffer in ring::buffer - Rust</title><script defer src="../../static.files/main.js"></script></head>
<body class="rustdoc struct"><!--[if lte IE 11]><div class="warning">This old browser is unsupported.</div><![endif]-->
<nav class="mobile-topbar"><button class="sidebar-menu-toggle" title="show sidebar"></button></nav>
<nav class="sidebar"><div class="sidebar-crate"><h2><a href="../../ring/index.html">ring</a><span class="version">0.4.2</span></h2></div><div class="sidebar-elems"><section id="rustdoc-toc"><h2 class="location"><a href="#">RingBuffer</a></h2><h3><a href="#implementations">Methods</a></h3><ul class="block method">${Array.from({ length: methods }, (_, i) => `<li><a href="#method.op${i}">op${i}</a></li>`).join('')}</ul></section></div></nav>
<div class="sidebar-resizer"></div>
<main><div class="width-limiter"><rustdoc-search></rustdoc-search><section id="main-content" class="content">
<div class="main-heading"><h1>Struct <a href="../index.html">ring</a>::<wbr><a href="index.html">buffer</a>::<wbr><a class="struct" href="#">RingBuffer</a><button id="copy-path" title="Copy item path to clipboard">Copy item path</button></h1><rustdoc-toolbar></rustdoc-toolbar><span class="sub-heading">${src(12)} </span></div>
<pre class="rust item-decl"><code>pub struct RingBuffer { <span class="comment">/* private fields */</span> }</code></pre>
<details class="toggle top-doc" open><summary class="hideme"><span>Expand description</span></summary><div class="docblock"><p>A fixed-size ring buffer of slots that overwrites the oldest slot when it is full.</p>
<h2 id="examples"><a class="doc-anchor" href="#examples">§</a>Examples</h2><div class="example-wrap"><pre class="rust rust-example-rendered"><code><span class="kw">let </span><span class="kw-2">mut </span>ring = RingBuffer::with_capacity(<span class="number">8</span>);
ring.op0(<span class="number">2</span>);</code></pre></div></div></details>
<h2 id="implementations" class="section-header">Implementations<a href="#implementations" class="anchor">§</a></h2><div id="implementations-list"><details class="toggle implementors-toggle" open><summary><section id="impl-RingBuffer" class="impl">${src(40)}<a href="#impl-RingBuffer" class="anchor">§</a><h3 class="code-header">impl <a class="struct" href="struct.RingBuffer.html">RingBuffer</a></h3></section></summary><div class="impl-items">
${Array.from({ length: methods }, (_, i) => method(i)).join('\n')}
</div></details></div>
<h2 id="trait-implementations" class="section-header">Trait Implementations<a href="#trait-implementations" class="anchor">§</a></h2><div id="trait-implementations-list">
${Array.from({ length: traits }, (_, i) => trait(i)).join('\n')}
</div></section></div></main></body></html>
`;
}

/**
 * A chapter of a manual as DocBook's XSL stylesheets write it (Valgrind's user manual, GNU manuals of that age):
 * no landmarks at all, a navigation table at the top and at the bottom (image links, "Prev", "Up", "Next"), the
 * chapter's table of contents as a list of links that names every section, then the sections.
 */
export function docbookPage(): string {
  const sections = [
    [
      'whatdoes',
      'What Valgrind does with your program',
      "Valgrind is designed to be as non-intrusive as possible. It works directly with existing executables. You don't need to recompile, relink, or otherwise modify the program to be checked.",
    ],
    [
      'started',
      'Getting started',
      'First off, consider whether it might be beneficial to recompile your application and supporting libraries with debugging info enabled (the -g option). Without debugging info, the best Valgrind tools will be able to do is guess which function a particular piece of code belongs to.',
    ],
    [
      'comment',
      'The Commentary',
      'Valgrind tools write a commentary, a stream of text, detailing error reports and other significant events. All lines in the commentary have the process ID of the program prefixed.',
    ],
    [
      'report',
      'Reporting of errors',
      'When an error-checking tool detects something bad happening in the program, an error message is written to the commentary, with a stack trace of the point where it happened.',
    ],
    [
      'suppress',
      'Suppressing errors',
      "The error-checking tools detect numerous problems in the system libraries, such as the C library, which come pre-installed with your OS. You can't easily fix these, but you don't want to see these errors, so Valgrind reads a list of errors to suppress at startup.",
    ],
    [
      'options',
      'Core Command-line Options',
      "As mentioned above, Valgrind's core accepts a common set of options. The tools also accept tool-specific options, which are documented separately for each tool. Valgrind's default settings succeed in giving reasonable behaviour in most cases.",
    ],
    [
      'pthreads',
      'Support for Threads',
      'Threaded programs are fully supported. The main thing to point out with respect to threaded programs is that your program will use the native threading library, but Valgrind serialises execution so that only one thread is running at a time.',
    ],
    [
      'signals',
      'Handling of Signals',
      'Valgrind has a fairly complete signal implementation. It should be able to cope with any POSIX-compliant use of signals.',
    ],
  ] as const;
  const sub = [
    'Tool-selection Option',
    'Basic Options',
    'Error-related Options',
    'malloc-related Options',
    'Uncommon Options',
    'Debugging Options',
    'Setting Default Options',
  ];
  const toc = sections
    .map(
      ([id, title], i) =>
        `<dt><span class="sect1"><a href="manual-core.html#manual-core.${id}">2.${i + 1}. ${title}</a></span></dt>${id === 'options' ? `<dd><dl>${sub.map((s, j) => `<dt><span class="sect2"><a href="manual-core.html#manual-core.${id}.${j}">2.${i + 1}.${j + 1}. ${s}</a></span></dt>`).join('')}</dl></dd>` : ''}`,
    )
    .join('\n');
  const body = sections
    .map(
      ([id, title, text], i) => `<div class="sect1">
<div class="titlepage"><div><div><h2 class="title" style="clear: both">
<a name="manual-core.${id}"></a>2.${i + 1}. ${escapeHtml(title)}</h2></div></div></div>
<p>${escapeHtml(text)}</p>
<p>See <a class="xref" href="manual-core.html#manual-core.${sections[(i + 1) % sections.length]![0]}" title="2.${((i + 1) % sections.length) + 1}">the next section</a> for more, and the <code class="option">--help</code> output of each tool for its options.</p>
</div>`,
    )
    .join('\n');
  return `<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">
<title>2. Using and understanding the Valgrind core</title>
<link rel="stylesheet" type="text/css" href="vg_basic.css">
<meta name="generator" content="DocBook XSL Stylesheets V1.79.1">
<link rel="home" href="index.html" title="Valgrind Documentation">
</head>
<body bgcolor="white" text="black" link="#0000FF" vlink="#840084" alink="#0000FF">
<div><table class="nav" width="100%" cellspacing="3" cellpadding="3" border="0" summary="Navigation header"><tr>
<td width="22px" align="center" valign="middle"><a accesskey="p" href="manual-intro.html"><img src="images/prev.png" width="18" height="21" border="0" alt="Prev"></a></td>
<td width="25px" align="center" valign="middle"><a accesskey="u" href="manual.html"><img src="images/up.png" width="21" height="18" border="0" alt="Up"></a></td>
<td width="31px" align="center" valign="middle"><a accesskey="h" href="index.html"><img src="images/home.png" width="27" height="20" border="0" alt="Up"></a></td>
<th align="center" valign="middle">Valgrind User Manual</th>
<td width="22px" align="center" valign="middle"><a accesskey="n" href="manual-core-adv.html"><img src="images/next.png" width="18" height="21" border="0" alt="Next"></a></td>
</tr></table></div>
<div class="chapter">
<div class="titlepage"><div><div><h1 class="title">
<a name="manual-core"></a>2. Using and understanding the Valgrind core</h1></div></div></div>
<div class="toc">
<p><b>Table of Contents</b></p>
<dl class="toc">
${toc}
</dl>
</div>
<p>This chapter describes the Valgrind core services, command-line options and behaviours. That means it is relevant regardless of what particular tool you are using.</p>
${body}
</div>
<div>
<br><table class="nav" width="100%" cellspacing="3" cellpadding="2" border="0" summary="Navigation footer">
<tr>
<td rowspan="2" width="40%" align="left">
<a accesskey="p" href="manual-intro.html">&lt;&lt;&#160;1. Introduction</a>&#160;</td>
<td width="20%" align="center"><a accesskey="u" href="manual.html">Up</a></td>
<td rowspan="2" width="40%" align="right">&#160;<a accesskey="n" href="manual-core-adv.html">3. Using and understanding the Valgrind core: Advanced Topics&#160;&gt;&gt;</a>
</td>
</tr>
<tr><td width="20%" align="center"><a accesskey="h" href="index.html">Home</a></td></tr>
</table>
</div>
</body>
</html>
`;
}

/** A page as Node.js's API docs write it: `role="main"`, and a `#` anchor after every heading's words. */
export function nodeDocsPage(): string {
  const h = (level: number, id: string, title: string) =>
    `<h${level}>${title}<span><a class="mark" href="#${id}" id="${id}">#</a></span></h${level}>`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>File system | Node.js v20.11.0 Documentation</title></head>
<body class="alt apidoc" id="api-section-fs"><div id="content" class="clearfix">
<div role="navigation" id="column2" class="interior"><ul><li><a href="documentation.html" class="nav-documentation">About this documentation</a></li></ul></div>
<div id="column1" data-id="fs" class="interior">
<header class="header"><div class="header-container"><h1>Node.js v20.11.0 documentation</h1></div></header>
<details role="navigation" id="toc" open><summary>Table of contents</summary><ul><li><a href="#file-system">File system</a></li></ul></details>
<div role="main" id="apicontent">
<section>${h(2, 'file-system', 'File system')}
<p>The <code>node:fs</code> module enables interacting with the file system in a way modeled on standard POSIX functions.</p>
<section>${h(3, 'callback-api', 'Callback API')}
<p>The callback APIs perform all operations asynchronously, without blocking the event loop, then invoke a callback function upon completion or error.</p>
</section>
<section>${h(3, 'c-sharp-interop', 'Interop with C#')}
<p>Paths written by .NET programs are read the same way.</p>
</section></section>
</div></div></div></body></html>
`;
}

/** A PDF written by pdf-lib with one page per entry, each line drawn where it is given (no wrapping, no blank lines). */
export async function linesPdf(pages: readonly (readonly string[])[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setCreationDate(new Date('2024-01-01T00:00:00Z'));
  doc.setModificationDate(new Date('2024-01-01T00:00:00Z'));
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 800 - 14 * i, size: 11, font }));
  }
  return doc.save({ useObjectStreams: false });
}
