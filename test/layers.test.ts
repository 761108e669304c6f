// The folders of src/ form one order (src/README.md): a folder imports only folders before it. Reads every
// import of every source file (static, type-only, re-exports and dynamic), so an upward import or a cycle
// between folders fails here with the file and the line that made it.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** The order of src/README.md's table. */
function layerOrder(): string[] {
  const readme = readFileSync(join(SRC, 'README.md'), 'utf8');
  return [...readme.matchAll(/^\| `([a-z-]+)\/` \|/gmu)].map((m) => m[1] as string);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

interface ImportEdge {
  file: string;
  line: number;
  from: string;
  to: string;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gmu;

/** Imports from one folder of src/ into another, as `{ from, to }` folder names. */
export function folderImports(files: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const own = relative(SRC, file).split(sep);
    if (own.length < 2) continue; // index.ts, the package root, may import anything
    for (const match of text.matchAll(IMPORT)) {
      const target = relative(SRC, resolve(dirname(file), match[2] as string)).split(sep);
      if (target[0] === '..' || target.length < 2 || target[0] === own[0]) continue;
      const line = text.slice(0, match.index).split('\n').length;
      edges.push({ file: relative(SRC, file), line, from: own[0] as string, to: target[0] as string });
    }
  }
  return edges;
}

/** Every edge that goes to a folder not before its own in `order`. */
export function violations(edges: readonly ImportEdge[], order: readonly string[]): string[] {
  const rank = new Map(order.map((folder, index) => [folder, index] as const));
  return edges
    .filter((edge) => !((rank.get(edge.to) ?? Infinity) < (rank.get(edge.from) ?? -Infinity)))
    .map((edge) => `${edge.file}:${edge.line} imports ${edge.to}/, but ${edge.from}/ may import only ${order.slice(0, rank.get(edge.from) ?? 0).join(', ') || 'nothing'}`);
}

describe('the folders of src/ form one order', () => {
  const order = layerOrder();
  const folders = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());

  it('src/README.md lists every folder once', () => {
    expect([...order].sort()).toEqual([...folders].sort());
    expect(new Set(order).size).toBe(order.length);
  });

  it('no folder imports one that comes after it (so there is no cycle)', () => {
    expect(violations(folderImports(sourceFiles(SRC)), order)).toEqual([]);
  });

  it('the check catches an upward import and a cycle', () => {
    const core = join(SRC, 'core', 'pack.ts');
    const edges: ImportEdge[] = [
      { file: relative(SRC, core), line: 1, from: 'core', to: 'refine' },
      { file: 'retrieve/x.ts', line: 2, from: 'retrieve', to: 'core' },
      { file: 'core/y.ts', line: 3, from: 'core', to: 'retrieve' },
    ];
    const found = violations(edges, order);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^core\/pack\.ts:1 imports refine\/, but core\/ may import only base, tokenize, render$/u);
    expect(found[1]).toMatch(/^core\/y\.ts:3 imports retrieve\//u);
  });
});
