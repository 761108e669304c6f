// On the Qdrant engine, as on the embedded store: a read without principals is anonymous (documents without an
// ACL only), on every door (the store, the pipeline, both frameworks' retrievers, verification, MCP resources);
// a full view is asked for with `principals: 'all'`.
import { describe, expect, it } from 'vitest';
import { assembleBriefing, assembleBundle, verifyCitations } from '../../src/index.js';
import { BundleRetriever as LangChainBundle } from '../../src/langchain/index.js';
import { BundleRetriever as LlamaIndexBundle } from '../../src/llamaindex/index.js';
import { readSource } from '../../src/mcp/resources.js';
import { QdrantHybridStore } from '../../src/qdrant/index.js';
import { ENG_MARKER, HR_MARKER, PUBLIC_DOCS, RESTRICTED_DOCS } from '../helpers/serve-fixtures.js';
import { clock, collectionNames, failure, url } from './helpers.js';

const name = collectionNames('litm_default_access');
const readsRestricted = (texts: string[]) => texts.some((text) => text.includes(HR_MARKER) || text.includes(ENG_MARKER));
const QUERY = `refunds ${HR_MARKER} ${ENG_MARKER} shipping`;

describe('QdrantHybridStore: no principals means anonymous', () => {
  it('on every door; principals "all" is the full view', async () => {
    const store = new QdrantHybridStore({ url, collection: name('acl'), vectorSize: 8, now: clock() });
    await store.ensureCollection();
    await store.addDocuments([...PUBLIC_DOCS, ...RESTRICTED_DOCS]);

    expect(readsRestricted((await store.search({ text: QUERY, mode: 'lexical', limit: 50 })).map((c) => c.text))).toBe(false);
    expect(readsRestricted((await store.getChunks({ filter: { must: [] } })).map((c) => c.text))).toBe(false);
    expect(readsRestricted((await assembleBundle({ store, query: QUERY, mode: 'lexical' })).pack.items.map((i) => i.text))).toBe(false);
    const briefing = await assembleBriefing({ store, prompt: QUERY, pins: ['hr/salaries.md'], mode: 'lexical' });
    expect(readsRestricted(briefing.pack.items.map((i) => i.text))).toBe(false);
    expect(briefing.pack.briefing?.missingPins).toEqual(['hr/salaries.md']);
    expect(readsRestricted((await new LangChainBundle({ store, mode: 'lexical' }).invoke(QUERY)).map((d) => d.pageContent))).toBe(false);
    expect(
      readsRestricted((await new LlamaIndexBundle({ store, mode: 'lexical' }).retrieveWithCitations(QUERY)).pack.items.map((i) => i.text)),
    ).toBe(false);
    await failure(readSource(store, 'litm://sources/hr%2Fsalaries.md', []), 'not_found');
    expect((await readSource(store, 'litm://sources/hr%2Fsalaries.md', ['hr'])).text).toContain(HR_MARKER);

    const all = await assembleBundle({ store, query: QUERY, mode: 'lexical', principals: 'all' });
    expect(readsRestricted(all.pack.items.map((i) => i.text))).toBe(true);
    const checks = await verifyCitations({ store, citations: all.pack.citations });
    expect(
      checks
        .filter((check) => check.sourceId.startsWith('hr/') || check.sourceId.startsWith('eng/'))
        .every((check) => check.status === 'missing'),
    ).toBe(true);
    expect(
      (await verifyCitations({ store, citations: all.pack.citations, principals: 'all' })).every((check) => check.status === 'current'),
    ).toBe(true);
  });
});
