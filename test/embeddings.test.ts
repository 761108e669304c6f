import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAICompatibleEmbeddings, isLitmPackError, type LitmPackError } from '../src/index.js';

interface Seen {
  body: { model: string; input: string[]; [key: string]: unknown };
  authorization: string | undefined;
}

type Answer = (seen: Seen, call: number, res: ServerResponse) => void;

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A loopback server that answers each POST with `answer` and records what it was sent. */
async function serve(answer: Answer): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const entry = { body: JSON.parse(raw) as Seen['body'], authorization: req.headers.authorization };
      seen.push(entry);
      answer(entry, seen.length, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => server.close() });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

const vectorOf = (text: string) => [text.length, 1, 0];
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};
/** OpenAI's answer, data listed in reverse to check that vectors are put back in input order. */
const ok: Answer = ({ body }, _call, res) =>
  json(res, 200, { data: body.input.map((text, index) => ({ index, embedding: vectorOf(text) })).reverse() });

async function failure(run: () => Promise<unknown>): Promise<LitmPackError> {
  try {
    await run();
  } catch (error) {
    if (isLitmPackError(error)) return error;
    throw error;
  }
  throw new Error('expected a LitmPackError');
}

describe('OpenAICompatibleEmbeddings', () => {
  it('posts batches to /embeddings with the model and key, and returns vectors in input order', async () => {
    const { url, seen } = await serve(ok);
    const embeddings = new OpenAICompatibleEmbeddings({ url, model: 'mini', apiKey: 'sk-test', batchSize: 2 });
    const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
    expect(await embeddings.embedDocuments(texts)).toEqual(texts.map(vectorOf));
    expect(seen.map((s) => s.body.input)).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']]);
    expect(seen.every((s) => s.body.model === 'mini' && s.authorization === 'Bearer sk-test')).toBe(true);
    expect(await embeddings.embedQuery('hello')).toEqual(vectorOf('hello'));
    expect(embeddings.endpoint).toBe(`${url}/embeddings`);
    expect(new OpenAICompatibleEmbeddings({ url: `${url}/embeddings/`, model: 'm' }).endpoint).toBe(`${url}/embeddings`);
    expect(JSON.stringify(embeddings)).not.toContain('sk-test');
  });

  it('retries 5xx and 429 (Retry-After in seconds) and then succeeds', async () => {
    const { url, seen } = await serve((entry, call, res) => {
      if (call === 1) return json(res, 503, { error: { message: 'loading' } });
      if (call === 2) return json(res, 429, { error: 'slow down' }, { 'retry-after': '0' });
      return ok(entry, call, res);
    });
    const embeddings = new OpenAICompatibleEmbeddings({ url, model: 'm', retryBaseDelayMs: 1 });
    expect(await embeddings.embedQuery('x')).toEqual(vectorOf('x'));
    expect(seen).toHaveLength(3);
  });

  it('gives up with a typed fault: server_error after the retries, rate_limited with retryAfterMs when the wait is too long', async () => {
    const down = await serve((_s, _c, res) => json(res, 502, { error: { message: 'bad gateway' } }));
    const error = await failure(() =>
      new OpenAICompatibleEmbeddings({ url: down.url, model: 'm', retries: 2, retryBaseDelayMs: 1 }).embedQuery('x'),
    );
    expect(error.code).toBe('server_error');
    expect(error.status).toBe(502);
    expect(error.message).toContain('bad gateway');
    expect(down.seen).toHaveLength(3);

    const date = new Date(Date.now() + 3_600_000).toUTCString();
    for (const header of ['120', date]) {
      const limited = await serve((_s, _c, res) => json(res, 429, { error: 'quota' }, { 'retry-after': header }));
      const rate = await failure(() =>
        new OpenAICompatibleEmbeddings({ url: limited.url, model: 'm', retryMaxDelayMs: 1000 }).embedQuery('x'),
      );
      expect(rate.code).toBe('rate_limited');
      expect(rate.retryAfterMs).toBeGreaterThan(100_000);
      expect(limited.seen).toHaveLength(1); // not waited for: longer than retryMaxDelayMs
    }
  });

  it('does not retry what another attempt cannot fix, and says how to fix it', async () => {
    const denied = await serve((_s, _c, res) => json(res, 401, { error: { message: 'invalid api key' } }));
    const unauthorized = await failure(() =>
      new OpenAICompatibleEmbeddings({ url: denied.url, model: 'm', apiKey: 'sk-secret' }).embedQuery('x'),
    );
    expect(unauthorized.code).toBe('upstream_unauthorized');
    expect(unauthorized.message).toContain('LITM_EMBEDDINGS_API_KEY');
    expect(unauthorized.message).not.toContain('sk-secret');
    expect(denied.seen).toHaveLength(1);

    const missing = await serve((_s, _c, res) => json(res, 404, { error: { message: 'model "nope" not found' } }));
    const notFound = await failure(() => new OpenAICompatibleEmbeddings({ url: missing.url, model: 'nope' }).embedQuery('x'));
    expect(notFound.code).toBe('bad_request');
    expect(notFound.message).toMatch(/model "nope" not found.*is model "nope" served there/);
  });

  it('reports answers outside the protocol as bad_response naming the field', async () => {
    const cases: [Answer, RegExp][] = [
      [(_s, _c, res) => res.writeHead(200).end('<html>proxy</html>'), /not JSON/],
      [(_s, _c, res) => json(res, 200, { unexpected: true }), /data: /],
      [(_s, _c, res) => json(res, 200, { data: [{ index: 0, embedding: ['x'] }] }), /data\.0\.embedding\.0/],
      [(_s, _c, res) => json(res, 200, { data: [] }), /returned 0 vectors for 1 texts/],
    ];
    for (const [answer, message] of cases) {
      const { url } = await serve(answer);
      const error = await failure(() => new OpenAICompatibleEmbeddings({ url, model: 'm' }).embedQuery('x'));
      expect(error.code).toBe('bad_response');
      expect(error.message).toMatch(message);
    }
  });

  it('turns a refused connection and a deadline into connection_failed and timeout', async () => {
    const { url } = await serve(ok);
    for (const server of servers.splice(0)) server.close();
    const refused = await failure(() => new OpenAICompatibleEmbeddings({ url, model: 'm', retries: 0 }).embedQuery('x'));
    expect(refused.code).toBe('connection_failed');
    expect(refused.message).toContain('ECONNREFUSED');

    const slow = await serve((entry, call, res) => setTimeout(() => ok(entry, call, res), 500));
    const late = await failure(() =>
      new OpenAICompatibleEmbeddings({ url: slow.url, model: 'm', timeoutMs: 50, retries: 1, retryBaseDelayMs: 1 }).embedQuery('x'),
    );
    expect(late.code).toBe('timeout');
    expect(slow.seen).toHaveLength(2);
  });

  it('validates its options at construction', () => {
    expect(() => new OpenAICompatibleEmbeddings({ url: 'localhost:11434', model: 'm' })).toThrow(/url must be an http\(s\) URL/);
    expect(() => new OpenAICompatibleEmbeddings({ url: 'http://x/v1', model: ' ' })).toThrow(/model must be a non-empty/);
    expect(() => new OpenAICompatibleEmbeddings({ url: 'http://x/v1', model: 'm', batch_size: 3 } as never)).toThrow(
      /did you mean "batchSize"/,
    );
  });
});
