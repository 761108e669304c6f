// litm-pack/sources: reading files into documents. `loadDocuments` walks paths and hands each file to a
// `Loader` chosen by its type; the loaders by format, the watcher and the helpers a custom loader needs are here.
// (`loadDocuments` and the framework converters are in the root entry too.)
export { DEFAULT_LOAD_LIMITS } from './limits.js';
export { LoadDocumentsOptionsSchema, defaultLoaders, describeSkipped, loadDocuments } from './load.js';
export type { LoadDocumentsOptions, LoadedFile, LoadWarning, SkippedFile } from './load.js';
export type { LoadLimits, Loader, LoaderContext, LoaderInput, LoaderResult, SkipNotice } from './loader.js';
export { decodeText, markdownLoader, textLoader } from './text.js';
export { htmlLoader } from './html.js';
export { pdfLoader } from './pdf.js';
export { codeLoader } from './code.js';
export { emailLoader, splitMbox } from './email.js';
export { parseCues, transcriptLoader } from './transcript.js';
export { RecordsMappingSchema, recordsLoader } from './records.js';
export type { RecordsMapping } from './records.js';
export { readFrontMatter } from './front-matter.js';
export type { FrontMatter } from './front-matter.js';
export { applyFileChanges, watchDocuments } from './watch.js';
export type { DocumentWatcher, WatchBatch, WatchDocumentsOptions } from './watch.js';
export { fromLangChainDocuments, fromLlamaIndexDocuments } from './frameworks.js';
export type { LangChainDocumentLike, LlamaIndexNodeLike } from './frameworks.js';
