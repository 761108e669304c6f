// Saves a large store file over and over, so a test can kill it in the middle of a save.
//   node --import tsx test/helpers/saving-forever.ts STORE
import { rm } from 'node:fs/promises';
import { sha256Hex } from '../../src/base/canonical.js';
import { AclClasses } from '../../src/memory/acl-classes.js';
import { writeStoreFile, type StoreContents } from '../../src/memory/file.js';
import { Segment } from '../../src/memory/segment.js';
import type { ChunkRecord } from '../../src/store/schemas.js';

const [path] = process.argv.slice(2) as [string];
// One chunk of about 30 MB (not chunked here: only the save's length matters).
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
const classes = new AclClasses();
const contents: StoreContents = {
  header: { chunkTokens: 256, dimension: null, embeddingModel: null, indexedText: 'title-headings@1', sources: 1, chunks: 1 },
  classes,
  parts: [{ segment: Segment.fromRows(classes, [{ record, sparse: { indices: [], values: [] }, dense: null, aclClass: 0 }]), dead: null }],
  emptySources: new Map(),
};
process.stdout.write('saving\n');
// Each save writes the whole file: without a previous file there is nothing to append to.
for (;;) {
  await rm(path, { force: true });
  await writeStoreFile(path, contents);
}
