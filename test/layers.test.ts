// The shape of src/ (src/README.md), read from every import of every source file (static, type-only,
// re-exports and dynamic):
// - the folders form one order: a folder imports only folders before it (so no two folders form a cycle);
// - the two stores are siblings: memory/ and qdrant/ import nothing of each other, but the one named hand-off
//   (qdrant/copy.ts reads the embedded store file through memory/file.ts);
// - the pipeline and the layers under it know the store contract (store/), never a store;
// - nothing inside src/ imports the package root (src/index.ts) or the package by its name;
// - the pure folders import no Node built-in (they compute; the I/O lives in the folders that name it);
// - no files form a cycle, within a folder or across folders.
// Each rule has a case below that shows it failing on a made-up file.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Folders whose code computes and does no I/O of its own: no `node:` module, no Node built-in by its bare name. */
const PURE_FOLDERS = ['core', 'render', 'store', 'refine', 'verify', 'pipeline', 'adapters'] as const;

/** Folders that may use a store only through the contract in store/. */
const CONTRACT_ONLY = ['core', 'render', 'store', 'embeddings', 'sources', 'refine', 'verify', 'pipeline'] as const;

/** The only import from one store into the other: copying an embedded store into Qdrant reads its file. */
const STORE_HANDOFFS: readonly (readonly [string, string])[] = [['qdrant/copy.ts', 'memory/file.ts']];

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

/** Source files as `{ path relative to src/ (with /), text }`. */
type Sources = ReadonlyMap<string, string>;

function readSources(): Sources {
  return new Map(sourceFiles(SRC).map((file) => [relative(SRC, file).split(sep).join('/'), readFileSync(file, 'utf8')]));
}

interface ImportEdge {
  /** The importing file, relative to src/. */
  file: string;
  line: number;
  /** What the import names, as written. */
  specifier: string;
  /** For a relative import: the imported file, relative to src/ (`.js` read as `.ts`); else undefined. */
  target?: string;
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+|\brequire\s*\(\s*)(['"])([^'"]+)\1/gmu;

// Strings (kept) and comments (blanked, newlines kept so line numbers hold): an import named in a comment is not one.
const STRING_OR_COMMENT = /(['"`])(?:\\.|(?!\1)[^\\\n])*\1|\/\/[^\n]*|\/\*[\s\S]*?\*\//gu;
const withoutComments = (text: string): string =>
  text.replace(STRING_OR_COMMENT, (match) => (match.startsWith('/') ? match.replace(/[^\n]/gu, ' ') : match));

export function importEdges(sources: Sources): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const [file, source] of sources) {
    const text = withoutComments(source);
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[2] as string;
      const line = text.slice(0, match.index).split('\n').length;
      const edge: ImportEdge = { file, line, specifier };
      if (specifier.startsWith('.')) {
        const joined = join(dirname(file), specifier).split(sep).join('/');
        edge.target = joined.replace(/\.js$/u, '.ts');
      }
      edges.push(edge);
    }
  }
  return edges;
}

const folderOf = (path: string): string | undefined => (path.includes('/') ? path.slice(0, path.indexOf('/')) : undefined);
const where = (edge: ImportEdge): string => `${edge.file}:${edge.line}`;

/** Every edge that goes to a folder not before its own in `order` (index.ts, the package root, may import anything). */
export function orderViolations(edges: readonly ImportEdge[], order: readonly string[]): string[] {
  const rank = new Map(order.map((folder, index) => [folder, index] as const));
  const found: string[] = [];
  for (const edge of edges) {
    const from = folderOf(edge.file);
    const to = edge.target === undefined ? undefined : folderOf(edge.target);
    if (from === undefined || to === undefined || to === from || edge.target?.startsWith('..')) continue;
    if ((rank.get(to) ?? Infinity) < (rank.get(from) ?? -Infinity)) continue;
    found.push(
      `${where(edge)} imports ${to}/, but ${from}/ may import only ${order.slice(0, rank.get(from) ?? 0).join(', ') || 'nothing'}`,
    );
  }
  return found;
}

/** memory/ ↔ qdrant/ imports other than the named hand-offs; store imports from contract-only folders. */
export function storeViolations(edges: readonly ImportEdge[]): string[] {
  const found: string[] = [];
  for (const edge of edges) {
    const from = folderOf(edge.file);
    const to = edge.target === undefined ? undefined : folderOf(edge.target);
    if (from === undefined || to === undefined) continue;
    const crossing = (from === 'qdrant' && to === 'memory') || (from === 'memory' && to === 'qdrant');
    if (crossing && !STORE_HANDOFFS.some(([a, b]) => a === edge.file && b === edge.target)) {
      found.push(`${where(edge)} imports ${edge.target}: the stores are siblings (memory/ and qdrant/ meet only in store/)`);
    }
    if ((CONTRACT_ONLY as readonly string[]).includes(from) && (to === 'memory' || to === 'qdrant')) {
      found.push(`${where(edge)} imports ${edge.target}: ${from}/ knows only the store contract (store/)`);
    }
  }
  return found;
}

/** Imports of the package root or of the package by its name, from inside src/. */
export function rootViolations(edges: readonly ImportEdge[], packageName: string): string[] {
  return edges
    .filter((edge) => edge.target === 'index.ts' || edge.specifier === packageName || edge.specifier.startsWith(`${packageName}/`))
    .map(
      (edge) =>
        `${where(edge)} imports ${edge.specifier}: inside src/, import the module that defines a name, never the package's own entry`,
    );
}

const BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith('_')));

/** Node built-ins (`node:fs`, or `fs` by its bare name) imported by a pure folder. */
export function purityViolations(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter((edge) => (PURE_FOLDERS as readonly string[]).includes(folderOf(edge.file) ?? ''))
    .filter((edge) => edge.specifier.startsWith('node:') || BUILTINS.has(edge.specifier.split('/')[0] as string))
    .map(
      (edge) => `${where(edge)} imports ${edge.specifier}: ${folderOf(edge.file)}/ is pure (no I/O); move the I/O to a folder that does it`,
    );
}

/** File-level cycles (strongly connected components of more than one file, or a file importing itself). */
export function fileCycles(sources: Sources, edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    if (edge.target === undefined || !sources.has(edge.target)) continue;
    next.set(edge.file, [...(next.get(edge.file) ?? []), edge.target]);
  }
  // Tarjan's algorithm, iterative so a long chain of files cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  for (const root of sources.keys()) {
    if (index.has(root)) continue;
    const work: { file: string; edge: number }[] = [{ file: root, edge: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { file: string; edge: number };
      const targets = next.get(frame.file) ?? [];
      if (frame.edge < targets.length) {
        const target = targets[frame.edge++] as string;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file) as number, index.get(target) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.file, Math.min(low.get(parent.file) as number, low.get(frame.file) as number));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.file);
      const selfLoop = component.length === 1 && (next.get(frame.file) ?? []).includes(frame.file);
      if (component.length > 1 || selfLoop) cycles.push(component.sort());
    }
  }
  return cycles;
}

describe('the shape of src/', () => {
  const order = layerOrder();
  const sources = readSources();
  const edges = importEdges(sources);
  const folders = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
  const packageName = (JSON.parse(readFileSync(join(SRC, '..', 'package.json'), 'utf8')) as { name: string }).name;

  it('src/README.md lists every folder once', () => {
    expect([...order].sort()).toEqual([...folders].sort());
    expect(new Set(order).size).toBe(order.length);
  });

  it('no folder imports one that comes after it (so no two folders form a cycle)', () => {
    expect(orderViolations(edges, order)).toEqual([]);
  });

  it('memory/ and qdrant/ are siblings, and the layers under the pipeline know only the store contract', () => {
    expect(storeViolations(edges)).toEqual([]);
  });

  it('nothing inside src/ imports the package root or the package by name', () => {
    expect(rootViolations(edges, packageName)).toEqual([]);
  });

  it(`the pure folders (${PURE_FOLDERS.join(', ')}) import no Node built-in`, () => {
    expect(purityViolations(edges)).toEqual([]);
  });

  it('no files form a cycle', () => {
    expect(fileCycles(sources, edges)).toEqual([]);
  });
});

describe('each rule fails on a file that breaks it', () => {
  const order = layerOrder();
  const fake = (files: Record<string, string>): { sources: Sources; edges: ImportEdge[] } => {
    const sources = new Map(Object.entries(files));
    return { sources, edges: importEdges(sources) };
  };

  it('an upward import', () => {
    const { edges } = fake({
      'core/pack.ts': "import { x } from '../refine/stages.js';\n",
      'store/x.ts': "import type { Pack } from '../core/schemas.js';\n",
    });
    const found = orderViolations(edges, order);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^core\/pack\.ts:1 imports refine\/, but core\/ may import only base, tokenize, render$/u);
  });

  it('one store importing the other, and the pipeline importing a store', () => {
    const { edges } = fake({
      'qdrant/search.ts': "import { hybridPrefetchLimit } from '../memory/memory-hybrid-store.js';\n",
      'qdrant/copy.ts': "import { readStoreFileParts } from '../memory/file.js';\n",
      'pipeline/bundle.ts': "\nimport type { MemoryHybridStore } from '../memory/memory-hybrid-store.js';\n",
    });
    const found = storeViolations(edges);
    expect(found).toEqual([
      expect.stringMatching(/^qdrant\/search\.ts:1 imports memory\/memory-hybrid-store\.ts: the stores are siblings/u),
      expect.stringMatching(/^pipeline\/bundle\.ts:2 imports memory\/memory-hybrid-store\.ts: pipeline\/ knows only the store contract/u),
    ]);
  });

  it('the package root, by path or by name', () => {
    const { edges } = fake({
      'core/a.ts': "import { packBundle } from '../index.js';\n",
      'core/b.ts': "export { x } from 'litm-pack';\nconst y = await import('litm-pack/qdrant');\n",
      'core/c.ts': "import { x } from 'litm-pack-other';\n// import('litm-pack') costs 20 ms\n",
    });
    expect(rootViolations(edges, 'litm-pack').map((line) => line.split(' ')[0])).toEqual(['core/a.ts:1', 'core/b.ts:1', 'core/b.ts:2']);
  });

  it('a Node built-in in a pure folder, by node: or by bare name', () => {
    const { edges } = fake({
      'core/a.ts': "import { readFileSync } from 'node:fs';\n",
      'store/b.ts': "import { join } from 'path';\n",
      'render/c.ts': "import { z } from 'zod';\n",
      'sources/d.ts': "import { readFile } from 'node:fs/promises';\n",
    });
    expect(purityViolations(edges).map((line) => line.split(' ')[0])).toEqual(['core/a.ts:1', 'store/b.ts:1']);
  });

  it('a cycle between files of one folder, a longer one, and a file importing itself', () => {
    const { sources, edges } = fake({
      'store/types.ts': "import type { X } from './schemas.js';\n",
      'store/schemas.ts': "import type { Y } from './types.js';\n",
      'cli/a.ts': "import { b } from './b.js';\n",
      'cli/b.ts': "import { c } from './c.js';\n",
      'cli/c.ts': "import { a } from './a.js';\n",
      'cli/d.ts': "import { a } from './a.js';\n",
      'base/self.ts': "export { x } from './self.js';\n",
    });
    expect(fileCycles(sources, edges).sort()).toEqual([
      ['base/self.ts'],
      ['cli/a.ts', 'cli/b.ts', 'cli/c.ts'],
      ['store/schemas.ts', 'store/types.ts'],
    ]);
  });
});
