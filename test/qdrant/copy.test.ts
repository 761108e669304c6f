// Moving an embedded store into Qdrant (copyToQdrant, `litm-pack copy`): chunks, payloads, token counts, vectors
// and ACLs as stored, so both stores give the same packs and a pack made before the move verifies as current
// after it; a copy is idempotent, resumes after an interruption, and removes what the store no longer has.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packBundle } from '../../src/index.js';
import { QdrantHybridStore, copyToQdrant, type CopyProgress } from '../../src/qdrant/index.js';
import { MemoryHybridStore } from '../../src/memory/memory-hybrid-store.js';
import type { IngestDocument, SearchRequest } from '../../src/store/schemas.js';
import { verifyCitations } from '../../src/verify/verify.js';
import { runCli } from '../helpers/cli.js';
import { DistinctEmbeddings, admin, clock, collectionNames, url } from './helpers.js';

const names = collectionNames('copy');

// Lengths differ between chunks sharing a query term, so BM25 never ties (Qdrant leaves ties in engine order).
const corpus: IngestDocument[] = [
  {
    id: 'billing/refunds.md',
    version: 'v2',
    title: 'Refunds',
    clusters: ['billing'],
    kind: 'insight',
    text: '# Refunds\n\nRefunds take fourteen days.\n\nKeep the receipt; refunds without one take a little longer.',
  },
  {
    id: 'billing/invoices.md',
    clusters: ['billing', 'finance'],
    metadata: { team: { name: 'ledger' }, lang: 'en' },
    text: '# Invoices\n\nInvoices are sent monthly.\n\nA late invoice costs a small fee.',
  },
  {
    id: 'hr/leave.md',
    acl: ['hr'],
    kind: 'segment',
    timestamp: '2024-02-01T00:00:00Z',
    text: '# Leave\n\nParental leave is sixteen weeks.\n\nHolidays are twenty-five days; refunds of unused days are paid in March.',
  },
  {
    id: 'finance/budget.md',
    acl: ['finance', 'board'],
    clusters: ['finance'],
    text: 'The budget for refunds is reviewed each quarter by the board.\n\nInvoices over a limit need the approval of two managers.',
  },
  {
    id: 'ops/oncall.md',
    url: 'https://example.test/oncall',
    text: 'The on-call rota changes on Mondays.\n\nRefunds questions go to billing, never to the on-call engineer.',
  },
];

let dir: string;
let file: string;
let memory: MemoryHybridStore;

async function memoryStore(docs: IngestDocument[]): Promise<MemoryHybridStore> {
  // Qdrant computes BM25 IDF over the whole collection: the memory store's idfCorpus "all".
  const store = new MemoryHybridStore({ embeddings: new DistinctEmbeddings(), chunkTokens: 12, now: clock(), idfCorpus: 'all' });
  await store.addDocuments(docs);
  return store;
}

function readerOf(collection: string): QdrantHybridStore {
  return new QdrantHybridStore({ url, collection, embeddings: new DistinctEmbeddings(), chunkTokens: 12 });
}

/**
 * A pack without its score figures (Qdrant computes cosines in f32, the memory store in f64: they agree to about
 * 1e-7), nor what hashes or grades them.
 */
function withoutScores(pack: ReturnType<typeof packBundle>): unknown {
  return JSON.parse(
    JSON.stringify(pack, (key, value: unknown) =>
      /score|similarity/i.test(key) || key === 'packHash' || key === 'confidence' ? undefined : value,
    ),
  ) as unknown;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'litm-copy-'));
  file = join(dir, 'store.json');
  memory = await memoryStore(corpus);
  await memory.save(file);
});

const requests: SearchRequest[] = [];
for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
  for (const principals of [[], ['hr'], ['finance', 'hr']])
    requests.push({ text: 'refunds invoices budget leave', mode, limit: 8, principals });
}

describe('copyToQdrant', () => {
  it('copies every chunk with its payload and vectors: the same records, searches and packs as the store', async () => {
    const collection = names('same');
    const progress: CopyProgress[] = [];
    const result = await copyToQdrant({ from: file, to: { url, collection }, batchSize: 4, onProgress: (p) => progress.push(p) });
    expect(result).toMatchObject({
      collection,
      sources: corpus.length,
      chunks: memory.size,
      written: memory.size,
      unchanged: 0,
      removed: 0,
    });
    expect(progress.at(-1)).toEqual({ phase: 'copy', done: memory.size, total: memory.size });
    expect(progress.filter((p) => p.phase === 'copy').map((p) => p.done)).toEqual([...new Set(progress.map((p) => p.done))]);

    const qdrant = readerOf(collection);
    const all = { sourceIds: corpus.map((d) => d.id) };
    expect(await qdrant.getChunks(all)).toEqual(await memory.getChunks(all));
    // The collection records the model and dimension the store file records.
    const info = await admin.getCollection(collection);
    expect(JSON.stringify(info.config)).toContain('"size":65');

    for (const request of requests) {
      const label = JSON.stringify(request);
      const [fromMemory, fromQdrant] = [await memory.search(request), await qdrant.search(request)];
      expect(
        fromQdrant.map((c) => c.id),
        label,
      ).toEqual(fromMemory.map((c) => c.id));
      fromQdrant.forEach((c, i) => expect(Math.abs(c.score - fromMemory[i]!.score), label).toBeLessThanOrEqual(1e-5));
      const packs = [fromMemory, fromQdrant].map((candidates) => packBundle({ query: request.text, candidates, maxTokens: 120 }));
      expect(withoutScores(packs[1]!), label).toEqual(withoutScores(packs[0]!));
      expect(packs[1]!.items.length, label).toBeGreaterThan(0);
    }
  });

  it('a pack made from the store before the move verifies as current against the collection after it', async () => {
    const collection = names('verify');
    const candidates = await memory.search({ text: 'refunds leave budget', mode: 'hybrid', limit: 10, principals: ['hr', 'finance'] });
    const pack = packBundle({ query: 'refunds leave budget', candidates, maxTokens: 400 });
    expect(pack.citations.length).toBeGreaterThan(2);
    await copyToQdrant({ from: file, to: { url, collection } });
    const checks = await verifyCitations({ store: readerOf(collection), pack, principals: ['hr', 'finance'] });
    expect(checks.map((c) => c.status)).toEqual(pack.citations.map(() => 'current'));
    // Under other principals, the restricted citations are missing, as on the store itself.
    const outside = await verifyCitations({ store: readerOf(collection), pack, principals: [] });
    expect(outside.map((c) => c.status)).toEqual((await verifyCitations({ store: memory, pack, principals: [] })).map((c) => c.status));
    expect(outside.some((c) => c.status === 'missing')).toBe(true);
  });

  it('is idempotent, resumes after an interruption, and removes the chunks of sources the store changed', async () => {
    const collection = names('resume');
    // Interrupted after its first batch.
    const controller = new AbortController();
    const interrupted = await copyToQdrant({
      from: file,
      to: { url, collection },
      batchSize: 3,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'copy' && p.done >= 3) controller.abort();
      },
    }).catch((error: unknown) => error);
    expect(interrupted).toMatchObject({ code: 'aborted' });
    expect((await admin.count(collection, { exact: true })).count).toBe(3);

    const resumed = await copyToQdrant({ from: file, to: { url, collection }, batchSize: 3 });
    expect(resumed).toMatchObject({ written: memory.size - 3, unchanged: 3, removed: 0 });
    const again = await copyToQdrant({ from: file, to: { url, collection } });
    expect(again).toMatchObject({ written: 0, unchanged: memory.size, removed: 0 });

    // The store changes: one source gets a new version with fewer chunks, one is removed. The copy follows the
    // changed source; the removed source's points stay (the copy only answers for the sources the store has).
    const changed = await memoryStore([
      ...corpus.filter((d) => d.id !== 'ops/oncall.md' && d.id !== 'billing/refunds.md'),
      { ...corpus[0]!, version: 'v3', text: '# Refunds\n\nRefunds take ten days now.' },
    ]);
    const changedFile = join(dir, 'changed.json');
    await changed.save(changedFile);
    const followed = await copyToQdrant({ from: changedFile, to: { url, collection } });
    const oldRefunds = (await memory.getChunks({ sourceIds: ['billing/refunds.md'] })).length;
    expect(followed.removed).toBe(oldRefunds);
    expect(followed.written).toBe(1);
    const qdrant = readerOf(collection);
    expect(await qdrant.getChunks({ sourceIds: ['billing/refunds.md'] })).toEqual(
      await changed.getChunks({ sourceIds: ['billing/refunds.md'] }),
    );
    expect((await qdrant.getChunks({ sourceIds: ['ops/oncall.md'] })).length).toBeGreaterThan(0);
  });

  it('refuses a collection of another dimension or embedding model, naming both', async () => {
    const collection = names('mismatch');
    const other = new QdrantHybridStore({ url, collection, vectorSize: 12 });
    await other.ensureCollection();
    await expect(copyToQdrant({ from: file, to: { url, collection } })).rejects.toMatchObject({ code: 'config_mismatch' });
  });
});

describe('litm-pack copy', () => {
  it('copies a store folder into qdrant://host:port/collection and says what it did; a second run writes nothing', async () => {
    const collection = names('cli');
    const target = `qdrant://${new URL(url).host}/${collection}`;
    const first = await runCli(['copy', '--from', dir, '--to', target]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      `Copied ${memory.size} chunks of ${corpus.length} sources from ${file} to ${target}: ${memory.size} written, 0 already there, 0 no longer in the store removed.\n`,
    );
    const second = await runCli(['copy', '--from', file, '--to', target, '--quiet']);
    expect(second.stdout).toContain(`0 written, ${memory.size} already there`);
    const bad = await runCli(['copy', '--from', dir, '--to', 'http://localhost:6333/docs']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /--to http:\/\/localhost:6333\/docs is a web address; a Qdrant collection is named qdrant:\/\/localhost:6333\/docs/,
    );
    const local = await runCli(['copy', '--from', dir, '--to', join(dir, 'elsewhere')]);
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/--to must be a Qdrant collection, e\.g\. qdrant:\/\/localhost:6333\/docs/);
  });
});
