// The one reading of an HTTP status from a service litm-pack calls (Qdrant, an embeddings server, a
// reranker). Their refusals are faults of the deployment, not of our caller: a 401 from an embeddings server
// is `upstream_unauthorized` (502 on our HTTP API), never the caller's own 401.
import type { LitmPackErrorCode } from './errors.js';

export function upstreamStatusCode(status: number): LitmPackErrorCode {
  if (status === 401 || status === 403) return 'upstream_unauthorized';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  return 'bad_request';
}
