#!/usr/bin/env node
// Size figures of src/ for reviews of the code's shape: files by length, functions over 60 lines, lines over
// 140 characters, non-null assertions. `node scripts/code-stats.mjs [DIR]` (default: src of this checkout).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const dir = resolve(process.argv[2] ?? join(import.meta.dirname, '..', 'src'));
const files = (function walk(d) {
  return readdirSync(d).flatMap((name) => {
    const path = join(d, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
  });
})(dir);

const lengths = [];
const longFunctions = [];
let longLines = 0;
let nonNull = 0;
let totalLines = 0;
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  totalLines += lines.length;
  lengths.push([lines.length, relative(dir, file)]);
  longLines += lines.filter((line) => line.length > 140).length;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.NonNullExpression) nonNull += 1;
    if (ts.isFunctionLike(node) && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name?.getText(source) ?? (ts.isConstructorDeclaration(node) ? 'constructor' : '(anonymous)');
      if (end - start + 1 > 60) longFunctions.push([end - start + 1, `${relative(dir, file)}:${start + 1} ${name}`]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
lengths.sort((a, b) => b[0] - a[0]);
longFunctions.sort((a, b) => b[0] - a[0]);
const bucket = (lo, hi) => lengths.filter(([n]) => n >= lo && n < hi).length;
console.log(
  `${files.length} files, ${totalLines} lines; files by length: <100 ${bucket(0, 100)}, 100-299 ${bucket(100, 300)}, 300-499 ${bucket(300, 500)}, 500-699 ${bucket(500, 700)}, >=700 ${bucket(700, Infinity)}`,
);
console.log(
  `largest: ${lengths
    .slice(0, 5)
    .map(([n, f]) => `${f} ${n}`)
    .join(', ')}`,
);
console.log(
  `functions over 60 lines: ${longFunctions.length}${
    longFunctions.length
      ? ` (longest: ${longFunctions
          .slice(0, 5)
          .map(([n, f]) => `${f} ${n}`)
          .join(', ')})`
      : ''
  }`,
);
console.log(`lines over 140 characters: ${longLines}; non-null assertions: ${nonNull}`);
