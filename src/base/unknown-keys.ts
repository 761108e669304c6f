import { closest, distance } from 'fastest-levenshtein';
import type { z } from 'zod';

// zod reports an unknown key as `unrecognized_keys` with the keys but not the ones it knows. To suggest the
// option a caller probably meant, the object schema at the issue's path is found by walking the schema's
// definition (objects, wrappers, arrays, records, unions), and its keys are compared with the unknown one.

type Def = { type: string; [key: string]: unknown };
const defOf = (schema: unknown): Def | undefined => (schema as { _zod?: { def?: Def } } | undefined)?._zod?.def;

/** Strips wrappers that do not change the shape (optional, default, nullable, pipe input, lazy...). */
function unwrap(schema: unknown, depth = 0): unknown {
  const def = defOf(schema);
  if (def === undefined || depth > 20) return schema;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return unwrap(def.innerType, depth + 1);
    case 'pipe':
      return unwrap(def.in, depth + 1);
    case 'lazy':
      return unwrap((def.getter as () => unknown)(), depth + 1);
    default:
      return schema;
  }
}

function objectSchemasAt(schema: unknown, path: readonly PropertyKey[], depth = 0): unknown[] {
  const node = unwrap(schema);
  const def = defOf(node);
  if (def === undefined || depth > 40) return [];
  if (def.type === 'union') {
    return (def.options as unknown[]).flatMap((option) => objectSchemasAt(option, path, depth + 1));
  }
  if (def.type === 'intersection') {
    return [def.left, def.right].flatMap((side) => objectSchemasAt(side, path, depth + 1));
  }
  if (path.length === 0) return def.type === 'object' ? [node] : [];
  const [head, ...rest] = path;
  if (def.type === 'object') {
    const shape = def.shape as Record<string, unknown>;
    const child = typeof head === 'string' ? shape[head] : undefined;
    return child === undefined ? [] : objectSchemasAt(child, rest, depth + 1);
  }
  if (def.type === 'array') return objectSchemasAt(def.element, rest, depth + 1);
  if (def.type === 'record') return objectSchemasAt(def.valueType, rest, depth + 1);
  return [];
}

/** The keys the object schema at `path` accepts (empty when it cannot be determined). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const keys = new Set<string>();
  for (const object of objectSchemasAt(schema, path)) {
    for (const key of Object.keys(defOf(object)?.shape as Record<string, unknown>)) keys.add(key);
  }
  return [...keys].sort();
}

/**
 * The known key closest to `unknown`, when it is close enough to be a likely misspelling: at most a third of
 * its length in edits (at least one), or the same word in another case or spelling (`max_tokens`, `MaxTokens`).
 */
function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const squash = (key: string) => key.replace(/[_-]/gu, '').toLowerCase();
  const same = known.find((key) => squash(key) === squash(unknown));
  if (same !== undefined) return same;
  const best = closest(unknown, [...known]);
  return distance(unknown, best) <= Math.max(1, Math.floor(unknown.length / 3)) ? best : undefined;
}

/** "unknown option "maxTokes" (did you mean "maxTokens"?)" for each unknown key of an issue. */
export function describeUnknownKeys(
  keys: readonly string[],
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string {
  return keys
    .map((key) => {
      // Own entries only: `constructor` is not an alias of anything.
      const hint = (Object.hasOwn(aliases, key) ? aliases[key] : undefined) ?? suggestKey(key, known);
      return `unknown option "${key}"${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`;
    })
    .join('; ');
}
