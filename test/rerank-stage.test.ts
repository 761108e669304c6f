import { describe, expect, it } from 'vitest';
import { LitmPackError, isLitmPackError } from '../src/index.js';
import { RerankStageSchema, faultCode, rerankCandidates, type Reranker } from '../src/refine/index.js';
import { withTimeout } from '../src/refine/contain.js';

const pool = [
  { id: 'a', text: 'alpha', score: 3 },
  { id: 'b', text: 'beta', score: 2 },
  { id: 'c', text: 'gamma', score: 1 },
];

const stage = (reranker: Reranker, extra: Record<string, unknown> = {}) => RerankStageSchema.parse({ reranker, ...extra });

describe('the rerank stage', () => {
  it('reranks the top N only, moves the retrieval score to metadata and drops what it left out', async () => {
    const reranker: Reranker = { rerank: (_q, texts) => Promise.resolve(texts.map((_, index) => ({ index, score: index }))) };
    const { candidates, degraded } = await rerankCandidates('q', pool, stage(reranker, { topN: 2 }));
    expect(degraded).toEqual([]);
    expect(candidates).toEqual([
      { id: 'a', text: 'alpha', score: 0, metadata: { retrievalScore: 3 } },
      { id: 'b', text: 'beta', score: 1, metadata: { retrievalScore: 2 } },
    ]);
  });

  it('falls back to the pool as it was when the reranker throws, answers nonsense or hangs', async () => {
    const cases: [Reranker, string, number?][] = [
      [{ rerank: () => Promise.reject(Object.assign(new Error('boom'), { status: 429 })) }, 'rate_limited'],
      [{ rerank: () => Promise.reject(new Error('no idea')) }, 'server_error'],
      [{ rerank: () => Promise.resolve([{ index: 7, score: 1 }]) }, 'bad_response'],
      [{ rerank: () => Promise.resolve([{ index: 0, score: Number.NaN }]) }, 'bad_response'],
      [{ rerank: () => new Promise(() => undefined) }, 'timeout', 50],
    ];
    for (const [reranker, code, timeoutMs] of cases) {
      const result = await rerankCandidates('q', pool, stage(reranker, timeoutMs ? { timeoutMs } : {}));
      expect(result.degraded, code).toEqual([{ stage: 'rerank', code }]);
      expect(result.candidates).toEqual(pool);
    }
  });

  it("rethrows the caller's abort instead of degrading", async () => {
    const controller = new AbortController();
    const pending = rerankCandidates('q', pool, stage({ rerank: () => new Promise(() => undefined) }), controller.signal);
    controller.abort();
    await expect(pending).rejects.toSatisfy((e: unknown) => isLitmPackError(e, 'aborted'));
  });

  it('classifies faults by code, HTTP status and socket error', async () => {
    expect(faultCode(new LitmPackError('bad_response', 'x'))).toBe('bad_response');
    expect(faultCode({ statusCode: 401 })).toBe('upstream_unauthorized');
    expect(faultCode({ status: 503 })).toBe('server_error');
    expect(faultCode({ status: 400 })).toBe('bad_request');
    expect(faultCode(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('connection_failed');
    expect(faultCode(new Error('fetch failed', { cause: Object.assign(new Error('y'), { code: 'ECONNRESET' }) }))).toBe(
      'connection_failed',
    );
    await expect(withTimeout('slow', 20, undefined, () => new Promise(() => undefined))).rejects.toSatisfy((e: unknown) =>
      isLitmPackError(e, 'timeout'),
    );
  });
});
