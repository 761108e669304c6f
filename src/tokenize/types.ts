/** Encodings litm-pack ships (through js-tiktoken). */
export const ENCODINGS = ['o200k_base', 'cl100k_base'] as const;
export type EncodingName = (typeof ENCODINGS)[number];
export const DEFAULT_ENCODING: EncodingName = 'o200k_base';

/**
 * Counts tokens. Implement it to pack for a model whose tokenizer litm-pack does not ship.
 * `count` must be exact: the packer guarantees `count(pack.context) <= maxTokens` with it.
 */
export interface Tokenizer {
  /** Reported as `pack.budget.encoding`; also the key of per-encoding token hints on candidates. */
  readonly name: string;
  count(text: string): number;
  /**
   * Optional cheap lower bound on `count(text)` (never above it). Lets the packer reject texts that
   * cannot fit without tokenising them, and catch token hints that cannot be right. May stop early and
   * return any bound above `limit` once it has found one.
   */
  lowerBound?(text: string, limit?: number): number;
}
