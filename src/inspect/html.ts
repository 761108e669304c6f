// HTML building for the inspector: every interpolated value is escaped unless it is already `SafeHtml`,
// so forgetting to escape a pack string is not possible by construction. A pack's text is untrusted.

/** Markup that is already safe to insert (built by `html`, or a constant of ours). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

// C0 controls other than tab and newline, and DEL: an HTML parser drops or rewrites them (NUL vanishes, CR
// becomes LF), so a report would hide them. They are shown as their Unicode control pictures instead.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/gu;

/**
 * Escapes text for an HTML text node or a double- or single-quoted attribute value. Written here rather
 * than taken from a package: it is five replacements plus the control pictures above, and the inspector's
 * property test holds it to a real HTML parser.
 */
function escapeHtml(value: string): string {
  return value
    .replace(/[&<>"']/gu, (c) => ESCAPES[c] as string)
    .replace(CONTROLS, (c) => String.fromCharCode(c === '\u007f' ? 0x2421 : 0x2400 + c.charCodeAt(0)));
}

type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<td>${text}</td>\`` escapes `text`; nested `html` results and arrays of them pass through. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] as string;
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] as string);
  });
  return new SafeHtml(out);
}

/** Our own constant markup (CSS, the script): never call this with pack data. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** A number for display: integers as they are, others with at most `digits` decimals; no locale (reports are deterministic). */
export function formatNumber(value: number, digits = 3): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toFixed(digits)));
}

/** Percentage of `part` in `whole` for a CSS width, clamped to 0..100. */
export function percent(part: number, whole: number): string {
  if (!(whole > 0)) return '0%';
  return `${formatNumber(Math.min(100, Math.max(0, (part / whole) * 100)), 3)}%`;
}
