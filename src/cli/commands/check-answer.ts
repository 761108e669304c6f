import type { Command } from 'commander';
import { LitmPackError } from '../../base/errors.js';
import { checkAnswerCitations, resolveAnswer, type AnswerCheck, type CitedAnswer } from '../../llm/answer.js';
import { hasAnthropicCitations } from '../../llm/resolve.js';
import type { CitablePack } from '../../llm/anthropic.js';
import { readStdin, readUserFile, stdout } from '../io.js';
import { visibleLine } from '../terminal.js';
import { CommandExit } from './verify.js';

/** Exit code when the answer fails the check (an unknown ref, a quote not in its source, an uncited sentence, an unverified citation). */
const ANSWER_PROBLEM_EXIT_CODE = 3;

/** The pack file's JSON; checked against the pack schema by the functions it is given to. */
function readPack(input: string, path: string): CitablePack {
  try {
    return JSON.parse(input) as CitablePack;
  } catch (error) {
    throw new LitmPackError(
      'invalid_input',
      `${path} is not JSON (a pack as litm-pack bundle --json prints it): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** An answer file holding a Messages API response (or its content array) with citations; else the answer is text. */
function anthropicAnswer(answer: string): unknown {
  const trimmed = answer.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    const value = JSON.parse(answer) as unknown;
    return hasAnthropicCitations(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const shorten = (text: string, length = 80) => {
  const flat = text.replace(/\s+/gu, ' ').trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
};

function printCheck(check: AnswerCheck): void {
  const out = stdout();
  out.write(`Refs: ${check.refs.length === 0 ? 'none' : check.refs.map((r) => `[${r.ref}] ${r.known ? 'ok' : 'UNKNOWN'}`).join(', ')}\n`);
  if (check.quotes.length > 0) {
    out.write('Quotes:\n');
    for (const q of check.quotes)
      out.write(`  ${q.found ? 'found    ' : 'NOT FOUND'}  ${q.ref === null ? '[-]' : `[${q.ref}]`} "${visibleLine(shorten(q.text))}"\n`);
  }
  if (check.uncitedSentences.length > 0) {
    out.write('Uncited sentences:\n');
    for (const sentence of check.uncitedSentences) out.write(`  - ${visibleLine(shorten(sentence))}\n`);
  }
  const problems = check.unknownRefs.length + check.quotes.filter((q) => !q.found).length + check.uncitedSentences.length;
  out.write(check.ok ? 'Answer check: ok\n' : `Answer check: ${problems} problem${problems === 1 ? '' : 's'}\n`);
}

function printResolved(answer: CitedAnswer): void {
  const out = stdout();
  const citations = answer.blocks.flatMap((b) => b.citations);
  for (const c of citations) {
    const where = c.spans.map((s) => `${s.start}-${s.end}`).join(',');
    const status = c.verified ? 'verified' : `NOT VERIFIED (${c.problem ?? 'unknown'})`;
    out.write(
      `  ${c.ref === null ? '[-]' : `[${c.ref}]`} ${visibleLine(c.sourceId ?? '-')}${where === '' ? '' : ` chars ${where}`} ${visibleLine(status)}: "${visibleLine(shorten(c.citedText))}"\n`,
    );
  }
  const bad = citations.filter((c) => !c.verified).length;
  out.write(answer.verified ? `Citations: ${citations.length} verified\n` : `Citations: ${bad} of ${citations.length} not verified\n`);
}

export function registerCheckAnswer(program: Command): void {
  program
    .command('check-answer')
    .description(
      `check a model's answer against its pack: [n] refs, quotes, uncited sentences; or resolve a Messages API response's citations (exit ${ANSWER_PROBLEM_EXIT_CODE} when the answer fails)`,
    )
    .argument('[answer]', 'the answer: text citing [n], or a Messages API response (JSON) with citations; stdin when absent')
    .requiredOption('--pack <file>', 'the pack the answer was given (canonical JSON, as bundle --json prints it)')
    .option('--json', 'print the check as JSON')
    .action(async (file: string | undefined, flags: { pack: string; json?: boolean }) => {
      const pack = readPack(await readUserFile(flags.pack), flags.pack);
      const answer = file === undefined || file === '-' ? await readStdin() : await readUserFile(file);
      const response = anthropicAnswer(answer);
      let passed: boolean;
      if (response !== undefined) {
        const resolved = resolveAnswer(pack, response);
        passed = resolved.verified;
        if (flags.json === true) stdout().write(`${JSON.stringify(resolved)}\n`);
        else printResolved(resolved);
      } else {
        const check = checkAnswerCitations(pack, answer);
        passed = check.ok;
        if (flags.json === true) stdout().write(`${JSON.stringify(check)}\n`);
        else printCheck(check);
      }
      if (!passed) throw new CommandExit(ANSWER_PROBLEM_EXIT_CODE);
    });
}
