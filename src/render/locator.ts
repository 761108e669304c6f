// A locator as a header shows it, compactly: `p. 12`, `line 7` or `lines 40–58`, `01:00–01:05`, and a printed
// page label before the physical page (`p. iv, PDF p. 4`). Built from numbers and labels of letters, digits,
// dashes, dots and spaces only (the schemas admit nothing else), so it holds no character any format would have
// to escape.

/** The locator fields a header shows (a candidate's `locator`). */
export interface LocatorLike {
  page?: number | undefined;
  /** The page's printed label, when it differs from its number (`iv`, `A-3`). */
  label?: string | undefined;
  lines?: readonly [number, number] | undefined;
  time?: readonly [number, number] | undefined;
}

/** `75.4` → `01:15`, `3725` → `1:02:05` (whole seconds, rounded down). */
export function clockTime(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const mm = String(m).padStart(2, '0');
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** The parts of a locator in header order (page, lines, time); empty when it has none. */
export function locatorParts(locator: LocatorLike | undefined): string[] {
  if (locator === undefined) return [];
  const parts: string[] = [];
  // The printed label is what a reader finds in the document; the physical page is what a PDF viewer jumps to.
  if (locator.label !== undefined) parts.push(`p. ${locator.label}`, ...(locator.page === undefined ? [] : [`PDF p. ${locator.page}`]));
  else if (locator.page !== undefined) parts.push(`p. ${locator.page}`);
  if (locator.lines !== undefined) {
    const [start, end] = locator.lines;
    parts.push(start === end ? `line ${start}` : `lines ${start}–${end}`);
  }
  if (locator.time !== undefined) parts.push(`${clockTime(locator.time[0])}–${clockTime(locator.time[1])}`);
  return parts;
}
