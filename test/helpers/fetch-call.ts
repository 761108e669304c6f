/**
 * What a fetch was called with, read back in tests that watch a client's requests. `String(input)` would write
 * a Request as "[object Request]", and a body that is neither text nor bytes (a stream, a form) has no JSON to read.
 */

/** The URL of a fetch call, whichever form (string, URL, Request) it was given in. */
export function urlOf(input: string | URL | Request): string {
  if (typeof input === 'string') return input;
  return input instanceof URL ? input.href : input.url;
}

/** The body of a fetch call as text: a string, or bytes read as UTF-8 (JSON clients send one or the other). */
export function bodyText(init: RequestInit | undefined): string {
  const body = init?.body;
  if (typeof body === 'string') return body;
  if (ArrayBuffer.isView(body)) return new TextDecoder().decode(body);
  throw new Error(
    `expected a text or byte body, got ${body === undefined || body === null ? 'none' : Object.prototype.toString.call(body)}`,
  );
}
