import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A temporary project with the packed tarball and the framework peers installed. */
    consumerDir: string;
    /** What `npm install` of the tarball printed on stderr (warnings included). */
    consumerInstallLog: string;
  }
}

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The peers (and types) a user of every entry installs, at the versions the repository tests with. */
const PEERS = [
  '@langchain/core',
  '@langchain/classic',
  '@llamaindex/core',
  '@qdrant/js-client-rest',
  '@types/node',
  '@modelcontextprotocol/sdk',
];

async function installedVersion(name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/**
 * Packs the package as `npm publish` would (prepack builds it), then installs the tarball and the peers into a
 * fresh project outside the repository, preferring npm's cache.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'litm-consumer-'));
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const quiet = ['--no-audit', '--no-fund', '--loglevel=error'];
  const options = { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } };

  const packed = await run(npm, ['pack', '--json', '--pack-destination', dir, ...quiet], { ...options, cwd: repoRoot });
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
  const tarball = join(dir, filename);

  const consumer = join(dir, 'project');
  await run(process.execPath, ['-e', `require('node:fs').mkdirSync(${JSON.stringify(consumer)})`]);
  await writeFile(join(consumer, 'package.json'), `${JSON.stringify({ name: 'litm-consumer', private: true, type: 'module' }, null, 2)}\n`);
  const peers = await Promise.all(PEERS.map(async (name) => `${name}@${await installedVersion(name)}`));
  // Warnings are kept (an engine warning is what a user on the oldest supported Node would see).
  const installed = await run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn', tarball, ...peers], {
    ...options,
    cwd: consumer,
  });

  project.provide('consumerDir', consumer);
  project.provide('consumerInstallLog', installed.stderr);
  return () => rm(dir, { recursive: true, force: true });
}
