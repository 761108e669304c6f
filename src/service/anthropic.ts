/**
 * A pack answered as Anthropic `search_result` blocks beside it: what `format: "anthropic"` asks of the HTTP API
 * and the MCP packing tools, and `--as anthropic` of the CLI. The context is rendered as markdown (the model reads
 * the blocks; the pack keeps the citations), the blocks come from `toAnthropicSearchResults`, one per item in
 * context order (results[i] is items[i], ref i + 1).
 */
import { z } from 'zod';
import type { Pack } from '../core/schemas.js';
import { toAnthropicSearchResults, type AnthropicSearchResultBlock } from '../llm/anthropic.js';
import { GRANULARITIES, type Granularity } from '../llm/units.js';

/** The request field beside `format`: which unit each text block holds. */
export const GranularitySchema = z
  .enum(GRANULARITIES, { message: `granularity must be one of ${GRANULARITIES.join(', ')}` })
  .describe("With format anthropic: one text block per sentence, line, caption cue or whole item (default: each item's locator decides).");

/** A search_result block as the Messages API takes it (the shape `toAnthropicSearchResults` writes). */
export const AnthropicSearchResultSchema = z.strictObject({
  type: z.literal('search_result'),
  source: z.string(),
  title: z.string(),
  content: z.array(z.strictObject({ type: z.literal('text'), text: z.string() })),
  citations: z.strictObject({ enabled: z.literal(true) }),
});

/** The blocks of `pack`, one per item, with `granularity` when given. */
export function searchResultsOf(pack: Pack, granularity: Granularity | undefined): AnthropicSearchResultBlock[] {
  return toAnthropicSearchResults(pack, granularity === undefined ? {} : { granularity });
}
