/**
 * The records loader: JSON Lines (.jsonl, .ndjson) and JSON arrays (.json) of objects, as other systems
 * export them (tickets, CRM notes, knowledge-base articles). A field mapping names where each record keeps
 * its id, text and title, and which fields become metadata. Each record is one document, its source id the
 * file's followed by `/` and the record's id (`tickets.jsonl/T-1042`), so removing or re-reading the file
 * covers its records. A record without text, a line that is not JSON or a repeated id is left out with a
 * warning naming its line (or index); the rest of the file is read.
 */
import { z } from 'zod';
import { parseOrThrow } from '../base/errors.js';
import { TimestampSchema } from '../core/schemas.js';
import type { IngestDocument } from '../store/schemas.js';
import { versionOfBytes } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { decodeText, notText } from './text.js';
import { DEFAULT_LOAD_LIMITS } from './limits.js';

const field = z.string().min(1, 'field names must be non-empty');

export const RecordsMappingSchema = z.strictObject({
  /** The field holding each record's id (default `id`; a record without one is numbered by its line). */
  idField: field.default('id'),
  /** The field holding the text to index (default `text`). */
  textField: field.default('text'),
  /** The field holding the title (default `title`). */
  titleField: field.default('title'),
  /** Fields copied into each document's metadata (default none). */
  metadataFields: z.array(field).default([]),
  /** Optional fields for the document's `timestamp` (ISO 8601) and `url`. */
  timestampField: field.optional(),
  urlField: field.optional(),
});
export type RecordsMapping = z.input<typeof RecordsMappingSchema>;

/** A dotted path (`author.name`) into a record. */
function pick(record: Record<string, unknown>, path: string): unknown {
  if (path in record) return record[path];
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const scalar = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== ''
    ? value
    : typeof value === 'number' && Number.isFinite(value)
      ? String(value)
      : undefined;

/** A records loader with the given field mapping (the defaults read `{ id, text, title }`). */
export function recordsLoader(mapping: RecordsMapping = {}): Loader {
  const map = parseOrThrow(RecordsMappingSchema, mapping, 'recordsLoader mapping');
  return {
    name: 'records',
    extensions: ['.jsonl', '.ndjson', '.json'],
    load(input, context): LoaderResult {
      const decoded = decodeText(input.bytes);
      if ('problem' in decoded) return notText(decoded.problem);
      const maxRecords = context.limits?.maxRecords ?? DEFAULT_LOAD_LIMITS.maxRecords;
      const warnings: string[] = [];
      // Each entry: the record (or why it is not one) and where it is, for messages.
      const entries: { value: unknown; where: string; number: number }[] = [];
      if (input.extension === '.json') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(decoded.text);
        } catch (error) {
          return { skip: { reason: 'unreadable', message: `not JSON: ${(error as Error).message}` } };
        }
        if (!Array.isArray(parsed)) return { skip: { reason: 'not-records', message: 'not a JSON array of records (objects)' } };
        parsed.forEach((value, index) => entries.push({ value, where: `record ${index + 1}`, number: index + 1 }));
      } else {
        decoded.text.split(/\r?\n/u).forEach((line, index) => {
          if (line.trim() === '') return;
          try {
            entries.push({ value: JSON.parse(line), where: `line ${index + 1}`, number: index + 1 });
          } catch {
            warnings.push(`line ${index + 1} is not JSON and was left out`);
          }
        });
      }
      if (entries.length > maxRecords) {
        warnings.push(`read the first ${maxRecords} of ${entries.length} records (maxRecords)`);
        entries.length = maxRecords;
      }
      const documents: IngestDocument[] = [];
      const seen = new Set<string>();
      let withoutText = 0;
      const version = versionOfBytes(input.bytes);
      for (const { value, where, number } of entries) {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          warnings.push(`${where} is not an object and was left out`);
          continue;
        }
        const record = value as Record<string, unknown>;
        const text = pick(record, map.textField);
        if (typeof text !== 'string' || text.trim() === '') {
          withoutText += 1;
          continue;
        }
        const recordId = scalar(pick(record, map.idField)) ?? String(number);
        if (seen.has(recordId)) {
          warnings.push(`${where} repeats the id ${recordId} and was left out`);
          continue;
        }
        seen.add(recordId);
        const doc: IngestDocument = {
          id: `${input.sourceId}/${recordId}`,
          text,
          version,
          // One region: the text is read as paragraphs, never as markdown headings.
          regions: [{ start: 0, end: text.length }],
        };
        const title = scalar(pick(record, map.titleField));
        if (title !== undefined) doc.title = title;
        const timestamp = map.timestampField === undefined ? undefined : scalar(pick(record, map.timestampField));
        if (timestamp !== undefined && TimestampSchema.safeParse(timestamp).success) doc.timestamp = timestamp;
        const url = map.urlField === undefined ? undefined : scalar(pick(record, map.urlField));
        if (url !== undefined) doc.url = url;
        const metadata: Record<string, unknown> = {};
        for (const name of map.metadataFields) {
          const picked = pick(record, name);
          if (picked !== undefined) metadata[name] = picked;
        }
        if (Object.keys(metadata).length > 0) doc.metadata = metadata;
        documents.push(doc);
      }
      if (documents.length === 0) {
        return { skip: { reason: 'not-records', message: `no record has a text field "${map.textField}" (--text-field names it)` } };
      }
      if (withoutText > 0)
        warnings.push(
          `${withoutText} record${withoutText === 1 ? ' has' : 's have'} no text in "${map.textField}" and ${withoutText === 1 ? 'was' : 'were'} left out`,
        );
      return { documents, ...(warnings.length > 0 ? { warnings } : {}) };
    },
  };
}
