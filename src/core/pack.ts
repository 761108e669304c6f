// The packer's public face: bundles, briefings, the candidate order and the canonical JSON. The work is
// in bundle.ts and briefing.ts, over fill.ts (budget), allocate.ts (sentences), meter.ts (token counts) and
// finish.ts (items, citations, hash).
import { canonicalStringify } from '../base/canonical.js';
import type { Pack } from './schemas.js';


/** The pack as canonical JSON: sorted keys, no whitespace; the same pack always gives the same bytes. */
export function toCanonicalJson(pack: Pack): string {
  return canonicalStringify(pack);
}
