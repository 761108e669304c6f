import { describe, expect, it } from 'vitest';
import { isLitmPackError, type LitmPackError } from '../src/index.js';
import {
  fitVectors,
  presetOfCollection,
  presetOfPayload,
  presetsFitting,
  vectorNamesFor,
  type ConfiguredVectors,
} from '../src/qdrant/detect.js';
import { PRESET_DEFAULTS, type PayloadPreset } from '../src/qdrant/presets.js';
import { errorAnswer } from '../src/service/errors.js';
import { cliRemedy } from '../src/cli/remedies.js';
import { toQdrantError } from '../src/qdrant/errors.js';

// Fitting a store to a collection it did not create, without a network: which presets fit a collection's
// vectors, which tool wrote a payload, and what each door says when they do not fit.

const langchainJs = { dense: [{ name: '', size: 1536 }], sparse: [] };
const langchainPythonHybrid = { dense: [{ name: '', size: 384 }], sparse: ['langchain-sparse'] };
const litm = { dense: [{ name: 'dense', size: 384 }], sparse: ['bm25'] };

function configured(preset: PayloadPreset, names: Partial<ConfiguredVectors['vectors']> = {}): ConfiguredVectors {
  const { denseVectorName, sparseVectorName } = PRESET_DEFAULTS[preset];
  return {
    vectors: { dense: names.dense ?? denseVectorName, sparse: names.sparse === undefined ? sparseVectorName : names.sparse },
    preset,
    denseNamed: names.dense !== undefined,
    sparseNamed: names.sparse !== undefined,
  };
}

function thrown(run: () => unknown): LitmPackError {
  try {
    run();
  } catch (error) {
    if (isLitmPackError(error)) return error;
    throw error;
  }
  throw new Error('expected a LitmPackError');
}

describe('presets a collection fits', () => {
  it('by its vectors, and by the payload of a point', () => {
    expect(presetsFitting(litm)).toEqual(['litm']);
    expect(presetsFitting(langchainJs)).toEqual(['langchain-js', 'llamaindex']);
    expect(presetsFitting(langchainPythonHybrid)).toEqual(['langchain-python']);
    expect(presetOfPayload({ content: 'x', metadata: {} })).toBe('langchain-js');
    expect(presetOfPayload({ page_content: 'x', metadata: {} })).toBe('langchain-python');
    expect(presetOfPayload({ _node_content: '{}', doc_id: 'a' })).toBe('llamaindex');
    expect(presetOfPayload({ id: 'a#1', sourceId: 'a', text: 'x' })).toBe('litm');
    expect(presetOfPayload({ body: 'x' })).toBeUndefined();
  });

  it('fromExistingCollection: the preset from a payload, the vector names from the collection', () => {
    expect(vectorNamesFor(langchainJs, presetOfCollection(langchainJs, { content: 'x' }, 'c'), 'c')).toEqual({
      payloadPreset: 'langchain-js',
      denseVectorName: '',
      sparseVectorName: null,
    });
    expect(vectorNamesFor(langchainPythonHybrid, 'langchain-python', 'c')).toMatchObject({ sparseVectorName: 'langchain-sparse' });
    // An empty collection names its preset only when its vectors fit one.
    expect(presetOfCollection(litm, undefined, 'c')).toBe('litm');
    const empty = thrown(() => presetOfCollection(langchainJs, undefined, 'c'));
    expect(empty.code).toBe('config_mismatch');
    expect(empty.message).toMatch(/is empty and its vectors fit "langchain-js" and "llamaindex".*give payloadPreset/);
  });
});

describe('fitVectors', () => {
  it("drops a preset's default sparse vector the collection does not have (hybrid runs dense only)", () => {
    expect(fitVectors(configured('langchain-python'), { dense: [{ name: '', size: 8 }], sparse: [] }, 'c', true)).toEqual({
      dense: '',
      sparse: null,
    });
    expect(fitVectors(configured('litm'), litm, 'c', true)).toEqual({ dense: 'dense', sparse: 'bm25' });
  });

  it("names what the collection has and the presets that fit, never Qdrant's words", () => {
    const error = thrown(() => fitVectors(configured('litm'), langchainJs, 'lc_docs', true));
    expect(error.code).toBe('config_mismatch');
    expect(error.message).toBe(
      'Qdrant collection "lc_docs" has no dense vector "dense" (it has dense: (unnamed) 1536-d; sparse: none; this store reads ' +
        'payloadPreset "litm"): open it with payloadPreset "langchain-js" or "llamaindex", or with ' +
        'QdrantHybridStore.fromExistingCollection(), which reads its vectors and payload',
    );
    // A sparse vector named by the caller is never dropped quietly.
    expect(thrown(() => fitVectors(configured('litm', { sparse: 'splade' }), litm, 'c', false)).message).toMatch(
      /has no sparse vector "splade"/,
    );
  });
});

describe('what each door says', () => {
  it('a collection another tool wrote: the CLI names --preset, not library options', () => {
    const error = thrown(() => fitVectors(configured('litm'), langchainJs, 'lc_docs', true));
    expect(cliRemedy(error)).toBe(
      'Qdrant collection "lc_docs" has no dense vector "dense" (it has dense: (unnamed) 1536-d; sparse: none): another tool wrote it; ' +
        'give --preset langchain-js or --preset llamaindex',
    );
  });

  it('a missing collection: the CLI names the ingest that creates it; the HTTP API and MCP do not name it at all', () => {
    const http = { status: 404, data: { status: { error: "Not found: Collection `docs` doesn't exist!" } } };
    const error = toQdrantError(http, { operation: 'query', collection: 'docs' });
    expect(error.code).toBe('not_found');
    expect(error.message).toMatch(/ensureCollection\(\)/);
    expect(cliRemedy(error)).toBe(
      'Qdrant collection "docs" does not exist: check the name in --store, or create it with "litm-pack ingest PATH... --store qdrant://HOST:6333/docs"',
    );
    const answer = errorAnswer(error);
    expect(answer.status).toBe(404);
    expect(answer.body.error).not.toMatch(/docs|ensureCollection/);
  });
});
