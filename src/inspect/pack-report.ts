// One pack as a page: the context as the model reads it (each block with its [ref], role and rank), the
// positions coloured by rank, the budget, coverage, the citation sidecar, what was dropped and why, and
// any degraded stage.
import { packHashOf } from '../core/pack.js';
import { segmentContext, type ContextSegment } from './context.js';
import { formatNumber, html, percent, type SafeHtml } from './html.js';
import { locatorParts } from '../render/locator.js';
import { page } from './page.js';
import {
  InspectablePackSchema,
  KNOWN_COVERAGE_FIELDS,
  KNOWN_PACK_FIELDS,
  parseInspectablePack,
  type InspectableItem,
  type InspectablePack,
} from './schema.js';

const KNOWN_ITEM_FIELDS = new Set(Object.keys(InspectablePackSchema.shape.items.element.shape));
const KNOWN_CITATION_FIELDS = new Set(Object.keys(InspectablePackSchema.shape.citations.element.shape));
const KNOWN_DEGRADED_FIELDS = new Set(['stage', 'code']);

/** Drop reasons in the order the packer applies them, with what each means. Unknown reasons follow, sorted. */
const DROP_REASONS: readonly (readonly [string, string])[] = [
  ['duplicate', 'same id or same normalised text as a better-ranked candidate'],
  ['near-duplicate', 'mostly the same words (5-gram overlap) as a kept item'],
  ['below-min-score', 'scored below minScore'],
  ['source-cap', 'its source already had maxPerSource items'],
  ['budget', 'did not fit the token budget'],
];

/**
 * Renders a pack (a `Pack`, or its parsed canonical JSON) as one self-contained HTML page. Throws
 * `LitmPackError` (`invalid_input`) naming the field when the value is not a pack.
 */
export function renderPackReport(pack: unknown): string {
  const parsed = parseInspectablePack(pack);
  return page(`Pack: ${titleText(parsed.query)}`, packSection(parsed, pack, ''));
}

/** A query shortened for a page title. */
export function titleText(query: string): string {
  const line = query.replace(/\s+/gu, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** Everything the page shows about one pack; `prefix` keeps element ids unique when several packs share a page. */
export function packSection(pack: InspectablePack, raw: unknown, prefix: string): SafeHtml {
  const key = (ref: number) => `${prefix}item-${ref}`;
  const n = pack.items.length;
  return html`
<header>
<h1>${pack.kind === 'briefing' ? 'Briefing pack' : 'Bundle pack'}</h1>
<div class="query" data-field="query">${pack.query}</div>
<div class="meta">
<span><b>${n}</b> item${n === 1 ? '' : 's'}</span>
<span><b>${pack.budget.usedTokens}</b> / ${pack.budget.maxTokens} tokens</span>
<span>format <b>${pack.format}</b></span>
<span>header <b>${pack.header}</b></span>
<span>encoding <b>${pack.budget.encoding}</b></span>
<span>confidence ${confidenceBadge(pack.coverage.confidence)}</span>
${truncationFlags(pack)}
<span class="mono" title="${pack.packHash}">packHash ${pack.packHash.slice(0, 16)}… ${hashCheck(raw, pack.packHash)}</span>
</div>
</header>
${degradedBanner(pack)}
<div class="grid">
<section class="panel" id="${prefix}layout">
<h2>Layout</h2>
${strip(pack, key)}
</section>
<section class="panel" id="${prefix}coverage">
<h2>Coverage</h2>
${coverage(pack)}
</section>
<section class="panel" id="${prefix}budget" style="grid-column: 1 / -1">
<h2>Budget</h2>
${budget(pack, key)}
</section>
</div>
<h2>Context as the model sees it</h2>
${contextView(pack, key)}
<h2>Citations</h2>
${citations(pack, key)}
<h2>Dropped <span class="badge">${pack.dropped.length}</span></h2>
${dropped(pack, key)}
${degradedSection(pack)}
${briefingSlots(pack)}
${otherFields(pack)}
<h2>Checks</h2>
${checks(pack)}
`;
}

// ---------------------------------------------------------------------------------------------
// Pieces

/**
 * `pack.truncated` is true when an item was cut or a candidate was dropped for budget: the page says which,
 * so a pack whose items are all whole is never flagged "truncated".
 */
function truncationFlags(pack: InspectablePack): SafeHtml | string {
  const cut = pack.items.filter((item) => item.truncated && !item.pointer).length;
  const unfitted = pack.dropped.filter((d) => d.reason === 'budget').length;
  return html`${cut > 0 ? html`<span class="flag warn">truncated</span>` : ''}${
    unfitted > 0 ? html`<span class="flag warn">${unfitted} did not fit</span>` : ''
  }`;
}

function rankColour(rank: number, count: number): { background: string; color: string } {
  // rank 1 darkest, the last rank lightest: the LITM layout shows as dark edges and a light middle
  const t = count <= 1 ? 0 : (rank - 1) / (count - 1);
  const lightness = 30 + t * 54;
  return { background: `hsl(222 70% ${formatNumber(lightness, 1)}%)`, color: lightness < 58 ? '#fff' : '#111' };
}

function rankStyle(rank: number, count: number): string {
  const { background, color } = rankColour(rank, count);
  return `background:${background};color:${color}`;
}

function confidenceBadge(confidence: string): SafeHtml {
  const known = ['strong', 'partial', 'weak', 'unknown'].includes(confidence);
  return html`<span class="badge conf-${known ? confidence : 'unknown'}" data-field="confidence">${confidence}</span>`;
}

/** Whether `packHash` is the hash of the rest of the pack, as given (packHashOf: index times are not hashed). */
function packHashMatches(raw: unknown, packHash: string): boolean {
  if (typeof raw !== 'object' || raw === null) return false;
  try {
    return packHashOf(raw as Record<string, unknown>) === packHash;
  } catch {
    return false;
  }
}

function hashCheck(raw: unknown, packHash: string): SafeHtml {
  return packHashMatches(raw, packHash)
    ? html`<span class="ok" data-check="packHash" title="sha256 of the pack's canonical JSON">✓ matches</span>`
    : html`<span class="bad" data-check="packHash" title="the pack's content does not hash to its packHash: edited or not canonical">✗ does not match</span>`;
}

function degradedBanner(pack: InspectablePack): SafeHtml | string {
  if (pack.degraded.length === 0) return '';
  return html`<div class="banner" role="alert">Degraded: ${pack.degraded.map(
    (d, i) => html`${i > 0 ? ', ' : ''}<b>${d.stage}</b> (${d.code})`,
  )} — the pack was built without ${pack.degraded.length === 1 ? 'this stage' : 'these stages'}.</div>`;
}

function strip(pack: InspectablePack, key: (ref: number) => string): SafeHtml {
  const n = pack.items.length;
  if (n === 0) return html`<p class="meta">No items: the context is ${pack.context === '' ? 'empty' : 'frame only'}.</p>`;
  const cells = pack.items.map(
    (item) =>
      html`<a class="cell role-${cssToken(item.role)}" href="#${key(item.ref)}" data-key="${key(item.ref)}" data-ref="${item.ref}" data-rank="${item.rank}" style="${rankStyle(item.rank, n)}" title="${`[${item.ref}] rank ${item.rank} · ${item.role} · ${item.sourceId} · ${item.tokens} tokens`}">${item.rank}</a>`,
  );
  const caveats =
    pack.caveats !== null
      ? html`<span class="cell caveats-cell" title="the caveats block (computed facts, cites nothing)">caveats</span>`
      : '';
  const roles = [...new Set(pack.items.map((i) => i.role))];
  return html`<div class="strip" data-field="strip">${cells}${caveats}</div>
<div class="axis"><span>start of context</span><span>position →</span><span>end of context</span></div>
<div class="legend"><span>rank 1</span><span class="ramp"></span><span>rank ${n}</span>${
    roles.length > 1 || pack.kind === 'briefing'
      ? html`<span style="margin-left:12px">top edge: <span class="flag" style="border-top:3px solid #e0a100">grounding</span><span class="flag" style="border-top:3px solid #7f8aa3">evidence</span></span>`
      : ''
  }</div>
<p class="meta">Each cell is one block in context order, labelled and coloured by relevance rank. ${
    pack.kind === 'briefing' ? 'A briefing groups blocks into zones.' : 'Lost-in-the-middle order puts the best ranks at both edges.'
  }</p>`;
}

function budget(pack: InspectablePack, key: (ref: number) => string): SafeHtml {
  const { maxTokens, usedTokens, encoding } = pack.budget;
  const n = pack.items.length;
  const shown = pack.items.filter((i) => !i.pointer);
  const itemTokens = shown.reduce((sum, i) => sum + i.tokens, 0);
  const frameTokens = Math.max(0, usedTokens - itemTokens);
  const segs = shown.map(
    (item) =>
      html`<a class="seg" href="#${key(item.ref)}" data-key="${key(item.ref)}" data-ref="${item.ref}" style="${`width:${percent(item.tokens, maxTokens)};${rankStyle(item.rank, n)}`}" title="${`[${item.ref}] ${item.tokens} tokens (rank ${item.rank})`}"></a>`,
  );
  return html`<div class="bar-label"><span data-field="used"><b>${usedTokens}</b> / ${maxTokens} ${encoding} tokens used (${formatNumber((usedTokens / maxTokens) * 100, 1)}%)</span><span>${maxTokens - usedTokens} free</span></div>
<div class="bar" data-field="budget-bar">${segs}<span class="seg frame" style="width:${percent(frameTokens, maxTokens)}" title="${`${frameTokens} tokens of frame: markers, provenance lines, separators${pack.caveats !== null ? ', caveats' : ''}`}"></span><span class="seg free"></span></div>
<p class="meta">Item text ${itemTokens} tokens · frame ${frameTokens} tokens (markers, provenance, separators${pack.caveats !== null ? ', caveats' : ''}) · the whole context is counted once, so parts may not add up exactly.</p>`;
}

function coverage(pack: InspectablePack): SafeHtml {
  const c = pack.coverage;
  const extras = Object.entries(c).filter(([name]) => !KNOWN_COVERAGE_FIELDS.has(name));
  return html`<dl class="kv" data-field="coverage">
<dt>confidence</dt><dd>${confidenceBadge(c.confidence)}</dd>
<dt>top similarity</dt><dd>${c.topSimilarity === -1 ? 'unknown (no dense similarity)' : formatNumber(c.topSimilarity)}</dd>
<dt>items</dt><dd>${c.itemCount}</dd>
<dt>distinct sources</dt><dd>${c.distinctSourceCount}</dd>
<dt>median score</dt><dd>${c.scoreP50 === null ? '—' : formatNumber(c.scoreP50)}</dd>
<dt>date range</dt><dd>${c.dateRange === null ? '—' : `${c.dateRange.from} → ${c.dateRange.to}`}</dd>
<dt>dense arm answered</dt><dd data-coverage="denseAvailable">${c.denseAvailable === null ? 'not recorded' : c.denseAvailable ? 'yes' : 'no (lexical only)'}</dd>
<dt>newest indexedAt</dt><dd data-coverage="newestIndexedAt">${c.newestIndexedAt ?? '—'}</dd>
${extras.map(([name, value]) => html`<dt>${name}</dt><dd class="extra" data-extra="${name}">${genericValue(value)}</dd>`)}
</dl>`;
}

function contextView(pack: InspectablePack, key: (ref: number) => string): SafeHtml {
  if (pack.context === '') return html`<p class="meta">The context is empty.</p>`;
  const { segments, split } = segmentContext(pack);
  const n = pack.items.length;
  const rows = segments.map((segment) => segmentRow(segment, pack, key, n));
  return html`${split ? '' : html`<p class="banner">The blocks could not be located in this context (rendered by other code?): it is shown whole.</p>`}
<div class="context" data-field="context">${rows}</div>`;
}

// Each <pre> opens with a newline: an HTML parser drops one newline right after <pre>, and a segment that
// begins with one (a separator) must keep it for the page to hold the context byte for byte.
function segmentRow(segment: ContextSegment, pack: InspectablePack, key: (ref: number) => string, n: number): SafeHtml {
  if (segment.kind === 'frame' && segment.text.trim() === '') {
    // a blank separator between blocks: kept in the page (the context stays byte-exact) but drawn as a gap
    return html`<div class="seg-row sep" title="blank separator"><pre class="seg-text">
${segment.text}</pre></div>`;
  }
  if (segment.kind === 'frame') {
    return html`<div class="seg-row frame"><div class="gutter">frame</div><pre class="seg-text">
${segment.text}</pre></div>`;
  }
  if (segment.kind === 'caveats') {
    return html`<div class="seg-row caveats"><div class="gutter"><b>caveats</b><br>computed facts; cites nothing</div><pre class="seg-text">
${segment.text}</pre></div>`;
  }
  const item = pack.items[segment.index] as InspectableItem;
  return html`<div class="seg-row block" id="${key(item.ref)}" data-key="${key(item.ref)}" data-ref="${item.ref}" data-rank="${item.rank}" data-role="${item.role}" data-id="${item.id}">
<div class="gutter"><span class="ref">[${item.ref}]</span><span class="rank" style="${rankStyle(item.rank, n)}">rank ${item.rank}</span><br>
${item.role} · ${item.tokens} tokens<br>score ${formatNumber(item.score, 4)}<br>
${item.truncated ? html`<span class="flag warn">truncated</span>` : ''}${item.pointer ? html`<span class="flag warn">pointer only</span>` : ''}
${extraFields(item, KNOWN_ITEM_FIELDS)}</div>
<pre class="seg-text">
${segment.text}</pre></div>`;
}

function citations(pack: InspectablePack, key: (ref: number) => string): SafeHtml {
  if (pack.citations.length === 0) return html`<p class="meta">No citations.</p>`;
  const anyExtra = pack.citations.some((c) => Object.keys(c).some((k) => !KNOWN_CITATION_FIELDS.has(k)));
  const rows = pack.citations.map(
    (c) => html`<tr data-key="${key(c.ref)}" data-ref="${c.ref}">
<td class="num"><a href="#${key(c.ref)}">[${c.ref}]</a></td>
<td>${c.title !== undefined ? html`<div><b>${c.title}</b></div>` : ''}<div class="mono">${c.sourceId}</div>${c.url !== undefined ? html`<div>${link(c.url)}</div>` : ''}${
      c.locator !== undefined && locatorParts(c.locator).length > 0
        ? html`<div class="locator" data-field="locator">${locatorParts(c.locator).join(', ')}</div>`
        : ''
    }${c.parentId !== undefined ? html`<div class="meta" data-field="parentId">attachment of <span class="mono">${c.parentId}</span></div>` : ''}</td>
<td class="mono">${c.chunkId}</td>
<td>${c.version ?? '—'}</td>
<td>${c.section !== undefined && c.section.length > 0 ? c.section.join(' › ') : '—'}</td>
<td class="mono">${c.span !== undefined ? `${c.span.start}–${c.span.end}` : '—'}${
      c.spans !== undefined
        ? html`<div class="spans" title="kept sentences">${c.spans.map((s) => html`<span class="flag">${s.start}–${s.end}</span>`)}</div>`
        : ''
    }</td>
<td class="mono hash">${c.textSha256}</td>
${anyExtra ? html`<td>${extraFields(c, KNOWN_CITATION_FIELDS)}</td>` : ''}
</tr>`,
  );
  return html`<table class="citations" data-field="citations"><thead><tr><th class="num">ref</th><th>source</th><th>chunk</th><th>version</th><th>section</th><th>span (chars)</th><th>text sha256</th>${anyExtra ? html`<th>other</th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table>`;
}

/** A link only for http(s) addresses; anything else (`javascript:`, `data:`) is shown as text. */
function link(url: string): SafeHtml {
  return /^https?:\/\//iu.test(url)
    ? html`<a href="${url}" rel="noopener noreferrer nofollow" target="_blank">${url}</a>`
    : html`<span class="mono">${url}</span>`;
}

function dropped(pack: InspectablePack, key: (ref: number) => string): SafeHtml {
  if (pack.dropped.length === 0) return html`<p class="meta">Nothing was dropped.</p>`;
  const refById = new Map(pack.items.map((i) => [i.id, i.ref]));
  const groups = new Map<string, InspectablePack['dropped']>();
  for (const d of pack.dropped) groups.set(d.reason, [...(groups.get(d.reason) ?? []), d]);
  const known = DROP_REASONS.map(([reason]) => reason);
  const order = [...known.filter((r) => groups.has(r)), ...[...groups.keys()].filter((r) => !known.includes(r)).sort()];
  return html`<div data-field="dropped">${order.map((reason) => {
    const entries = groups.get(reason) ?? [];
    const meaning = DROP_REASONS.find(([r]) => r === reason)?.[1];
    return html`<section class="drop-group" data-reason="${reason}"><h3>${reason} <span class="badge">${entries.length}</span>${
      meaning !== undefined ? html` <span class="note">${meaning}</span>` : ''
    }</h3><ul class="plain">${entries.map((d) => {
      const ref = d.duplicateOf !== undefined ? refById.get(d.duplicateOf) : undefined;
      return html`<li><code>${d.id}</code>${
        d.duplicateOf !== undefined
          ? html` — duplicate of ${ref !== undefined ? html`<a href="#${key(ref)}">[${ref}]</a> ` : ''}<code>${d.duplicateOf}</code>`
          : ''
      }${extraFields(d, new Set(['id', 'reason', 'duplicateOf']))}</li>`;
    })}</ul></section>`;
  })}</div>`;
}

function degradedSection(pack: InspectablePack): SafeHtml | string {
  if (pack.degraded.length === 0) return '';
  const anyExtra = pack.degraded.some((d) => Object.keys(d).some((k) => !KNOWN_DEGRADED_FIELDS.has(k)));
  return html`<h2>Degraded stages <span class="badge">${pack.degraded.length}</span></h2>
<table class="degraded" data-field="degraded"><thead><tr><th>stage</th><th>code</th>${anyExtra ? html`<th>other</th>` : ''}</tr></thead><tbody>${pack.degraded.map(
    (d) =>
      html`<tr><td class="mono">${d.stage}</td><td class="mono">${d.code}</td>${anyExtra ? html`<td>${extraFields(d, KNOWN_DEGRADED_FIELDS)}</td>` : ''}</tr>`,
  )}</tbody></table>`;
}

function briefingSlots(pack: InspectablePack): SafeHtml | string {
  const b = pack.briefing;
  if (b === null) return '';
  const list = (values: string[]) => (values.length === 0 ? '—' : html`<ul class="plain">${values.map((v) => html`<li>${v}</li>`)}</ul>`);
  return html`<h2>Briefing slots</h2><dl class="kv" data-field="briefing">
<dt>entity</dt><dd>${b.entity ?? '—'}</dd>
<dt>contradictions</dt><dd>${list(b.contradictions)}</dd>
<dt>gaps</dt><dd>${list(b.gaps)}</dd>
<dt>pins not found</dt><dd>${list(b.missingPins)}</dd>
${Object.entries(b)
  .filter(([name]) => !['entity', 'contradictions', 'gaps', 'missingPins'].includes(name))
  .map(([name, value]) => html`<dt>${name}</dt><dd class="extra">${genericValue(value)}</dd>`)}
</dl>`;
}

function otherFields(pack: InspectablePack): SafeHtml | string {
  const extras = Object.entries(pack).filter(([name]) => !KNOWN_PACK_FIELDS.has(name));
  if (extras.length === 0) return '';
  return html`<h2>Other fields</h2><dl class="kv" data-field="other">${extras.map(
    ([name, value]) => html`<dt>${name}</dt><dd class="extra" data-extra="${name}">${genericValue(value)}</dd>`,
  )}</dl>`;
}

function checks(pack: InspectablePack): SafeHtml {
  const n = pack.items.length;
  const results: [string, boolean][] = [
    ['refs are 1..n in context order', pack.items.every((item, i) => item.ref === i + 1)],
    ['ranks are 1..n, each once', [...pack.items.map((i) => i.rank)].sort((a, b) => a - b).every((rank, i) => rank === i + 1)],
    [
      'citations[i] belongs to items[i]',
      pack.citations.length === n && pack.citations.every((c, i) => c.ref === pack.items[i]?.ref && c.chunkId === pack.items[i]?.id),
    ],
    ['used tokens within the budget', pack.budget.usedTokens <= pack.budget.maxTokens],
    ['coverage counts the items', pack.coverage.itemCount === n],
  ];
  return html`<ul class="plain checks" data-field="checks">${results.map(
    ([label, ok]) => html`<li class="${ok ? 'ok' : 'bad'}">${ok ? '✓' : '✗'} ${label}</li>`,
  )}</ul>`;
}

// ---------------------------------------------------------------------------------------------
// Generic rendering of fields this version does not know

function extraFields(value: object, known: ReadonlySet<string>): SafeHtml | string {
  const extras = Object.entries(value).filter(([name, v]) => !known.has(name) && v !== undefined);
  if (extras.length === 0) return '';
  return html`<dl class="kv extra">${extras.map(([name, v]) => html`<dt>${name}</dt><dd>${genericValue(v)}</dd>`)}</dl>`;
}

function genericValue(value: unknown): SafeHtml {
  if (typeof value === 'string') return html`<span>${value}</span>`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return html`<span class="mono">${String(value)}</span>`;
  // JSON.stringify leaves out only undefined, a function and a symbol, which String() does not write as [object Object].
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- see above
  const written = JSON.stringify(value, null, 2) ?? String(value);
  // the newline after <pre> is eaten by the HTML parser, so text starting with one keeps it
  return html`<pre>
${written}</pre>`;
}

/** A pack string reduced to a safe CSS class fragment. */
function cssToken(value: string): string {
  return value.replace(/[^a-z0-9-]/giu, '_');
}
