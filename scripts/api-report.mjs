#!/usr/bin/env node
// The public surface, entry by entry: every name each package entry exports, marked value or type, as the
// checked-in api/*.txt files list them. `node scripts/api-report.mjs` prints the report; `--write` updates the
// files; `--check` fails (exit 1) with the difference when an export was added or removed without updating them,
// so growing the surface is a decision made in review (as api-extractor's reports do for larger libraries).
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Entry name (`litm-pack`, `litm-pack/qdrant`) → its source file. */
function entries() {
  const out = [];
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const types = target?.import?.types;
    if (typeof types !== 'string') continue;
    const source = types.replace(/^\.\/dist\//u, 'src/').replace(/\.d\.ts$/u, '.ts');
    out.push({ name: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`, file: join(root, source) });
  }
  return out;
}

export function apiReport() {
  const list = entries();
  const program = ts.createProgram(
    list.map((entry) => entry.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const reports = new Map();
  for (const entry of list) {
    const source = program.getSourceFile(entry.file);
    if (source === undefined) throw new Error(`${entry.file} is not a source file`);
    const symbol = checker.getSymbolAtLocation(source);
    const lines = [];
    for (const exported of symbol === undefined ? [] : checker.getExportsOfModule(symbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const kind = target.flags & ts.SymbolFlags.Value ? 'value' : 'type';
      lines.push(`${kind} ${exported.name}`);
    }
    lines.sort((a, b) => (a.split(' ')[1] < b.split(' ')[1] ? -1 : a.split(' ')[1] > b.split(' ')[1] ? 1 : 0));
    reports.set(entry.name, lines);
  }
  return reports;
}

const fileOf = (entry) => join(root, 'api', `${entry.replace('/', '__')}.txt`);
const render = (entry, lines) =>
  `# ${entry}: ${lines.filter((l) => l.startsWith('value ')).length} values, ${lines.filter((l) => l.startsWith('type ')).length} types (scripts/api-report.mjs --write)\n${lines.join('\n')}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reports = apiReport();
  const mode = process.argv[2];
  if (mode === '--write') {
    mkdirSync(join(root, 'api'), { recursive: true });
    for (const name of readdirSync(join(root, 'api'))) rmSync(join(root, 'api', name));
    for (const [entry, lines] of reports) writeFileSync(fileOf(entry), render(entry, lines));
  } else if (mode === '--check') {
    let failed = false;
    for (const [entry, lines] of reports) {
      const want = existsSync(fileOf(entry)) ? readFileSync(fileOf(entry), 'utf8') : '';
      if (want !== render(entry, lines)) {
        failed = true;
        console.error(`${entry}: the exports differ from ${fileOf(entry)}; run node scripts/api-report.mjs --write and review the change`);
      }
    }
    process.exit(failed ? 1 : 0);
  } else {
    for (const [entry, lines] of reports) process.stdout.write(render(entry, lines));
  }
}
