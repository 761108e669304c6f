// MCP resources on the Qdrant engine, as on the embedded store: a page of a source from an offset, a span cut
// from the chunks that overlap it (both read through range filters on the chunks' spans), and the listing of
// the sources an anonymous caller may read.
import { expect, it } from 'vitest';
import { listSources, readSource } from '../../src/mcp/resources.js';
import { QdrantHybridStore } from '../../src/qdrant/qdrant-hybrid-store.js';
import { PUBLIC_DOCS, RESTRICTED_DOCS } from '../helpers/serve-fixtures.js';
import { clock, collectionNames, url } from './helpers.js';

const name = collectionNames('litm_mcp_resources');

it('reads pages and spans of a source and lists what the caller may read', async () => {
  const store = new QdrantHybridStore({ url, collection: name('r'), vectorSize: 8, now: clock() });
  await store.ensureCollection();
  await store.addDocuments([...PUBLIC_DOCS, ...RESTRICTED_DOCS]);
  const chunks = await store.getChunks({ sourceIds: ['handbook/refunds.md'] });
  expect(chunks.length).toBeGreaterThan(1);
  const whole = await readSource(store, 'litm://sources/handbook%2Frefunds.md', []);
  expect(whole.text).toBe(chunks.map((c) => c.text).join('\n\n'));
  const second = chunks[1]!;
  const page = await readSource(store, `litm://sources/handbook%2Frefunds.md?from=${second.span.start}`, []);
  expect(page.text).toBe(
    chunks
      .slice(1)
      .map((c) => c.text)
      .join('\n\n'),
  );
  const span = await readSource(store, `litm://sources/handbook%2Frefunds.md?start=${second.span.start}&end=${second.span.start + 10}`, []);
  expect(span.text).toBe(second.text.slice(0, 10));
  const anonymous = await listSources(store, [], undefined, 100);
  expect(anonymous.sources.map((s) => s.sourceId)).toEqual(PUBLIC_DOCS.map((d) => d.id).sort());
  const hr = await listSources(store, ['hr'], undefined, 2);
  expect(hr.sources).toHaveLength(2);
  const rest = await listSources(store, ['hr'], hr.next, 2);
  expect([...hr.sources, ...rest.sources].map((s) => s.sourceId)).toEqual([
    'handbook/refunds.md',
    'handbook/shipping.md',
    'hr/salaries.md',
    'notes/long-context.md',
  ]);
});
