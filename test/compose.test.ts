// The shipped compose files, read as Compose reads them (test/helpers/compose.ts): the full deployment refuses to
// start without API keys and says how to make one; Qdrant alone starts with nothing set; the service's command
// line passes the server's own exposure check once keys are set, and names the host other containers use.
// test/qdrant/compose.test.ts runs that command line against a Qdrant.
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { ComposeInterpolationError, composePath, interpolate, loadCompose } from './helpers/compose.js';
import { runCli } from './helpers/cli.js';
import { exposureProblem } from '../src/server/options.js';
import { parseApiKeys } from '../src/server/auth.js';

describe('Compose interpolation, as the specification gives it', () => {
  it('substitutes, defaults and refuses', () => {
    const env = { SET: 'x', EMPTY: '' };
    expect(interpolate('a $SET ${SET} $$SET', env)).toBe('a x x $SET');
    expect(interpolate('${UNSET:-d} ${EMPTY:-d} ${EMPTY-d} ${UNSET-d}', env)).toBe('d d  d');
    expect(interpolate('${EMPTY?no}', env)).toBe('');
    expect(() => interpolate('${EMPTY:?is needed}', env)).toThrow(
      new ComposeInterpolationError('required variable EMPTY is missing a value: is needed'),
    );
    expect(() => interpolate('${UNSET?is needed}', env)).toThrow(ComposeInterpolationError);
  });
});

/** The serve flags a command line gives (`--host`, `--allowed-hosts`), parsed as the CLI parses them. */
function serveFlags(command: string[]): { host: string; allowedHosts: string[]; store: string } {
  const program = new Command().exitOverride();
  let flags: { host: string; allowedHosts?: string; store: string } | undefined;
  program
    .command('serve')
    .option('--host <address>', '', '127.0.0.1')
    .option('--port <n>')
    .requiredOption('--store <spec>')
    .option('--allowed-hosts <list>')
    .action((options: typeof flags) => {
      flags = options;
    });
  program.parse(command, { from: 'user' });
  if (flags === undefined) throw new Error(`not a serve command: ${command.join(' ')}`);
  return { host: flags.host, store: flags.store, allowedHosts: (flags.allowedHosts ?? '').split(',').filter(Boolean) };
}

describe('docker-compose.yml', () => {
  it('refuses to start without API keys, unset or empty, and says how to make one', () => {
    for (const env of [{}, { LITM_PACK_API_KEYS: '' }]) {
      expect(() => loadCompose(composePath(), env)).toThrow(
        /required variable LITM_PACK_API_KEYS is missing a value: .*npx litm-pack keys create --id me/u,
      );
    }
  });

  it('starts with the key file the message names: the server accepts the keys and its exposure check passes', async () => {
    const made = await runCli(['keys', 'create', '--id', 'me']);
    expect(made.code).toBe(0);
    expect(made.stderr).toMatch(/key for me: send "Authorization: Bearer [\w-]{40,}"/u);
    const compose = loadCompose(composePath(), { LITM_PACK_API_KEYS: made.stdout.trim() });
    const service = compose.services['litm-pack'];
    const keys = parseApiKeys(service?.environment?.LITM_PACK_API_KEYS ?? 'null', 'LITM_PACK_API_KEYS');
    expect(keys.size).toBe(1);
    const flags = serveFlags(service?.command ?? []);
    expect(flags.host).toBe('0.0.0.0');
    expect(exposureProblem(flags.host, 0, false)).not.toBeNull();
    expect(exposureProblem(flags.host, keys.size, false)).toBeNull();
    // Other containers call it by its service name.
    expect(flags.allowedHosts).toContain('litm-pack');
    expect(flags.store).toBe('qdrant://qdrant:6333/docs');
    expect(service?.depends_on).toEqual({ qdrant: { condition: 'service_healthy' } });
    expect(compose.services.qdrant?.healthcheck?.test.join(' ')).toMatch(/6333/u);
  });
});

describe('docker-compose.qdrant.yml', () => {
  it('is Qdrant alone, with its health check, and needs nothing set', () => {
    const compose = loadCompose(composePath('docker-compose.qdrant.yml'), {});
    expect(Object.keys(compose.services)).toEqual(['qdrant']);
    expect(compose.services.qdrant?.image).toMatch(/^qdrant\/qdrant:v\d/u);
    expect(compose.services.qdrant?.healthcheck?.test.join(' ')).toMatch(/6333/u);
  });
});
