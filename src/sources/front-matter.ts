// Markdown front matter: `title:`, `version:`, `url:`, `timestamp:`, `acl:`, `clusters:` and `kind:` set an
// ingested document's fields (the markdown loader of loadDocuments, and so `litm-pack ingest`, reads it).
import { createRequire } from 'node:module';
import { z } from 'zod';
import { LitmPackError, describeIssues } from '../base/errors.js';
import { TimestampSchema } from '../core/schemas.js';

export interface FrontMatter {
  title?: string;
  version?: string;
  url?: string;
  /** ISO 8601 date or date-time (a YAML date is read as its text). */
  timestamp?: string;
  /** Principals allowed to read the document. */
  acl?: string[];
  clusters?: string[];
  kind?: string;
}

// The block's fences are found here rather than by a front-matter package: those bundle an old YAML
// parser and do not say where the block ends, which is needed to keep chunk spans file offsets.
const BLOCK = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

// The YAML parser is loaded on the first front-matter block, not when the package is imported: most
// processes never read one, and loading it costs about 20 ms of every `import('litm-pack')`.
let yamlParse: typeof import('yaml').parse | undefined;
function parseYaml(source: string): unknown {
  yamlParse ??= (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse;
  return yamlParse(source, { schema: 'core' });
}

// An empty list would be ambiguous: readable by no one, or (as a missing acl) by everyone?
const principals = z.union(
  [
    z.string().min(1),
    z
      .array(z.string().min(1, 'acl principals must be non-empty strings'))
      .min(1, 'acl must name at least one principal; omit it for a document everyone may read'),
  ],
  { message: 'acl principals must be a name or a list of names' },
);

const FrontMatterSchema = z.looseObject({
  // A number would lose digits (YAML reads 1.10 as 1.1): quoting it keeps it as written.
  version: z.string({ message: 'version must be a string (quote it: version: "1.10")' }).min(1).optional(),
  url: z.string({ message: 'url must be a string' }).min(1).optional(),
  timestamp: TimestampSchema.optional(),
  acl: principals.optional(),
  clusters: z
    .union([z.string().min(1), z.array(z.string().min(1, 'cluster names must be non-empty strings'))], {
      message: 'clusters must be a name or a list of names',
    })
    .optional(),
  kind: z.string({ message: 'kind must be a string' }).min(1).optional(),
  title: z.string({ message: 'title must be a string' }).min(1).optional(),
});

/**
 * Reads a YAML front-matter block at the start of a markdown file. The block is blanked (every character
 * but line breaks becomes a space) rather than cut, so chunk spans stay offsets into the file. Keys other
 * than those of `FrontMatter` are not indexed. A malformed block is `invalid_input` naming `where`.
 */
export function readFrontMatter(text: string, where: string): { text: string; frontMatter: FrontMatter } {
  const match = BLOCK.exec(text);
  if (!match) return { text, frontMatter: {} };
  let data: unknown;
  try {
    // YAML 1.2 core schema: dates stay strings, nothing executes.
    data = parseYaml(match[1] ?? '');
  } catch (error) {
    throw new LitmPackError('invalid_input', `Front matter of ${where} is not valid YAML: ${(error as Error).message.split('\n')[0]}`, {
      cause: error,
      details: { path: where },
    });
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new LitmPackError('invalid_input', `Front matter of ${where} must be a mapping of keys to values`, { details: { path: where } });
  }
  const parsed = FrontMatterSchema.safeParse(data);
  if (!parsed.success) {
    throw new LitmPackError('invalid_input', `Front matter of ${where}: ${describeIssues(parsed.error.issues)}`, {
      issues: parsed.error.issues,
      details: { path: where },
    });
  }
  const frontMatter: FrontMatter = {};
  const { clusters, kind, title, version, url, timestamp, acl } = parsed.data;
  if (title !== undefined) frontMatter.title = title;
  if (version !== undefined) frontMatter.version = version;
  if (url !== undefined) frontMatter.url = url;
  if (timestamp !== undefined) frontMatter.timestamp = timestamp;
  if (acl !== undefined) frontMatter.acl = typeof acl === 'string' ? [acl] : acl;
  if (clusters !== undefined) frontMatter.clusters = typeof clusters === 'string' ? [clusters] : clusters;
  if (kind !== undefined) frontMatter.kind = kind;
  const blanked = match[0].replace(/[^\r\n]/g, ' ');
  return { text: blanked + text.slice(match[0].length), frontMatter };
}
