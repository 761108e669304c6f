// Runs the CLI's `main(argv)` in this process with stdout and stderr captured: no `tsx` spawn, so a test can
// fake the clock around a command and run many commands cheaply.
import { vi } from 'vitest';
import { main } from '../../src/cli/main.js';

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `litm-pack ...args`, with what it writes captured (and not shown). */
export async function runMain(args: string[]): Promise<InProcessResult> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(['node', 'litm-pack', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
