#!/usr/bin/env node
// Installs what examples/promptfoo needs into .promptfoo/ (git-ignored), unless it already holds exactly that:
// - .promptfoo/tool: promptfoo, pinned with its lockfile (examples/promptfoo/tools/), without its optional
//   dependencies (cloud SDKs, browsers: over a gigabyte it does not need to replay answers offline);
// - .promptfoo/node: Node 22 (the node-linux-<arch> package of the npm registry), since promptfoo needs
//   Node 22 and the package itself supports Node 20.
// Prints the paths as JSON: { node, promptfoo }. Needs the npm registry the first time only.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifestDir = join(root, 'examples/promptfoo/tools');
const toolsDir = join(root, '.promptfoo');
const NODE_VERSION = '22.23.5';

function fail(message) {
  process.stderr.write(`setup-promptfoo: ${message}\n`);
  process.exit(1);
}

if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch))
  fail(`no Node 22 package for ${process.platform}-${process.arch} in this setup; run the example with a Node 22 of your own`);
const nodePackage = `node-linux-${process.arch}`;
const node = join(toolsDir, 'node/node_modules', nodePackage, 'bin/node');
const promptfoo = join(toolsDir, 'tool/node_modules/promptfoo');
const stamp = createHash('sha256')
  .update(readFileSync(join(manifestDir, 'package.json')))
  .update(readFileSync(join(manifestDir, 'package-lock.json')))
  .update(`${nodePackage}@${NODE_VERSION}`)
  .digest('hex');
const stampFile = join(toolsDir, '.installed');

function npm(args, cwd) {
  const run = spawnSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });
  if (run.status !== 0) fail(`npm ${args.join(' ')} in ${cwd} failed:\n${run.stdout}${run.stderr}`);
}

if (!(existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(node) && existsSync(promptfoo))) {
  process.stderr.write('setup-promptfoo: installing promptfoo and Node 22 into .promptfoo/\n');
  rmSync(toolsDir, { recursive: true, force: true });
  mkdirSync(join(toolsDir, 'tool'), { recursive: true });
  mkdirSync(join(toolsDir, 'node'), { recursive: true });
  copyFileSync(join(manifestDir, 'package.json'), join(toolsDir, 'tool/package.json'));
  copyFileSync(join(manifestDir, 'package-lock.json'), join(toolsDir, 'tool/package-lock.json'));
  // npm runs on this Node 20; promptfoo's request for Node 22 only warns here.
  npm(['ci', '--omit=optional'], join(toolsDir, 'tool'));
  writeFileSync(join(toolsDir, 'node/package.json'), `${JSON.stringify({ private: true }, null, 2)}\n`);
  npm(['install', '--no-save', '--no-package-lock', `${nodePackage}@${NODE_VERSION}`], join(toolsDir, 'node'));
  if (!existsSync(node) || !existsSync(promptfoo)) fail('npm did not install Node 22 and promptfoo');
  writeFileSync(stampFile, stamp);
}
process.stdout.write(`${JSON.stringify({ node, promptfoo })}\n`);
