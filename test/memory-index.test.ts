import fc from 'fast-check';
import wabtInit from 'wabt';
import { describe, expect, it } from 'vitest';
import {
  Layout,
  SegmentMemory,
  VECTOR_WASM,
  VECTOR_WAT,
  VectorBlock,
  dot,
  quantize,
  quantizeQuery,
  toDenseQuery,
} from '../src/memory/vectors.js';

describe('the WebAssembly vector kernels', () => {
  it('are exactly their source text, assembled', async () => {
    const wabt = await wabtInit();
    const module = wabt.parseWat('vectors.wat', VECTOR_WAT, { simd: true });
    const bytes = Buffer.from(module.toBinary({}).buffer);
    module.destroy();
    expect(bytes.toString('base64')).toBe(VECTOR_WASM);
  });

  const vector = (dimension: number) =>
    fc.array(fc.float({ min: -2, max: 2, noNaN: true }), { minLength: dimension, maxLength: dimension });

  it('dot is bit-identical to the JavaScript loop, and scan8 is the exact int8 dot product', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(4, 8, 12, 36, 384),
        fc.integer({ min: 1, max: 9 }),
        fc.infiniteStream(fc.nat()),
        (dimension, rows, seeds) => {
          const layout = new Layout();
          layout.take(7); // something before the vectors, as in a segment
          const plan = VectorBlock.planScratch(layout, VectorBlock.plan(layout, dimension, rows, true));
          const block = new VectorBlock(SegmentMemory.allocate(layout.size), plan, { fresh: true });
          expect(block.scans).toBe(true);
          const it = seeds[Symbol.iterator]();
          const next = () => ((it.next().value as number) % 2001) / 1000 - 1;
          const stored = Array.from({ length: rows }, () => Array.from({ length: dimension }, next));
          stored.forEach((values, row) => block.set(row, values));
          const query = toDenseQuery(Array.from({ length: dimension }, next));
          const int8 = quantizeQuery(query, block.stride);
          block.setQuery(query, int8);
          const scanned = Array.from(block.scan());
          stored.forEach((values, row) => {
            expect(block.exactDot(row)).toBe(dot(query.values, Float32Array.from(values)));
            const q8 = new Int8Array(block.stride);
            quantize(Float32Array.from(values), q8);
            let exact = 0;
            for (let i = 0; i < dimension; i += 1) exact += q8[i]! * int8.values[i]!;
            expect(scanned[row]).toBe(exact);
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('quantize: the dot with the int8 copy is within the stated bound of the exact one', () => {
    fc.assert(
      fc.property(vector(24), vector(24), (v, u) => {
        const q = new Int8Array(32);
        const { scale, error } = quantize(Float32Array.from(v), q);
        const f = Float32Array.from(v);
        const approx = scale * q.reduce((sum, x, i) => sum + x * (i < 24 ? u[i]! : 0), 0);
        const exact = f.reduce((sum, x, i) => sum + x * u[i]!, 0);
        const norm = Math.sqrt(u.reduce((sum, x) => sum + x * x, 0));
        expect(Math.abs(exact - approx)).toBeLessThanOrEqual(norm * error * (1 + 1e-9) + 1e-12);
        for (const x of q) expect(Math.abs(x)).toBeLessThanOrEqual(127);
      }),
    );
  });
});
