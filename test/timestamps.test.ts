/**
 * Rule 7 and time zones: a timestamp without an offset is UTC, so `coverage.dateRange` and `packHash` are
 * the same whatever the process's time zone. Checked in child processes under several `TZ` values.
 */
import { describe, expect, it } from 'vitest';
import { timestampMillis } from '../src/core/schemas.js';
import { packBundle } from '../src/index.js';
import { runCli } from './helpers/cli.js';

// Local 10:00 read as UTC is the latest instant; read in Tokyo (UTC+9) it would be 01:00Z, the earliest.
const candidates = [
  { id: 'a', text: 'First note about refunds.', score: 0.9, timestamp: '2024-01-01T10:00:00' },
  { id: 'b', text: 'Second note about receipts.', score: 0.8, timestamp: '2024-01-01T05:00:00Z' },
  { id: 'c', text: 'Third note about returns.', score: 0.7, timestamp: '2024-01-01T12:00:00+05:00' },
  { id: 'd', text: 'Fourth note about exchanges.', score: 0.6, timestamp: '2024-01-01T09:30:00.250+00:30' },
];

const packIn = (timeZone: string) =>
  runCli(['pack', '--query', 'notes', '--budget', '500'], JSON.stringify(candidates), { env: { TZ: timeZone } });

describe('timestamps without an offset are UTC', () => {
  it('gives the same dateRange and packHash under UTC, Asia/Tokyo and America/Los_Angeles', async () => {
    const runs = await Promise.all(['UTC', 'Asia/Tokyo', 'America/Los_Angeles'].map(packIn));
    for (const run of runs) expect(run.stderr).toBe('');
    const packs = runs.map((run) => JSON.parse(run.stdout) as { packHash: string; coverage: { dateRange: unknown } });
    expect(packs[0]!.coverage.dateRange).toEqual({ from: '2024-01-01T05:00:00Z', to: '2024-01-01T10:00:00' });
    expect(new Set(packs.map((p) => p.packHash)).size).toBe(1);
    // and the same as in this process, whatever its zone
    expect(packs[0]!.packHash).toBe(packBundle({ query: 'notes', maxTokens: 500, candidates }).packHash);
  }, 60_000);

  it('reads every accepted form: date, local date-time (UTC), Z, offsets, fractions, years before 100', () => {
    expect(timestampMillis('2024-05-01')).toBe(Date.UTC(2024, 4, 1));
    expect(timestampMillis('2024-05-01T10:00')).toBe(Date.UTC(2024, 4, 1, 10));
    expect(timestampMillis('2024-05-01T10:00:00')).toBe(Date.UTC(2024, 4, 1, 10));
    expect(timestampMillis('2024-05-01T10:00:00Z')).toBe(Date.UTC(2024, 4, 1, 10));
    expect(timestampMillis('2024-05-01T10:00:00+02:00')).toBe(Date.UTC(2024, 4, 1, 8));
    expect(timestampMillis('2024-05-01T10:00:00-02:30')).toBe(Date.UTC(2024, 4, 1, 12, 30));
    expect(timestampMillis('2024-05-01T10:00:00.1234Z')).toBeCloseTo(Date.UTC(2024, 4, 1, 10) + 123.4, 6);
    expect(timestampMillis('0042-01-01T00:00:00Z')).toBe(Date.parse('0042-01-01T00:00:00Z'));
    expect(timestampMillis('not a time')).toBeNaN();
  });

  it('orders mixed forms by instant, with ties broken on the text', () => {
    const pack = packBundle({
      query: 'q',
      maxTokens: 500,
      candidates: [
        { id: 'x', text: 'One.', score: 1, timestamp: '2024-01-02' },
        { id: 'y', text: 'Two.', score: 0.9, timestamp: '2024-01-02T00:00:00Z' },
        { id: 'z', text: 'Three.', score: 0.8, timestamp: '2024-01-01T23:59:59.999' },
      ],
    });
    expect(pack.coverage.dateRange).toEqual({ from: '2024-01-01T23:59:59.999', to: '2024-01-02T00:00:00Z' });
  });
});
