// Saves a large store file over and over, so a test can kill it in the middle of a save.
//   node --import tsx test/helpers/saving-forever.ts STORE
import { sha256Hex } from '../../src/base/canonical.js';
import { writeStoreFile, type StoreFileContents } from '../../src/memory/file.js';
import type { ChunkRecord } from '../../src/store/schemas.js';

const [path] = process.argv.slice(2) as [string];
const text = 'lorem ipsum dolor sit amet '.repeat(1_200_000);
const record: ChunkRecord = {
  id: 'big.md#0',
  sourceId: 'big.md',
  section: [],
  span: { start: 0, end: text.length },
  text,
  textSha256: sha256Hex(text),
  indexedAt: '2025-01-01T00:00:00.000Z',
  tokens: {},
};
const file: StoreFileContents = {
  header: { chunkTokens: 256, dimension: null, embeddingModel: null, indexedText: 'title-headings@1', sources: 1, chunks: 1 },
  sources: () => [{ sourceId: 'big.md', ids: ['big.md#0'] }],
  chunks: () => [{ record, sparse: { indices: [], values: [] }, dense: null }],
};
process.stdout.write('saving\n');
for (;;) await writeStoreFile(path, file);
