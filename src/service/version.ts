import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The version of this package, from the nearest package.json named litm-pack above this file: the same
 * answer from src/, dist/ and dist/cjs/ (whose own package.json only sets the module type).
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 8; depth += 1) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'litm-pack' && typeof manifest.version === 'string') return (cached = manifest.version);
    } catch {
      // No package.json here (or not ours): look further up.
    }
    dir = dirname(dir);
  }
  return (cached = '0.0.0');
}
