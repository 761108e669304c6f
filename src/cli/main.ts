#!/usr/bin/env node
// The command line: the only module that reads argv, the environment, files named by the user, or
// writes to stdout/stderr. Each command lives in commands/ and registers itself here.
import { Command } from 'commander';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isLitmPackError } from '../core/errors.js';
import { registerBriefing } from './commands/briefing.js';
import { registerBundle } from './commands/bundle.js';
import { registerDemo } from './commands/demo.js';
import { registerIngest } from './commands/ingest.js';
import { registerInspect } from './commands/inspect.js';
import { registerMcp } from './commands/mcp.js';
import { registerPack } from './commands/pack.js';
import { registerServe } from './commands/serve.js';

export function buildProgram(): Command {
  const program = new Command('litm-pack')
    .description('Token-budgeted, Lost-in-the-Middle-ordered context packs with citations')
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  registerPack(program);
  registerIngest(program);
  registerBundle(program);
  registerBriefing(program);
  registerDemo(program);
  registerInspect(program);
  registerServe(program);
  registerMcp(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram().exitOverride();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof Error && 'exitCode' in error && typeof (error as { exitCode: unknown }).exitCode === 'number') {
      // commander already printed its message (usage errors, --help)
      return (error as { exitCode: number }).exitCode;
    }
    if (isLitmPackError(error)) {
      process.stderr.write(`litm-pack: ${error.message}\n`);
      return error.code === 'invalid_input' || error.code === 'not_found' ? 2 : 1;
    }
    process.stderr.write(`litm-pack: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
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
  main(process.argv).then((code) => {
    process.exitCode = code;
  });
}
