/**
 * Canonical packing for evaluation: the same candidates, in any order, give the same bytes. Packs a fixed
 * candidate set twice (the second time shuffled), prints the canonical JSON of each and its sha256, and
 * exits 1 if they differ.
 *
 *   npx tsx examples/eval-harness.ts
 */
import { createHash } from 'node:crypto';
import { packBundle, toCanonicalJson, type CandidateInput } from '../src/index.js';

const candidates: CandidateInput[] = [
  {
    id: 'refunds#1',
    sourceId: 'refunds.md',
    version: 'v3',
    score: 0.91,
    similarity: 0.72,
    text: 'Refunds are paid to the original payment method within 14 days of the return arriving.',
  },
  {
    id: 'returns#1',
    sourceId: 'returns.md',
    version: 'v2',
    score: 0.84,
    similarity: 0.66,
    text: 'Returns are accepted within 30 days with the receipt. Refunds follow inspection.',
  },
  { id: 'giftcards#1', sourceId: 'giftcards.md', score: 0.77, similarity: 0.58, text: 'Gift cards are never refunded and do not expire.' },
  {
    id: 'refunds#1-copy',
    sourceId: 'mirror/refunds.md',
    score: 0.7,
    similarity: 0.7,
    text: 'Refunds are paid to the original payment method within 14 days of the return arriving.',
  },
  {
    id: 'warranty#1',
    sourceId: 'warranty.md',
    score: 0.62,
    similarity: 0.49,
    text: 'The warranty covers defects for two years; a defective item is repaired, replaced or refunded.',
  },
  {
    id: 'shipping#1',
    sourceId: 'shipping.md',
    score: 0.62,
    similarity: 0.31,
    text: 'Shipping is free above 50 euros. Express shipping costs 9 euros and takes one day.',
  },
];

/** A fixed permutation (no randomness: the harness itself must be reproducible). */
const shuffled = [candidates[4], candidates[1], candidates[5], candidates[0], candidates[3], candidates[2]] as CandidateInput[];

const options = { query: 'How are refunds paid?', maxTokens: 120, encoding: 'o200k_base' as const };
const pack = packBundle({ ...options, candidates });
const first = toCanonicalJson(pack);
const second = toCanonicalJson(packBundle({ ...options, candidates: shuffled }));
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

console.log('Run 1 (input order):');
console.log(first);
console.log(`sha256 ${sha256(first)}\n`);
console.log('Run 2 (shuffled input):');
console.log(second);
console.log(`sha256 ${sha256(second)}\n`);

if (first !== second) {
  console.error('MISMATCH: the same candidates gave different bytes');
  process.exit(1);
}
console.log(`Identical: ${Buffer.byteLength(first)} bytes, sha256 ${sha256(first)} (packHash ${pack.packHash})`);
