// Text from a store or a file system printed for a person: control characters become visible symbols, so a
// source id or file name holding an escape sequence cannot move the cursor, recolour or rewrite the terminal.
// JSON output needs none of this (JSON escapes controls itself).

/** C0 controls but tab and line feed, DEL, and C1 controls. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu;

/** `text` with every control character shown as its Unicode control picture (␛ for ESC), or as <U+009B>. */
export function visible(text: string): string {
  return text.replace(CONTROL, (char) => {
    const code = char.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
  });
}

/** One line of a table or message: also tabs and line feeds are shown, so a value cannot start a line of its own. */
export function visibleLine(text: string): string {
  return visible(text).replace(/[\t\n]/gu, (char) => String.fromCharCode(0x2400 + char.charCodeAt(0)));
}

/** Rows aligned in columns two spaces apart (the first row is usually the header), trailing spaces trimmed. */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** "1 file", "2 files". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
