import { describe, expect, it } from 'vitest';
import { isLitmPackError, packBriefing, packBundle } from '../src/index.js';

const base = { query: 'q', candidates: [{ id: 'a', text: 'alpha', score: 1 }], maxTokens: 100 };

function errorOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('unknown options', () => {
  it('are rejected with invalid_input naming the key and the option it probably meant', () => {
    const error = errorOf(() => packBundle({ ...base, maxTokes: 5 } as never));
    expect(isLitmPackError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toContain('unknown option "maxTokes" (did you mean "maxTokens"?)');
  });

  it('name keys with no close option plainly, and reach nested option objects', () => {
    const bogus = errorOf(() => packBundle({ ...base, bogus: 1 } as never));
    expect((bogus as Error).message).toContain('unknown option "bogus"');
    expect((bogus as Error).message).not.toContain('did you mean');
    const nested = errorOf(() => packBriefing({ ...base, dedupe: { shingle_size: 4 } } as never));
    expect((nested as Error).message).toContain('dedupe: unknown option "shingle_size" (did you mean "shingleSize"?)');
  });
});
