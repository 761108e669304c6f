// A writer process for the store lock tests: one `MemoryHybridStore.update` of a store file, adding a source.
//   node --import tsx test/helpers/store-writer.ts STORE SOURCE_ID HOLD_MS WAIT_MS [exit|throw|signal]
// Prints "locked" when its change starts, then one JSON line: { ok } or the error's { code, name, holder }.
import { MemoryHybridStore } from '../../src/memory/memory-hybrid-store.js';
import { StoreLockedError } from '../../src/memory/lock.js';

const [storePath, sourceId, holdMs, waitMs, mode] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

try {
  await MemoryHybridStore.update(
    storePath,
    async (store) => {
      process.stdout.write('locked\n');
      await store.addDocuments([{ id: sourceId, text: `# ${sourceId}\n\nWritten by the writer of ${sourceId}.` }]);
      await sleep(Number(holdMs));
      if (mode === 'exit') process.exit(7);
      if (mode === 'throw') throw new Error('change failed');
      if (mode === 'signal') {
        process.stdout.write('holding\n');
        await sleep(60_000);
      }
    },
    { create: true, waitMs: Number(waitMs) },
  );
  process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
} catch (error) {
  const e = error as { code?: string; message: string };
  process.stdout.write(
    `${JSON.stringify({ ok: false, code: e.code, locked: error instanceof StoreLockedError, holder: error instanceof StoreLockedError ? error.holder : undefined, message: e.message })}\n`,
  );
  process.exitCode = 3;
}
