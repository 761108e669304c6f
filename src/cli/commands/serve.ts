import { Option, type Command } from 'commander';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { isLitmPackError, LitmPackError } from '../../base/errors.js';
import { DEFAULT_LIMITS, RATE_LIMIT_DEFAULTS, resolveLimits, type ServiceLimits } from '../../service/limits.js';
import { RERANK_STAGE, type ParsedRerankStage } from '../../refine/stages.js';
import { readUserFile, warn } from '../io.js';
import {
  embeddingsFrom,
  embeddingsOptions,
  httpUrl,
  idfCorpusOption,
  integer,
  list,
  rerankStage,
  storeOption,
  type EmbeddingsFlags,
} from '../options.js';
import { exposureProblem } from '../../server/options.js';
import { existingStoreFile, noteReindex, noteUnusedVectors, openServedStore, qdrantTarget } from '../stores.js';
import type { CitationLedger } from '../../service/ledger.js';

/** Flags of the reranker a server runs every pool through (`serve` and `mcp`). */
export interface ServerRerankFlags {
  rerankUrl?: string;
  rerankProtocol?: 'tei' | 'cohere';
  rerankModel?: string;
  rerankTopN?: number;
  rerankTimeout?: number;
}

export function serverRerankOptions(command: Command): Command {
  return command
    .option(
      '--rerank-url <url>',
      'rerank every pool with this endpoint (TEI /rerank or Cohere-style /v1/rerank; key from LITM_RERANK_API_KEY); a request may turn it off with rerank=false',
      httpUrl('--rerank-url', 'http://localhost:8080/rerank'),
    )
    .addOption(new Option('--rerank-protocol <protocol>', 'rerank protocol (default: from the URL)').choices(['tei', 'cohere']))
    .option('--rerank-model <name>', 'model name the rerank service expects')
    .option(
      '--rerank-top-n <n>',
      `how many of the best candidates to rerank (default ${RERANK_STAGE.topN})`,
      integer('--rerank-top-n', { min: 1, max: RERANK_STAGE.maxTopN }),
    )
    .option(
      '--rerank-timeout <ms>',
      `give up on the reranker after this long and keep the retrieval order (default ${RERANK_STAGE.timeoutMs})`,
      integer('--rerank-timeout', { min: 1, max: RERANK_STAGE.maxTimeoutMs }),
    );
}

/** The server's reranker, or none; its other flags without --rerank-url are refused, not ignored. */
export function serverRerank(flags: ServerRerankFlags): ParsedRerankStage | undefined {
  return rerankStage(
    {
      rerank: flags.rerankUrl,
      rerankProtocol: flags.rerankProtocol,
      rerankModel: flags.rerankModel,
      rerankTopN: flags.rerankTopN,
      rerankTimeout: flags.rerankTimeout,
    },
    '--rerank-url',
  );
}

interface ServeFlags extends EmbeddingsFlags, ServerRerankFlags, LedgerFlags {
  store: string;
  port: number;
  host: string;
  keys?: string;
  requireAuth?: boolean;
  rateLimit: number;
  globalRateLimit: number;
  rateLimits: boolean;
  log?: string;
  logQueries?: boolean;
  bundleBudget?: number;
  maxBudget?: number;
  briefingBudget?: number;
  maxBriefingBudget?: number;
  idfCorpus?: 'all' | 'visible';
  workers: number;
  metricsPort?: number;
  metricsHost?: string;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  allowAnonymous?: boolean;
}

/** Flags of the citation ledger and of the tools' text (`serve` and `mcp`). */
export interface LedgerFlags {
  /** A file, or false for --no-ledger. */
  ledger: string | boolean;
  textContent?: 'context' | 'json';
}

export function ledgerOptions(command: Command): Command {
  return command
    .option(
      '--ledger <file>',
      "keep the citation ledger (every served pack's citations, for the stale feed) in this file; default: beside a store file (a Qdrant store needs this flag)",
    )
    .option('--no-ledger', 'keep no citation ledger (the stale feed is then not offered)')
    .addOption(
      new Option(
        '--text-content <what>',
        'the text block of each MCP tool answer: context (the context, then the confidence and the citations) or json (the structured content)',
      ).choices(['context', 'json']),
    );
}

/**
 * The citation ledger a server keeps: the file `--ledger` names, else the one beside the store file; none
 * with `--no-ledger`, and none (said on stderr) for a Qdrant store without `--ledger`.
 */
export async function openServerLedger(flags: LedgerFlags, storeSpec: string): Promise<CitationLedger | undefined> {
  if (flags.ledger === false) return undefined;
  const { CitationLedger, ledgerPathBeside } = await import('../../service/ledger.js');
  let path: string;
  if (typeof flags.ledger === 'string') path = flags.ledger;
  else if (qdrantTarget(storeSpec) !== null) {
    warn(
      'no citation ledger: the store is a Qdrant collection, so there is no store file to keep it beside; give --ledger FILE to keep one (or --no-ledger to say so)',
    );
    return undefined;
  } else path = ledgerPathBeside(await existingStoreFile(storeSpec));
  return CitationLedger.open({
    path,
    onError: (error) => warn(`a served pack could not be recorded in the citation ledger: ${error.message}`),
  });
}

/** API keys from `--keys FILE`, else the LITM_PACK_API_KEYS variable (the same JSON), else none. */
export async function loadApiKeys(file: string | undefined) {
  const { parseApiKeys } = await import('../../server/auth.js');
  if (file !== undefined) return parseApiKeys(await readUserFile(file), file);
  const fromEnvironment = process.env.LITM_PACK_API_KEYS;
  if (fromEnvironment !== undefined && fromEnvironment.trim() !== '') return parseApiKeys(fromEnvironment, 'LITM_PACK_API_KEYS');
  return undefined;
}

/** The limits a server runs with: the service's, with the budget flags over them (messages name the flags). */
function serverLimits(flags: ServeFlags): ServiceLimits {
  const given: [string, keyof ServiceLimits, number | undefined][] = [
    ['--bundle-budget', 'bundleDefaultBudget', flags.bundleBudget],
    ['--max-budget', 'bundleMaxBudget', flags.maxBudget],
    ['--briefing-budget', 'briefingDefaultBudget', flags.briefingBudget],
    ['--max-briefing-budget', 'briefingMaxBudget', flags.maxBriefingBudget],
  ];
  try {
    return resolveLimits(Object.fromEntries(given.filter(([, , value]) => value !== undefined).map(([, key, value]) => [key, value])));
  } catch (error) {
    if (!isLitmPackError(error, 'invalid_input')) throw error;
    const named = (text: string) => given.reduce((out, [flag, key]) => out.replaceAll(key, flag), text);
    throw new LitmPackError('invalid_input', error.issues.map((issue) => named(issue.message)).join('; '), { cause: error });
  }
}

/** Flags of the server itself, checked before anything is opened. */
function checkServerFlags(flags: ServeFlags): void {
  for (const [flag, value] of [
    ['--rate-limit', flags.rateLimit],
    ['--global-rate-limit', flags.globalRateLimit],
  ] as const) {
    if (value < 1) throw new LitmPackError('invalid_input', `${flag} must be at least 1`);
  }
  if (flags.workers < 1) throw new LitmPackError('invalid_input', '--workers must be at least 1');
  if (flags.workers > 1 && flags.rateLimits) {
    // Each process would count on its own, so a client could make --workers times the rate: refused, not weakened.
    throw new LitmPackError(
      'invalid_input',
      '--workers above 1 needs --no-rate-limits: rate limits are counted per process (limit in a proxy in front instead)',
    );
  }
  if (flags.workers > 1 && flags.metricsPort !== undefined) {
    // Each process counts on its own and the port would answer from whichever took the scrape.
    throw new LitmPackError('invalid_input', '--metrics-port needs --workers 1: each process keeps its own metrics');
  }
  if (flags.metricsHost !== undefined && flags.metricsPort === undefined)
    throw new LitmPackError('invalid_input', '--metrics-host needs --metrics-port');
}

/** Opens a log file for appending; a path that cannot be opened fails before anything is served. */
export async function openLogFile(path: string): Promise<WriteStream> {
  const stream = createWriteStream(path, { flags: 'a' });
  try {
    await once(stream, 'open');
  } catch (error) {
    throw new LitmPackError(
      'io_error',
      `Cannot open the log ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      { cause: error },
    );
  }
  return stream;
}

/** Ends a log file once everything written to it is flushed. */
export async function closeLogFile(stream: WriteStream | undefined): Promise<void> {
  if (stream === undefined) return;
  stream.end();
  await once(stream, 'finish');
}

/** Resolves on the first of the signals that stop a server. */
export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve(signal);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

export function registerServe(program: Command): void {
  ledgerOptions(
    serverRerankOptions(
      embeddingsOptions(
        idfCorpusOption(storeOption(program.command('serve').description('serve the HTTP API over a store (MCP tools at /mcp)'))),
      ),
    ),
  )
    .option('--port <n>', 'port to listen on (0: any free port)', integer('--port'), 8787)
    .option('--host <address>', 'address to listen on (0.0.0.0 for every interface)', '127.0.0.1')
    .option('--keys <file>', 'API keys → principals (JSON); default: the LITM_PACK_API_KEYS variable')
    .option('--require-auth', 'reject callers without a valid API key (401) instead of serving them as anonymous')
    .option(
      '--rate-limit <n>',
      `calls per second one caller (an API key, else an address) may make; each JSON-RPC message that asks for work counts (initialize, notifications and ping are counted apart, against ${RATE_LIMIT_DEFAULTS.housekeepingPerClient}) (default ${RATE_LIMIT_DEFAULTS.perClient})`,
      integer('--rate-limit'),
      RATE_LIMIT_DEFAULTS.perClient,
    )
    .option(
      '--global-rate-limit <n>',
      `calls per second all callers with a key together may make (all callers, without keys; anonymous callers of a server with keys share ${RATE_LIMIT_DEFAULTS.anonymousGlobal} of their own) (default ${RATE_LIMIT_DEFAULTS.global})`,
      integer('--global-rate-limit'),
      RATE_LIMIT_DEFAULTS.global,
    )
    .option(
      '--allowed-hosts <list>',
      'host names requests may be addressed to besides localhost, 127.0.0.1 and [::1] (needed on other addresses; * for any, behind a proxy that checks Host)',
      list,
    )
    .option(
      '--allowed-origins <list>',
      'origins browser pages may call from (https://app.example.com), besides pages of an allowed host',
      list,
    )
    .option(
      '--allow-anonymous',
      'serve without API keys on an address other than loopback (every document without an ACL is then readable by anyone who can reach the port)',
    )
    .option('--no-rate-limits', 'turn rate limiting off')
    .option('--log <file>', 'append the request log (one JSON line per request) to this file; default stdout')
    .option('--log-queries', 'include the query text in the request log')
    .option(
      '--bundle-budget <tokens>',
      `bundle budget when a request gives none (default ${DEFAULT_LIMITS.bundleDefaultBudget})`,
      integer('--bundle-budget'),
    )
    .option(
      '--max-budget <tokens>',
      `largest bundle budget a request may ask for (default ${DEFAULT_LIMITS.bundleMaxBudget})`,
      integer('--max-budget'),
    )
    .option(
      '--briefing-budget <tokens>',
      `briefing budget when a request gives none (default ${DEFAULT_LIMITS.briefingDefaultBudget})`,
      integer('--briefing-budget'),
    )
    .option(
      '--max-briefing-budget <tokens>',
      `largest briefing budget a request may ask for (default ${DEFAULT_LIMITS.briefingMaxBudget})`,
      integer('--max-briefing-budget'),
    )
    .option(
      '--metrics-port <n>',
      'serve GET /metrics (Prometheus) on this port, without keys, instead of on the API port (0: any free port)',
      integer('--metrics-port', { min: 0, max: 65_535 }),
    )
    .option('--metrics-host <address>', 'address of the --metrics-port listener (default 127.0.0.1: this machine only)')
    .option(
      '--workers <n>',
      'processes serving the port together (node:cluster), each with its own copy of the store',
      integer('--workers'),
      1,
    )
    .action(async (flags: ServeFlags) => {
      checkServerFlags(flags);
      const limits = serverLimits(flags);
      const rerank = serverRerank(flags);
      const apiKeys = await loadApiKeys(flags.keys);
      if (flags.requireAuth === true && (apiKeys === undefined || apiKeys.size === 0)) {
        throw new LitmPackError('invalid_input', '--require-auth needs API keys: give --keys FILE or set LITM_PACK_API_KEYS');
      }
      // Before any worker starts: the same refusal startServer makes.
      const exposed = exposureProblem(flags.host, apiKeys?.size ?? 0, flags.allowAnonymous === true);
      if (exposed !== null) throw exposed;
      const cluster = flags.workers > 1 ? (await import('node:cluster')).default : undefined;
      if (cluster?.isPrimary) {
        await servePrimary(cluster, flags);
        return;
      }
      const embeddings = embeddingsFrom(flags);
      const store = await openServedStore(flags.store, { embeddings, idfCorpus: flags.idfCorpus });
      if (embeddings === undefined) noteUnusedVectors(store);
      noteReindex(store, flags.store);
      const { startServer } = await import('../../server/server.js');
      const ledger = await openServerLedger(flags, flags.store);
      const logFile = flags.log === undefined ? undefined : await openLogFile(flags.log);
      const server = await startServer({
        store,
        port: flags.port,
        host: flags.host,
        ...(flags.metricsPort === undefined ? {} : { metricsPort: flags.metricsPort, metricsHost: flags.metricsHost ?? '127.0.0.1' }),
        ...(apiKeys === undefined ? {} : { apiKeys }),
        ...(embeddings === undefined ? {} : { embeddings }),
        ...(rerank === undefined ? {} : { rerank }),
        requireAuth: flags.requireAuth === true,
        allowAnonymous: flags.allowAnonymous === true,
        ...(flags.allowedHosts === undefined ? {} : { allowedHosts: flags.allowedHosts }),
        ...(flags.allowedOrigins === undefined ? {} : { allowedOrigins: flags.allowedOrigins }),
        rateLimit: flags.rateLimits ? { perClient: flags.rateLimit, global: flags.globalRateLimit } : false,
        ...(ledger === undefined ? {} : { ledger }),
        ...(flags.textContent === undefined ? {} : { textContent: flags.textContent }),
        log: logFile ?? process.stdout,
        logQueries: flags.logQueries === true,
        limits,
      });
      const auth =
        (apiKeys === undefined
          ? 'no API keys (every caller anonymous)'
          : `${apiKeys.size} API keys${flags.requireAuth ? ', required' : ''}`) +
        (flags.rerankUrl === undefined ? '' : `; reranking with ${flags.rerankUrl}`) +
        (ledger === undefined ? '; no citation ledger' : `; citation ledger ${ledger.path}`);
      if (cluster === undefined) {
        const metricsAt = server.metricsUrl ?? `${server.url}/metrics`;
        process.stderr.write(
          `litm-pack: serving ${flags.store} on ${server.url} (MCP at ${server.url}/mcp, metrics at ${metricsAt}; ${auth})\n`,
        );
      } else {
        process.send?.({ listening: server.url, auth });
      }
      const signal = await stopSignal();
      if (cluster === undefined) process.stderr.write(`litm-pack: ${signal}: finishing requests in flight\n`);
      else {
        // Ctrl-C reaches the workers and the primary, which then stops the workers too: a second signal must
        // not cut a worker's close short.
        process.on('SIGTERM', () => undefined);
        process.on('SIGINT', () => undefined);
      }
      // Requests in flight finish and are logged before the log file is closed.
      await server.close();
      await ledger?.flush();
      await closeLogFile(logFile);
      if (cluster === undefined) process.stderr.write('litm-pack: stopped\n');
      // A worker's channel to the primary would keep it alive.
      else process.disconnect?.();
    });
}

/**
 * The primary of `--workers N`: forks the workers (each runs this command, opens the store and listens on the
 * shared port), reports once they all listen, and on SIGTERM or SIGINT stops them and waits for each to
 * finish its requests in flight.
 */
async function servePrimary(cluster: typeof import('node:cluster').default, flags: ServeFlags): Promise<void> {
  const workers = Array.from({ length: flags.workers }, () => cluster.fork());
  const exited = workers.map((worker) => new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code))));
  const stopping = stopSignal();
  const listening = await new Promise<{ url: string; auth: string } | null>((resolve, reject) => {
    let ready = 0;
    for (const worker of workers) {
      worker.on('message', (message: { listening?: string; auth?: string }) => {
        if (message.listening === undefined) return;
        ready += 1;
        if (ready === workers.length) resolve({ url: message.listening, auth: message.auth ?? '' });
      });
      worker.once('exit', (code) => {
        if (ready < workers.length)
          reject(new LitmPackError('io_error', `A worker exited (code ${code}) before listening; see its message above`));
      });
    }
    void stopping.then(() => resolve(null));
  }).catch(async (error: unknown) => {
    for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGTERM');
    await Promise.all(exited);
    throw error;
  });
  if (listening !== null) {
    process.stderr.write(
      `litm-pack: serving ${flags.store} on ${listening.url} with ${flags.workers} workers (MCP at ${listening.url}/mcp; ${listening.auth})\n`,
    );
  }
  const signal = await stopping;
  process.stderr.write(`litm-pack: ${signal}: finishing requests in flight\n`);
  for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGTERM');
  const codes = await Promise.all(exited);
  if (codes.some((code) => code !== 0)) throw new LitmPackError('io_error', `Workers exited with codes ${codes.join(', ')}`);
  process.stderr.write('litm-pack: stopped\n');
}
