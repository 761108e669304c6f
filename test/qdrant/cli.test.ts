import { randomUUID } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { runCli as cli } from '../helpers/cli.js';
import { PackSchema } from '../../src/index.js';

const url = new URL(inject('qdrantUrl'));
const collection = `litm_cli_${randomUUID().slice(0, 8)}`;
const store = `qdrant://${url.host}/${collection}`;

afterAll(async () => {
  await new QdrantClient({ url: url.origin, checkCompatibility: false }).deleteCollection(collection).catch(() => undefined);
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
});
