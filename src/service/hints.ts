/**
 * Notes for a caller whose request succeeded but whose pack is probably not what was meant, worded once for
 * every surface (the CLI prints them on stderr). A note never changes the pack.
 */
import { PackOptionsBaseSchema, type Pack } from '../core/schemas.js';

/** The shortest cut of a candidate the packer makes (`minTruncatedTokens`' default). */
const MIN_CUT_TOKENS: number = PackOptionsBaseSchema.shape.minTruncatedTokens.parse(undefined);

/**
 * Why a context is empty when candidates were found but none fitted: the budget is below what one block
 * costs (its header line, and at least `MIN_CUT_TOKENS` tokens of text, since a shorter cut is not made).
 * Null when the context is not empty or nothing was dropped for the budget.
 */
export function emptyContextHint(pack: Pack): string | null {
  if (pack.context !== '') return null;
  const unfitted = pack.dropped.filter((d) => d.reason === 'budget').length;
  if (unfitted === 0) return null;
  const suggested = 2 * MIN_CUT_TOKENS;
  return (
    `the context is empty: none of the ${unfitted} candidate${unfitted === 1 ? '' : 's'} found fits in ${pack.budget.maxTokens} tokens. ` +
    `A block needs its header line and at least ${MIN_CUT_TOKENS} tokens of text (shorter cuts are not made)` +
    `${pack.kind === 'briefing' ? ', and a briefing its zone headings and caveats' : ''}; try a budget of ${suggested} tokens or more.`
  );
}
