import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: { root: string; version: string } | null | undefined;

/**
 * The nearest directory above this module whose package.json is named litm-pack: the same answer from src/,
 * dist/, the bundled chunks under dist/chunks/ and dist/cjs/ (whose own package.json only sets the module type).
 */
function findPackage(): { root: string; version: string } | null {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 8; depth += 1) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'litm-pack' && typeof manifest.version === 'string') return (cached = { root: dir, version: manifest.version });
    } catch {
      // No package.json here (or not ours): look further up.
    }
    dir = dirname(dir);
  }
  return (cached = null);
}

/** The version of this package ('0.0.0' when its package.json cannot be found). */
export function packageVersion(): string {
  return findPackage()?.version ?? '0.0.0';
}

/** The directory holding this package's package.json (and the shipped examples/), or null when it cannot be found. */
export function packageRoot(): string | null {
  return findPackage()?.root ?? null;
}
