/**
 * Indexed text vs cited text: what a chunk is found by (its BM25 vector and its embedding) and what it says (its
 * `text`, spans and hash) are two things. A reader sees a chunk under its document's title and heading path, so
 * words that appear only there ("onboarding" in the title, "pipeline" in `## The pipeline`, an e-mail's subject
 * and sender, which the e-mail loader puts in the title) must find it; the chunk's own bytes stay what is cited.
 *
 * A recipe names how the indexed text is built, and both stores record the one their index was built with (the
 * embedded store in its file, Qdrant in the collection's metadata), so a store never mixes two recipes and a
 * store built the old way says how to re-index instead of silently ranking by something else.
 */
import { z } from 'zod';
import { sha256Hex } from '../base/canonical.js';

/**
 * `chunk-text`: the chunk's text alone (every store written before recipes were recorded).
 * `title-headings@1`: the document title and the heading path, one line each, then a blank line and the text.
 */
export const INDEXED_TEXT_RECIPES = ['chunk-text', 'title-headings@1'] as const;
export const IndexedTextRecipeSchema = z.enum(INDEXED_TEXT_RECIPES);
export type IndexedTextRecipe = z.infer<typeof IndexedTextRecipeSchema>;

/** The recipe new stores index with. */
export const CURRENT_INDEXED_TEXT: IndexedTextRecipe = 'title-headings@1';
/** What a store that records no recipe was built with. */
export const LEGACY_INDEXED_TEXT: IndexedTextRecipe = 'chunk-text';

/** The parts of a chunk record its indexed text is made of. */
export interface IndexedTextParts {
  readonly text: string;
  readonly title?: string | undefined;
  readonly section: readonly string[];
}

const sameWords = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** Whether `text`, past its leading whitespace, starts with `title` (case aside): read in place, the text is long. */
function startsWithWords(text: string, title: string): boolean {
  let at = 0;
  while (at < text.length && /\s/u.test(text[at] ?? '')) at += 1;
  return sameWords(text.slice(at, at + title.length), title);
}

/**
 * The text a chunk is indexed by under `recipe`. With `title-headings@1`: the title, unless empty or the text
 * already starts with it (a loader that keeps the title line in the text); the heading path joined by " > ",
 * without a heading that repeats the title (a markdown H1 usually is the title) or is empty; then the text. A
 * chunk with neither is indexed by its text alone, so documents without titles or headings index as before.
 */
export function indexedTextOf(parts: IndexedTextParts, recipe: IndexedTextRecipe): string {
  if (recipe === 'chunk-text') return parts.text;
  const title = parts.title?.trim() ?? '';
  const head: string[] = [];
  if (title !== '' && !startsWithWords(parts.text, title)) head.push(title);
  const path = parts.section
    .map((heading) => heading.trim())
    .filter((heading) => heading !== '' && !(title !== '' && sameWords(heading, title)));
  if (path.length > 0) head.push(path.join(' > '));
  return head.length === 0 ? parts.text : `${head.join('\n')}\n\n${parts.text}`;
}

/**
 * The key a stored embedding is reused by: the sha256 of the indexed text (`textSha256` itself when the indexed
 * text is the chunk's text), so a chunk whose title or headings changed is embedded again.
 */
export function indexedTextKey(parts: IndexedTextParts & { readonly textSha256: string }, recipe: IndexedTextRecipe): string {
  const indexed = indexedTextOf(parts, recipe);
  return indexed === parts.text ? parts.textSha256 : sha256Hex(indexed);
}

/** What to tell the owner of a store indexed with `recipe` when it is not the current one (null when it is). */
export function reindexAdvice(recipe: IndexedTextRecipe, how: string): string | null {
  if (recipe === CURRENT_INDEXED_TEXT) return null;
  return (
    `This store's index was built with the indexed-text recipe "${recipe}" (chunk text alone): words that appear only in a ` +
    `document's title or headings (or an e-mail's subject) do not find its chunks. It still works as it was built; ` +
    `to index with "${CURRENT_INDEXED_TEXT}", ${how}`
  );
}
