/**
 * A pack as the Vercel AI SDK's sources: one `source-document` part per item in context order, the shape of
 * the SDK's UI message stream chunks and UI message parts (`{ type: 'source-document', sourceId, mediaType,
 * title, filename?, providerMetadata? }`), so a route can stream what the answer was grounded on
 * (`writer.write(part)` in `createUIMessageStream`). The citation travels in `providerMetadata.litm`.
 */
import { parseOrThrow } from '../base/errors.js';
import type { Citation } from '../core/schemas.js';
import { CitablePackSchema, litmSourceUri, resultTitle, type CitablePack } from './anthropic.js';

/** JSON values only (the SDK's `ProviderMetadata` holds JSON). */
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface AiSdkSourceDocumentPart {
  type: 'source-document';
  sourceId: string;
  mediaType: string;
  title: string;
  providerMetadata: { litm: { [key: string]: Json } };
}

/** The citation as JSON without absent fields (the SDK's metadata schema takes no `undefined`). */
function citationJson(citation: Citation): { [key: string]: Json } {
  return JSON.parse(JSON.stringify(citation)) as { [key: string]: Json };
}

/** One `source-document` part per item (`sourceId` the chunk's `litm://` URI, unique per chunk and version). */
export function toAiSdkSources(pack: CitablePack): AiSdkSourceDocumentPart[] {
  const parsed = parseOrThrow(CitablePackSchema, pack, 'pack');
  return parsed.citations.map((citation) => ({
    type: 'source-document',
    sourceId: litmSourceUri(citation),
    mediaType: 'text/plain',
    title: resultTitle(citation),
    providerMetadata: { litm: citationJson(citation) },
  }));
}
