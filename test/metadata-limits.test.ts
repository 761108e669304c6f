/**
 * Metadata depth and size limits: lying metadata (nested ten thousand levels, cyclic, megabytes) gets a typed
 * error naming the limit on every path that takes it, never a RangeError from a stack overflow.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Document } from '@langchain/core/documents';
import { afterAll, describe, expect, it } from 'vitest';
import {
  isLitmPackError,
  LitmPackError,
  MAX_METADATA_DEPTH,
  MAX_METADATA_SIZE,
  MemoryHybridStore,
  packBriefing,
  packBundle,
} from '../src/index.js';
import { LitmCompressor } from '../src/langchain/index.js';
import { readSaved, writeSaved } from './helpers/store-files.js';

/** `{ a: { a: ... { a: leaf } } }` with `levels` objects. */
function nested(levels: number, leaf: unknown = 1): Record<string, unknown> {
  let value: unknown = leaf;
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value as Record<string, unknown>;
}

function nestedArrays(levels: number): Record<string, unknown> {
  let value: unknown = [];
  for (let i = 0; i < levels - 1; i += 1) value = [value];
  return { list: value };
}

const DEEP = nested(10_000);
const cyclic: Record<string, unknown> = { name: 'loop' };
cyclic.self = cyclic;
const huge = { blob: 'x'.repeat(MAX_METADATA_SIZE) };

async function errorOf(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectLimitError(
  error: unknown,
  limit: 'MAX_METADATA_DEPTH' | 'MAX_METADATA_SIZE',
  code: 'invalid_input' | 'corrupt' = 'invalid_input',
) {
  expect(error).toBeInstanceOf(LitmPackError);
  expect(isLitmPackError(error, code)).toBe(true);
  expect((error as Error).message).toContain(limit);
  expect((error as LitmPackError).issues.some((issue) => issue.path.at(-1) === 'metadata')).toBe(true);
}

describe('packBundle and packBriefing', () => {
  const candidate = (metadata: Record<string, unknown>) => ({ id: 'a', text: 'Some text.', score: 1, metadata });

  it.each([
    ['nested 10,000 levels', DEEP, 'MAX_METADATA_DEPTH'],
    ['nested 10,000 arrays', nestedArrays(10_000), 'MAX_METADATA_DEPTH'],
    ['cyclic', cyclic, 'MAX_METADATA_DEPTH'],
    ['over a megabyte', huge, 'MAX_METADATA_SIZE'],
  ] as const)('rejects metadata %s with invalid_input naming the limit', async (_name, metadata, limit) => {
    // two candidates with the same id and score: the tie-break compares whole candidates
    const candidates = [candidate(metadata), { ...candidate({}), text: 'Other text.' }];
    expectLimitError(await errorOf(() => packBundle({ query: 'q', candidates, maxTokens: 100 })), limit);
    expectLimitError(await errorOf(() => packBriefing({ query: 'q', candidates, maxTokens: 100 })), limit);
  });

  it('accepts metadata at the limits and carries it through', () => {
    const atDepth = nested(MAX_METADATA_DEPTH - 1, [1]);
    expect(() => packBundle({ query: 'q', candidates: [candidate(nested(MAX_METADATA_DEPTH))], maxTokens: 100 })).not.toThrow();
    expect(() => packBundle({ query: 'q', candidates: [candidate(atDepth)], maxTokens: 100 })).not.toThrow();
    const overDepth = nested(MAX_METADATA_DEPTH, [1]);
    expectLimitError(
      (() => {
        try {
          packBundle({ query: 'q', candidates: [candidate(overDepth)], maxTokens: 100 });
        } catch (error) {
          return error;
        }
      })(),
      'MAX_METADATA_DEPTH',
    );
    const big = { blob: 'x'.repeat(MAX_METADATA_SIZE - 20) };
    expect(JSON.stringify(big).length).toBeLessThanOrEqual(MAX_METADATA_SIZE);
    expect(packBundle({ query: 'q', candidates: [candidate(big)], maxTokens: 100 }).items).toHaveLength(1);
  });

  it('surfaces the same typed error through the LangChain compressor', async () => {
    const compressor = new LitmCompressor({ maxTokens: 100 });
    const error = await errorOf(() => compressor.compressDocuments([new Document({ pageContent: 'x', metadata: { deep: DEEP } })], 'q'));
    expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toContain('MAX_METADATA_DEPTH');
  });
});

describe('MemoryHybridStore', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it.each([
    ['nested 10,000 levels', DEEP, 'MAX_METADATA_DEPTH'],
    ['over a megabyte', huge, 'MAX_METADATA_SIZE'],
  ] as const)('addDocuments rejects metadata %s with invalid_input and stores nothing', async (_name, metadata, limit) => {
    const store = new MemoryHybridStore();
    await store.addDocuments([{ id: 'ok.md', text: 'Fine.' }]);
    const error = await errorOf(() => store.addDocuments([{ id: 'bad.md', text: 'Some text.', metadata }]));
    expectLimitError(error, limit);
    expect(store.size).toBe(1);
  });

  it('load reports a store file with metadata nested 10,000 levels as corrupt, naming the limit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'litm-metadata-'));
    dirs.push(dir);
    const path = join(dir, 'store.json');
    const store = new MemoryHybridStore();
    await store.addDocuments([{ id: 'doc.md', text: 'Some text.', metadata: { marker: 'HERE' } }]);
    await store.save(path);
    // Edited in the JSON lines format earlier versions wrote (still read); test/memory-store-file.test.ts has the binary case.
    await writeSaved(path, await readSaved(path));
    const saved = await readFile(path, 'utf8');
    expect(saved).toContain('"marker":"HERE"');
    // A hand-edited (or hostile) file: nesting that no addDocuments call could have written.
    const deepJson = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    await writeFile(path, saved.replace('"marker":"HERE"', `"marker":${deepJson}`));
    const error = await errorOf(() => MemoryHybridStore.load(path));
    expectLimitError(error, 'MAX_METADATA_DEPTH', 'corrupt');
    expect((error as Error).message).toContain(path);
  });
});
