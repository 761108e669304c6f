import { spawn, type ChildProcess } from 'node:child_process';

const STOP_TIMEOUT_MS = 10_000;

export interface PythonServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts a Python test server that prints `LISTENING <port>` once ready (the Qdrant test engine, the model
 * server) and resolves with its port. Its later stderr stays visible: servers log their 500s there.
 */
export async function startPythonServer(options: {
  python: string;
  script: string;
  args?: string[];
  cwd: string;
  name: string;
  setupHint: string;
  startupTimeoutMs?: number;
}): Promise<PythonServer> {
  const { python, script, name } = options;
  const child = spawn(python, [script, '--port', '0', ...(options.args ?? [])], {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  const collect = (chunk: string) => {
    stderr += chunk;
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  };
  child.stderr?.on('data', collect);
  const timeoutMs = options.startupTimeoutMs ?? 60_000;

  const port = await new Promise<number>((resolvePort, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`The ${name} did not start within ${timeoutMs} ms.\n${stderr}`));
    }, timeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      stdout += chunk;
      const match = /^LISTENING (\d+)$/m.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolvePort(Number(match[1]));
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`Could not start the ${name} (${python}): ${error.message}`, { cause: error }));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`The ${name} exited before listening (code ${code}, signal ${signal}).\n${stderr}\n${options.setupHint}`));
    });
  });
  child.stderr?.off('data', collect);
  child.stderr?.on('data', (chunk: string) => process.stderr.write(chunk));
  return { port, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
