// The exported names are a promise: api/*.txt lists every name each package entry exports (value or type), and
// this test fails when the code exports something else, so a new export (or a removed one) is a decision made in
// review: update the lists with `npm run api` and say why. The root entry stays small before 1.0.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiReport } from '../scripts/api-report.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const reports = apiReport();
const listed = (entry: string) =>
  readFileSync(join(ROOT, 'api', `${entry.replace('/', '__')}.txt`), 'utf8')
    .split('\n')
    .filter((line) => /^(value|type) /u.test(line));

describe('the public surface', () => {
  it('has one checked-in list per package entry', () => {
    const exportsMap = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports;
    const entries = Object.keys(exportsMap)
      .filter((key) => key !== './package.json')
      .map((key) => (key === '.' ? 'litm-pack' : `litm-pack/${key.slice(2)}`));
    expect([...reports.keys()].sort()).toEqual(entries.sort());
  });

  for (const [entry, lines] of reports) {
    it(`${entry} exports exactly what api/ lists (npm run api updates it)`, () => {
      const want = listed(entry);
      expect({ added: lines.filter((line) => !want.includes(line)), removed: want.filter((line) => !lines.includes(line)) }).toEqual({
        added: [],
        removed: [],
      });
    });
  }

  it('the root entry has at most 100 values', () => {
    const values = (reports.get('litm-pack') ?? []).filter((line) => line.startsWith('value '));
    expect(values.length).toBeGreaterThan(0);
    expect(values.length).toBeLessThanOrEqual(100);
  });
});
