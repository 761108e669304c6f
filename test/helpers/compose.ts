// Reading docker-compose.yml as Compose does, for the tests of the shipped file: the `include`d files merged
// in, and `${...}` in strings interpolated by the Compose specification's rules (`$$` is a dollar, `${VAR}` and
// `$VAR`, `${VAR:-default}` when unset or empty, `${VAR-default}` when unset, `${VAR:?error}` refuses when unset
// or empty, `${VAR?error}` when unset). Compose interpolates every service of a file, whichever it starts.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
}

export interface ComposeFile {
  include?: string[];
  services: Record<string, ComposeService>;
}

/** What Compose says when a `${VAR:?error}` refuses. */
export class ComposeInterpolationError extends Error {}

export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])((?:[^}])*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/gu,
    (match, braced, colon, op, arg, bare) => {
      if (match === '$$') return '$';
      const name = (braced ?? bare) as string;
      const value = env[name];
      const missing = value === undefined || (colon === ':' && value === '');
      if (op === '-') return missing ? (arg as string) : value;
      if (op === '?') {
        if (missing) throw new ComposeInterpolationError(`required variable ${name} is missing a value: ${arg as string}`);
        return value;
      }
      return value ?? '';
    },
  );
}

function interpolateAll(value: unknown, env: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, env));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateAll(item, env)]));
  }
  return value;
}

/** The file with its included files' services merged in, interpolated with `env`. */
export function loadCompose(path: string, env: Readonly<Record<string, string | undefined>>): ComposeFile {
  const file = interpolateAll(parse(readFileSync(path, 'utf8')), env) as ComposeFile;
  const services: Record<string, ComposeService> = {};
  for (const included of file.include ?? []) Object.assign(services, loadCompose(resolve(dirname(path), included), env).services);
  return { ...file, services: { ...services, ...file.services } };
}

export const REPOSITORY = resolve(import.meta.dirname, '../..');
export const composePath = (name = 'docker-compose.yml'): string => join(REPOSITORY, name);
