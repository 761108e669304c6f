/**
 * API keys → principals. A key file (or the LITM_PACK_API_KEYS variable) lists who may call and what each
 * caller may read; the principals go into every store query of that caller's requests.
 *
 *   { "keys": [ { "id": "alice", "key": "…at least 16 characters…", "principals": ["hr", "eng"] },
 *               { "id": "ci", "sha256": "<hex sha256 of the key>", "principals": [] } ] }
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { LitmPackError, parseOrThrow } from '../base/errors.js';

const ApiKeyEntrySchema = z
  .strictObject({
    /** Who this is in the request log (never the key itself). */
    id: z.string().min(1, 'id must be a non-empty string'),
    /** The key as sent in `Authorization: Bearer <key>`. */
    key: z.string().min(16, 'key must have at least 16 characters').optional(),
    /** Or its sha256 (hex), so the file need not hold the key itself. */
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits')
      .optional(),
    /** What this caller may read: documents without an ACL, and those whose ACL names one of these. */
    principals: z.array(z.string().min(1)).default([]),
  })
  .refine((entry) => (entry.key === undefined) !== (entry.sha256 === undefined), {
    message: 'give exactly one of key or sha256',
  });

export const ApiKeysSchema = z.strictObject({ keys: z.array(ApiKeyEntrySchema) });
export type ApiKeysInput = z.input<typeof ApiKeysSchema>;

/** The caller of one request. */
export type Caller =
  | { kind: 'anonymous'; id: 'anonymous'; principals: readonly string[] }
  | { kind: 'key'; id: string; principals: readonly string[] }
  | { kind: 'invalid'; id: 'invalid-key'; principals: readonly string[] };

const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous', id: 'anonymous', principals: Object.freeze([]) });
const INVALID: Caller = Object.freeze({ kind: 'invalid', id: 'invalid-key', principals: Object.freeze([]) });

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Looks callers up by the sha256 of the key they present. */
export class ApiKeys {
  readonly #byHash = new Map<string, Caller>();

  constructor(config: ApiKeysInput = { keys: [] }) {
    const parsed = parseOrThrow(ApiKeysSchema, config, 'API keys');
    const ids = new Set<string>();
    for (const entry of parsed.keys) {
      if (ids.has(entry.id)) throw new LitmPackError('invalid_input', `Invalid API keys: id "${entry.id}" is listed twice`);
      ids.add(entry.id);
      const hash = entry.sha256 ?? sha256(entry.key as string);
      if (this.#byHash.has(hash))
        throw new LitmPackError('invalid_input', `Invalid API keys: "${entry.id}" has the same key as another entry`);
      this.#byHash.set(hash, Object.freeze({ kind: 'key', id: entry.id, principals: Object.freeze([...entry.principals]) }));
    }
  }

  get size(): number {
    return this.#byHash.size;
  }

  /**
   * The caller an `Authorization` header names: anonymous without one, `invalid` for a key that is not
   * listed or a header that is not `Bearer <key>`. Keys are compared by their sha256, so the lookup's
   * timing says nothing about how much of a guessed key was right.
   */
  callerFor(authorization: string | undefined): Caller {
    if (authorization === undefined || authorization === '') return ANONYMOUS;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match === null) return INVALID;
    return this.#byHash.get(sha256(match[1] as string)) ?? INVALID;
  }
}

/** Parses a key file's text (JSON); errors say which file and what to fix. */
export function parseApiKeys(text: string, where: string): ApiKeys {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LitmPackError('invalid_input', `${where} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  try {
    return new ApiKeys(value as ApiKeysInput);
  } catch (error) {
    if (error instanceof LitmPackError)
      throw new LitmPackError(error.code, `${where}: ${error.message}`, { cause: error, issues: error.issues });
    throw error;
  }
}
