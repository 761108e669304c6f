// A file rewritten while ingest reads it (a copy in progress, an editor saving) is read again; one that keeps
// changing is skipped with a reason instead of being stored empty or torn. The rewrite is made to happen
// between the read and the check after it, every time, through the file system module the loader uses.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const rewrites = new Map<string, number>();
/** Reads that come back torn: the bytes a read racing a writer gets (as long as the file, times unchanged). */
const torn = new Map<string, number>();

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    readFile: (async (path: Parameters<typeof actual.readFile>[0], options?: Parameters<typeof actual.readFile>[1]) => {
      const bytes = await actual.readFile(path, options);
      // A file handle is never a watched path; the loader reads by name.
      const name = typeof path === 'object' && 'fd' in path ? '' : String(path);
      const tears = torn.get(name) ?? 0;
      if (tears > 0 && Buffer.isBuffer(bytes)) {
        torn.set(name, tears - 1);
        // The first half of the old text and the second half of the new: what a writer's two writes within one
        // tick of the file system's clock leave for a read between them, the size and times as after.
        const old = Buffer.from(OLD.padEnd(bytes.length, ' ').slice(0, bytes.length));
        return Buffer.concat([old.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)]);
      }
      const left = rewrites.get(name) ?? 0;
      if (left > 0) {
        rewrites.set(name, left - 1);
        // Another writer grows the file right after it was read.
        await actual.appendFile(name, '\nMore text arrives.');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return bytes;
    }) as typeof actual.readFile,
  };
});

const OLD = '# Torn\n\nThe old text of this page, about refunds.';
const { loadDocuments } = await import('../src/index.js');
const work = mkdtempSync(join(tmpdir(), 'litm-changing-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a file that changes while it is read', () => {
  it('is read again when it changed once, and the document is its whole new text', async () => {
    const path = join(work, 'once.md');
    writeFileSync(path, '# Once\n\nFirst text.');
    rewrites.set(path, 1);
    const [doc] = await loadDocuments([path], { base: work });
    expect(doc!.text).toBe('# Once\n\nFirst text.\nMore text arrives.');
  });

  it('is skipped with a reason when it keeps changing, never stored torn', async () => {
    const path = join(work, 'busy.md');
    writeFileSync(path, '# Busy\n\nFirst text.');
    writeFileSync(join(work, 'calm.md'), '# Calm\n\nSteady text.');
    rewrites.set(path, 10);
    const skipped: { path: string; reason: string }[] = [];
    const docs = await loadDocuments([path, join(work, 'calm.md')], { base: work, onSkip: (skip) => skipped.push(skip) });
    expect(docs.map((doc) => doc.id)).toEqual(['calm.md']);
    expect(skipped).toMatchObject([{ path, reason: 'changing' }]);
  });

  it('a read torn by a writer within one tick of the file clock (size and times unchanged) is read again, never stored torn', async () => {
    const path = join(work, 'torn.md');
    writeFileSync(path, '# Torn\n\nThe new text of this page, about returns.');
    torn.set(path, 1);
    const [doc] = await loadDocuments([path], { base: work });
    expect(doc!.text).toBe('# Torn\n\nThe new text of this page, about returns.');
  });
});
