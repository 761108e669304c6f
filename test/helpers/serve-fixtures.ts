import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { MemoryHybridStore, assembleBundle, type IngestDocument, type Pack } from '../../src/index.js';
import { PipelineCompressSchema, RerankStageSchema, type RerankStage } from '../../src/refine/index.js';
import type { EmbeddingsLike } from '../../src/store/embeddings.js';
import type { Store } from '../../src/store/types.js';
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
export async function fixtureStore(options: {
  restricted: boolean;
  idfCorpus?: 'all' | 'visible';
  embeddings?: boolean;
}): Promise<MemoryHybridStore> {
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

/** `litm-pack serve` from source in a child process, once it listens. */
export interface ServeProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Everything the process wrote so far. */
  stdout(): string;
  stderr(): string;
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
  /** Kills it if it still runs (for `finally`; a function, so it can be handed on alone). */
  kill: () => void;
}

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Spawns `litm-pack serve ARGS` and resolves once it says where it listens (`listening` matches the stderr
 * line and captures the URL); rejects when it exits first or does not listen within `timeoutMs`.
 */
export async function spawnServe(
  args: string[],
  options: { listening?: RegExp; timeoutMs?: number; env?: Record<string, string | undefined> } = {},
): Promise<ServeProcess> {
  const listening = options.listening ?? /on (http:\/\/127\.0\.0\.1:\d+)/;
  const env = { ...process.env, ...options.env };
  for (const [key, value] of Object.entries(options.env ?? {})) if (value === undefined) delete env[key];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.on('close', done));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  try {
    const url = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`serve did not start: ${stderr}`)), options.timeoutMs ?? 60_000);
      child.stderr.on('data', () => {
        const match = listening.exec(stderr);
        if (match) {
          clearTimeout(timer);
          done(match[1] as string);
        }
      });
      child.on('close', () => {
        clearTimeout(timer);
        fail(new Error(`serve exited: ${stderr}`));
      });
    });
    return { child, url, stdout: () => stdout, stderr: () => stderr, exited, kill };
  } catch (error) {
    kill();
    throw error;
  }
}

/**
 * A bundle through the pipeline the CLI and the retrievers run (`assembleBundle`): the store's search (MMR with
 * `diversity`), the reranker, sentence selection (with the sentence vectors of `embeddings` when given), the
 * packer, and the pool widened while the budget does not bind.
 */
export async function pipelineBundle(
  store: Store,
  query: string,
  options: {
    budget?: number;
    limit?: number;
    maxPool?: number;
    principals?: string[];
    diversity?: number;
    compress?: boolean;
    embeddings?: EmbeddingsLike;
    rerank?: RerankStage;
  },
): Promise<Pack> {
  const { pack } = await assembleBundle({
    store,
    query,
    mode: 'hybrid',
    limit: options.limit ?? 50,
    ...(options.maxPool === undefined ? {} : { maxPool: options.maxPool }),
    principals: options.principals ?? [],
    maxTokens: options.budget ?? 2000,
    ...(options.diversity === undefined ? {} : { diversity: options.diversity }),
    ...(options.rerank === undefined ? {} : { rerank: RerankStageSchema.parse(options.rerank) }),
    ...(options.compress === true
      ? {
          compress: PipelineCompressSchema.parse({
            mode: 'sentences',
            ...(options.embeddings === undefined ? {} : { embeddings: options.embeddings }),
          }),
        }
      : {}),
  });
  return pack;
}
