import { MemoryHybridStore, type IngestDocument } from '../../src/index.js';
import { ApiKeys } from '../../src/server/auth.js';
import { FakeEmbeddings } from './fake-embeddings.js';

/** Documents every caller may read. */
export const PUBLIC_DOCS: IngestDocument[] = [
  {
    id: 'handbook/refunds.md',
    title: 'Refund policy',
    version: 'v3',
    clusters: ['support'],
    text:
      '# Refund policy\n\nRefunds are issued within 14 days of a return being received. The refund goes to the original payment method.\n\n' +
      '## Exceptions\n\nGift cards are never refunded. Refunds for damaged goods need a photo of the damage.',
  },
  {
    id: 'handbook/shipping.md',
    title: 'Shipping',
    version: 'v1',
    clusters: ['support', 'logistics'],
    text: '# Shipping\n\nShipping is free above 50 euros. Express shipping costs 9 euros and takes one day. Returns ship free with the prepaid label.',
  },
  {
    id: 'notes/long-context.md',
    title: 'Long contexts',
    text: '# Long contexts\n\nModels attend best to the start and the end of a long context; passages in the middle are used least. Put the best passage first.',
  },
];

/** Text only principal `hr` may read; its marker word appears nowhere else. */
export const HR_MARKER = 'zephyrine';
/** Text only principal `eng` may read. */
export const ENG_MARKER = 'quasarith';

export const RESTRICTED_DOCS: IngestDocument[] = [
  {
    id: 'hr/salaries.md',
    title: 'Salary refunds',
    acl: ['hr'],
    clusters: ['support', 'payroll'],
    text: `# Salary refunds\n\nRefunds of salary advances follow the ${HR_MARKER} schedule. Refunds are confidential and refunds are netted monthly.`,
  },
  {
    id: 'eng/roadmap.md',
    title: 'Roadmap',
    acl: ['eng'],
    text: `# Roadmap\n\nThe ${ENG_MARKER} shipping service replaces express shipping next quarter. Shipping refunds move to the new service.`,
  },
];

export const FIXED_NOW = () => new Date('2024-01-01T00:00:00.000Z');

/** A store over the public documents, optionally with the restricted ones too. */
export async function fixtureStore(options: { restricted: boolean; idfCorpus?: 'all' | 'visible'; embeddings?: boolean }): Promise<MemoryHybridStore> {
  const store = new MemoryHybridStore({
    now: FIXED_NOW,
    ...(options.embeddings === false ? {} : { embeddings: new FakeEmbeddings() }),
    ...(options.idfCorpus === undefined ? {} : { idfCorpus: options.idfCorpus }),
  });
  await store.addDocuments([...PUBLIC_DOCS, ...(options.restricted ? RESTRICTED_DOCS : [])]);
  return store;
}

/** API keys of the tests: alice reads `hr`, bob reads `eng`, carol has a key and no principals. */
export const KEYS = {
  alice: 'alice-key-0123456789abcdef',
  bob: 'bob-key-0123456789abcdef',
  carol: 'carol-key-0123456789abcdef',
} as const;

export function fixtureKeys(): ApiKeys {
  return new ApiKeys({
    keys: [
      { id: 'alice', key: KEYS.alice, principals: ['hr'] },
      { id: 'bob', key: KEYS.bob, principals: ['eng'] },
      { id: 'carol', key: KEYS.carol, principals: [] },
    ],
  });
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
