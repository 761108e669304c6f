// What the Qdrant suite's files share: the server, collection names cleaned up after a file, typed failures,
// deterministic clocks and embeddings, and client wrappers that watch or break calls.
import { randomUUID } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, inject } from 'vitest';
import { QDRANT_CLIENT_METHODS, type QdrantClientLike } from '../../src/qdrant/index.js';
import { FakeEmbeddings } from '../helpers/fake-embeddings.js';
export { failure } from '../helpers/failure.js';

export const url = inject('qdrantUrl');

/** The official client, for setting up and checking what the store did. */
export const admin = new QdrantClient({ url, checkCompatibility: false });

/**
 * Collection names unique to this run (`<prefix>_<run>_<label>`), deleted after the file. Call at module level:
 * it registers the `afterAll`.
 */
export function collectionNames(prefix: string): (label: string) => string {
  const run = randomUUID().slice(0, 8);
  const created: string[] = [];
  afterAll(async () => {
    for (const name of created) await admin.deleteCollection(name).catch(() => undefined);
  });
  return (label) => {
    const name = `${prefix}_${run}_${label}`;
    created.push(name);
    return name;
  };
}

/** A clock that advances a minute per call (`indexedAt` stays deterministic). */
export function clock(start = Date.UTC(2025, 0, 1)): () => Date {
  let t = start;
  return () => new Date((t += 60_000));
}

/**
 * The hashed bag of words plus one shared component that varies with the text: texts without a common word
 * still get distinct cosines, so the dense arm has no ties and fused scores can be compared exactly.
 */
export class DistinctEmbeddings extends FakeEmbeddings {
  override embed(text: string): number[] {
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    return [...super.embed(text), 0.5 + ((hash >>> 0) % 1000) / 1000];
  }
}

/** Embeddings that say which model they are, as LangChain's providers do (`model`). */
export class NamedEmbeddings extends FakeEmbeddings {
  constructor(
    readonly model: string,
    dimension = 32,
  ) {
    super({ dimension });
  }
}

/**
 * A client whose every method goes through `around(name, call, run)`: `call` counts that method's calls from 1,
 * `run` makes the real call. Tests count, slow down or break calls with it.
 */
export function wrapClient(
  inner: QdrantClientLike,
  around: (method: keyof QdrantClientLike, call: number, run: () => Promise<unknown>) => Promise<unknown>,
): QdrantClientLike {
  const counts = new Map<string, number>();
  return Object.fromEntries(
    QDRANT_CLIENT_METHODS.map((name) => [
      name,
      (...args: unknown[]) => {
        const call = (counts.get(name) ?? 0) + 1;
        counts.set(name, call);
        return around(name, call, () => (inner[name] as (...a: unknown[]) => Promise<unknown>).apply(inner, args));
      },
    ]),
  ) as unknown as QdrantClientLike;
}
