import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as a loopback server saw it. */
export interface SeenRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  body: unknown;
  /** `performance.now()` when the request arrived. */
  at: number;
}

export type LoopbackHandler = (request: SeenRequest, response: ServerResponse) => void;

/**
 * A Node HTTP server on 127.0.0.1 and an ephemeral port that answers with whatever the test sets as its
 * handler, and records every request. `close()` stops it; it never keeps the process alive.
 */
export async function startLoopback(handler: LoopbackHandler) {
  const requests: SeenRequest[] = [];
  let current = handler;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = text;
      }
      const seen = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body, at: performance.now() };
      requests.push(seen);
      current(seen, res);
    });
  });
  server.unref();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler(next: LoopbackHandler) {
      current = next;
      requests.length = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Answers `body` as JSON with `status` and extra headers. */
export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers });
  response.end(data);
}

/** Qdrant's success envelope. */
export function qdrantOk(response: ServerResponse, result: unknown, time = 0.001): void {
  sendJson(response, 200, { result, status: 'ok', time });
}

/** A loopback port nothing listens on (bound, then closed): a connection to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A TEI /rerank endpoint that holds every answer until `release()`: `reached` resolves when the first request
 * arrives, so a test can act while a reranker call is in flight. Scores 10, 9, … in input order once released.
 */
export async function heldReranker() {
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = await startLoopback((request, response) => {
    entered();
    const texts = (request.body as { texts: string[] }).texts;
    void released.then(() =>
      sendJson(
        response,
        200,
        texts.map((_, index) => ({ index, score: 10 - index })),
      ),
    );
  });
  return { url: server.url, reached, release, close: server.close };
}
