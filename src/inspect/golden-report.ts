// A golden set (an evaluation harness's stored run: one pack per query) as an overview page, optionally
// compared with a second run: which packs changed, which items came and went, and each pack's detail.
import { LitmPackError, isLitmPackError } from '../base/errors.js';
import { formatNumber, html, type SafeHtml } from './html.js';
import { page } from './page.js';
import { packSection, titleText } from './pack-report.js';
import { parseInspectablePack, type InspectablePack, type StoredPack } from './schema.js';

export interface GoldenSetReportOptions {
  /** Names of the two runs in the page (file names, say); default `A` and `B`. */
  labels?: readonly [string, string?];
}

interface Entry {
  pack: InspectablePack;
  raw: unknown;
  where: string;
  /** Element id of its detail section. */
  anchor: string;
}

interface Row {
  query: string;
  a?: Entry;
  b?: Entry;
}

/** A run as given: packs (or parsed JSON values), or `readPackRun`'s output with where each pack was. */
export type GoldenRun = readonly unknown[] | readonly StoredPack[];

/**
 * Renders one run of packs as an overview with a detail section per pack, or two runs side by side.
 * Packs are matched by query (the nth pack with a query in run A with the nth with that query in run B).
 * Throws `LitmPackError` (`invalid_input`) naming the run and the pack that is not a pack.
 */
export function renderGoldenSetReport(runA: GoldenRun, runB?: GoldenRun, options: GoldenSetReportOptions = {}): string {
  const labelA = options.labels?.[0] ?? 'A';
  const labelB = options.labels?.[1] ?? 'B';
  const a = entries(runA, 'a', labelA);
  const b = runB === undefined ? undefined : entries(runB, 'b', labelB);
  const rows = matchRows(a, b);
  const title = b === undefined ? `Golden set: ${labelA}` : `Golden set: ${labelA} vs ${labelB}`;
  const details = [...a, ...(b ?? [])].map(
    (entry) => html`<section class="detail" id="${entry.anchor}" data-run="${entry.anchor.startsWith('a') ? 'a' : 'b'}">
<p class="back"><a href="#overview">← overview</a> · run <b>${entry.anchor.startsWith('a') ? labelA : labelB}</b>, ${entry.where}</p>
${packSection(entry.pack, entry.raw, `${entry.anchor}-`)}
</section>`,
  );
  return page(
    title,
    html`<section id="overview">
<h1>${title}</h1>
${summary(rows, b !== undefined, labelA, labelB)}
${b === undefined ? singleTable(rows) : compareTable(rows, labelA, labelB)}
</section>
${details}`,
  );
}

function isStored(value: unknown): value is StoredPack {
  return typeof value === 'object' && value !== null && 'where' in value && 'value' in value && !('schema' in value);
}

function entries(run: GoldenRun, side: 'a' | 'b', label: string): Entry[] {
  return run.map((given, index) => {
    const stored = isStored(given) ? given : { where: `pack ${index + 1}`, value: given };
    try {
      return {
        pack: parseInspectablePack(stored.value, `pack at ${label} ${stored.where}`),
        raw: stored.value,
        where: stored.where,
        anchor: `${side}${index + 1}`,
      };
    } catch (error) {
      if (isLitmPackError(error)) throw error;
      throw new LitmPackError('invalid_input', `Invalid pack at ${label} ${stored.where}: ${(error as Error).message}`, { cause: error });
    }
  });
}

function matchRows(a: Entry[], b: Entry[] | undefined): Row[] {
  const rows: Row[] = a.map((entry) => ({ query: entry.pack.query, a: entry }));
  if (b === undefined) return rows;
  // the nth occurrence of a query in A pairs with the nth occurrence in B
  const open = new Map<string, Row[]>();
  for (const row of rows) open.set(row.query, [...(open.get(row.query) ?? []), row]);
  for (const entry of b) {
    const waiting = open.get(entry.pack.query);
    const row = waiting?.shift();
    if (row !== undefined) row.b = entry;
    else rows.push({ query: entry.pack.query, b: entry });
  }
  return rows;
}

type Status = 'same' | 'changed' | 'only-a' | 'only-b';

function statusOf(row: Row): Status {
  if (row.a === undefined) return 'only-b';
  if (row.b === undefined) return 'only-a';
  return row.a.pack.packHash === row.b.pack.packHash ? 'same' : 'changed';
}

function itemDiff(row: Row): { added: string[]; removed: string[] } {
  const before = new Set(row.a?.pack.items.map((i) => i.id) ?? []);
  const after = new Set(row.b?.pack.items.map((i) => i.id) ?? []);
  return { added: [...after].filter((id) => !before.has(id)), removed: [...before].filter((id) => !after.has(id)) };
}

function summary(rows: Row[], compared: boolean, labelA: string, labelB: string): SafeHtml {
  const runStats = (packs: InspectablePack[], label: string) => {
    const confidences = new Map<string, number>();
    for (const p of packs) confidences.set(p.coverage.confidence, (confidences.get(p.coverage.confidence) ?? 0) + 1);
    const meanTokens = packs.length === 0 ? 0 : packs.reduce((s, p) => s + p.budget.usedTokens, 0) / packs.length;
    const meanItems = packs.length === 0 ? 0 : packs.reduce((s, p) => s + p.items.length, 0) / packs.length;
    return html`<span>run <b>${label}</b>: ${packs.length} packs, mean ${formatNumber(meanItems, 1)} items and ${formatNumber(meanTokens, 1)} tokens; confidence ${[
      ...confidences,
    ]
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
      .map(([c, k], i) => `${i > 0 ? ', ' : ''}${c} ${k}`)
      .join('')}</span>`;
  };
  const packsA = rows.flatMap((r) => (r.a ? [r.a.pack] : []));
  if (!compared) return html`<div class="meta" data-field="summary">${runStats(packsA, labelA)}</div>`;
  const packsB = rows.flatMap((r) => (r.b ? [r.b.pack] : []));
  const counts = { same: 0, changed: 0, 'only-a': 0, 'only-b': 0 };
  for (const row of rows) counts[statusOf(row)] += 1;
  return html`<div class="meta" data-field="summary">${runStats(packsA, labelA)}${runStats(packsB, labelB)}</div>
<p data-field="counts"><b>${rows.length}</b> queries: <b class="removed">${counts.changed}</b> changed, ${counts.same} identical${
    counts['only-a'] > 0 ? `, ${counts['only-a']} only in ${labelA}` : ''
  }${counts['only-b'] > 0 ? `, ${counts['only-b']} only in ${labelB}` : ''}.
<label style="margin-left:12px"><input type="checkbox" id="only-changed"> hide identical packs</label></p>`;
}

function cells(entry: Entry | undefined): SafeHtml {
  if (entry === undefined) return html`<td class="num">—</td><td class="num">—</td><td>—</td>`;
  const p = entry.pack;
  return html`<td class="num">${p.items.length}</td><td class="num">${p.budget.usedTokens} / ${p.budget.maxTokens}</td><td><span class="badge conf-${
    ['strong', 'partial', 'weak', 'unknown'].includes(p.coverage.confidence) ? p.coverage.confidence : 'unknown'
  }">${p.coverage.confidence}</span>${p.degraded.length > 0 ? html` <span class="flag warn">degraded</span>` : ''}</td>`;
}

function detailLink(entry: Entry | undefined, label: string): SafeHtml | string {
  return entry === undefined ? '' : html`<a class="detail-link" href="#${entry.anchor}">${label}</a> `;
}

function singleTable(rows: Row[]): SafeHtml {
  return html`<table class="golden" data-field="golden"><thead><tr><th class="num">#</th><th>query</th><th class="num">items</th><th class="num">tokens used</th><th>confidence</th><th class="num">dropped</th><th>detail</th></tr></thead>
<tbody>${rows.map(
    (row, i) =>
      html`<tr class="row" data-query="${row.query}"><td class="num">${i + 1}</td><td>${titleText(row.query)}</td>${cells(row.a)}<td class="num">${
        row.a?.pack.dropped.length ?? 0
      }</td><td>${detailLink(row.a, 'pack')}</td></tr>`,
  )}</tbody></table>`;
}

function compareTable(rows: Row[], labelA: string, labelB: string): SafeHtml {
  return html`<table class="golden" data-field="golden"><thead>
<tr><th class="num" rowspan="2">#</th><th rowspan="2">query</th><th colspan="3">${labelA}</th><th colspan="3">${labelB}</th><th rowspan="2">packHash</th><th rowspan="2">items added / removed</th><th rowspan="2">detail</th></tr>
<tr><th class="num">items</th><th class="num">tokens</th><th>confidence</th><th class="num">items</th><th class="num">tokens</th><th>confidence</th></tr></thead>
<tbody>${rows.map((row, i) => {
    const status = statusOf(row);
    const { added, removed } = itemDiff(row);
    const label = { same: 'identical', changed: 'changed', 'only-a': `only in ${labelA}`, 'only-b': `only in ${labelB}` }[status];
    const diff =
      added.length + removed.length === 0
        ? html`<span class="meta">none</span>`
        : html`<details><summary><span class="added" data-added="${added.length}">+${added.length}</span> / <span class="removed" data-removed="${removed.length}">−${removed.length}</span></summary>${
            added.length > 0
              ? html`<div class="added">added: ${added.map((id, k) => html`${k > 0 ? ', ' : ''}<code>${id}</code>`)}</div>`
              : ''
          }${removed.length > 0 ? html`<div class="removed">removed: ${removed.map((id, k) => html`${k > 0 ? ', ' : ''}<code>${id}</code>`)}</div>` : ''}</details>`;
    return html`<tr class="row ${status}" data-status="${status}" data-query="${row.query}"><td class="num">${i + 1}</td><td>${titleText(row.query)}</td>${cells(row.a)}${cells(row.b)}<td class="status">${label}</td><td>${diff}</td><td>${detailLink(row.a, labelA)}${detailLink(row.b, labelB)}</td></tr>`;
  })}</tbody></table>`;
}
