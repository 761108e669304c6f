import type { Command } from 'commander';
import { embeddingsFrom, embeddingsOptions, idfCorpusOption, list, principalsFrom, storeOption, type EmbeddingsFlags } from '../options.js';
import { noteReindex, noteUnusedVectors, openServedStore } from '../stores.js';
import { packLogFields } from '../../server/request-log.js';
import {
  closeLogFile,
  ledgerOptions,
  openLogFile,
  openServerLedger,
  serverRerank,
  serverRerankOptions,
  stopSignal,
  type LedgerFlags,
  type ServerRerankFlags,
} from './serve.js';

interface McpFlags extends EmbeddingsFlags, ServerRerankFlags, LedgerFlags {
  store: string;
  principals?: string[];
  allPrincipals?: boolean;
  log?: string;
  logQueries?: boolean;
  idfCorpus?: 'all' | 'visible';
}

export function registerMcp(program: Command): void {
  ledgerOptions(
    serverRerankOptions(
      embeddingsOptions(
        idfCorpusOption(storeOption(program.command('mcp').description('serve the MCP tools on stdin/stdout (for agent hosts)'))),
      ),
    ),
  )
    .option('--principals <list>', 'comma-separated principals this session reads as; default: documents without an ACL only', list)
    .option('--all-principals', 'this session reads every document, whatever its ACL (a trusted local agent)')
    .option('--log <file>', 'append one JSON line per tool call to this file (stdout carries the protocol)')
    .option('--log-queries', 'include the query text in the log')
    .action(async (flags: McpFlags) => {
      const rerank = serverRerank(flags);
      const embeddings = embeddingsFrom(flags);
      const store = await openServedStore(flags.store, { embeddings, idfCorpus: flags.idfCorpus });
      if (embeddings === undefined) noteUnusedVectors(store);
      noteReindex(store, flags.store);
      const { serveStdio } = await import('../../mcp/index.js');
      const ledger = await openServerLedger(flags, flags.store);
      const log = flags.log === undefined ? undefined : await openLogFile(flags.log);
      const session = await serveStdio({
        store,
        principals: principalsFrom(flags),
        caller: 'stdio',
        ...(ledger === undefined ? {} : { ledger }),
        ...(flags.textContent === undefined ? {} : { textContent: flags.textContent }),
        ...(embeddings === undefined ? {} : { embeddings }),
        ...(rerank === undefined ? {} : { rerank }),
        onToolCall: (event) => {
          if (log === undefined) return;
          const line: Record<string, unknown> = {
            time: new Date().toISOString(),
            tool: event.tool,
            latencyMs: Math.round(event.latencyMs * 100) / 100,
          };
          if (event.code !== undefined) line.code = event.code;
          if (event.pack !== undefined) Object.assign(line, packLogFields(event.pack, event.kind, event.mode));
          if (flags.logQueries === true && event.query !== undefined) line.query = event.query;
          log.write(`${JSON.stringify(line)}\n`);
        },
      });
      await Promise.race([session.closed, stopSignal()]);
      await session.close();
      await ledger?.flush();
      await closeLogFile(log);
    });
}
