import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { codesByExit } from '../src/cli/main.js';
import { ERROR_SURFACES } from '../src/index.js';
import { runCli, spawnCli } from './helpers/cli.js';

const ROOT = resolve(import.meta.dirname, '..');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const work = mkdtempSync(join(tmpdir(), 'litm-cli-behaviour-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Starts the CLI with its stdout a pipe and its stderr collected. */
function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolvePromise) =>
    child.on('close', (code, signal) => resolvePromise({ code, signal, stderr })),
  );
  return { child, done };
}

describe('the CLI in pipes', () => {
  it('exits quietly with 0 when the reader closes the pipe early (… | head)', async () => {
    const { child, done } = start(['pack', '--query', 'refunds', '--budget', '4000', 'examples/candidates.json']);
    child.stdout.destroy(); // the reader is gone before anything is written
    const { code, stderr } = await done;
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('a killed demo', () => {
  it('leaves nothing in the temporary directory', async () => {
    const tmp = mkdtempSync(join(work, 'tmp-'));
    const { child, done } = start(['demo'], { TMPDIR: tmp });
    // Killed once it has ingested (the first line of its output), before it has printed the bundle.
    await new Promise<void>((resolvePromise) => child.stdout.once('data', () => resolvePromise()));
    child.kill('SIGTERM');
    await done;
    expect(readdirSync(tmp).filter((name) => name.startsWith('litm'))).toEqual([]);
  });
});

describe('usage errors, flags and exit codes', () => {
  it('--version prints the package version, in a process of its own and in process', async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    for (const out of [await spawnCli(['--version']), await runCli(['--version'])]) {
      expect(out.code).toBe(0);
      expect(out.stdout.trim()).toBe(version);
    }
  });

  it('a process exits with the code main() gives: 2 for a usage error, the message on stderr', async () => {
    const spawned = await spawnCli(['bundle', 'q', '--budget', '0']);
    const inProcess = await runCli(['bundle', 'q', '--budget', '0']);
    expect(spawned).toEqual(inProcess);
    expect(spawned.code).toBe(2);
    expect(spawned.stderr).toMatch(/--budget must be at least 1/u);
  });

  it('name the flag the user typed, suggest the flag meant, and exit 2', async () => {
    // A store without embeddings: what a search needs of it is said in flags, not in library options.
    const lexicalStore = join(work, 'lexical-store');
    expect((await runCli(['ingest', 'examples/corpus', '--store', lexicalStore, '--quiet'])).code).toBe(0);
    const cases: [string[], RegExp][] = [
      [['bundle', 'q', '--budget', '0'], /--budget must be at least 1/],
      [['bundle', 'q', '--limit', '2000'], /--limit must be at most 1000/],
      [['bundle', 'q', '--max-per-source', 'two'], /--max-per-source must be a whole number/],
      [['bundle', 'q', '--budgte', '10'], /unknown option '--budgte'\n\(Did you mean --budget\?\)/],
      [['bundle', 'q', '--embeddings', 'localhost:11434'], /--embeddings must be an http\(s\) URL/],
      [['bundle', 'q', '--embed-model', 'm'], /--embed-model needs --embeddings URL/],
      [['bundle', 'q', '--mode', 'dense', '--store', lexicalStore], /^litm-pack: --mode dense needs --embeddings URL --embed-model NAME/],
      [
        ['bundle', 'q', '--diversity', '0.3', '--store', lexicalStore],
        /^litm-pack: --diversity \(MMR\) needs dense vectors: give --embeddings URL/,
      ],
      [['frobnicate'], /unknown command 'frobnicate'/],
    ];
    for (const [args, message] of cases) {
      const out = await runCli(args, undefined, { env: { LITM_EMBEDDINGS_URL: undefined, LITM_EMBEDDINGS_MODEL: undefined } });
      expect(out.stderr, args.join(' ')).toMatch(message);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
  });

  it('name the environment variable when its value is wrong', async () => {
    const out = await runCli(['bundle', 'q'], undefined, { env: { LITM_EMBEDDINGS_URL: 'ftp://host/v1' } });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("value 'ftp://host/v1' from env 'LITM_EMBEDDINGS_URL' is invalid. --embeddings must be an http(s) URL");
  });

  it('--help lists the exit codes from the one error table', async () => {
    const out = await runCli(['--help']);
    expect(out.code).toBe(0);
    for (const [exit] of codesByExit()) expect(out.stdout).toContain(`  ${exit}  `);
    for (const code of Object.keys(ERROR_SURFACES)) expect(out.stdout).toContain(code);
  });

  it('docs/cli.md documents the same exit codes as the table', () => {
    const readme = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Exit codes'));
    const rows = new Map<number, string[]>();
    for (const match of section.matchAll(/^\| (\d) \| [^|]+\| ([^|]*) \|$/gm)) {
      rows.set(
        Number(match[1]),
        [...match[2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!),
      );
    }
    for (const [exit, codes] of codesByExit()) expect(rows.get(exit)?.sort(), `exit ${exit}`).toEqual([...codes].sort());
    expect(section).toMatch(/^\| 3 \|.*`verify`.*stale/m);
  });
});
