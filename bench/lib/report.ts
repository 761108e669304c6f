import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { join } from 'node:path';
import { EMBED_CACHE_DIR, EMBED_MODEL, REPO_ROOT } from './paths.js';

export const BENCHMARKS_MD = join(REPO_ROOT, 'BENCHMARKS.md');

/**
 * Replaces the generated section `name` of BENCHMARKS.md (between its start/end markers) with `body`.
 * Everything outside the markers is left as it is; a missing section is appended.
 */
export function writeSection(name: string, body: string, file = BENCHMARKS_MD): void {
  const start = `<!-- generated:${name}:start -->`;
  const end = `<!-- generated:${name}:end -->`;
  const block = `${start}\n<!-- Written by the benchmark script; do not edit by hand. -->\n\n${compactTables(body.trim())}\n\n${end}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from >= 0 && to > from ? current.slice(0, from) + block + current.slice(to + end.length) : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}

/**
 * Table rows without the padding that lines columns up in a terminal: the file renders the same, and its tables
 * are about a quarter smaller, which keeps BENCHMARKS.md within its size (test/docs-links.test.ts).
 */
export function compactTables(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) => {
      if (!line.startsWith('|') || !line.trimEnd().endsWith('|')) return line;
      const cells = line
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim());
      const rule = cells.every((cell) => /^:?-+:?$/.test(cell));
      return `| ${cells.map((cell) => (rule ? (cell.endsWith(':') ? '---:' : '---') : cell)).join(' | ')} |`;
    })
    .join('\n');
}

function packageVersion(path: string): string {
  try {
    return (JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

function pythonVersions(): string {
  const python = join(REPO_ROOT, '.venv-bench', 'bin', 'python');
  if (!existsSync(python)) return 'not set up';
  try {
    return execFileSync(
      python,
      ['-c', 'import torch, sentence_transformers as s; print(f"torch {torch.__version__}, sentence-transformers {s.__version__}")'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    ).trim();
  } catch {
    return 'unavailable';
  }
}

/** Model time recorded by embed.py per cached dataset (absent for caches written before it was kept). */
function embeddingTimes(): string {
  const parts: string[] = [];
  for (const name of ['scifact-corpus', 'scifact-queries', 'hotpotqa']) {
    const path = join(EMBED_CACHE_DIR, EMBED_MODEL, `${name}.json`);
    if (!existsSync(path)) continue;
    const meta = JSON.parse(readFileSync(path, 'utf8')) as { rows: string[]; embed_seconds?: number };
    parts.push(
      `${name} ${meta.rows.length} texts` + (meta.embed_seconds === undefined ? ' (time not recorded)' : ` in ${meta.embed_seconds} s`),
    );
  }
  return parts.length === 0 ? 'no cache found' : parts.join('; ');
}

/** Machine and versions, as a markdown list. */
export function environmentMarkdown(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const nm = join(REPO_ROOT, 'node_modules');
  const baselines = join(REPO_ROOT, 'bench', 'baselines', 'node_modules');
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return [
    `- Machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${osType()} ${release()}`,
    `- Node ${process.version}; litm-pack at commit ${commit}`,
    `- @langchain/core ${packageVersion(join(nm, '@langchain', 'core'))}, @langchain/classic ${packageVersion(join(nm, '@langchain', 'classic'))}, ` +
      `@langchain/community ${packageVersion(join(baselines, '@langchain', 'community'))} (bench/baselines), js-tiktoken ${packageVersion(join(nm, 'js-tiktoken'))}`,
    `- Embeddings: all-MiniLM-L6-v2 (384-d, normalised), computed offline on CPU with ${pythonVersions()}`,
    `- Embedding model time (from the cache index): ${embeddingTimes()}`,
  ].join('\n');
}

/** Load average when a benchmark finished: timings on a shared machine are only comparable within one run. */
export function loadNote(): string {
  const [one, five] = loadavg();
  return `load average ${one!.toFixed(1)} (1 min), ${five!.toFixed(1)} (5 min) on ${cpus().length} cores`;
}
