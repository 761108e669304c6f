// Sentence selection inside packing (`compress: { mode: 'sentences' }`): each candidate shows its selected
// sentences, and the budget is shared out sentence by sentence before the fill.
import { escapeBody } from '../render/escape.js';
import type { Entry } from './fill.js';
import { ELISION_TOKENS, SEPARATOR_TOKENS, sentenceTokens, type Meter } from './meter.js';
import type { Candidate, ParsedPackOptions } from './schemas.js';
import { selectSentences } from './sentences.js';

/**
 * Under selection the budget is shared out sentence by sentence before the fill: the most valuable next
 * sentence of any candidate is taken while the (estimated) budget lasts, where value is the sentence's
 * relevance plus `spread` for a candidate's first sentence. `spread` 1 gives every candidate its best sentence
 * before any gets a second (many sources, one sentence each); 0 follows relevance alone. Each selection is
 * narrowed to its share; the fill then runs as usual (it counts exactly, and cuts or drops what does not fit).
 */
export function allocateSentences(entries: Entry[], meter: Meter, available: number, spread: number): Entry[] {
  // Headers and sentence counts are measured when a candidate's turn comes: at a tight budget most never get one.
  const plans = entries.map((entry) => {
    const selection = entry.selection;
    if (selection === undefined) return null;
    const texts = selection.byPriority;
    let header: number | undefined;
    return {
      size: texts.length,
      // Only whether a sentence fits what is left is asked: its count may stop past that.
      cost: (position: number, limit: number) => sentenceTokens(meter, texts[position] as string, limit),
      header: () => (header ??= meter.headerTokens(meter.headerText(entry.candidate))),
      relevance: selection.relevance,
      count: 0,
      blocked: false,
    };
  });
  let remaining = available;
  // Candidates without a selection (pins, blank text) are taken whole or cut by the fill, before their turn.
  entries.forEach((entry, index) => {
    if (plans[index] !== null) return;
    // Takes what it costs, or all that is left: a count past what is left need not be finished.
    const left = Math.max(0, remaining);
    const whole =
      meter.headerTokens(meter.headerText(entry.candidate)) + meter.countUpTo(escapeBody(meter.format, entry.candidate.text), left);
    remaining -= Math.min(whole + SEPARATOR_TOKENS, left);
  });
  // Greedy by value: a sentence's relevance, plus `spread` for a candidate's first sentence; ties go to the
  // better-ranked candidate (entries come in fill order).
  for (;;) {
    let best = -1;
    let bestValue = -Infinity;
    plans.forEach((plan, index) => {
      if (plan === null || plan.blocked || plan.count >= plan.size) return;
      const value = (plan.relevance[plan.count] as number) + (plan.count === 0 ? spread : 0);
      if (value > bestValue) {
        bestValue = value;
        best = index;
      }
    });
    const plan = plans[best];
    if (plan === undefined || plan === null) break;
    const sentence = plan.cost(plan.count, Math.max(0, remaining));
    // The header is measured only when the sentence alone leaves room for it.
    const cost =
      plan.count > 0
        ? sentence + ELISION_TOKENS
        : sentence + SEPARATOR_TOKENS > remaining
          ? Infinity
          : sentence + plan.header() + SEPARATOR_TOKENS;
    if (cost > remaining) {
      // A candidate whose next sentence does not fit takes no more: its later sentences would read out of order.
      plan.blocked = true;
      continue;
    }
    plan.count += 1;
    remaining -= cost;
  }
  return entries.map((entry, index) => {
    const plan = plans[index];
    if (plan === null || plan === undefined || entry.selection === undefined) return entry;
    // A candidate that got no sentence keeps its whole selection; the fill will most likely drop it on a bound.
    if (plan.count === 0) return entry;
    const selection = entry.selection.narrowed(plan.count);
    const candidate: Candidate = { ...entry.candidate, text: selection.text };
    // The exact count the fill would compute, remembered (a hint applies only where escaping changes nothing).
    if (escapeBody(meter.format, selection.text) === selection.text) {
      candidate.tokens = { [meter.tokenizer.name]: sentenceTokens(meter, selection.text) };
    }
    return { ...entry, candidate, selection, narrowed: selection !== entry.selection };
  });
}

/** With `compress`, candidates show their selected sentences (pins stay whole); otherwise entries as they are. */
export function selectEntries(entries: Entry[], options: ParsedPackOptions): Entry[] {
  const { compress } = options;
  if (compress === undefined) return entries;
  const selections = selectSentences(
    options.query,
    entries.map((e) => e.candidate.text),
    compress,
    entries.map((e) => e.pinned),
  );
  return entries.map((entry, index) => {
    const selection = selections[index];
    if (selection === null || selection === undefined) return entry;
    // The token hint counts the whole text; the selected text is counted afresh.
    const { tokens: _hint, ...candidate } = entry.candidate;
    return { ...entry, candidate: { ...candidate, text: selection.text }, selection };
  });
}
