/**
 * The e-mail loader: .eml files (one message) and .mbox mailboxes (many), parsed by postal-mime (loaded on
 * the first message). Each message is one source: a .eml file's own source id, and in a mailbox the file's id
 * followed by `/` and the message's Message-ID (`inbox.mbox/CAF3x9@mail.acme.com`). Its headers (from, to,
 * cc, date, subject, message id, in-reply-to, references, thread) are in `metadata.email`, its date is the
 * document's timestamp, and its title is the header line `Email — alice@acme.com → you@acme.com —
 * 2024-03-15 — subject: Contract renewal`. Attachments of a kind some loader of this load reads (text,
 * markdown, HTML, PDF, code, transcripts, records, e-mail) are sources of their own, `<message>/<file name>`,
 * with `parentId` naming the message: the packer then cites one of the pair (the attachment, see
 * `attachment-preferred`). A message already read in this load (the same Message-ID, sender and body in two
 * mailboxes) is left out with a warning, as is a message that cannot be parsed; the rest is read.
 *
 * What a message may cost is bounded: its headers (`MAX_HEADER_BYTES`, checked by the parser before it decodes
 * them), how deep attachments are read (`maxAttachmentDepth`: a message in a message in a message...) and the
 * bytes its attachments may expand to at every depth (`maxExpandedBytes`); runs of blank lines longer than
 * `MAX_BLANK_LINES` are cut to that many before parsing (the parser's cost is per line).
 */
import { extname } from 'node:path';
import { sha256Hex } from '../base/canonical.js';
import { TimestampSchema } from '../core/schemas.js';
import type { IngestDocument } from '../store/schemas.js';
import { reasonOf, versionOfBytes } from './common.js';
import { htmlDocument } from './html.js';
import { DEFAULT_LOAD_LIMITS } from './limits.js';
import type { Loader, LoaderContext, LoaderInput, LoaderResult } from './loader.js';

// The postal-mime shapes read here.
interface Address {
  name?: string;
  address?: string;
  group?: Address[];
}
interface Attachment {
  filename: string | null;
  mimeType: string;
  disposition?: string | null;
  related?: boolean;
  content: ArrayBuffer | Uint8Array | string;
}
interface ParsedEmail {
  from?: Address;
  to?: Address[];
  cc?: Address[];
  subject?: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  date?: string;
  text?: string;
  html?: string;
  attachments: Attachment[];
}
interface PostalMimeModule {
  default: { parse(raw: Uint8Array | string, options?: Record<string, unknown>): Promise<ParsedEmail> };
}

/** Header bytes of one message (every part's headers together); a message with more is left out. */
export const MAX_HEADER_BYTES = 256 * 1024;
/** Blank lines in a row kept before parsing: the parser spends microseconds per line, so a run of millions costs minutes. */
export const MAX_BLANK_LINES = 100;
/** Addresses (and references) kept in a message's metadata: a header of thousands would be copied to every chunk. */
const MAX_LISTED = 100;
/** Characters of the subject in a title (every chunk of the message and its attachments carries the title). */
const MAX_TITLE_SUBJECT = 200;

let postalMime: Promise<PostalMimeModule> | undefined;
const loadPostalMime = () => (postalMime ??= import('postal-mime') as unknown as Promise<PostalMimeModule>);

/**
 * The messages of an mbox file (mboxo and mboxrd): each starts at a `From ` line at the start of the file or
 * after a blank line; `>From ` lines (escaped by the writer) are unescaped. Written here rather than taken
 * from a package: the format is that one rule, and the npm mbox readers are stream wrappers around it.
 */
export function splitMbox(text: string): string[] {
  const lines = text.split('\n');
  const messages: string[] = [];
  let current: string[] | null = null;
  let previousBlank = true;
  for (const raw of lines) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (previousBlank && line.startsWith('From ')) {
      if (current !== null) messages.push(current.join('\n'));
      current = [];
    } else if (current !== null) {
      current.push(/^>+From /u.test(line) ? raw.slice(1) : raw);
    }
    previousBlank = line.trim() === '';
  }
  if (current !== null) messages.push(current.join('\n'));
  return messages.map(endWithOneNewline).filter((message) => message.trim() !== '');
}

/**
 * The message with every run of more than `max` blank lines (LF or CRLF) cut to `max`; the same bytes when there
 * is none. The first blank line ends the headers and stays; a run that long is never content anyone reads.
 */
export function cutBlankRuns(bytes: Uint8Array, max = MAX_BLANK_LINES): Uint8Array {
  let out: Uint8Array | null = null;
  let length = 0;
  let blanks = 0;
  let lineStart = 0;
  for (let i = 0; i < bytes.length; i += 1) {
    if (bytes[i] !== 0x0a) continue;
    const blank = i === lineStart || (i === lineStart + 1 && bytes[lineStart] === 0x0d);
    blanks = blank ? blanks + 1 : 0;
    if (blanks > max) {
      // Copy what came before this line once, then keep writing what is kept.
      if (out === null) {
        out = new Uint8Array(bytes.length);
        out.set(bytes.subarray(0, lineStart));
        length = lineStart;
      }
    } else if (out !== null) {
      out.set(bytes.subarray(lineStart, i + 1), length);
      length += i + 1 - lineStart;
    }
    lineStart = i + 1;
  }
  if (out === null) return bytes;
  out.set(bytes.subarray(lineStart), length);
  length += bytes.length - lineStart;
  return out.subarray(0, length);
}

/** The message with its trailing line breaks made one (a loop: `/\n+$/` backtracks over a long run of them). */
function endWithOneNewline(message: string): string {
  let end = message.length;
  while (end > 0 && message.charCodeAt(end - 1) === 0x0a) end -= 1;
  return end === message.length ? message : `${message.slice(0, end)}\n`;
}

/**
 * Characters kept of one header value (RFC 5322's line length): every chunk of a message and of its attachments
 * carries its headers, so a value of hundreds of kilobytes would be copied that many times.
 */
const MAX_HEADER_VALUE = 998;
const clip = (value: string) => (value.length > MAX_HEADER_VALUE ? `${value.slice(0, MAX_HEADER_VALUE)}…` : value);

const bare = (id: string | undefined) => {
  const value = id?.trim().replace(/^<|>$/gu, '');
  return value ? clip(value) : undefined;
};

function addresses(list: readonly Address[] | undefined): string[] {
  const out: string[] = [];
  for (const entry of list ?? []) {
    if (entry.group !== undefined) out.push(...addresses(entry.group));
    else if (entry.address) out.push(clip(entry.address));
    else if (entry.name) out.push(clip(entry.name));
  }
  return out;
}

/** `Email — alice@acme.com → bob@acme.com +1 — 2024-03-15 — subject: Contract renewal` (parts that are missing left out). */
export function emailTitle(from: string | undefined, to: readonly string[], date: string | undefined, subject: string | undefined): string {
  const parts = ['Email'];
  const recipients = to.length === 0 ? undefined : to.length === 1 ? to[0]! : `${to[0]} +${to.length - 1}`;
  if (from !== undefined || recipients !== undefined) parts.push(`${from ?? '?'} → ${recipients ?? '?'}`);
  if (date !== undefined) parts.push(date.slice(0, 10));
  const shown = subject?.trim() ?? '';
  if (shown !== '') parts.push(`subject: ${shown.length > MAX_TITLE_SUBJECT ? `${shown.slice(0, MAX_TITLE_SUBJECT)}…` : shown}`);
  return parts.join(' — ');
}

/** An attachment's file extension: from its name, else from its type. */
function extensionOf(attachment: Attachment): string {
  const byName = attachment.filename ? extname(attachment.filename).toLowerCase() : '';
  if (byName !== '') return byName;
  const byType: Record<string, string> = {
    'text/plain': '.txt',
    'text/markdown': '.md',
    'text/html': '.html',
    'application/pdf': '.pdf',
    'text/vtt': '.vtt',
    'application/x-subrip': '.srt',
    'message/rfc822': '.eml',
    'application/json': '.json',
  };
  return byType[attachment.mimeType.toLowerCase()] ?? '';
}

function bytesOf(content: Attachment['content']): Uint8Array {
  if (typeof content === 'string') return new TextEncoder().encode(content);
  return content instanceof Uint8Array ? content : new Uint8Array(content);
}

interface MessageOutcome {
  documents: IngestDocument[];
  warnings: string[];
}

/** The parser's options: headers bounded, messages inside messages read inline no deeper than attachments are. */
function parseOptions(context: LoaderContext) {
  const maxDepth = context.limits?.maxAttachmentDepth ?? DEFAULT_LOAD_LIMITS.maxAttachmentDepth;
  return {
    attachmentEncoding: 'arraybuffer',
    maxHeadersSize: MAX_HEADER_BYTES,
    maxRfc822NestingDepth: Math.max(0, maxDepth - (context.nesting?.depth ?? 0)),
  };
}

/** One parsed message: its document and its attachments' documents. */
async function messageDocuments(
  email: ParsedEmail,
  id: string,
  input: LoaderInput,
  context: LoaderContext,
  version: string,
): Promise<MessageOutcome> {
  const warnings: string[] = [];
  const from = addresses(email.from === undefined ? [] : [email.from])[0];
  const allTo = addresses(email.to);
  const allCc = addresses(email.cc);
  const to = allTo.slice(0, MAX_LISTED);
  const cc = allCc.slice(0, MAX_LISTED);
  const messageId = bare(email.messageId);
  const references = (email.references ?? '')
    .split(/\s+/u)
    .map(bare)
    .filter((ref): ref is string => ref !== undefined);
  const inReplyTo = bare(email.inReplyTo);
  // The thread is named by its first message: the first reference, else the message replied to, else itself.
  const thread = references[0] ?? inReplyTo ?? messageId;
  const timestamp = email.date !== undefined && TimestampSchema.safeParse(email.date).success ? email.date : undefined;
  const subject = email.subject === undefined ? null : clip(email.subject);
  const date = timestamp ?? (email.date === undefined ? null : clip(email.date));
  const headers: Record<string, unknown> = { from: from ?? null, to, cc, subject, date, messageId: messageId ?? null };
  // Long lists are cut (the counts say how long they were): every chunk of the message carries its headers.
  if (allTo.length > to.length) headers.toCount = allTo.length;
  if (allCc.length > cc.length) headers.ccCount = allCc.length;
  if (inReplyTo !== undefined) headers.inReplyTo = inReplyTo;
  if (references.length > 0)
    headers.references =
      references.length > MAX_LISTED ? [...references.slice(0, MAX_LISTED / 2), ...references.slice(-MAX_LISTED / 2)] : references;
  if (thread !== undefined) headers.thread = thread;

  let text = email.text ?? '';
  let regions: IngestDocument['regions'];
  if (text.trim() === '' && email.html !== undefined) {
    const page = await htmlDocument(email.html, id, '');
    text = page.text;
    regions = page.regions;
  }
  // trimEnd, not /\s+$/: that pattern tries every start in a run of whitespace (quadratic in its length).
  text = text.replace(/\r\n?/gu, '\n').trimEnd();
  const title = emailTitle(from, allTo, timestamp, email.subject);
  const names: string[] = [];
  const documents: IngestDocument[] = [];
  const message: IngestDocument = {
    id,
    text,
    title,
    version,
    // The body is read as paragraphs, never as markdown headings (a quoted "# 1" is text).
    regions: regions ?? [{ start: 0, end: text.length }],
    metadata: { email: headers, ...(messageId === undefined ? {} : { messageId }) },
  };
  if (timestamp !== undefined) message.timestamp = timestamp;
  documents.push(message);

  const used = new Set<string>();
  // Attachments are one level deeper than this message; the bytes they expand to count for the outermost message.
  const depth = (context.nesting?.depth ?? 0) + 1;
  const expanded = context.nesting?.expanded ?? { bytes: 0 };
  const maxDepth = context.limits?.maxAttachmentDepth ?? DEFAULT_LOAD_LIMITS.maxAttachmentDepth;
  const maxExpanded = context.limits?.maxExpandedBytes ?? DEFAULT_LOAD_LIMITS.maxExpandedBytes;
  for (const [index, attachment] of email.attachments.entries()) {
    const extension = extensionOf(attachment);
    const loader = extension === '' ? undefined : context.loaderFor?.(extension);
    const name = attachment.filename?.replace(/[/\\]/gu, '_') || `attachment-${index + 1}${extension}`;
    names.push(name);
    if (loader === undefined) continue;
    let key = name;
    for (let n = 2; used.has(key); n += 1) key = `${n}-${name}`;
    used.add(key);
    const sourceId = `${id}/${key}`;
    if (depth > maxDepth) {
      warnings.push(`attachment ${name} of ${messageId ?? id} left out: attachments are read ${maxDepth} deep (maxAttachmentDepth)`);
      continue;
    }
    const bytes = bytesOf(attachment.content);
    if (expanded.bytes + bytes.length > maxExpanded) {
      warnings.push(
        `attachment ${name} of ${messageId ?? id} left out: the message's attachments expand to over ${maxExpanded} bytes (maxExpandedBytes)`,
      );
      continue;
    }
    expanded.bytes += bytes.length;
    let result: LoaderResult;
    try {
      result = await loader.load(
        { path: `${input.path}/${name}`, sourceId, extension, bytes },
        { ...context, nesting: { depth, expanded } },
      );
    } catch (error) {
      warnings.push(`attachment ${name} of ${messageId ?? id} could not be read: ${reasonOf(error)}`);
      continue;
    }
    if ('skip' in result) {
      warnings.push(`attachment ${name} of ${messageId ?? id} left out: ${result.skip.message}`);
      continue;
    }
    warnings.push(...(result.warnings ?? []).map((warning) => `attachment ${name}: ${warning}`));
    for (const doc of result.documents) {
      // Every chunk of a message and of its attachments names the message it belongs to, in `messageId` and in
      // `email` alike: a forwarded message (and what it carries) keeps its own headers, its Message-ID and its
      // attachment's name; only what belongs to no other message takes this one's.
      const ownEmail = doc.metadata?.email !== undefined;
      const metadata = {
        ...(doc.metadata ?? {}),
        attachment:
          ownEmail && doc.metadata?.attachment !== undefined ? doc.metadata.attachment : { filename: name, mimeType: attachment.mimeType },
        email: ownEmail ? doc.metadata!.email : headers,
        ...(ownEmail || messageId === undefined ? {} : { messageId }),
      };
      const attached: IngestDocument = { ...doc, parentId: doc.parentId ?? id, metadata: metadata };
      attached.title = `${doc.title ?? name} — attachment — ${title.replace(/^Email — /u, '')}`;
      if (timestamp !== undefined && attached.timestamp === undefined) attached.timestamp = timestamp;
      documents.push(attached);
    }
  }
  if (names.length > 0) headers.attachments = names;
  return { documents, warnings };
}

/** A message read so far in this load: its source id, sender and body (what a copy of it has the same). */
interface SeenMessage {
  id: string;
  from: string;
  body: string;
}

/** The messages read so far in this load, by Message-ID. */
function seenMessages(context: LoaderContext): Map<string, SeenMessage[]> {
  let seen = context.state?.get('email:message-ids') as Map<string, SeenMessage[]> | undefined;
  if (seen === undefined) {
    seen = new Map();
    context.state?.set('email:message-ids', seen);
  }
  return seen;
}

/**
 * The message read before of which this one is a copy, if any. A Message-ID is only a sender's claim: anyone can
 * put another's in a message. So a message of another file is a copy only when its sender and body are the same
 * too (the same mail in two mailboxes); a forged Message-ID never hides a message.
 */
function copyOf(seen: Map<string, SeenMessage[]>, messageId: string, message: SeenMessage): SeenMessage | undefined {
  const earlier = seen.get(messageId) ?? [];
  const copy = earlier.find((other) => other.id !== message.id && other.from === message.from && other.body === message.body);
  if (copy === undefined) seen.set(messageId, [...earlier, message]);
  return copy;
}

export const emailLoader: Loader = {
  name: 'email',
  extensions: ['.eml', '.mbox'],
  async load(input, context): Promise<LoaderResult> {
    const { default: PostalMime } = await loadPostalMime();
    if (input.bytes.includes(0)) return { skip: { reason: 'binary', message: 'binary content (not a MIME message)' } };
    const mbox = input.extension === '.mbox';
    // Latin-1 keeps every byte as one character, so a message's 8-bit parts reach the parser unchanged.
    const raw = mbox
      ? splitMbox(new TextDecoder('latin1').decode(input.bytes)).map((text) => Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff))
      : [input.bytes];
    if (mbox && raw.length === 0)
      return { skip: { reason: 'unreadable', message: 'no messages (an mbox message starts with a "From " line)' } };
    const maxMessages = context.limits?.maxMessages ?? DEFAULT_LOAD_LIMITS.maxMessages;
    const warnings: string[] = [];
    if (raw.length > maxMessages) {
      warnings.push(`read the first ${maxMessages} of ${raw.length} messages (maxMessages)`);
      raw.length = maxMessages;
    }
    const seen = seenMessages(context);
    const documents: IngestDocument[] = [];
    const held: string[] = [];
    const ids = new Set<string>();
    let repeats = 0;
    for (const [index, bytes] of raw.entries()) {
      if (context.signal?.aborted) break;
      const where = mbox ? `message ${index + 1}` : 'the message';
      let email: ParsedEmail;
      try {
        email = await PostalMime.parse(cutBlankRuns(bytes), parseOptions(context));
      } catch (error) {
        warnings.push(`${where} could not be parsed and was left out: ${reasonOf(error)}`);
        continue;
      }
      if (email.from === undefined && email.subject === undefined && email.messageId === undefined && !(email.text ?? '').trim()) {
        warnings.push(`${where} has no headers and no text (not a message) and was left out`);
        continue;
      }
      const messageId = bare(email.messageId);
      let id = input.sourceId;
      if (mbox) {
        // Without a Message-ID, the message's own bytes name it (the same message gets the same id each time).
        id = `${input.sourceId}/${(messageId ?? `message-${sha256Hex(new TextDecoder('latin1').decode(bytes)).slice(0, 12)}`).replace(/[/\\]/gu, '_')}`;
        if (ids.has(id)) {
          warnings.push(`${where} repeats the Message-ID ${messageId ?? id} and was left out`);
          repeats += 1;
          continue;
        }
        ids.add(id);
      }
      if (messageId !== undefined) {
        const from = addresses(email.from === undefined ? [] : [email.from])[0] ?? '';
        const copy = copyOf(seen, messageId, { id, from, body: sha256Hex(`${email.text ?? ''}\u0000${email.html ?? ''}`) });
        if (copy !== undefined) {
          warnings.push(`${where} (Message-ID ${messageId}) is a copy of ${copy.id}, read already, and was left out`);
          held.push(id);
          repeats += 1;
          continue;
        }
      }
      const outcome = await messageDocuments(email, id, input, context, mbox ? versionOfBytes(bytes) : versionOfBytes(input.bytes));
      documents.push(...outcome.documents);
      warnings.push(...outcome.warnings);
    }
    if (documents.length === 0) {
      // Every message already read elsewhere in this load: a copy, not a fault.
      const reason = repeats > 0 && repeats === raw.length ? 'duplicate' : 'unreadable';
      return { skip: { reason, message: warnings[0] ?? 'no message could be read' } };
    }
    return { documents, ...(warnings.length > 0 ? { warnings } : {}), ...(held.length > 0 ? { held } : {}) };
  },
};
