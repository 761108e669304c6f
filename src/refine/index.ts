// Refinement stages between retrieval and packing: sentence selection, rerankers, diversity (MMR), and the
// containment that keeps an optional stage's failure from failing a pack.
export { splitSentences } from './split.js';
export type { SentenceRange } from './split.js';
export { ELISION, Selection, selectSentences, sentenceKey } from './sentences.js';
export type { SentenceSelectionSettings, SentenceVectors } from './sentences.js';
