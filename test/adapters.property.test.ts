import { Document } from '@langchain/core/documents';
import { Document as LlamaDocument, MetadataMode, type NodeWithScore } from '@llamaindex/core/schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/base/canonical.js';
import { LitmCompressor } from '../src/langchain/index.js';
import { LitmPostprocessor } from '../src/llamaindex/index.js';

// Inputs that collide on purpose: few ids, few scores, few sources, so several inputs share an id and a
// score and the packer has to choose between them. Each input carries its position as `tag`.
const word = fc.constantFrom('refund', 'return', 'parcel', 'label', 'receipt', 'store', 'card', 'days');
const input = fc.record(
  {
    words: fc.array(word, { minLength: 1, maxLength: 12 }),
    id: fc.constantFrom('a', 'b', 'c'),
    score: fc.constantFrom(0.5, 1),
    source: fc.constantFrom('A.md', 'B.md', 'C.md'),
    version: fc.constantFrom('v1', 'v2'),
  },
  { requiredKeys: ['words', 'source'] },
);
const inputs = fc.array(input, { minLength: 1, maxLength: 8 });

type Input = { words: string[]; id?: string; score?: number; source: string; version?: string };
const textOf = (value: Input, index: number) => `${value.words.join(' ')} (${index}).`;

function metadataOf(value: Input, index: number): Record<string, unknown> {
  const metadata: Record<string, unknown> = { tag: index, source: value.source };
  if (value.id !== undefined) metadata.id = value.id;
  if (value.score !== undefined) metadata.score = value.score;
  if (value.version !== undefined) metadata.version = value.version;
  return metadata;
}

/** Every output's metadata, text and citation belong to one and the same input: the one its `tag` names. */
function expectOwnInput(values: Input[], output: { text: string; metadata: Record<string, unknown> }) {
  const tag = output.metadata.tag as number;
  const value = values[tag]!;
  const text = textOf(value, tag);
  const citation = output.metadata.citation as { sourceId: string; textSha256: string; version?: string };
  expect(text.startsWith(output.text)).toBe(true);
  expect(citation.textSha256).toBe(sha256Hex(text));
  expect(citation.sourceId).toBe(value.source);
  expect(output.metadata.source).toBe(value.source);
  expect(citation.version).toBe(value.version);
}

describe('adapters map every output to its own input (by position, not by id)', () => {
  it('LitmCompressor', async () => {
    const compressor = new LitmCompressor({ maxTokens: 400, dedupe: false });
    await fc.assert(
      fc.asyncProperty(inputs, async (values) => {
        const docs = values.map((value, i) => new Document({ pageContent: textOf(value, i), metadata: metadataOf(value, i) }));
        const { documents } = await compressor.compressWithCitations(docs, 'refund');
        expect(documents.length).toBeGreaterThan(0);
        for (const doc of documents) expectOwnInput(values, { text: doc.pageContent, metadata: doc.metadata });
      }),
      { numRuns: 200 },
    );
  });

  it('LitmPostprocessor', async () => {
    const postprocessor = new LitmPostprocessor({ maxTokens: 400, dedupe: false });
    await fc.assert(
      fc.asyncProperty(inputs, async (values) => {
        const nodes: NodeWithScore[] = values.map((value, i) => ({
          node: new LlamaDocument({ text: textOf(value, i), id_: `node-${i}`, metadata: metadataOf(value, i) }),
        }));
        const { nodes: packed } = await postprocessor.postprocessWithCitations(nodes, 'refund');
        expect(packed.length).toBeGreaterThan(0);
        for (const { node } of packed) {
          expectOwnInput(values, { text: node.getContent(MetadataMode.NONE), metadata: node.metadata });
          expect(node.id_).toBe(`node-${node.metadata.tag as number}`);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('the reported case: [B.md, A.md] sharing metadata.id and score', async () => {
    const docs = [
      new Document({ pageContent: 'Text of B.', metadata: { id: 'same', score: 1, source: 'B.md' } }),
      new Document({ pageContent: 'Text of A.', metadata: { id: 'same', score: 1, source: 'A.md' } }),
    ];
    const { documents } = await new LitmCompressor({ maxTokens: 200 }).compressWithCitations(docs, 'text');
    expect(documents).toHaveLength(1);
    const [doc] = documents;
    const input = docs.find((d) => d.pageContent === doc!.pageContent)!;
    expect(doc!.metadata.source).toBe(input.metadata.source);
    expect(doc!.metadata.citation.sourceId).toBe(input.metadata.source);
  });
});
