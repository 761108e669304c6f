/**
 * Why the HTTP server starts requests in the order they arrived (src/server/arrival-queue.ts): a server that does
 * nothing but hold its event loop for a fixed time per request (no packing, no store), answered by Node's HTTP
 * server as it is and behind the ArrivalQueue, at 32 keep-alive connections. Every request costs the same, so a
 * fair server answers every request in about the same time (32 × the work); the 99th percentile shows how far
 * from fair each is. The two servers run in child processes at the same time and are loaded in alternating
 * phases (the machine's speed drifts; alternating keeps the comparison side by side).
 *
 *   npx tsx bench/serve-fairness.ts [--work-ms 2.5] [--phases 6] [--phase-seconds 8] [--connections 32]
 *
 * Loopback only, ephemeral ports; the servers stop with the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ArrivalQueue } from '../src/server/arrival-queue.js';
import { markdownTable } from './lib/table.js';
import { now, progress } from './lib/timing.js';

const { values: flags } = parseArgs({
  options: {
    'work-ms': { type: 'string', default: '2.5' },
    phases: { type: 'string', default: '6' },
    'phase-seconds': { type: 'string', default: '8' },
    connections: { type: 'string', default: '32' },
    /** Internal: run as one of the servers. */
    serve: { type: 'string' },
  },
});

/** The server side: holds the loop for the work time, then answers a body about the size of a pack's JSON. */
function serve(mode: string, workMs: number): void {
  const body = JSON.stringify({ context: 'x'.repeat(12_000), items: 'y'.repeat(12_000) });
  const arrivals = new ArrivalQueue();
  const answer = (response: import('node:http').ServerResponse) => {
    const until = now() + workMs;
    while (now() < until);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  };
  const server = createServer((_request, response) => (mode === 'queue' ? arrivals.enqueue(() => answer(response)) : answer(response)));
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${typeof address === 'object' && address !== null ? address.port : 0}\n`);
  });
  // Stops with the run (its parent closes stdin), whatever happens.
  process.stdin.on('close', () => process.exit(0)).resume();
}

function start(mode: string, workMs: number): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--serve', mode, '--work-ms', String(workMs)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').once('data', (line: string) => resolve({ child, port: Number(line.trim()) }));
    child.once('exit', (code) => reject(new Error(`the ${mode} server exited (${code}) before listening`)));
  });
}

/** `connections` keep-alive connections, each sending its next request when the answer is in; latencies in ms. */
function load(port: number, connections: number, ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const request = Buffer.from('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return new Promise((resolve, reject) => {
    const deadline = now() + ms;
    let open = connections;
    for (let c = 0; c < connections; c += 1) {
      const socket = connect(port, '127.0.0.1');
      let buffered: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      let needed = -1;
      const send = () => {
        if (now() >= deadline) {
          socket.destroy();
          open -= 1;
          if (open === 0) resolve(latencies);
          return;
        }
        sentAt = now();
        socket.write(request);
      };
      socket.on('connect', send).on('error', reject);
      socket.on('data', (data: Buffer) => {
        buffered = buffered.length === 0 ? data : Buffer.concat([buffered, data]);
        for (;;) {
          if (needed < 0) {
            const end = buffered.indexOf('\r\n\r\n');
            if (end < 0) return;
            needed = end + 4 + Number(/content-length: (\d+)/i.exec(buffered.subarray(0, end).toString('latin1'))?.[1] ?? 0);
          }
          if (buffered.length < needed) return;
          buffered = buffered.subarray(needed);
          needed = -1;
          latencies.push(now() - sentAt);
          send();
        }
      });
    }
  });
}

async function main(): Promise<void> {
  const workMs = Number(flags['work-ms']);
  const connections = Number(flags.connections);
  const phases = Number(flags.phases);
  const phaseMs = Number(flags['phase-seconds']) * 1000;
  const arms = [
    { mode: 'plain', label: "Node's HTTP server as it is", ...(await start('plain', workMs)), latencies: [] as number[], seconds: 0 },
    { mode: 'queue', label: 'behind ArrivalQueue', ...(await start('queue', workMs)), latencies: [] as number[], seconds: 0 },
  ];
  try {
    for (const arm of arms) await load(arm.port, connections, 2000); // warm-up
    for (let phase = 0; phase < phases; phase += 1) {
      for (const arm of phase % 2 === 0 ? arms : [...arms].reverse()) {
        progress(`phase ${phase + 1}/${phases}: ${arm.mode}`);
        const started = now();
        arm.latencies.push(...(await load(arm.port, connections, phaseMs)));
        arm.seconds += (now() - started) / 1000;
      }
    }
  } finally {
    for (const arm of arms) arm.child.stdin?.end();
  }
  const at = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  const rows = arms.map((arm) => {
    const sorted = [...arm.latencies].sort((a, b) => a - b);
    return [
      arm.label,
      sorted.length,
      (sorted.length / arm.seconds).toFixed(1),
      at(sorted, 0.5).toFixed(1),
      at(sorted, 0.9).toFixed(1),
      at(sorted, 0.99).toFixed(1),
      (at(sorted, 0.99) / at(sorted, 0.5)).toFixed(2),
      sorted.at(-1)!.toFixed(1),
    ];
  });
  console.log(
    `### Fairness: a server that holds its loop ${workMs} ms per request, ${connections} connections, ${phases} alternating phases of ${flags['phase-seconds']} s each\n`,
  );
  console.log(markdownTable(['server', 'requests', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99 / p50', 'max ms'], rows));
}

if (flags.serve !== undefined) serve(flags.serve, Number(flags['work-ms']));
else await main();
