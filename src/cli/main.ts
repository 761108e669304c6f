#!/usr/bin/env node
// The command line: the only module that reads argv, the environment, files named by the user, or
// writes to stdout/stderr. Each command lives in commands/ and registers itself here.
import { Command, CommanderError } from 'commander';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERROR_SURFACES, isLitmPackError, type LitmPackErrorCode } from '../base/errors.js';
import { registerBriefing } from './commands/briefing.js';
import { registerBundle } from './commands/bundle.js';
import { registerCheckAnswer } from './commands/check-answer.js';
import { registerCitations } from './commands/citations.js';
import { registerCopy } from './commands/copy.js';
import { registerDemo } from './commands/demo.js';
import { registerIngest } from './commands/ingest.js';
import { registerKeys } from './commands/keys.js';
import { registerInspect } from './commands/inspect.js';
import { registerMcp } from './commands/mcp.js';
import { registerPack } from './commands/pack.js';
import { registerRankings } from './commands/rankings.js';
import { registerReindex } from './commands/reindex.js';
import { registerRemove } from './commands/remove.js';
import { registerServe } from './commands/serve.js';
import { CommandExit, registerVerify } from './commands/verify.js';
import { packageVersion } from '../service/version.js';
import { cliRemedy } from './remedies.js';
import { stderr, stdout, withIo, type CliIo } from './io.js';
import { visibleLine } from './terminal.js';
import { LIMIT_ALIASES } from '../store/schemas.js';

/** `k`, `topK`, `top_k`, `similarityTopK` as they would be typed as flags: lower case, without `-` and `_`. */
const LIMIT_FLAG_ALIASES = new Set(Object.keys(LIMIT_ALIASES).map((alias) => alias.toLowerCase().replace(/[-_]/gu, '')));

/**
 * Commands whose unknown flags that other tools use for "how many results" (`--k`, `--top-k`) are pointed at
 * `--limit` (the candidate pool: the budget decides how many items are kept), where a spelling guess would
 * find nothing or something unrelated.
 */
class LitmCommand extends Command {
  override createCommand(name?: string): Command {
    return new LitmCommand(name);
  }

  unknownOption(flag: string): void {
    const name = flag.replace(/^-+/u, '').split('=')[0]!.toLowerCase().replace(/[-_]/gu, '');
    if (flag.startsWith('--') && LIMIT_FLAG_ALIASES.has(name) && this.options.some((option) => option.long === '--limit')) {
      this.error(
        `error: unknown option '${flag}'\n(Did you mean --limit? It is the candidate pool searched before packing; --budget decides how many items are kept.)`,
        { code: 'commander.unknownOption' },
      );
    }
    (Command.prototype as unknown as { unknownOption(flag: string): void }).unknownOption.call(this, flag);
  }
}

/** Exit code of a usage error (unknown flag, bad flag value, missing argument). */
const USAGE_EXIT_CODE = 2;
/** Exit code of anything that is not a LitmPackError (a bug: the stack trace is printed). */
const UNEXPECTED_EXIT_CODE = 1;

/** Error codes by the exit code they give, from the one table the HTTP API and MCP tools use too. */
export function codesByExit(): Map<number, LitmPackErrorCode[]> {
  const byExit = new Map<number, LitmPackErrorCode[]>();
  for (const [code, surface] of Object.entries(ERROR_SURFACES) as [LitmPackErrorCode, { exit: number }][]) {
    byExit.set(surface.exit, [...(byExit.get(surface.exit) ?? []), code]);
  }
  return new Map([...byExit].sort(([a], [b]) => a - b));
}

function exitCodeHelp(): string {
  const byExit = codesByExit();
  const lines = ['Exit codes:', '  0  success'];
  const meaning: Record<number, string> = { 1: 'unexpected error', 2: 'usage or input', 3: 'store or service fault' };
  for (const [exit, codes] of byExit) lines.push(`  ${exit}  ${meaning[exit] ?? 'error'}: ${codes.join(', ')}`);
  return lines.join('\n');
}

function buildProgram(): Command {
  const program = new LitmCommand('litm-pack')
    .description('Token-budgeted, Lost-in-the-Middle-ordered context packs with citations')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', `\n${exitCodeHelp()}`)
    .configureOutput({ writeOut: (s) => stdout().write(s), writeErr: (s) => stderr().write(s) })
    // Set before the commands are added: they inherit it, so their usage errors reach main() too.
    .exitOverride();
  registerPack(program);
  registerIngest(program);
  registerBundle(program);
  registerBriefing(program);
  registerVerify(program);
  registerCitations(program);
  registerRemove(program);
  registerReindex(program);
  registerRankings(program);
  registerDemo(program);
  registerInspect(program);
  registerServe(program);
  registerMcp(program);
  registerCopy(program);
  registerKeys(program);
  registerCheckAnswer(program);
  return program;
}

/**
 * Runs the command line on `argv` (as `process.argv`: node, script, arguments) and resolves with its exit code.
 * With `io`, commands read and write those streams instead of the process's (serve and mcp excepted).
 */
export async function main(argv: string[], io?: CliIo): Promise<number> {
  return io === undefined ? run(argv) : withIo(io, () => run(argv));
}

async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    // A command that printed its result and ends with a status of its own (verify: stale citations).
    if (error instanceof CommandExit) return error.exitCode;
    if (error instanceof CommanderError) {
      // commander already printed its message; --help and --version end with 0, usage errors with 2
      return error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
    }
    if (isLitmPackError(error)) {
      stderr().write(`litm-pack: ${visibleLine(cliRemedy(error) ?? error.message)}\n`);
      return ERROR_SURFACES[error.code]?.exit ?? UNEXPECTED_EXIT_CODE;
    }
    stderr().write(`litm-pack: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return UNEXPECTED_EXIT_CODE;
  }
}

/**
 * A reader that stops early (`litm-pack bundle … | head`) closes the pipe; what is left to print has no
 * reader, which is not an error: exit quietly instead of printing EPIPE's stack trace.
 */
function exitQuietlyOnClosedPipe(): void {
  // eslint-disable-next-line no-restricted-properties -- the binary's own process streams, not a command's output
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    // npm links bin entries; compare real paths
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}
const invokedDirectly = isEntryPoint();
if (invokedDirectly) {
  exitQuietlyOnClosedPipe();
  void main(process.argv).then((code) => {
    process.exitCode = code;
  });
}
