/**
 * What a fetch was called with, read back in tests that watch a client's requests. `String(input)` would write
 * a Request as "[object Request]", and a body that is not text (a stream, a form) has no JSON to read.
 */

/** The URL of a fetch call, whichever form (string, URL, Request) it was given in. */
export function urlOf(input: string | URL | Request): string {
  if (typeof input === 'string') return input;
  return input instanceof URL ? input.href : input.url;
}

/** The text body of a fetch call (JSON clients send text). */
export function bodyText(init: RequestInit | undefined): string {
  const body = init?.body;
  if (typeof body !== 'string') throw new Error(`expected a text body, got ${body === undefined || body === null ? 'none' : Object.prototype.toString.call(body)}`);
  return body;
}
