// The compose service's command line, as docker-compose.yml gives it, run against a Qdrant: it starts with the
// keys the refusal message says how to make, serves a bundle to a caller that names the service as other
// containers do (Host: litm-pack:8787), and still refuses a Host it was not given. Changed for the test only:
// it listens on loopback on a free port (tests never listen on other interfaces), and the store's Qdrant is the
// test engine, with a collection of its own.
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { composePath, loadCompose } from '../helpers/compose.js';
import { runCli } from '../helpers/cli.js';
import { spawnServe } from '../helpers/serve-fixtures.js';
import { PackSchema } from '../../src/core/schemas.js';
import { collectionNames, url } from './helpers.js';

const name = collectionNames('litm_compose');

describe('the docker-compose service command line', () => {
  const cleanups: (() => void)[] = [];
  afterAll(() => {
    for (const cleanup of cleanups) cleanup();
  });

  it('starts with keys, serves the service name, and keeps refusing other hosts', async () => {
    const made = await runCli(['keys', 'create', '--id', 'compose']);
    const keyFile = made.stdout.trim();
    const key = (JSON.parse(keyFile) as { keys: { key: string }[] }).keys[0]?.key as string;
    const service = loadCompose(composePath(), { LITM_PACK_API_KEYS: keyFile }).services['litm-pack'];
    const command = [...(service?.command ?? [])];
    expect(command[0]).toBe('serve');

    const collection = name('docs');
    const store = `qdrant://${new URL(url).host}/${collection}`;
    const ingest = await runCli(['ingest', 'examples/corpus', '--store', store, '--quiet']);
    expect(ingest.code, ingest.stderr).toBe(0);

    const at = (flag: string) => command.indexOf(flag) + 1;
    command[at('--host')] = '127.0.0.1';
    command[at('--port')] = '0';
    expect(command[at('--store')]).toBe('qdrant://qdrant:6333/docs');
    command[at('--store')] = store;
    const server = await spawnServe(command.slice(1), { env: { ...service?.environment } });
    cleanups.push(server.kill);
    expect(server.stderr()).toMatch(/1 API keys/u);

    const port = new URL(server.url).port;
    // node:http, not fetch: fetch sets Host from the URL whatever the headers say.
    const ask = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const path = `/api/bundle?q=${encodeURIComponent('reciprocal rank fusion')}&budget=300`;
        request({ host: '127.0.0.1', port, path, headers: { host, authorization: `Bearer ${key}` } }, (response) => {
          let body = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        })
          .on('error', reject)
          .end();
      });
    const asService = await ask(`litm-pack:${port}`);
    expect(asService.status, asService.body).toBe(200);
    const pack = PackSchema.parse(JSON.parse(asService.body));
    expect(pack.citations[0]?.sourceId).toBe('examples/corpus/hybrid-fusion.md');
    expect((await ask(`elsewhere.example:${port}`)).status).toBe(403);
    server.kill();
    await server.exited;
  });
});
