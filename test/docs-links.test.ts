// The documentation holds together: every relative link of README.md, BENCHMARKS.md, CHANGELOG.md and docs/*.md
// leads to a file that exists (and, with a #fragment, to a heading of that file), the README links every docs
// page, the architecture page names the folders of src/README.md in its order, every name a code block imports
// from the package is exported by that entry (the checked-in API report, api/*.txt), docs/mcp.md shows the
// README's tested MCP host configuration, and the README and BENCHMARKS.md stay within their sizes.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const DOCS = join(ROOT, 'docs');
const pages = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => join(DOCS, name));
const files = [join(ROOT, 'README.md'), join(ROOT, 'BENCHMARKS.md'), join(ROOT, 'CHANGELOG.md'), ...pages];
const md = new MarkdownIt({ html: true });
type Token = ReturnType<typeof md.parse>[number];
const read = (file: string) => readFileSync(file, 'utf8');
const rel = (file: string) => relative(ROOT, file);

/** Every token, inline children included, in document order. */
function tokens(file: string): Token[] {
  return md.parse(read(file), {}).flatMap((token) => [token, ...(token.children ?? [])]);
}

/** The links and image sources of a file (code blocks and code spans are not links). */
function links(file: string): string[] {
  return tokens(file).flatMap((token) => {
    if (token.type === 'link_open') return [String(token.attrGet('href') ?? '')];
    if (token.type === 'image') return [String(token.attrGet('src') ?? '')];
    return [];
  });
}

/**
 * The ids GitHub gives a file's headings: lowercased, punctuation other than `-` and `_` dropped, spaces turned into
 * hyphens, `-1`, `-2`… for repeats (github-slugger's rule). Written out here: one regular expression does not need
 * a dependency.
 */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  const all = tokens(file);
  for (const [index, token] of all.entries()) {
    if (token.type !== 'heading_open') continue;
    const inline = all[index + 1]!;
    const text = (inline.children ?? [])
      .filter((child) => child.type === 'text' || child.type === 'code_inline')
      .map((child) => child.content)
      .join('');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

describe('the documentation holds together', () => {
  it('every relative link leads to a file that exists, and every #fragment to a heading there', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const href of links(file)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:
        const [path = '', fragment] = href.split('#');
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${rel(file)}: ${href} (no such file)`);
          continue;
        }
        if (fragment !== undefined && (statSync(target).isDirectory() || !target.endsWith('.md') || !anchors(target).has(fragment))) {
          broken.push(`${rel(file)}: ${href} (no such heading in ${rel(target)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README links every docs page and the folder map of src/', () => {
    const linked = new Set(links(join(ROOT, 'README.md')).map((href) => resolve(ROOT, href.split('#')[0]!)));
    for (const page of pages) expect(linked.has(page), rel(page)).toBe(true);
    expect(linked.has(join(ROOT, 'src/README.md'))).toBe(true);
    expect(pages.length).toBeGreaterThanOrEqual(12);
  });

  it('the architecture page names the folders of src/README.md, in its order', () => {
    const folders = (text: string) => [...text.matchAll(/^\| `([a-z]+)\/` \|/gm)].map((match) => match[1]);
    const map = folders(read(join(ROOT, 'src/README.md')));
    expect(map.length).toBeGreaterThan(10);
    expect(folders(read(join(DOCS, 'architecture.md')))).toEqual(map);
  });

  it('every name a code block imports from the package is exported by that entry', () => {
    const exported = (entry: string): Set<string> => {
      const report = join(ROOT, 'api', `${entry.replace('/', '__')}.txt`);
      expect(existsSync(report), `${entry} has no API report`).toBe(true);
      return new Set(
        read(report)
          .split('\n')
          .flatMap((line) => /^(?:value|type) (\S+)$/.exec(line)?.[1] ?? []),
      );
    };
    const missing: string[] = [];
    let imports = 0;
    for (const file of files) {
      for (const block of tokens(file).filter((token) => token.type === 'fence' && /^(ts|typescript)\b/.test(token.info))) {
        for (const match of block.content.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'(litm-pack(?:\/[a-z]+)?)'/g)) {
          const names = exported(match[2]!);
          for (const spec of match[1]!
            .split(',')
            .map((name) => name.trim())
            .filter(Boolean)) {
            const name = spec.replace(/^type\s+/, '').split(/\s+as\s+/)[0]!;
            imports += 1;
            if (!names.has(name)) missing.push(`${rel(file)}: ${name} from '${match[2]}'`);
          }
        }
      }
    }
    expect(imports).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  it("docs/mcp.md shows the README's MCP host configuration (the one test/mcp.test.ts starts)", () => {
    const config = (file: string) =>
      tokens(file).find((token) => token.type === 'fence' && token.info === 'json' && token.content.includes('mcpServers'))?.content;
    expect(config(join(ROOT, 'README.md'))).toBeDefined();
    expect(config(join(DOCS, 'mcp.md'))).toBe(config(join(ROOT, 'README.md')));
  });

  it('the README stays within 30 KB and BENCHMARKS.md within 40 KB (the rest belongs in docs/ and in git history)', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(30 * 1024);
    expect(statSync(join(ROOT, 'BENCHMARKS.md')).size).toBeLessThanOrEqual(40 * 1024);
  });
});
