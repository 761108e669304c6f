import { CandidateSchema, type Candidate } from '../core/schemas.js';
import { describeIssues, LitmPackError } from '../base/errors.js';

/**
 * Parses candidates given as a JSON array or as JSON lines. Errors name the line (JSON lines) or the
 * array index, and the field, so a harness can fix its input.
 */
export function parseCandidates(input: string): Candidate[] {
  const trimmed = input.trim();
  if (trimmed === '') return [];
  if (trimmed.startsWith('[')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      throw new LitmPackError('invalid_input', `Input is not valid JSON: ${(error as Error).message}`, { cause: error });
    }
    if (!Array.isArray(value)) throw new LitmPackError('invalid_input', 'Input must be a JSON array of candidates or JSON lines');
    return value.map((item, index) => parseOne(item, `candidate ${index}`, { index }));
  }
  const out: Candidate[] = [];
  const lines = input.split('\n');
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new LitmPackError('invalid_input', `line ${index + 1}: not valid JSON (${(error as Error).message})`, {
        cause: error,
        details: { line: index + 1 },
      });
    }
    out.push(parseOne(value, `line ${index + 1}`, { line: index + 1 }));
  });
  return out;
}

function parseOne(value: unknown, where: string, details: Record<string, unknown>): Candidate {
  const result = CandidateSchema.safeParse(value);
  if (result.success) return result.data;
  throw new LitmPackError('invalid_input', `${where}: ${describeIssues(result.error.issues)}`, {
    issues: result.error.issues,
    cause: result.error,
    details,
  });
}
