import { describe, expect, it } from 'vitest';
import { isLitmPackError, packBundle, MemoryHybridStore, type IngestDocument, CitationCheckSchema, verifyCitations } from '../src/index.js';

const policy = [
  '# Refund policy',
  'Refunds are issued within 14 days of a return being received.',
  'Gift cards are never refunded under any circumstances.',
  '## Shipping',
  'Parcels leave the warehouse within two working days of the order.',
].join('\n\n');

const docs: IngestDocument[] = [
  { id: 'policy.md', version: 'v1', text: policy },
  { id: 'legal.md', version: 'v1', acl: ['legal'], text: 'The merger closes in June; refunds of the acquired shop follow its old policy.' },
];

async function packOf(store: MemoryHybridStore, query: string) {
  const candidates = await store.search({ text: query, mode: 'lexical', limit: 20, principals: 'all' });
  return packBundle({ query, candidates, maxTokens: 2000 });
}

async function fixture() {
  const store = new MemoryHybridStore({ chunkTokens: 16 });
  await store.addDocuments(docs);
  const pack = await packOf(store, 'refunds gift cards parcels merger');
  expect(pack.citations.map((c) => c.sourceId).sort()).toEqual(['legal.md', 'policy.md', 'policy.md', 'policy.md']);
  return { store, pack };
}

const bySpanText = (pack: Awaited<ReturnType<typeof fixture>>['pack'], needle: string) =>
  pack.citations.find((_, i) => pack.items[i]!.text.includes(needle))!;

describe('verifyCitations', () => {
  it('grades an unchanged corpus current, with the span and both versions', async () => {
    const { store, pack } = await fixture();
    const checks = await verifyCitations({ store, pack, principals: 'all' });
    expect(checks).toHaveLength(pack.citations.length);
    for (const [i, check] of checks.entries()) {
      CitationCheckSchema.parse(check);
      expect(check).toMatchObject({ status: 'current', ref: i + 1, citedVersion: 'v1', currentVersion: 'v1', closest: null });
      expect(check.span).toEqual(pack.citations[i]!.span);
    }
  });

  it('grades an edit elsewhere moved (new span), an edited passage changed (closest passage), a deleted source missing', async () => {
    const { store, pack } = await fixture();
    const edited = policy
      .replace('# Refund policy', '# Refund policy\n\nThis page was reorganised in May.')
      .replace(
        'Gift cards are never refunded under any circumstances.',
        'Gift cards are refunded as store credit under any circumstances.',
      );
    await store.addDocuments([{ id: 'policy.md', version: 'v2', text: edited }]);
    await store.deleteSources(['legal.md']);
    const checks = await verifyCitations({ store, pack, principals: 'all' });
    const of = (needle: string) => checks[bySpanText(pack, needle).ref - 1]!;

    const moved = of('within 14 days');
    expect(moved.status).toBe('moved');
    expect(moved.currentVersion).toBe('v2');
    expect(edited.slice(moved.span!.start, moved.span!.end)).toBe('Refunds are issued within 14 days of a return being received.');
    expect(moved.span!.start).toBeGreaterThan(moved.citedSpan!.start);

    const changed = of('Gift cards');
    expect(changed.status).toBe('changed');
    expect(changed.span).toBeNull();
    expect(changed.closest!.text).toBe('Gift cards are refunded as store credit under any circumstances.');
    expect(edited.slice(changed.closest!.span.start, changed.closest!.span.end)).toBe(changed.closest!.text);
    expect(changed.closest!.score).toBeGreaterThan(0);
    expect(changed.closest!.score).toBeLessThan(1);

    const missing = of('merger');
    expect(missing).toMatchObject({ status: 'missing', currentVersion: null, span: null, closest: null, citedVersion: 'v1' });
  });

  it('answers missing for a source the principals may not read, exactly as for a deleted one', async () => {
    const { store, pack } = await fixture();
    const hidden = await verifyCitations({ store, pack, principals: ['support'] });
    const legalRef = bySpanText(pack, 'merger').ref;
    const asHidden = hidden[legalRef - 1]!;
    expect(asHidden.status).toBe('missing');
    expect((await verifyCitations({ store, pack, principals: ['legal'] }))[legalRef - 1]!.status).toBe('current');
    await store.deleteSources(['legal.md']);
    const deleted = (await verifyCitations({ store, pack, principals: ['legal'] }))[legalRef - 1]!;
    expect(deleted).toEqual(asHidden);
  });

  it('takes bare citations: the hash alone decides current and moved; without the text no closest passage', async () => {
    const { store, pack } = await fixture();
    const citations = pack.citations.map(({ ref, ...rest }) => rest);
    expect((await verifyCitations({ store, citations, principals: 'all' })).map((c) => [c.status, c.ref])).toEqual(
      citations.map(() => ['current', null]),
    );
    await store.addDocuments([
      { id: 'policy.md', version: 'v2', text: `Preface.\n\n${policy.replace('two working days', 'three working days')}` },
    ]);
    const checks = await verifyCitations({ store, citations, principals: 'all' });
    const statuses = checks.map((c) => c.status);
    expect(statuses).toContain('moved');
    const changed = checks.find((c) => c.status === 'changed')!;
    expect(changed.closest).toBeNull();
    // Give the text and the closest passage appears.
    const withText = await verifyCitations({
      store,
      citations: [{ ...citations[checks.indexOf(changed)]!, text: pack.items[checks.indexOf(changed)]!.text }],
    });
    expect(withText[0]!.closest!.text).toContain('three working days');
  });

  it('takes a citation without a span as current while its chunk is unchanged', async () => {
    const { store, pack } = await fixture();
    const citations = pack.citations.map(({ span: _span, ...rest }) => rest);
    const checks = await verifyCitations({ store, citations, principals: 'all' });
    expect(checks.map((c) => c.status)).toEqual(citations.map(() => 'current'));
    expect(checks.map((c) => c.span)).toEqual(pack.citations.map((c) => c.span));
  });

  it('never calls text current when the span now holds other text of the same length', async () => {
    const store = new MemoryHybridStore();
    await store.addDocuments([{ id: 'a.md', version: 'v1', text: 'Refunds take 14 days.' }]);
    const pack = await packOf(store, 'refunds');
    await store.addDocuments([{ id: 'a.md', version: 'v2', text: 'Refunds take 21 days.' }]);
    const [check] = await verifyCitations({ store, pack, principals: 'all' });
    expect(check!.status).toBe('changed');
    expect(check!.closest!.text).toBe('Refunds take 21 days.');
  });

  it('reads each distinct source once', async () => {
    const { store, pack } = await fixture();
    const calls: string[][] = [];
    const counting = {
      search: store.search.bind(store),
      addDocuments: store.addDocuments.bind(store),
      getChunks: (request: Parameters<MemoryHybridStore['getChunks']>[0]) => {
        calls.push(request.sourceIds ?? []);
        return store.getChunks(request);
      },
    };
    await verifyCitations({ store: counting, pack, principals: 'all' });
    expect(calls.map((c) => c.join()).sort()).toEqual(['legal.md', 'policy.md']);
  });

  it('rejects bad input with invalid_input and a store without getChunks with unsupported', async () => {
    const { store, pack } = await fixture();
    const codeOf = async (promise: Promise<unknown>) => {
      try {
        await promise;
      } catch (error) {
        return isLitmPackError(error) ? error.code : String(error);
      }
      return 'resolved';
    };
    expect(await codeOf(verifyCitations({ store }))).toBe('invalid_input');
    expect(await codeOf(verifyCitations({ store, pack, citations: [] }))).toBe('invalid_input');
    expect(await codeOf(verifyCitations({ store, citations: [{ sourceId: 'a', chunkId: 'a#1', textSha256: 'xyz' }] }))).toBe(
      'invalid_input',
    );
    expect(await codeOf(verifyCitations({ store, pack: { ...pack, schema: 'other' } as never }))).toBe('invalid_input');
    expect(await codeOf(verifyCitations({ store, pack, principal: ['x'] } as never))).toBe('invalid_input');
    const searchOnly = { search: store.search.bind(store), addDocuments: store.addDocuments.bind(store) };
    expect(await codeOf(verifyCitations({ store: searchOnly, pack }))).toBe('unsupported');
    expect(await verifyCitations({ store, citations: [] })).toEqual([]);
  });
});
