import { randomUUID } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runCli as cli } from '../helpers/cli.js';
import { PackSchema } from '../../src/index.js';

const url = new URL(inject('qdrantUrl'));
const collection = `litm_cli_${randomUUID().slice(0, 8)}`;
const store = `qdrant://${url.host}/${collection}`;
const alias = `litm_cli_alias_${randomUUID().slice(0, 8)}`;
const admin = new QdrantClient({ url: url.origin, checkCompatibility: false });

afterAll(async () => {
  for (const name of [collection, `${alias}_v1`, `${alias}_v2`]) await admin.deleteCollection(name).catch(() => undefined);
});

describe('the CLI on a Qdrant store (--store qdrant://host:port/collection)', () => {
  it('ingests into a collection it creates, idempotently, and packs from it', async () => {
    const first = await cli(['ingest', 'examples/corpus', '--store', store, '--quiet']);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/[1-9]\d* chunks added, 0 unchanged, 0 removed/);
    const again = await cli(['ingest', 'examples/corpus', '--store', store, '--quiet']);
    expect(again.stdout).toMatch(/0 chunks added, [1-9]\d* unchanged, 0 removed/);
    const bundle = await cli(['bundle', 'reciprocal rank fusion', '--store', store, '--budget', '400', '--json']);
    expect(bundle.stderr).toBe('');
    const pack = PackSchema.parse(JSON.parse(bundle.stdout));
    expect(pack.citations[0]?.sourceId).toBe('examples/corpus/hybrid-fusion.md');
    expect(pack.budget.usedTokens).toBeLessThanOrEqual(400);
  });

  it('reports a bad store address and an unreachable server as one line each', async () => {
    const bad = await cli(['bundle', 'q', '--store', 'qdrant://nohost']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Bad Qdrant store "qdrant:\/\/nohost": use qdrant:\/\/host:6333\/collection/);
    const down = await cli(['bundle', 'q', '--store', 'qdrant://127.0.0.1:9/none']);
    expect(down.code).toBe(3); // a store fault (ERROR_SURFACES: connection_failed)
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toMatch(/^litm-pack: /);
  });

  it('ingest --reindex builds a new collection behind the alias and swaps it; bundles go through the alias', async () => {
    const spec = `qdrant://${url.host}/${alias}`;
    const first = await cli(['ingest', 'examples/corpus', '--store', spec, '--reindex', '--quiet']);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(
      new RegExp(
        `^Reindexed \\d+ files into ${alias}_v1: [1-9]\\d* chunks, point count and \\d+ sample queries checked; alias ${alias} now points at ${alias}_v1\\.\n$`,
      ),
    );
    const second = await cli(['ingest', 'examples/corpus', '--store', spec, '--reindex', '--alias', alias, '--quiet']);
    expect(second.stdout).toMatch(new RegExp(`into ${alias}_v2: .*; it pointed at ${alias}_v1, now dropped\\.`));
    expect((await admin.getAliases()).aliases).toContainEqual({ alias_name: alias, collection_name: `${alias}_v2` });
    const bundle = await cli(['bundle', 'reciprocal rank fusion', '--store', spec, '--budget', '300', '--json']);
    expect(PackSchema.parse(JSON.parse(bundle.stdout)).citations.length).toBeGreaterThan(0);

    const other = await cli(['ingest', 'examples/corpus', '--store', spec, '--reindex', '--alias', 'elsewhere', '--quiet']);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/--alias elsewhere and --store .* name different collections/);
    const local = await cli(['ingest', 'examples/corpus', '--store', '.litm-store-unused', '--reindex', '--quiet']);
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/--reindex needs a Qdrant store/);
    const stray = await cli(['ingest', 'examples/corpus', '--store', spec, '--alias', alias, '--quiet']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toMatch(/--alias goes with --reindex/);
  });
});

describe('the CLI on a Qdrant store: the mixed corpus', () => {
  const mixed = `litm_cli_mixed_${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    await admin.deleteCollection(mixed).catch(() => undefined);
  });

  it('ingests every kind, and a bundle cites a PDF page, code lines, an e-mail and a transcript time', async () => {
    const target = `qdrant://${url.host}/${mixed}`;
    const ingest = await cli([
      'ingest',
      'examples/mixed',
      '--store',
      target,
      '--quiet',
      '--id-field',
      'key',
      '--text-field',
      'description',
      '--title-field',
      'summary',
    ]);
    expect(ingest.stderr).toBe('');
    expect(ingest.stdout).toMatch(/^Ingested 12 files \(16 sources\) into /u);
    const bundle = await cli([
      'bundle',
      'how are refund webhook retries spaced out, with backoff and jitter?',
      '--store',
      target,
      '--budget',
      '1200',
      '--json',
    ]);
    expect(bundle.stderr).toBe('');
    const pack = PackSchema.parse(JSON.parse(bundle.stdout));
    const kinds = pack.citations.map((c) =>
      c.locator?.page ? 'page' : c.locator?.lines ? 'lines' : c.locator?.time ? 'time' : c.sourceId.includes('.mbox/') ? 'email' : 'other',
    );
    for (const kind of ['page', 'lines', 'time', 'email']) expect(kinds).toContain(kind);
  });
});
