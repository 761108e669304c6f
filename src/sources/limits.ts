// The default limits of one load, apart from load.ts so that loaders can read them without importing it.
import type { LoadLimits } from './loader.js';

/** The limits `loadDocuments` applies unless told otherwise. */
export const DEFAULT_LOAD_LIMITS: Readonly<Required<LoadLimits>> = {
  maxFileBytes: 25 * 1024 * 1024,
  maxPages: 2_000,
  maxMessages: 10_000,
  maxRecords: 100_000,
  maxAttachmentDepth: 3,
  maxExpandedBytes: 25 * 1024 * 1024,
  maxChunksPerFile: 50_000,
  maxInflatedBytes: 64 * 1024 * 1024,
};
