// The attachment rule: a source and its attachment (a source whose `parentId` names it, an e-mail and the
// PDF it carried) are cited once. When the fill keeps chunks of both, the parent's chunks are dropped with
// reason `attachment-preferred` (`duplicateOf`: the attachment chunk kept) and the fill runs again without
// them, so the budget they held goes to the next candidates. The attachment is preferred because it is the
// more specific source: the message around it mostly says that it is attached.
import { fill, type Entry, type FillSettings, type Kept } from './fill.js';
import type { Meter } from './meter.js';
import type { Dropped } from './schemas.js';

/** `fill`, then the attachment rule until no kept chunk's source has a kept attachment. Pinned chunks are never dropped by it. */
export function fillPreferringAttachments(
  entries: readonly Entry[],
  settings: FillSettings,
  meter: Meter,
  reserved: number,
): { kept: Kept[]; dropped: Dropped[] } {
  // Nothing names a parent: the one fill, as before.
  if (!entries.some((entry) => entry.candidate.parentId !== undefined)) return fill(entries, settings, meter, reserved);
  const preferred: Dropped[] = [];
  let current = entries;
  for (;;) {
    const result = fill(current, settings, meter, reserved);
    // Each parent source with a kept attachment chunk, and the first (best) such chunk.
    const attachment = new Map<string, string>();
    for (const kept of result.kept) {
      const parent = kept.entry.candidate.parentId;
      if (parent !== undefined && !attachment.has(parent)) attachment.set(parent, kept.entry.candidate.id);
    }
    const losers = result.kept.filter((kept) => !kept.entry.pinned && attachment.has(kept.entry.sourceId));
    if (losers.length === 0) return { kept: result.kept, dropped: [...preferred, ...result.dropped] };
    const out = new Set(losers.map((kept) => kept.entry));
    for (const kept of losers) {
      preferred.push({ duplicateOf: attachment.get(kept.entry.sourceId)!, id: kept.entry.candidate.id, reason: 'attachment-preferred' });
    }
    current = current.filter((entry) => !out.has(entry));
  }
}
