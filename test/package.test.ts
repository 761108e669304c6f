import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
  typesVersions: Record<string, Record<string, string[]>>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  files: string[];
};
const installed = (name: string) => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

describe('package.json', () => {
  const subpaths = Object.keys(manifest.exports).filter((key) => key !== './package.json');

  it('gives every entry an import and a require condition, each with its types', () => {
    for (const key of subpaths) {
      const dir = key === '.' ? '' : `${key.slice(2)}/`;
      expect(manifest.exports[key], key).toEqual({
        import: { types: `./dist/${dir}index.d.ts`, default: `./dist/${dir}index.js` },
        require: { types: `./dist/cjs/${dir}index.d.ts`, default: `./dist/cjs/${dir}index.js` },
      });
    }
  });

  it('maps every subpath in typesVersions, for moduleResolution "node" (which reads no exports)', () => {
    const mapped = manifest.typesVersions['*'] ?? {};
    expect(Object.keys(mapped).sort()).toEqual(subpaths.filter((key) => key !== '.').map((key) => key.slice(2)).sort());
    for (const [subpath, targets] of Object.entries(mapped)) expect(targets).toEqual([`./dist/${subpath}/index.d.ts`]);
  });

  it('accepts the @llamaindex/core patch releases of the tested minor, not the next minor', () => {
    const range = manifest.peerDependencies['@llamaindex/core']!;
    const tested = installed('@llamaindex/core');
    expect(semver.satisfies(tested, range)).toBe(true);
    expect(semver.satisfies(semver.inc(tested, 'patch')!, range)).toBe(true);
    expect(semver.satisfies(semver.inc(tested, 'minor')!, range)).toBe(false);
    for (const peer of Object.keys(manifest.peerDependencies)) expect(semver.satisfies(installed(peer), manifest.peerDependencies[peer]!), peer).toBe(true);
  });

  it('ships the sources its source maps point at, and no tests', () => {
    expect(manifest.files).toContain('src');
    expect(manifest.files.some((file) => file.startsWith('test'))).toBe(false);
  });
});
