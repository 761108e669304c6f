// The command line's streams, and reading the user's input and printing packs. Commands write through `stdout()`
// and `stderr()` and read `stdin()` rather than the process's own streams, so `main(argv, io)` can run a command
// with streams of the caller's (the tests run most commands in process that way). serve and mcp own their
// process (signals, the stdio protocol) and keep its streams.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { LitmPackError } from '../base/errors.js';
import { packJson } from '../core/finish.js';
import type { Pack } from '../core/schemas.js';
import { locatorParts } from '../render/locator.js';
import { visible, visibleLine } from './terminal.js';
import { emptyContextHint } from '../service/hints.js';

/** Where a command reads and writes. `isTTY` as the process's streams have it (progress bars, the stdin check). */
export interface CliIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
}

const current = new AsyncLocalStorage<CliIo>();

/** Runs `run` with `io` as the streams of every command it calls. */
export function withIo<T>(io: CliIo, run: () => T): T {
  return current.run(io, run);
}

export const stdout = (): CliIo['stdout'] => current.getStore()?.stdout ?? process.stdout;
export const stderr = (): CliIo['stderr'] => current.getStore()?.stderr ?? process.stderr;
export const stdin = (): CliIo['stdin'] => current.getStore()?.stdin ?? process.stdin;

/** One line on stderr that does not stop the command. */
export function warn(message: string): void {
  stderr().write(`litm-pack: ${visibleLine(message)}\n`);
}

export async function readStdin(): Promise<string> {
  if (stdin().isTTY === true) {
    throw new LitmPackError('invalid_input', 'No input: give a candidates FILE, or pipe JSON (array or lines) to stdin');
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin()) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

export async function readUserFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new LitmPackError('not_found', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      cause: error,
    });
  }
}

export function printPack(pack: Pack, json: boolean): void {
  // An empty context is still a valid answer (exit 0); the note on stderr says why, so a script's stdout is unchanged.
  const hint = emptyContextHint(pack);
  if (hint !== null) stderr().write(`litm-pack: note: ${hint}\n`);
  if (json) {
    stdout().write(`${packJson(pack)}\n`);
    return;
  }
  stdout().write(`${visible(pack.context)}\n\n`);
  stdout().write(
    `Citations (${pack.budget.usedTokens}/${pack.budget.maxTokens} ${pack.budget.encoding} tokens, confidence ${pack.coverage.confidence}):\n`,
  );
  for (const c of pack.citations) {
    const where = [
      c.version ? `version ${c.version}` : '',
      c.span ? `chars ${c.span.start}-${c.span.end}` : '',
      c.section?.length ? `§ ${c.section.join(' > ')}` : '',
      ...locatorParts(c.locator),
    ]
      .filter(Boolean)
      .join(', ');
    stdout().write(
      `  [${c.ref}] ${visibleLine(c.sourceId)}${where ? ` (${visibleLine(where)})` : ''} sha256:${c.textSha256.slice(0, 12)}\n`,
    );
  }
  if (pack.degraded.length > 0) {
    stdout().write(`Degraded: ${pack.degraded.map((d) => `${d.stage} (${d.code})`).join(', ')}; the pack was built without them\n`);
  }
  if (pack.dropped.length > 0) {
    const counts = new Map<string, number>();
    for (const d of pack.dropped) counts.set(d.reason, (counts.get(d.reason) ?? 0) + 1);
    stdout().write(`Dropped: ${[...counts].map(([reason, n]) => `${n} ${reason}`).join(', ')}\n`);
  }
}
