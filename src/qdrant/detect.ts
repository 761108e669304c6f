/**
 * Fitting a store to a collection it did not create: which presets' vector names a collection's vectors fit,
 * which tool wrote a payload, and the vector names a search uses once the collection's vectors are read.
 * Pure functions; the store reads the collection once and hands the answer in.
 */
import { LitmPackError } from '../base/errors.js';
import { describeCollectionVectors, type CollectionVectors } from './collection.js';
import { PAYLOAD_PRESETS, PRESET_DEFAULTS, type PayloadPreset } from './presets.js';
import type { VectorNames } from './types.js';

/**
 * The presets whose default vectors the collection has: its dense vector, and its sparse vector or none when
 * the preset writes none; failing that, the presets whose dense vector it has.
 */
export function presetsFitting(vectors: CollectionVectors): PayloadPreset[] {
  const fits = (preset: PayloadPreset, withSparse: boolean) => {
    const { denseVectorName, sparseVectorName } = PRESET_DEFAULTS[preset];
    if (!vectors.dense.some((v) => v.name === denseVectorName)) return false;
    return !withSparse || (sparseVectorName === null ? vectors.sparse.length === 0 : vectors.sparse.includes(sparseVectorName));
  };
  const exact = PAYLOAD_PRESETS.filter((preset) => fits(preset, true));
  // langchain-python writes its sparse vector only in hybrid mode: its dense-only collections fit it too.
  return exact.length > 0 ? exact : PAYLOAD_PRESETS.filter((preset) => fits(preset, false));
}

/** The tool that wrote a point, from its payload's keys; undefined when no preset knows the shape. */
export function presetOfPayload(payload: Record<string, unknown> | null | undefined): PayloadPreset | undefined {
  if (payload === null || payload === undefined) return undefined;
  if (typeof payload._node_content === 'string') return 'llamaindex';
  if (typeof payload.page_content === 'string') return 'langchain-python';
  if (typeof payload.content === 'string') return 'langchain-js';
  if (typeof payload.id === 'string' && typeof payload.sourceId === 'string' && typeof payload.text === 'string') return 'litm';
  return undefined;
}

/** What the store is configured with, and whether the caller named the vectors (or the preset's defaults apply). */
export interface ConfiguredVectors {
  vectors: VectorNames;
  preset: PayloadPreset;
  denseNamed: boolean;
  sparseNamed: boolean;
}

/** How `denseVectorName` and `sparseVectorName` are set for a preset's collection, in options' words. */
function presetAdvice(presets: readonly PayloadPreset[]): string {
  if (presets.length === 0) return "set denseVectorName ('' is the unnamed vector) and sparseVectorName to the collection's names";
  return `open it with payloadPreset ${presets.map((p) => `"${p}"`).join(' or ')}`;
}

/**
 * The vector names a search uses on a collection with these vectors: the configured ones, except that a
 * preset's default sparse vector the collection does not have (it has none) is dropped, so hybrid search runs
 * on the dense vector alone. A dense vector the search needs and the collection lacks, or a sparse vector it
 * lacks while it has others, is `config_mismatch` naming the collection's vectors and the presets that fit.
 */
export function fitVectors(
  configured: ConfiguredVectors,
  vectors: CollectionVectors,
  collection: string,
  needsDense: boolean,
): VectorNames {
  const { dense, sparse } = configured.vectors;
  const mismatch = (missing: string) => {
    const presets = presetsFitting(vectors);
    const has = describeCollectionVectors(vectors);
    return new LitmPackError(
      'config_mismatch',
      `Qdrant collection "${collection}" has no ${missing} (it has ${has}; this store reads payloadPreset "${configured.preset}"): ` +
        `${presetAdvice(presets)}, or with QdrantHybridStore.fromExistingCollection(), which reads its vectors and payload`,
      { details: { collection, requires: 'preset', missing, vectors: has, presets } },
    );
  };
  if (needsDense && !vectors.dense.some((v) => v.name === dense)) {
    throw mismatch(dense === '' ? 'unnamed dense vector' : `dense vector "${dense}"`);
  }
  if (sparse === null || vectors.sparse.includes(sparse)) return { dense, sparse };
  if (!configured.sparseNamed && vectors.sparse.length === 0) return { dense, sparse: null };
  throw mismatch(`sparse vector "${sparse}"`);
}

/** The settings `fromExistingCollection` opens a collection with: its preset and vector names. */
interface DetectedCollection {
  payloadPreset: PayloadPreset;
  denseVectorName: string;
  sparseVectorName: string | null;
}

/**
 * The preset of a collection: from a point's payload, or (`samplePayload` undefined: it is empty) from its
 * vectors when exactly one preset fits them.
 */
export function presetOfCollection(
  vectors: CollectionVectors,
  samplePayload: Record<string, unknown> | null | undefined,
  collection: string,
): PayloadPreset {
  const fitting = presetsFitting(vectors);
  const preset = presetOfPayload(samplePayload) ?? (samplePayload === undefined && fitting.length === 1 ? fitting[0] : undefined);
  if (preset !== undefined) return preset;
  const what = samplePayload === undefined ? 'is empty and its vectors fit' : 'holds points whose payload no preset reads; its vectors fit';
  const has = describeCollectionVectors(vectors);
  throw new LitmPackError(
    'config_mismatch',
    `Qdrant collection "${collection}" ${what} ${fitting.length === 0 ? 'no preset' : fitting.map((p) => `"${p}"`).join(' and ')} ` +
      `(it has ${has}): give payloadPreset (${PAYLOAD_PRESETS.join(', ')})`,
    { details: { collection, requires: 'preset', vectors: has, presets: fitting } },
  );
}

/**
 * The vector names to read a collection of `preset` with: the preset's dense name when the collection has it,
 * else its only dense vector; the preset's sparse vector when the collection has it, else none (hybrid search
 * then runs on the dense vector alone).
 */
export function vectorNamesFor(vectors: CollectionVectors, preset: PayloadPreset, collection: string): DetectedCollection {
  const defaults = PRESET_DEFAULTS[preset];
  const onlyDense = vectors.dense.length === 1 ? vectors.dense[0]!.name : undefined;
  const denseVectorName = vectors.dense.some((v) => v.name === defaults.denseVectorName) ? defaults.denseVectorName : onlyDense;
  if (denseVectorName === undefined) {
    const has = describeCollectionVectors(vectors);
    throw new LitmPackError(
      'config_mismatch',
      `Qdrant collection "${collection}" has ${has}, and none is the "${preset}" preset's dense vector: give denseVectorName`,
      { details: { collection, vectors: has, presets: [preset] } },
    );
  }
  // Only the preset's own sparse vector is BM25 with IDF; another tool's (SPLADE, say) is not read as one.
  const sparse = defaults.sparseVectorName;
  return { payloadPreset: preset, denseVectorName, sparseVectorName: sparse !== null && vectors.sparse.includes(sparse) ? sparse : null };
}
