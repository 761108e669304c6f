// Writes the generated files of examples/mixed: a PDF manual (pdf-lib), e-mails composed by nodemailer's
// MailComposer (one .eml with a PDF attachment, an mbox of a thread). The other files there are written as
// they are. Run: npx tsx scripts/make-mixed-corpus.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeEmail, makeMbox, makePdf } from '../test/helpers/real-files.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../examples/mixed');
mkdirSync(join(root, 'mail'), { recursive: true });

const manual = await makePdf(
  [
    ['Operations manual', 'This manual covers how the payment service is run: deploys, incidents and refunds.'],
    [
      'Incidents',
      'An incident is declared when a customer-facing error rate stays above 2% for five minutes.',
      'The incident commander owns communication; the on-call engineer owns the fix.',
    ],
    [
      'Refunds',
      'Refunds are paid back to the original payment method within 14 days of approval.',
      'Refund webhooks from the payment provider are retried with exponential backoff and jitter, at most 8 times.',
    ],
  ],
  'Payment service operations manual',
);
writeFileSync(join(root, 'manual.pdf'), manual);

const terms = await makePdf(
  [
    [
      'Contract renewal terms',
      'The renewal runs for 24 months from 1 April 2024.',
      'Prices rise by 3% at the start of the renewal; support response times stay at 4 hours.',
    ],
  ],
  'Renewal terms 2024',
);
const renewal = await makeEmail({
  from: 'Alice Martin <alice@acme.com>',
  to: 'you@example.com',
  subject: 'Contract renewal',
  date: new Date('2024-03-15T09:30:00Z'),
  messageId: '<renewal-2024@acme.com>',
  text: 'Hi,\n\nthe renewal terms for next year are attached. The main change is the 24-month term.\n\nBest,\nAlice',
  attachments: [{ filename: 'renewal-terms.pdf', content: Buffer.from(terms), contentType: 'application/pdf' }],
});
writeFileSync(join(root, 'mail/renewal.eml'), renewal);

const question = await makeEmail({
  from: 'Sam Lee <sam@example.com>',
  to: 'ops@example.com',
  subject: 'Webhook retries',
  date: new Date('2024-04-02T14:00:00Z'),
  messageId: '<webhooks-1@example.com>',
  text: 'How many times do we retry a refund webhook before giving up?\n\nSam',
});
const answer = await makeEmail({
  from: 'Dana Kim <dana@example.com>',
  to: 'sam@example.com',
  subject: 'Re: Webhook retries',
  date: new Date('2024-04-02T15:10:00Z'),
  messageId: '<webhooks-2@example.com>',
  inReplyTo: '<webhooks-1@example.com>',
  references: ['<webhooks-1@example.com>'],
  text: 'Eight times, with exponential backoff and full jitter; after that the refund goes to the manual queue.\n\nFrom the runbook: never retry in lockstep.\n\nDana',
});
writeFileSync(
  join(root, 'mail/inbox.mbox'),
  makeMbox([
    { from: 'sam@example.com', date: new Date('2024-04-02T14:00:00Z'), raw: question },
    { from: 'dana@example.com', date: new Date('2024-04-02T15:10:00Z'), raw: answer },
  ]),
);
console.log(`wrote ${root}/manual.pdf, mail/renewal.eml, mail/inbox.mbox`);
