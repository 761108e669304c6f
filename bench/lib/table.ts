/** A markdown table (GitHub style), columns padded so it also reads well in a terminal. */
export function markdownTable(headers: string[], rows: (string | number)[][]): string {
  const cells = rows.map((row) => row.map(String));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? '').length)));
  const numeric = headers.map((_, i) => cells.length > 0 && cells.every((row) => /^[-+]?[\d.,]+[%x×]?$|^n\/a$|^[-–]$/.test(row[i] ?? '')));
  const line = (row: string[]) => `| ${row.map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (numeric[i] ? `${'-'.repeat(Math.max(1, w - 1))}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(headers), rule, ...cells.map(line)].join('\n');
}

export const fixed = (value: number, digits = 3): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
export const pct = (value: number, digits = 1): string => (Number.isFinite(value) ? `${(value * 100).toFixed(digits)}%` : 'n/a');
export const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(value < 10 ? 2 : 1) : 'n/a');
