import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');

// A module resolution hook that logs every URL the child process resolves, so the test sees what an
// import really loads (including transitive and dynamic imports), in a fresh process with no test runner.
const HOOKS = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.LITM_LOAD_LOG, result.url + '\\n');
  return result;
}`;
const REGISTER = `
import { register } from 'node:module';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'litm-root-import-'));
  await writeFile(join(dir, 'register.mjs'), REGISTER);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Imports `entry` (relative to the repository) in a child node process and returns the resolved URLs. */
async function urlsLoadedBy(entry: string): Promise<string[]> {
  const log = join(dir, `${entry.replace(/\W+/g, '_')}.log`);
  await writeFile(log, '');
  const script = `await import(${JSON.stringify(pathToFileURL(join(ROOT, entry)).href)});`;
  await run(
    process.execPath,
    ['--import', 'tsx', '--import', pathToFileURL(join(dir, 'register.mjs')).href, '--input-type=module', '-e', script],
    { cwd: ROOT, env: { ...process.env, LITM_LOAD_LOG: log } },
  );
  return (await readFile(log, 'utf8')).split('\n').filter((line) => line.length > 0);
}

const fromPackage = (urls: string[], name: RegExp) => urls.filter((url) => name.test(url));
const LANGCHAIN = /\/node_modules\/@langchain\//;
const LLAMAINDEX = /\/node_modules\/(@llamaindex|llamaindex)\//;
const FASTIFY = /\/node_modules\/(fastify|@fastify)\//;
const MCP_SDK = /\/node_modules\/@modelcontextprotocol\//;
const QDRANT_CLIENT = /\/node_modules\/@qdrant\//;

describe('optional peers stay optional', () => {
  it('importing the package root loads neither LangChain nor LlamaIndex', async () => {
    const urls = await urlsLoadedBy('src/index.ts');
    expect(urls.some((url) => url.endsWith('/src/core/pack.ts'))).toBe(true); // the hook saw the root's imports
    expect(fromPackage(urls, LANGCHAIN)).toEqual([]);
    expect(fromPackage(urls, LLAMAINDEX)).toEqual([]);
    expect(fromPackage(urls, FASTIFY)).toEqual([]);
    expect(fromPackage(urls, MCP_SDK)).toEqual([]);
  });

  it('the LangChain adapter loads @langchain/core and no LlamaIndex', async () => {
    const urls = await urlsLoadedBy('src/langchain/index.ts');
    expect(fromPackage(urls, LANGCHAIN).length).toBeGreaterThan(0);
    expect(fromPackage(urls, LLAMAINDEX)).toEqual([]);
  });

  it('the LlamaIndex adapter loads @llamaindex/core only: not llamaindex itself, no LangChain', async () => {
    const urls = await urlsLoadedBy('src/llamaindex/index.ts');
    expect(fromPackage(urls, /\/node_modules\/@llamaindex\/core\//).length).toBeGreaterThan(0);
    expect(fromPackage(urls, /\/node_modules\/llamaindex\//)).toEqual([]);
    expect(fromPackage(urls, LANGCHAIN)).toEqual([]);
  });

  it('litm-pack/mcp loads the MCP SDK and no HTTP server, framework or Qdrant client', async () => {
    const urls = await urlsLoadedBy('src/mcp/index.ts');
    expect(fromPackage(urls, MCP_SDK).length).toBeGreaterThan(0);
    expect(fromPackage(urls, FASTIFY)).toEqual([]);
    expect(fromPackage(urls, QDRANT_CLIENT)).toEqual([]);
    expect(fromPackage(urls, LANGCHAIN)).toEqual([]);
  });

  it('litm-pack/server loads Fastify and no framework or Qdrant client', async () => {
    const urls = await urlsLoadedBy('src/server/index.ts');
    expect(fromPackage(urls, FASTIFY).length).toBeGreaterThan(0);
    expect(fromPackage(urls, QDRANT_CLIENT)).toEqual([]);
    expect(fromPackage(urls, LANGCHAIN)).toEqual([]);
    expect(fromPackage(urls, LLAMAINDEX)).toEqual([]);
  });
});
