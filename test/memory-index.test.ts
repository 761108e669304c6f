import wabtInit from 'wabt';
import { describe, expect, it } from 'vitest';
import { DOT_WASM, DOT_WAT } from '../src/retrieve/memory-index.js';

describe('the WebAssembly dot product', () => {
  it('is exactly its source text, assembled', async () => {
    const wabt = await wabtInit();
    const module = wabt.parseWat('dot.wat', DOT_WAT, { simd: true });
    const bytes = Buffer.from(module.toBinary({}).buffer);
    module.destroy();
    expect(bytes.toString('base64')).toBe(DOT_WASM);
  });
});
