// Who may see what, on every route and tool, with and without keys. The strongest form of "a caller can never
// learn that restricted text exists": every answer a caller gets from a store holding restricted documents is
// byte for byte the answer they would get from a store holding only what they may read. Items, dropped,
// coverage, caveats, pins, errors and counts are all inside those bytes.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackSchema, packBundle, MemoryHybridStore, type Store } from '../src/index.js';
import { createServer } from '../src/server/index.js';
import {
  ENG_MARKER,
  HR_MARKER,
  KEYS,
  PUBLIC_DOCS,
  RESTRICTED_DOCS,
  bearer,
  fixtureKeys,
  fixtureStore,
  FIXED_NOW,
} from './helpers/serve-fixtures.js';
import { FakeEmbeddings } from './helpers/fake-embeddings.js';

interface Probe {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  payload?: unknown;
}

/** A pack as the hr reader gets it (it cites restricted text): what a caller might send back to verify. */
const hrPack = await (async () => {
  const store = await fixtureStore({ restricted: true });
  const candidates = await store.search({ text: `${HR_MARKER} salary refunds shipping`, mode: 'lexical', limit: 10, principals: ['hr'] });
  return packBundle({ query: 'salary refunds', candidates, maxTokens: 400 });
})();

const hrFilter = encodeURIComponent(JSON.stringify({ must: [{ key: 'sourceId', match: { value: 'hr/salaries.md' } }] }));

const mcp = (name: string, args: Record<string, unknown>): Probe => ({
  name: `MCP ${name}`,
  method: 'POST',
  url: '/mcp',
  payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
});

const PROBES: Probe[] = [
  { name: 'bundle', method: 'GET', url: '/api/bundle?q=refunds' },
  { name: 'bundle for a restricted word', method: 'GET', url: `/api/bundle?q=${HR_MARKER}%20schedule` },
  { name: 'bundle as markdown', method: 'GET', url: '/api/bundle?q=shipping%20refunds&format=md' },
  { name: 'bundle as XML, lexical', method: 'GET', url: '/api/bundle?q=refunds%20shipping&format=xml&mode=lexical' },
  { name: 'bundle, dense, POST', method: 'POST', url: '/api/bundle', payload: { q: 'salary advances are confidential', mode: 'dense' } },
  { name: 'bundle filtered to a restricted source', method: 'GET', url: `/api/bundle?q=refunds&filter=${hrFilter}` },
  { name: 'bundle at a tight budget (dropped counts)', method: 'GET', url: '/api/bundle?q=refunds%20shipping&budget=40' },
  {
    name: 'briefing pinning restricted sources',
    method: 'GET',
    url: '/api/briefing?prompt=refunds&pins=hr/salaries.md,handbook/refunds.md,eng/roadmap.md',
  },
  {
    name: 'briefing as markdown, POST',
    method: 'POST',
    url: '/api/briefing',
    payload: { prompt: `${ENG_MARKER} shipping`, pins: ['eng/roadmap.md'], format: 'md' },
  },
  { name: 'briefing at a tight budget (caveats counts)', method: 'GET', url: '/api/briefing?prompt=refunds%20shipping&budget=120' },
  { name: 'bundle with debug rankings', method: 'GET', url: '/api/bundle?q=refunds%20shipping&debug=rankings&k=20' },
  { name: 'inspector report', method: 'GET', url: '/inspect?q=refunds%20salary' },
  { name: 'inspector report of a pack sent', method: 'POST', url: '/inspect', payload: hrPack },
  { name: 'the OpenAPI document', method: 'GET', url: '/api/openapi.json' },
  {
    name: 'bundle with sentence selection and diversity',
    method: 'GET',
    url: `/api/bundle?q=refunds%20salary%20${HR_MARKER}&compress=sentences&diversity=0.5&limit=3`,
  },
  {
    name: 'briefing with sentence selection, diversity and restricted pins',
    method: 'POST',
    url: '/api/briefing',
    payload: { prompt: 'refunds shipping', pins: ['hr/salaries.md', 'eng/roadmap.md'], compress: 'sentences', diversity: 0.5, budget: 300 },
  },
  {
    name: 'pack',
    method: 'POST',
    url: '/api/pack',
    payload: { query: 'refunds', candidates: [{ id: 'x#0', text: 'Refunds take 14 days.', score: 1 }] },
  },
  { name: 'briefing from pins alone', method: 'GET', url: '/api/briefing?pins=hr/salaries.md,handbook/refunds.md,salaries.md' },
  { name: 'briefing from a cluster with restricted members', method: 'GET', url: '/api/briefing?clusters=support,payroll&budget=400' },
  {
    name: 'briefing, strict scope',
    method: 'POST',
    url: '/api/briefing',
    payload: { prompt: 'refunds', clusters: ['support'], scope_mode: 'strict' },
  },
  { name: 'citation check of a pack citing restricted text', method: 'POST', url: '/api/citations/verify', payload: { pack: hrPack } },
  mcp('assemble_bundle', { query: 'refunds' }),
  mcp('assemble_bundle', { query: `${HR_MARKER} refunds`, mode: 'lexical', budget: 60 }),
  mcp('get_briefing', { prompt: 'refunds', pins: ['hr/salaries.md', 'eng/roadmap.md'] }),
  mcp('get_rag_context', { query: 'refunds confidential', max_tokens: 150 }),
  mcp('get_rag_context', { query: `refunds ${ENG_MARKER}`, max_tokens: 150, compress: 'sentences', diversity: 0.5, limit: 3 }),
  mcp('assemble_bundle', { query: 'shipping refunds', compress: 'sentences', diversity: 1, limit: 2, budget: 100 }),
  mcp('get_briefing', { clusters: ['payroll', 'support'] }),
  mcp('verify_citations', { citations: hrPack.citations }),
  mcp('pack_candidates', { query: 'refunds', candidates: [{ id: 'x#0', text: 'Refunds take 14 days.', score: 1 }] }),
];

interface CallerCase {
  name: string;
  headers: Record<string, string>;
  /** Restricted documents this caller may read. */
  reads: string[];
}

const CALLERS: CallerCase[] = [
  { name: 'anonymous', headers: {}, reads: [] },
  { name: 'a key without principals', headers: bearer(KEYS.carol), reads: [] },
  { name: 'a key reading eng', headers: bearer(KEYS.bob), reads: ['eng/roadmap.md'] },
  { name: 'a key reading hr', headers: bearer(KEYS.alice), reads: ['hr/salaries.md'] },
];

/** A store holding the public documents and exactly the restricted ones `reads` names. */
async function storeOf(reads: string[], idfCorpus: 'all' | 'visible'): Promise<MemoryHybridStore> {
  const store = new MemoryHybridStore({ now: FIXED_NOW, embeddings: new FakeEmbeddings(), idfCorpus });
  await store.addDocuments([...PUBLIC_DOCS, ...RESTRICTED_DOCS.filter((doc) => reads.includes(doc.id))]);
  return store;
}

const servers: FastifyInstance[] = [];
async function serverOver(store: Store): Promise<FastifyInstance> {
  const app = await createServer({ store, apiKeys: fixtureKeys(), rateLimit: false });
  servers.push(app);
  return app;
}
afterAll(async () => {
  await Promise.all(servers.map((app) => app.close()));
});

async function ask(app: FastifyInstance, probe: Probe, headers: Record<string, string>) {
  const response = await app.inject({
    method: probe.method,
    url: probe.url,
    headers: { ...headers, ...(probe.url === '/mcp' ? { accept: 'application/json, text/event-stream' } : {}) },
    ...(probe.payload === undefined ? {} : { payload: probe.payload as string }),
  });
  return { status: response.statusCode, type: response.headers['content-type'], body: response.body };
}

describe('every route and tool answers each caller as if restricted documents they may not read did not exist', () => {
  let full: FastifyInstance;
  const references = new Map<string, FastifyInstance>();

  beforeAll(async () => {
    full = await serverOver(await fixtureStore({ restricted: true, idfCorpus: 'visible' }));
    for (const caller of CALLERS) references.set(caller.name, await serverOver(await storeOf(caller.reads, 'visible')));
  });

  for (const caller of CALLERS) {
    it.each(PROBES)(`${caller.name}: $name`, async (probe) => {
      const answer = await ask(full, probe, caller.headers);
      const reference = await ask(references.get(caller.name) as FastifyInstance, probe, caller.headers);
      expect(answer).toEqual(reference);
      // Real answers, not two equal errors.
      expect(answer.status).toBe(200);
      expect(answer.body).not.toContain('"isError":true');
      // A marker the caller typed (or sent in a pack to verify) comes back; any other occurrence would be a leak.
      const asked = JSON.stringify(probe);
      if (!caller.reads.includes('hr/salaries.md') && !asked.includes(HR_MARKER)) expect(answer.body).not.toContain(HR_MARKER);
      if (!caller.reads.includes('eng/roadmap.md') && !asked.includes(ENG_MARKER)) expect(answer.body).not.toContain(ENG_MARKER);
    });
  }

  it('callers who may read restricted text do get it (the ACL does not just hide everything)', async () => {
    const alice = await ask(full, PROBES[1] as Probe, bearer(KEYS.alice));
    expect(alice.status).toBe(200);
    expect(alice.body).toContain(HR_MARKER);
    const briefing = PackSchema.parse(JSON.parse((await ask(full, PROBES[7] as Probe, bearer(KEYS.bob))).body));
    expect(briefing.items.some((item) => item.sourceId === 'eng/roadmap.md')).toBe(true);
    expect(briefing.briefing?.missingPins).toEqual(['hr/salaries.md']);
  });

  it('a restricted pin is reported exactly like a pin that does not exist', async () => {
    const restricted = PackSchema.parse(
      JSON.parse((await ask(full, { name: '', method: 'GET', url: '/api/briefing?prompt=refunds&pins=hr/salaries.md' }, {})).body),
    );
    const absent = PackSchema.parse(
      JSON.parse((await ask(full, { name: '', method: 'GET', url: '/api/briefing?prompt=refunds&pins=hr/nothing.md' }, {})).body),
    );
    expect(restricted.briefing?.missingPins).toEqual(['hr/salaries.md']);
    expect(restricted.caveats?.replace('hr/salaries.md', 'PIN')).toBe(absent.caveats?.replace('hr/nothing.md', 'PIN'));
    expect(restricted.items).toEqual(absent.items);
  });

  it('an invalid key is refused (401) on every route and tool, whatever it asks', async () => {
    for (const probe of PROBES) {
      const answer = await ask(full, probe, bearer('not-a-configured-key-0000'));
      expect(answer.status).toBe(401);
      const body = JSON.parse(answer.body) as { code?: string; error?: { data?: { code?: string } } };
      // On /mcp the refusal is a JSON-RPC error carrying the same body.
      expect(body.code ?? body.error?.data?.code).toBe('unauthorized');
    }
  });
});

describe('principals go into the store query', () => {
  it("every search carries the caller's principals ([] for anonymous), never undefined (which would mean everything)", async () => {
    const inner = await fixtureStore({ restricted: true });
    const seen: (readonly string[] | 'all' | undefined)[] = [];
    const recording: Store = {
      addDocuments: (docs) => inner.addDocuments(docs),
      search: (request) => {
        seen.push(request.principals);
        return inner.search(request);
      },
      rankings: (request) => {
        seen.push(request.principals);
        return inner.rankings(request);
      },
    };
    const app = await serverOver(recording);
    for (const probe of PROBES) {
      for (const caller of CALLERS) await ask(app, probe, caller.headers);
    }
    expect(seen.length).toBeGreaterThan(40);
    expect(seen.every((principals) => Array.isArray(principals))).toBe(true);
    expect(new Set(seen.map((principals) => JSON.stringify(principals)))).toEqual(new Set(['[]', '["eng"]', '["hr"]']));
  });
});

describe('the BM25 score side channel (idfCorpus)', () => {
  // With IDF over every chunk (the default, and what Qdrant does), a restricted chunk that contains a query
  // term lowers that term's IDF for everyone, so an anonymous caller's scores move: that reveals the term is
  // in text they may not read. IDF over what the caller may read removes the difference.
  const probe: Probe = { name: '', method: 'GET', url: '/api/bundle?q=refunds&mode=lexical' };

  it('with idfCorpus "all", anonymous scores differ when restricted chunks contain the query term', async () => {
    const withRestricted = await ask(await serverOver(await fixtureStore({ restricted: true, idfCorpus: 'all' })), probe, {});
    const without = await ask(await serverOver(await storeOf([], 'all')), probe, {});
    const scores = (body: string) => PackSchema.parse(JSON.parse(body)).items.map((item) => item.score);
    expect(scores(withRestricted.body)).not.toEqual(scores(without.body));
    // Same items, same text: only the scores tell.
    const ids = (body: string) =>
      PackSchema.parse(JSON.parse(body))
        .items.map((item) => item.id)
        .sort();
    expect(ids(withRestricted.body)).toEqual(ids(without.body));
  });

  it('by default (no idfCorpus given) every probe answers each caller as a store without what they may not read', async () => {
    const byDefault = await serverOver(await fixtureStore({ restricted: true }));
    for (const caller of CALLERS) {
      const reference = await serverOver(await storeOf(caller.reads, 'visible'));
      for (const p of PROBES)
        expect(await ask(byDefault, p, caller.headers), `${caller.name}: ${p.name}`).toEqual(await ask(reference, p, caller.headers));
    }
  }, 120_000);

  it('with idfCorpus "visible", the answer is byte-identical to a store without the restricted chunks', async () => {
    const withRestricted = await ask(await serverOver(await fixtureStore({ restricted: true, idfCorpus: 'visible' })), probe, {});
    const without = await ask(await serverOver(await storeOf([], 'visible')), probe, {});
    expect(withRestricted.body).toBe(without.body);
  });
});
