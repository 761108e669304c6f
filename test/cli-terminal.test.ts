// The CLI's printed tables (verify, citations stale, rankings) share one column layout.
import { describe, expect, it } from 'vitest';
import { columns } from '../src/cli/terminal.js';

describe('columns', () => {
  it('pads each column to its widest cell, two spaces apart, the last column unpadded and trailing spaces trimmed', () => {
    expect(
      columns([
        ['ref', 'status', 'source', ''],
        ['1', 'current', 'docs/refunds.md', ''],
        ['12', 'moved', 'a.md', 'now at 40-80'],
      ]),
    ).toEqual(['ref  status   source', '1    current  docs/refunds.md', '12   moved    a.md             now at 40-80']);
  });

  it('takes rows of different lengths and no rows', () => {
    expect(columns([['#', 'lexical'], ['1']])).toEqual(['#  lexical', '1']);
    expect(columns([])).toEqual([]);
  });
});
