// The packer's public face: bundles, briefings, the candidate order and the canonical JSON. The work is
// in bundle.ts and briefing.ts, over fill.ts (budget), allocate.ts (sentences), meter.ts (token counts) and
// finish.ts (items, citations, hash).
import { canonicalStringify, sha256Hex } from '../base/canonical.js';
import type { Pack } from './schemas.js';

/** The pack as canonical JSON: sorted keys, no whitespace; the same pack always gives the same bytes. */
export function toCanonicalJson(pack: Pack): string {
  return canonicalStringify(pack);
}

/**
 * A pack's `packHash`: the sha256 of its canonical JSON without `packHash`, with `coverage.newestIndexedAt`
 * written as null. Index times are not hashed: the same files ingested again (seconds or years later, on
 * another machine) and the same request give the same hash, while the pack still says how fresh its index is.
 * Takes any record (an older pack read from a file too); a record without the member is hashed as it is.
 */
export function packHashOf(pack: Readonly<Record<string, unknown>> | Pack): string {
  const rest: Record<string, unknown> = { ...(pack as Record<string, unknown>) };
  delete rest.packHash;
  const coverage = rest.coverage;
  if (typeof coverage === 'object' && coverage !== null && !Array.isArray(coverage)) {
    const indexed = (coverage as Record<string, unknown>).newestIndexedAt;
    if (indexed !== undefined && indexed !== null) rest.coverage = { ...coverage, newestIndexedAt: null };
  }
  return sha256Hex(canonicalStringify(rest));
}
