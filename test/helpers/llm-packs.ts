// Packs made from real files (the example corpus, a WebVTT transcript, a TypeScript file) through the loaders
// and the embedded store, with the loaded documents' text kept so spans can be checked against the source; and
// Messages API responses in the documented JSON shape that cite a pack's blocks.
import { join, resolve } from 'node:path';
import { packBundle } from '../../src/core/bundle.js';
import type { Pack } from '../../src/core/schemas.js';
import { MemoryHybridStore } from '../../src/memory/memory-hybrid-store.js';
import { loadDocuments } from '../../src/sources/load.js';
import type { AnthropicSearchResultBlock } from '../../src/llm/anthropic.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface Corpus {
  /** The loaded text of each source, by source id: what spans index into. */
  sources: Map<string, string>;
  bundle(query: string, options?: { maxTokens?: number; compress?: boolean; only?: (sourceId: string) => boolean }): Promise<Pack>;
}

export async function loadCorpus(): Promise<Corpus> {
  const docs = await loadDocuments(
    [join(ROOT, 'examples/corpus'), join(ROOT, 'examples/mixed/podcast.vtt'), join(ROOT, 'examples/mixed/code/retry.ts')],
    { base: ROOT },
  );
  const store = new MemoryHybridStore();
  await store.addDocuments(docs);
  const sources = new Map(docs.map((doc) => [doc.id, doc.text] as const));
  return {
    sources,
    async bundle(query, options = {}) {
      const found = await store.search({ text: query, mode: 'lexical', limit: 30 });
      const candidates = options.only === undefined ? found : found.filter((c) => options.only!(c.sourceId ?? c.id));
      return packBundle({
        query,
        candidates,
        maxTokens: options.maxTokens ?? 700,
        ...(options.compress === true ? { compress: { mode: 'sentences' as const } } : {}),
      });
    },
  };
}

/** A `search_result_location` citation of blocks [start, end) of result `index`, as Claude returns it. */
export function searchResultCitation(
  results: readonly AnthropicSearchResultBlock[],
  index: number,
  start: number,
  end: number,
  offset = 0,
) {
  const result = results[index]!;
  return {
    type: 'search_result_location' as const,
    source: result.source,
    title: result.title,
    cited_text: result.content
      .slice(start, end)
      .map((b) => b.text)
      .join(''),
    search_result_index: index + offset,
    start_block_index: start,
    end_block_index: end,
  };
}

/** A Messages API response (`Message`) whose content alternates plain text and cited text blocks. */
export function messageResponse(content: unknown[]) {
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content,
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 2095, output_tokens: 503, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}
