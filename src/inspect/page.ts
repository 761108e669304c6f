// The page shell every report shares: inline CSS, one small inline script, and a Content-Security-Policy
// that allows nothing else (no network, no other script), so a report opened from disk stays offline even if
// a pack's text tried to load something.
import { createHash } from 'node:crypto';
import { html, trusted, type SafeHtml } from './html.js';

const CSS = `
:root { --ink: #1d2330; --muted: #5d6678; --line: #d8dce4; --panel: #f6f7f9; --accent: #2456c8; --warn: #a4420c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 24px 60px; }
header { margin-bottom: 14px; }
h1 { font-size: 20px; margin: 0 0 6px; } h2 { font-size: 16px; margin: 28px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 14px; margin: 14px 0 6px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.query { font-size: 16px; margin: 6px 0 8px; padding: 8px 12px; background: var(--panel); border-left: 4px solid var(--accent); white-space: pre-wrap; overflow-wrap: anywhere; }
.meta { color: var(--muted); display: flex; flex-wrap: wrap; gap: 4px 16px; }
.meta b { color: var(--ink); font-weight: 600; }
.note { color: var(--muted); font-weight: normal; }
.ok { color: #17733a; } .bad { color: #b3261e; font-weight: 600; }
.banner { margin: 12px 0; padding: 8px 12px; border: 1px solid #f0b48a; background: #fff4ec; color: var(--warn); border-radius: 4px; }
.grid { display: grid; grid-template-columns: 1.3fr 1fr; gap: 16px 24px; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; min-width: 0; }
.panel h2 { margin-top: 0; border: 0; padding: 0; }
.strip { display: flex; gap: 2px; height: 38px; margin: 4px 0; }
.strip .cell { flex: 1 1 0; min-width: 4px; display: flex; align-items: center; justify-content: center; border-radius: 3px; text-decoration: none; font-weight: 600; font-size: 12px; border-top: 4px solid transparent; overflow: hidden; }
.strip .cell.role-grounding { border-top-color: #e0a100; } .strip .cell.role-evidence { border-top-color: #7f8aa3; }
.strip .cell.caveats-cell { background: repeating-linear-gradient(45deg, #e7e9ee, #e7e9ee 4px, #fff 4px, #fff 8px); color: var(--muted); flex: 0 0 56px; }
.axis { display: flex; justify-content: space-between; color: var(--muted); font-size: 12px; }
.legend { display: flex; align-items: center; gap: 6px; color: var(--muted); font-size: 12px; margin-top: 6px; }
.legend .ramp { width: 120px; height: 10px; border-radius: 2px; background: linear-gradient(90deg, hsl(222 70% 30%), hsl(222 70% 84%)); }
.bar { display: flex; height: 22px; border: 1px solid var(--line); border-radius: 3px; overflow: hidden; background: #fff; margin: 6px 0; }
.bar .seg { height: 100%; border-right: 1px solid rgba(255,255,255,.7); display: block; }
.bar .frame { background: #b9bfcb; } .bar .free { background: transparent; border: 0; }
.bar-label { display: flex; justify-content: space-between; color: var(--muted); }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-weight: 600; font-size: 12px; background: #e3e6ec; }
.conf-strong { background: #cdebd6; color: #135e2e; } .conf-partial { background: #fbe7b5; color: #7a5200; }
.conf-weak { background: #f8d0cc; color: #8c1d14; } .conf-unknown { background: #e3e6ec; color: var(--muted); }
.context { border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
.seg-row { display: grid; grid-template-columns: 150px 1fr; border-top: 1px solid var(--line); }
.seg-row:first-child { border-top: 0; }
.gutter { padding: 8px 10px; background: var(--panel); border-right: 1px solid var(--line); font-size: 12px; color: var(--muted); }
.gutter .ref { font: 600 15px ui-monospace, Menlo, Consolas, "DejaVu Sans Mono", monospace; color: var(--ink); }
.gutter .rank { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 3px; font-weight: 600; }
.seg-row pre { padding: 8px 12px; }
.seg-row.frame pre, .seg-row.caveats pre { color: var(--muted); }
.seg-row.frame .gutter { font-style: italic; }
.seg-row.sep { display: block; height: 5px; overflow: hidden; background: var(--panel); }
.seg-row.sep pre { visibility: hidden; }
.hl { outline: 2px solid #ff8a00; outline-offset: -2px; }
.seg-row.hl { background: #fff8ec; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
th { font-size: 12px; color: var(--muted); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.hash { font-size: 11.5px; word-break: break-all; }
ul.plain { margin: 4px 0; padding-left: 18px; }
.extra pre { background: #fff; border: 1px solid var(--line); padding: 4px 6px; }
.flag { display: inline-block; font-size: 11px; padding: 0 5px; border-radius: 3px; background: #e3e6ec; margin: 2px 2px 0 0; }
.flag.warn { background: #fde2cf; color: var(--warn); }
tr.changed td.status { color: var(--warn); font-weight: 600; } tr.same td.status { color: #17733a; }
tr.only-a td.status, tr.only-b td.status { color: #6b3fa0; font-weight: 600; }
.only-changed tr.same { display: none; }
.added { color: #17733a; } .removed { color: #b3261e; }
.detail { display: none; margin-top: 36px; padding-top: 8px; border-top: 3px solid var(--accent); }
.detail:target, .detail:has(:target) { display: block; }
.back { font-size: 13px; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; } .seg-row { grid-template-columns: 1fr; } }
`;

// The only script a report runs: hovering an item anywhere (strip, budget bar, context, citations) marks it
// everywhere; the golden-set page can hide unchanged rows.
const SCRIPT = `(() => {
  const mark = (event, on) => {
    const el = event.target instanceof Element ? event.target.closest('[data-key]') : null;
    if (!el) return;
    for (const other of document.querySelectorAll('[data-key="' + CSS.escape(el.getAttribute('data-key')) + '"]')) other.classList.toggle('hl', on);
  };
  document.addEventListener('mouseover', (event) => mark(event, true));
  document.addEventListener('mouseout', (event) => mark(event, false));
  const onlyChanged = document.getElementById('only-changed');
  if (onlyChanged) onlyChanged.addEventListener('change', () => document.body.classList.toggle('only-changed', onlyChanged.checked));
})();`;

const SCRIPT_HASH = `sha256-${createHash('sha256').update(SCRIPT, 'utf8').digest('base64')}`;

/** The Content-Security-Policy of every report: inline styles, our one script, nothing fetched. */
export const REPORT_CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src '${SCRIPT_HASH}'; img-src data:; base-uri 'none'; form-action 'none'`;

/** The exact text of the report's script (tests check it is the only one that runs). */
export const REPORT_SCRIPT = SCRIPT;

export function page(title: string, body: SafeHtml): string {
  return `<!DOCTYPE html>\n${
    html`<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${trusted(CSS)}</style>
</head>
<body>
<main>
${body}
</main>
<script>${trusted(SCRIPT)}</script>
</body>
</html>`.value
  }\n`;
}
