/**
 * The citation ledger: what a server handed out, so that "which groundings given to agents have gone stale
 * since?" can be asked later (stale.ts). Every pack served from the store appends one JSON line: the pack's
 * hash, when, for whom (the caller's key id and principals), and its citations (source, chunk, version, text
 * hash, span). The file is only ever appended to; past `maxFileBytes` it is set aside under a name of its own
 * (`<file>.<time>-<pid>`) and a new one started, the newest `keepFiles` set-aside files kept. A line is written
 * whole in one append; a line a crash tore (no newline at the end of the file) is skipped when read, and the
 * next append starts on a line of its own, so a torn line never swallows a good one. Several processes (one
 * `litm-pack mcp` per agent session) may append to the same ledger: each append opens the file, so a file
 * another process set aside is never written to again.
 */
import { appendFile, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { LitmPackError } from '../base/errors.js';
import { LocatorSchema, SpanSchema, type Pack } from '../core/schemas.js';
import type { Principals } from '../store/schemas.js';
import { LEDGER_DEFAULTS } from './limits.js';

/** One citation as the ledger keeps it: what `verifyCitations` needs to check it again. */
const LedgerCitationSchema = z.object({
  sourceId: z.string().min(1),
  chunkId: z.string().min(1),
  version: z.string().optional(),
  title: z.string().optional(),
  span: SpanSchema.optional(),
  locator: LocatorSchema.optional(),
  textSha256: z.string().regex(/^[0-9a-f]{64}$/u),
});
type LedgerCitation = z.infer<typeof LedgerCitationSchema>;

/** One line of the ledger: one pack served. */
const LedgerEntrySchema = z.object({
  v: z.literal(1),
  /** ISO 8601 time the pack was served. */
  at: z.string().min(1),
  /** The pack's `packHash`. */
  pack: z.string().min(1),
  kind: z.enum(['bundle', 'briefing']),
  /** The caller's API key id (`anonymous` without one; the session's name on stdio). */
  caller: z.string(),
  /** What the caller could read: the pack's citations were readable with these. */
  principals: z.union([z.array(z.string()), z.literal('all')]),
  citations: z.array(LedgerCitationSchema),
});
type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

/** A pack that served a citation. */
interface ServedPack {
  pack: string;
  at: string;
  kind: LedgerEntry['kind'];
  caller: string;
  principals: Principals;
}

/** A distinct citation the server handed out, with the packs that carried it. */
export interface ServedCitation {
  key: string;
  citation: LedgerCitation;
  firstAt: string;
  lastAt: string;
  /** Packs that served it, newest first (at most `packsPerCitation` of them; `count` counts all). */
  packs: ServedPack[];
  count: number;
  /** The status its last check found, and when (undefined until checked). */
  status?: 'current' | 'moved' | 'changed' | 'missing';
  checkedAt?: string;
}

const LedgerOptionsSchema = z.strictObject({
  /** The ledger file (set-aside files live beside it). */
  path: z.string().min(1, 'path must name the ledger file'),
  maxFileBytes: z.number().int().min(1024).default(LEDGER_DEFAULTS.maxFileBytes),
  keepFiles: z.number().int().min(0).default(LEDGER_DEFAULTS.keepFiles),
  packsPerCitation: z.number().int().min(1).default(LEDGER_DEFAULTS.packsPerCitation),
  /** Told of an append that failed (the pack was served; its line is lost): a disk full, a read-only folder. */
  onError: z
    .custom<(error: LitmPackError) => void>((value) => typeof value === 'function', { message: 'onError must be a function' })
    .optional(),
  /** The clock of the served times (tests). */
  now: z.custom<() => Date>((value) => typeof value === 'function', { message: 'now must be a function' }).optional(),
});
export type LedgerOptions = z.input<typeof LedgerOptionsSchema>;

/** Who was served a pack. */
interface LedgerCaller {
  id: string;
  principals: Principals | readonly string[];
}

/** The key of a distinct citation: the same chunk text at the same place of the same source. */
function keyOf(citation: LedgerCitation): string {
  const span = citation.span === undefined ? '' : `${citation.span.start}:${citation.span.end}`;
  return `${citation.sourceId}\u0000${citation.chunkId}\u0000${citation.textSha256}\u0000${span}`;
}

const compareAt = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What a pack's citations leave in the ledger (the fields that identify and locate the cited text). */
function ledgerCitations(pack: Pack): LedgerCitation[] {
  return pack.citations.map((citation) => {
    const kept: LedgerCitation = { sourceId: citation.sourceId, chunkId: citation.chunkId, textSha256: citation.textSha256 };
    if (citation.version !== undefined) kept.version = citation.version;
    if (citation.title !== undefined) kept.title = citation.title;
    if (citation.span !== undefined) kept.span = { start: citation.span.start, end: citation.span.end };
    if (citation.locator !== undefined) kept.locator = citation.locator;
    return kept;
  });
}

function ioError(message: string, error: unknown, path: string): LitmPackError {
  return new LitmPackError('io_error', `${message} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
    cause: error,
    details: { path },
  });
}

/** A file of the ledger and how far it has been read. */
interface ReadPosition {
  offset: number;
  size: number;
}

/**
 * The ledger of one server (or of one `litm-pack citations` run). `record` appends in the background, in
 * order; `served` reads what every process appended since the last read and answers the distinct citations.
 *
 * @example
 * const ledger = await CitationLedger.open({ path: '.litm-store/citations.ledger.jsonl' });
 * const server = await startServer({ store, ledger });
 */
export class CitationLedger {
  readonly path: string;
  readonly #options: z.output<typeof LedgerOptionsSchema>;
  #writes: Promise<void> = Promise.resolve();
  /** Whether the file was checked for a torn last line since this process last wrote to it. */
  #lineStartChecked = false;
  readonly #index = new Map<string, ServedCitation>();
  /** Read positions by file identity (device and inode), so a file set aside is not read twice. */
  readonly #positions = new Map<string, ReadPosition>();
  #reading: Promise<void> | null = null;
  #skipped = 0;
  #entries = 0;

  private constructor(options: z.output<typeof LedgerOptionsSchema>) {
    this.#options = options;
    this.path = options.path;
  }

  /** Opens (or starts) a ledger; its folder must exist and be writable. */
  static async open(input: LedgerOptions): Promise<CitationLedger> {
    const parsed = LedgerOptionsSchema.safeParse(input);
    if (!parsed.success)
      throw new LitmPackError('invalid_input', `Invalid ledger options: ${parsed.error.issues.map((i) => i.message).join('; ')}`, {
        issues: parsed.error.issues,
      });
    const ledger = new CitationLedger(parsed.data);
    const folder = dirname(ledger.path);
    const info = await stat(folder).catch((error: unknown) => {
      throw new LitmPackError('not_found', `The ledger's folder ${folder} does not exist`, { cause: error, details: { path: folder } });
    });
    if (!info.isDirectory()) throw new LitmPackError('invalid_input', `The ledger's folder ${folder} is not a folder`);
    const existing = await stat(ledger.path).catch(() => null);
    if (existing !== null && !existing.isFile()) throw new LitmPackError('invalid_input', `The ledger ${ledger.path} is not a file`);
    return ledger;
  }

  /** Lines read that were not ledger entries (torn by a crash, or not ours): skipped, never fatal. */
  get skippedLines(): number {
    return this.#skipped;
  }

  /** Packs read from the files so far. */
  get entries(): number {
    return this.#entries;
  }

  /**
   * Appends the line of one served pack, after the lines recorded before it. The pack is served whatever
   * happens here: a failed append is told to `onError`.
   */
  record(pack: Pack, caller: LedgerCaller): void {
    if (pack.kind !== 'bundle' && pack.kind !== 'briefing') return;
    if (pack.citations.length === 0) return;
    const entry: LedgerEntry = {
      v: 1,
      at: (this.#options.now?.() ?? new Date()).toISOString(),
      pack: pack.packHash,
      kind: pack.kind,
      caller: caller.id,
      principals: caller.principals === 'all' ? 'all' : [...caller.principals].sort(),
      citations: ledgerCitations(pack),
    };
    const line = `${JSON.stringify(entry)}\n`;
    this.#writes = this.#writes
      .then(() => this.#append(line))
      .catch((error: unknown) => {
        const failure = error instanceof LitmPackError ? error : ioError('Could not append to the citation ledger', error, this.path);
        this.#options.onError?.(failure);
      });
  }

  /** Resolves once every line recorded so far is written (or has failed). */
  flush(): Promise<void> {
    return this.#writes;
  }

  async #append(line: string): Promise<void> {
    const { path, maxFileBytes } = this.#options;
    const size = await stat(path).then(
      (info) => info.size,
      () => 0,
    );
    if (size > 0 && size + Buffer.byteLength(line) > maxFileBytes) {
      await this.#setAside();
    } else if (size > 0 && !this.#lineStartChecked) {
      // A crash may have left half a line: the next line starts on a line of its own, so it is read whole.
      if (!(await endsWithNewline(path, size))) line = `\n${line}`;
    }
    this.#lineStartChecked = true;
    await appendFile(path, line, { encoding: 'utf8', mode: 0o600 });
  }

  /** Sets the full file aside under a name of its own, and removes the set-aside files past `keepFiles`. */
  async #setAside(): Promise<void> {
    const stamp = String(Date.now()).padStart(15, '0');
    try {
      await rename(this.path, `${this.path}.${stamp}-${process.pid}`);
    } catch (error) {
      // Another process set it aside first.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw ioError('Could not set the full citation ledger aside', error, this.path);
    }
    const old = await this.#setAsideFiles();
    for (const file of old.slice(0, Math.max(0, old.length - this.#options.keepFiles))) {
      await unlink(file).catch(() => undefined);
    }
  }

  /** The set-aside files, oldest first (their names sort by the time they were set aside). */
  async #setAsideFiles(): Promise<string[]> {
    const folder = dirname(this.path);
    const prefix = `${basename(this.path)}.`;
    const names = await readdir(folder).catch(() => [] as string[]);
    return names
      .filter((name) => name.startsWith(prefix) && /^\d{15}-\d+$/u.test(name.slice(prefix.length)))
      .sort()
      .map((name) => join(folder, name));
  }

  /**
   * The distinct citations served, after reading what was appended since the last call (by any process).
   * Concurrent callers share one read.
   */
  async served(): Promise<ReadonlyMap<string, ServedCitation>> {
    if (this.#reading === null) {
      this.#reading = this.#readNew().finally(() => {
        this.#reading = null;
      });
    }
    await this.#reading;
    return this.#index;
  }

  /** Citations whose last check found them changed, moved or missing. */
  staleCount(): number {
    let count = 0;
    for (const served of this.#index.values()) if (served.status !== undefined && served.status !== 'current') count += 1;
    return count;
  }

  /** Remembers what a check found. */
  noteStatus(key: string, status: NonNullable<ServedCitation['status']>, at: string): void {
    const served = this.#index.get(key);
    if (served === undefined) return;
    served.status = status;
    served.checkedAt = at;
  }

  async #readNew(): Promise<void> {
    await this.#writes;
    for (const file of [...(await this.#setAsideFiles()), this.path]) {
      let info;
      try {
        info = await stat(file);
      } catch {
        continue;
      }
      const identity = `${info.dev}:${info.ino}`;
      let position = this.#positions.get(identity);
      // A smaller file under a known identity is another file (the inode was reused): read it from the start.
      if (position === undefined || info.size < position.size) position = { offset: 0, size: 0 };
      if (info.size > position.offset) position = await this.#readFrom(file, position.offset, info.size);
      this.#positions.set(identity, position);
    }
  }

  /** Reads complete lines from `offset` to `size`; a last line without its newline is left for the next read. */
  async #readFrom(file: string, offset: number, size: number): Promise<ReadPosition> {
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      throw ioError('Could not read the citation ledger', error, file);
    }
    try {
      const length = size - offset;
      const buffer = Buffer.alloc(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await handle.read(buffer, read, length - read, offset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      const end = buffer.lastIndexOf(0x0a, read - 1);
      if (end < 0) return { offset, size };
      const text = buffer.subarray(0, end).toString('utf8');
      for (const line of text.split('\n')) this.#take(line);
      return { offset: offset + end + 1, size };
    } finally {
      await handle.close();
    }
  }

  #take(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#skipped += 1;
      return;
    }
    const parsed = LedgerEntrySchema.safeParse(value);
    if (!parsed.success) {
      this.#skipped += 1;
      return;
    }
    this.#entries += 1;
    const entry = parsed.data;
    const served: ServedPack = { pack: entry.pack, at: entry.at, kind: entry.kind, caller: entry.caller, principals: entry.principals };
    for (const citation of entry.citations) {
      const key = keyOf(citation);
      const known = this.#index.get(key);
      if (known === undefined) {
        this.#index.set(key, { key, citation, firstAt: entry.at, lastAt: entry.at, packs: [served], count: 1 });
        continue;
      }
      known.count += 1;
      if (compareAt(entry.at, known.firstAt) < 0) known.firstAt = entry.at;
      if (compareAt(entry.at, known.lastAt) > 0) known.lastAt = entry.at;
      if (!known.packs.some((p) => p.pack === served.pack && p.at === served.at)) {
        known.packs.push(served);
        known.packs.sort((a, b) => compareAt(b.at, a.at) || compareAt(a.pack, b.pack));
        if (known.packs.length > this.#options.packsPerCitation) known.packs.length = this.#options.packsPerCitation;
      }
    }
  }
}

/** Whether the file's last byte is a newline. */
async function endsWithNewline(path: string, size: number): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, size - 1);
    return byte[0] === 0x0a;
  } finally {
    await handle.close();
  }
}

/** Where a store's ledger lives by default: beside the store file. */
export function ledgerPathBeside(storeFile: string): string {
  return join(dirname(storeFile), LEDGER_DEFAULTS.fileName);
}
