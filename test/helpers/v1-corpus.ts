// The corpus of test/fixtures/memory-store-v1.json: a store file written by litm-pack before the columnar store
// (format litm-pack/memory-store@1, commit 130c00b) with `FakeEmbeddings({ dimension: 8 })` and FIXED_NOW.
import type { IngestDocument } from '../../src/store/schemas.js';

export const V1_NOW = () => new Date('2024-05-01T12:00:00.000Z');

export const V1_DOCS: IngestDocument[] = [
  {
    id: 'handbook/refunds.md',
    version: 'v3',
    title: 'Refunds',
    url: 'https://example.test/refunds',
    text: '# Refunds\n\nRefunds are paid within fourteen days.\n\n## Receipts\n\nKeep the receipt; refunds without one take longer.',
    clusters: ['support'],
    kind: 'insight',
  },
  {
    id: 'handbook/shipping.md',
    version: 'v1',
    text: 'Parcels ship on weekdays. Refunds for lost parcels follow the refund policy.',
    metadata: { lang: 'en', team: { name: 'logistics' } },
    timestamp: '2024-03-01T00:00:00Z',
  },
  {
    id: 'hr/salaries.md',
    version: 'v2',
    acl: ['hr'],
    text: '# Salaries\n\nSalary bands are reviewed in March. Refunds of travel costs go through payroll.',
  },
  {
    id: 'eng/roadmap.md',
    acl: ['eng', 'leads'],
    text: 'The roadmap names the refund service rewrite for the third quarter.',
    clusters: ['planning', 'support'],
  },
  { id: 'empty.md', version: 'v0', text: '' },
];
