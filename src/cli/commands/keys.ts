import { stderr, stdout } from '../io.js';
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { ApiKeys, type ApiKeysInput } from '../../server/auth.js';
import { list } from '../options.js';
import { visibleLine } from '../terminal.js';

/**
 * `litm-pack keys create`: a new API key, printed as the key file `serve --keys FILE` reads (or
 * LITM_PACK_API_KEYS holds), so a first deployment needs no hand-written JSON:
 *   export LITM_PACK_API_KEYS="$(npx litm-pack keys create --id me)"
 * The JSON goes to stdout, the key itself (what a caller sends) to stderr, so `$(...)` keeps only the file.
 */
function newKeyFile(
  id: string,
  principals: readonly string[],
  key = randomBytes(32).toString('base64url'),
): ApiKeysInput & { keys: { key: string }[] } {
  const file = { keys: [{ id, key, principals: [...principals] }] };
  new ApiKeys(file); // the same checks serve makes (a non-empty id, a key of 16 characters or more)
  return file;
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('API keys for serve (--keys FILE or LITM_PACK_API_KEYS)');
  keys
    .command('create')
    .description('print a key file with one new random key (JSON on stdout; the key to send on stderr)')
    .requiredOption('--id <name>', 'who the key is for (the request log names callers by it)')
    .option('--principals <list>', 'what the caller may read besides documents without an ACL (comma-separated)', list, [])
    .action((flags: { id: string; principals: string[] }) => {
      const file = newKeyFile(flags.id, flags.principals);
      stdout().write(`${JSON.stringify(file)}\n`);
      stderr().write(`litm-pack: ${visibleLine(`key for ${flags.id}: send "Authorization: Bearer ${file.keys[0]?.key}"`)}\n`);
    });
}
