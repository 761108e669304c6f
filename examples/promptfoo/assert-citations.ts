/**
 * A promptfoo assertion (`type: javascript`, `value: file://assert-citations.ts`): the answer's `[n]` refs and
 * quotes checked against the pack the test carries (`vars.pack`) with litm-pack's `checkAnswerCitations`.
 * Passes when every ref exists, every quote occurs in the item it cites and every sentence cites something;
 * the score is the share of quotes found. promptfoo loads this file through tsx, so it runs the sources as they are.
 */
import { checkAnswerCitations } from '../../src/llm/answer.js';
import type { CitablePack } from '../../src/llm/anthropic.js';

interface AssertionContext {
  vars: { pack?: CitablePack };
}

export default function assertCitations(output: string, context: AssertionContext) {
  if (context.vars.pack === undefined) return { pass: false, score: 0, reason: 'the test has no vars.pack to check the answer against' };
  const check = checkAnswerCitations(context.vars.pack, output);
  const found = check.quotes.filter((q) => q.found).length;
  const problems = [
    ...check.unknownRefs.map((ref) => `[${ref}] is not a source of the pack`),
    ...check.quotes.filter((q) => !q.found).map((q) => `quote "${q.text}" is not in source [${q.ref ?? '-'}]`),
    ...check.uncitedSentences.map((s) => `uncited: ${s}`),
  ];
  return {
    pass: check.ok && check.refs.length > 0,
    score: check.quotes.length === 0 ? (check.ok ? 1 : 0) : found / check.quotes.length,
    reason:
      check.refs.length === 0
        ? 'the answer cites no source'
        : problems.length === 0
          ? `${check.refs.length} refs, ${found} quotes found`
          : problems.join('; '),
  };
}
