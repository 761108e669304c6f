import { execFileSync } from 'node:child_process';
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
  repository?: { type: string; url: string };
  homepage?: string;
  keywords?: string[];
  engines: { node: string };
};
const installed = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

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
    expect(Object.keys(mapped).sort()).toEqual(
      subpaths
        .filter((key) => key !== '.')
        .map((key) => key.slice(2))
        .sort(),
    );
    for (const [subpath, targets] of Object.entries(mapped)) expect(targets).toEqual([`./dist/${subpath}/index.d.ts`]);
  });

  it('accepts the @llamaindex/core patch releases of the tested minor, not the next minor', () => {
    const range = manifest.peerDependencies['@llamaindex/core']!;
    const tested = installed('@llamaindex/core');
    expect(semver.satisfies(tested, range)).toBe(true);
    expect(semver.satisfies(semver.inc(tested, 'patch')!, range)).toBe(true);
    expect(semver.satisfies(semver.inc(tested, 'minor')!, range)).toBe(false);
    for (const peer of Object.keys(manifest.peerDependencies))
      expect(semver.satisfies(installed(peer), manifest.peerDependencies[peer]!), peer).toBe(true);
  });

  it('ships the sources its source maps point at, and no tests', () => {
    expect(manifest.files).toContain('src');
    expect(manifest.files.some((file) => file.startsWith('test'))).toBe(false);
  });

  it('names its repository, homepage and keywords for the registry page', () => {
    expect(manifest.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\/github\.com\/.+\.git$/) });
    expect(manifest.homepage).toMatch(/^https:\/\/github\.com\//);
    expect(manifest.keywords).toEqual(expect.arrayContaining(['rag', 'qdrant', 'langchain', 'llamaindex']));
  });

  it('ships every image the README shows (the registry renders the README from the tarball)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((src) => !/^https?:/.test(src));
    expect(images).toContain('docs/inspect-demo.png');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    // --ignore-scripts: the file list does not need the build that prepack runs.
    const packed = execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const [{ files }] = JSON.parse(packed.slice(packed.indexOf('['))) as [{ files: { path: string }[] }];
    const paths = new Set(files.map((file) => file.path));
    for (const image of images) expect(paths.has(image), image).toBe(true);
  });

  it('installs on the oldest Node it supports without an engine warning: no locked package asks for a newer Node', () => {
    // The oldest Node 20 the dev tools accept (vite asks for ^20.19.0); `npm ci` warns EBADENGINE for any package
    // whose engines.node this does not satisfy.
    const oldest = '20.19.0';
    expect(semver.satisfies(oldest, manifest.engines.node)).toBe(true);
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; engines?: unknown }>;
    };
    const refusing = Object.entries(lock.packages)
      .filter(
        ([path, entry]) =>
          path !== '' &&
          typeof entry.engines === 'object' &&
          entry.engines !== null &&
          typeof (entry.engines as { node?: unknown }).node === 'string',
      )
      .filter(([, entry]) => !semver.satisfies(oldest, (entry.engines as { node: string }).node))
      .map(
        ([path, entry]) => `${path.replace(/^.*node_modules\//, '')}@${entry.version} (node ${(entry.engines as { node: string }).node})`,
      );
    expect(refusing).toEqual([]);
  });
});
