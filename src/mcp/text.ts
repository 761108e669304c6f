/**
 * The text content of the tool answers, for hosts that show the model only text (many do): the context, then
 * a short trailer with what the tool descriptions tell an agent to route on, and the citation list.
 *
 *   [context]
 *
 *   ---
 *   litm-pack: confidence partial · top similarity 0.47 · 5 items · 1834/2000 tokens · truncated no
 *   [1] handbook/refunds.md (p. 3) v2
 *   [2] hr/salaries.md (lines 4–9)
 *
 * The trailer costs its summary (25 to 27 tokens, o200k_base) and a line per citation: the source id, locator
 * and version as written plus 3 to 6 tokens (about 20 a line with path ids and content-hash versions, 7 with
 * short ones; docs/mcp.md has the measured figures). Source ids and versions are shown on one line each: a
 * control character in them (a forged line break) is shown as a space.
 */
import { locatorParts } from '../render/locator.js';
import type { Pack } from '../core/schemas.js';

/** The line that opens the trailer: the same whatever the context format. */
const TRAILER_RULE = '---';
/** The trailer's summary line starts with this. */
export const TRAILER_PREFIX = 'litm-pack:';

/** A value shown on one line: control characters (line breaks among them) become spaces. */
const oneLine = (text: string) => text.replace(/\p{Cc}/gu, ' ');

const similarity = (value: number) => (value < -1 || value === -1 ? 'unknown' : value.toFixed(2));

/** The trailer of a pack: its decision signals and its citation list. */
export function packTrailer(pack: Pack): string {
  const { coverage, budget } = pack;
  const summary =
    `${TRAILER_PREFIX} confidence ${coverage.confidence} · top similarity ${similarity(coverage.topSimilarity)} · ` +
    `${coverage.itemCount} item${coverage.itemCount === 1 ? '' : 's'} · ${budget.usedTokens}/${budget.maxTokens} tokens · truncated ${pack.truncated ? 'yes' : 'no'}`;
  const citations = pack.citations.map((citation) => {
    const locator = locatorParts(citation.locator);
    const where = locator.length === 0 ? '' : ` (${locator.join(', ')})`;
    const version = citation.version === undefined ? '' : ` ${oneLine(citation.version)}`;
    return `[${citation.ref}] ${oneLine(citation.sourceId)}${where}${version}`;
  });
  return [TRAILER_RULE, summary, ...citations].join('\n');
}

/** The context followed by the trailer (a blank line between them; the trailer alone for an empty context). */
export function packText(pack: Pack): string {
  const trailer = packTrailer(pack);
  return pack.context === '' ? trailer : `${pack.context}\n\n${trailer}`;
}
