import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './paths.js';
import { progress } from './timing.js';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build` when dist/ is missing or older than src/ (its last step writes the rank tables). */
export function ensureBuilt(why: string): void {
  const table = join(REPO_ROOT, 'dist', 'tokenize', 'ranks', 'o200k_base.ranks');
  const built = existsSync(table) ? statSync(table).mtimeMs : 0;
  if (built > newestMtime(join(REPO_ROOT, 'src'))) return;
  progress(`building the package (npm run build) for ${why}`);
  execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}
