// litm-pack/llm computes and does no I/O: everything its entry reaches imports no framework and no provider
// SDK, and no Node built-in the packing core does not already reach (the core hashes with node:crypto).
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1/gmu;
const withoutComments = (text: string) => text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//gu, '');

/** Every source file reachable from `entry` through relative imports, and the packages they import. */
function closure(entry: string): { files: string[]; packages: Map<string, string[]> } {
  const seen = new Set<string>();
  const packages = new Map<string, string[]>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const match of withoutComments(readFileSync(file, 'utf8')).matchAll(SPECIFIER)) {
      const specifier = match[2]!;
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/u, '.ts')));
      else packages.set(specifier, [...(packages.get(specifier) ?? []), relative(SRC, file)]);
    }
  };
  visit(join(SRC, entry));
  return { files: [...seen].map((f) => relative(SRC, f)), packages };
}

describe('litm-pack/llm is pure', () => {
  it('reaches no framework or provider SDK, and no Node built-in beyond the core’s', () => {
    const { files, packages } = closure('llm/index.ts');
    expect(files).toContain('llm/resolve.ts');
    const core = closure('core/pack.ts').packages;
    const builtins = new Set(builtinModules);
    const isBuiltin = (name: string) => name.startsWith('node:') || builtins.has(name.split('/')[0]!);
    const offending = [...packages.keys()].filter(
      (name) =>
        (isBuiltin(name) && !core.has(name)) ||
        /^(@langchain|@llamaindex|llamaindex$|ai$|@ai-sdk|@anthropic-ai|fastify|@modelcontextprotocol|@qdrant)/u.test(name),
    );
    expect(offending.map((name) => `${name} (${packages.get(name)!.join(', ')})`)).toEqual([]);
  });
});
