import { z } from 'zod';
import { LitmPackError, describeIssues } from '../base/errors.js';
import { CandidateSchema, type Candidate } from '../core/schemas.js';
import { ChunkRecordSchema, type ChunkRecord } from '../store/schemas.js';
import { chunkToCandidate } from '../store/chunk.js';

/**
 * Payload presets: how a point's payload becomes a `Candidate`, for collections litm-pack wrote and for
 * collections written by other tools. Pure functions, validated with zod at this boundary.
 */
export const PAYLOAD_PRESETS = ['litm', 'langchain-js', 'langchain-python', 'llamaindex'] as const;
export type PayloadPreset = (typeof PAYLOAD_PRESETS)[number];

export interface PresetDefaults {
  /** Dense vector name; `''` is the unnamed default vector those tools create. */
  denseVectorName: string;
  /** Sparse vector name, or null when the tool writes none. */
  sparseVectorName: string | null;
  /** Payload key holding the ACL (principals). */
  aclKey: string;
  /** Only litm-pack's own payload can be written by this store. */
  writable: boolean;
}

export const PRESET_DEFAULTS: Readonly<Record<PayloadPreset, PresetDefaults>> = {
  litm: { denseVectorName: 'dense', sparseVectorName: 'bm25', aclKey: 'acl', writable: true },
  // @langchain/qdrant creates `vectors: {size, distance}` (unnamed) and no sparse vector.
  'langchain-js': { denseVectorName: '', sparseVectorName: null, aclKey: 'metadata.acl', writable: false },
  // langchain-qdrant (Python) uses the unnamed vector by default; its sparse vector (FastEmbedSparse with
  // Qdrant/bm25) is "langchain-sparse" when retrieval_mode is hybrid or sparse.
  'langchain-python': {
    denseVectorName: '',
    sparseVectorName: 'langchain-sparse',
    aclKey: 'metadata.acl',
    writable: false,
  },
  // @llamaindex/qdrant creates an unnamed vector and flattens node metadata into the payload.
  llamaindex: { denseVectorName: '', sparseVectorName: null, aclKey: 'acl', writable: false },
};

/** A point as the query API returns it (the fields the mapping reads). */
export interface ScoredPointLike {
  id: string | number;
  score: number;
  payload?: Record<string, unknown> | null;
}

const MetadataSchema = z.record(z.string(), z.unknown());

const LangchainJsPayloadSchema = z.object({
  content: z.string(),
  metadata: MetadataSchema.nullish(),
});

const LangchainPythonPayloadSchema = z.object({
  page_content: z.string(),
  metadata: MetadataSchema.nullish(),
});

const LlamaindexPayloadSchema = z
  .object({
    _node_content: z.string(),
    _node_type: z.string().optional(),
    document_id: z.unknown().optional(),
    doc_id: z.unknown().optional(),
    ref_doc_id: z.unknown().optional(),
  })
  .catchall(z.unknown());

/** The node JSON LlamaIndex (TS and Python) stores in `_node_content` (TS camelCase, Python snake_case). */
const LlamaindexNodeSchema = z.looseObject({
  id_: z.string().optional(),
  text: z.string(),
  startCharIdx: z.number().int().nullish(),
  endCharIdx: z.number().int().nullish(),
  start_char_idx: z.number().int().nullish(),
  end_char_idx: z.number().int().nullish(),
});

function corrupt(point: ScoredPointLike, preset: PayloadPreset, detail: string, cause: unknown): LitmPackError {
  return new LitmPackError(
    'corrupt',
    `Point ${String(point.id)} does not have a "${preset}" payload (${detail}); choose the payloadPreset that wrote the collection`,
    { cause, details: { pointId: point.id, preset } },
  );
}

function parsePayload<T extends z.ZodType>(schema: T, point: ScoredPointLike, preset: PayloadPreset): z.output<T> {
  const result = schema.safeParse(point.payload ?? {});
  if (!result.success) throw corrupt(point, preset, describeIssues(result.error.issues), result.error);
  return result.data;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function optionalTimestamp(value: unknown): string | undefined {
  return CandidateSchema.shape.timestamp.safeParse(value).success ? (value as string) : undefined;
}

/** LlamaIndex writes the string "None" when a node has no source document. */
function llamaRef(value: unknown): string | undefined {
  const s = optionalString(value);
  return s === undefined || s === 'None' ? undefined : s;
}

/** A Candidate from a LangChain document (`pageContent` + `metadata`), whichever language wrote it. */
export function langchainDocumentToCandidate(
  pointId: string,
  text: string,
  metadata: Record<string, unknown>,
  score: number,
  similarity: number | undefined,
): Candidate {
  const candidate: Candidate = {
    id: pointId,
    text,
    score,
    sourceId: optionalString(metadata.source) ?? pointId,
    metadata,
  };
  const title = optionalString(metadata.title);
  if (title !== undefined) candidate.title = title;
  const url = optionalString(metadata.url);
  if (url !== undefined) candidate.url = url;
  const timestamp = optionalTimestamp(metadata.timestamp);
  if (timestamp !== undefined) candidate.timestamp = timestamp;
  if (similarity !== undefined) candidate.similarity = similarity;
  return candidate;
}

/** A Candidate from a LlamaIndex payload: node JSON in `_node_content`, metadata flattened beside it. */
export function llamaindexPayloadToCandidate(point: ScoredPointLike, score: number, similarity: number | undefined): Candidate {
  const payload = parsePayload(LlamaindexPayloadSchema, point, 'llamaindex');
  const { _node_content: nodeContent, _node_type: _nodeType, document_id, doc_id, ref_doc_id, ...metadata } = payload;
  let json: unknown;
  try {
    json = JSON.parse(nodeContent);
  } catch (error) {
    throw corrupt(point, 'llamaindex', '_node_content is not JSON', error);
  }
  const node = LlamaindexNodeSchema.safeParse(json);
  if (!node.success) throw corrupt(point, 'llamaindex', `_node_content: ${describeIssues(node.error.issues)}`, node.error);
  const id = node.data.id_ ?? String(point.id);
  const candidate: Candidate = {
    id,
    text: node.data.text,
    score,
    sourceId: llamaRef(ref_doc_id) ?? llamaRef(doc_id) ?? llamaRef(document_id) ?? id,
    metadata,
  };
  const start = node.data.startCharIdx ?? node.data.start_char_idx;
  const end = node.data.endCharIdx ?? node.data.end_char_idx;
  if (typeof start === 'number' && typeof end === 'number' && start >= 0 && end >= start) {
    candidate.span = { start, end };
  }
  const title = optionalString(metadata.title) ?? optionalString(metadata.file_name);
  if (title !== undefined) candidate.title = title;
  const url = optionalString(metadata.url);
  if (url !== undefined) candidate.url = url;
  const timestamp = optionalTimestamp(metadata.timestamp);
  if (timestamp !== undefined) candidate.timestamp = timestamp;
  if (similarity !== undefined) candidate.similarity = similarity;
  return candidate;
}

/** Reads a litm-pack payload back as the `ChunkRecord` it was written from. */
export function payloadToChunkRecord(point: ScoredPointLike): ChunkRecord {
  return parsePayload(ChunkRecordSchema, point, 'litm');
}

/**
 * Maps one scored point to a Candidate with the preset's payload shape. `similarity` is the true dense cosine
 * when the dense arm ran; it is clamped to [-1, 1] because float rounding can overshoot by an ulp.
 */
export function pointToCandidate(point: ScoredPointLike, preset: PayloadPreset, similarity?: number): Candidate {
  const sim = similarity === undefined ? undefined : Math.max(-1, Math.min(1, similarity));
  switch (preset) {
    case 'litm':
      return chunkToCandidate(payloadToChunkRecord(point), point.score, sim);
    case 'langchain-js': {
      const payload = parsePayload(LangchainJsPayloadSchema, point, preset);
      return langchainDocumentToCandidate(String(point.id), payload.content, payload.metadata ?? {}, point.score, sim);
    }
    case 'langchain-python': {
      const payload = parsePayload(LangchainPythonPayloadSchema, point, preset);
      return langchainDocumentToCandidate(String(point.id), payload.page_content, payload.metadata ?? {}, point.score, sim);
    }
    case 'llamaindex':
      return llamaindexPayloadToCandidate(point, point.score, sim);
  }
}
