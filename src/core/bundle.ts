// packBundle: rank, (select sentences), fill, fit exactly, lay out in Lost-in-the-Middle order, finish.
import { parsePackOptions } from './candidates.js';
import { renderBlock, renderBundleContext } from '../render/render.js';
import { allocateSentences, selectEntries } from './allocate.js';
import { fitExactly, settingsFrom, type Kept, type Layout } from './fill.js';
import { fillPreferringAttachments } from './parents.js';
import { blockFor, finish, rankCandidates } from './finish.js';
import { orderBlocks } from './layout.js';
import { Meter } from './meter.js';
import { BundleOptionsSchema, type BundleOptions, type Pack, type ParsedPackOptions } from './schemas.js';
import { getTokenizer } from '../tokenize/tiktoken.js';

export function meterFor(options: ParsedPackOptions): Meter {
  return new Meter(options.tokenizer ?? getTokenizer(options.encoding), options.format, options.header);
}

/**
 * Packs candidates into a bundle: deduplicated, fitted to `maxTokens` exactly, in Lost-in-the-Middle
 * order (best first, second best last) unless `order` says otherwise, with a citation per item.
 *
 * @example
 * const pack = packBundle({ query: 'how do refunds work?', candidates, maxTokens: 2000 });
 * pack.context;   // "[1] Refund policy\n..." (compact headers; `header: 'full'` adds source, version, section)
 * pack.citations; // [{ ref: 1, sourceId: 'policy.md', chunkId: '...', textSha256: '...' }, ...]
 */
export function packBundle(input: BundleOptions): Pack {
  const options = parsePackOptions(BundleOptionsSchema, input, 'packBundle options');
  const meter = meterFor(options);
  const settings = settingsFrom(options, false);
  const { ranked: rankedWhole, dropped: merged } = rankCandidates(options.candidates, []);
  const frame = meter.count(renderBundleContext(options.format, ['']));
  const ranked =
    options.compress === undefined
      ? rankedWhole
      : allocateSentences(selectEntries(rankedWhole, options), meter, options.maxTokens - frame, options.compress.spread);
  const { kept, dropped } = fillPreferringAttachments(ranked, settings, meter, frame);
  const allDropped = [...merged, ...dropped];
  // A bundle adds no fixed text: with nothing kept its context is empty.
  const layout = (keptNow: readonly Kept[]): Layout => {
    const ordered = orderBlocks(keptNow, options.order, (k) => k.entry.candidate).map((k) => ({ kept: k, role: 'evidence' as const }));
    const blocks = ordered.map((o, index) => renderBlock(options.format, blockFor(o.kept, index + 1), options.header));
    return { ordered, context: renderBundleContext(options.format, blocks), caveats: null };
  };
  const result = fitExactly(kept, allDropped, meter, settings, layout);
  return finish('bundle', options, meter, result, allDropped, null);
}
