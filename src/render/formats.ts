// What the renderers know how to write. The pack's schemas (core) build their enums from these lists, so a
// format or zone exists in one place.

/** Context formats. */
export const FORMATS = ['markdown', 'xml', 'text'] as const;
export type PackFormat = (typeof FORMATS)[number];

/**
 * How much provenance a block's header shows. `full`: title, source, version, section and locator;
 * `compact`: the title (or the source when there is no title or it is the source) and the locator;
 * `minimal`: the title or the source. The citation sidecar keeps every field whatever the header shows.
 */
export const HEADER_STYLES = ['full', 'compact', 'minimal'] as const;
export type HeaderStyle = (typeof HEADER_STYLES)[number];

/** Zones of a briefing, in context order (a bundle's items are all `evidence`). */
export const ZONE_ROLES = ['grounding', 'evidence'] as const;
export type ItemRole = (typeof ZONE_ROLES)[number];

/** The provenance a block's header shows (a candidate has these fields). */
export interface BlockProvenance {
  id: string;
  sourceId?: string | undefined;
  title?: string | undefined;
  version?: string | undefined;
  section?: string[] | undefined;
  /** Page (and its printed label), lines or time in the source, shown compactly (`p. 12`, `p. iv, PDF p. 4`, `lines 40–58`, `01:00–01:05`). */
  locator?:
    | { page?: number | undefined; label?: string | undefined; lines?: [number, number] | undefined; time?: [number, number] | undefined }
    | undefined;
}
