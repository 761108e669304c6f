// The pack inspector: self-contained HTML reports of packs and golden sets (pure functions, no I/O).
export { renderPackReport } from './pack-report.js';
export { renderGoldenSetReport } from './golden-report.js';
export type { GoldenRun, GoldenSetReportOptions } from './golden-report.js';
export { readPackRun, parseInspectablePack, InspectablePackSchema } from './schema.js';
export type { InspectablePack, StoredPack } from './schema.js';
export { REPORT_CSP } from './page.js';
