import { describe, expect, inject, it } from 'vitest';

const base = inject('modelUrl');

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, json: await response.json() };
}

// The providers' tests rely on this server answering with a real model: check that once, here.
describe('the model server', () => {
  it('serves unit-length 384-d all-MiniLM-L6-v2 vectors that put paraphrases closer than unrelated text', async () => {
    const { status, json } = await post('/v1/embeddings', {
      model: 'all-MiniLM-L6-v2',
      input: ['How do I get my money back?', 'Refunds are issued within 14 days.', 'The cat sat on the mat.'],
    });
    expect(status).toBe(200);
    const vectors = (json as { data: { index: number; embedding: number[] }[] }).data.map((d) => d.embedding);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(384);
      expect(Math.hypot(...v)).toBeCloseTo(1, 4);
    }
    const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);
    expect(dot(vectors[0]!, vectors[1]!)).toBeGreaterThan(dot(vectors[0]!, vectors[2]!) + 0.1);
  });

  it('ranks by relevance on both rerank protocols and injects faults on request', async () => {
    const texts = ['The cat sat on the mat.', 'Refunds are issued within 14 days of a return.'];
    const tei = await post('/rerank', { query: 'refund timing', texts });
    expect((tei.json as { index: number }[]).map((r) => r.index)).toEqual([1, 0]);
    const cohere = await post('/v1/rerank', { query: 'refund timing', documents: texts, top_n: 1 });
    expect((cohere.json as { results: { index: number }[] }).results.map((r) => r.index)).toEqual([1]);
    const fault = await post('/rerank', { query: 'q', texts }, { 'x-fault': 'retry-after:7' });
    expect(fault.status).toBe(429);
    expect(fault.headers.get('retry-after')).toBe('7');
  });
});
