import type { Command } from 'commander';
import { DEFAULT_LIMITS } from '../../service/limits.js';
import { requestSchemas } from '../../service/requests.js';
import type { StaleCitation } from '../../service/responses.js';
import { integer, list, principalsFrom, serviceRequest, storeOption } from '../options.js';
import { existingStoreFile, openStore } from '../stores.js';
import { stdout } from '../io.js';
import { columns, visibleLine } from '../terminal.js';
import { CommandExit, STALE_EXIT_CODE } from './verify.js';

const schemas = requestSchemas(DEFAULT_LIMITS);

interface StaleFlags {
  store: string;
  ledger?: string;
  since?: string;
  status?: string[];
  limit?: number;
  principals?: string[];
  allPrincipals?: boolean;
  json?: boolean;
}

const shortHash = (hash: string) => hash.slice(0, 12);

function printTable(citations: readonly StaleCitation[]): void {
  const rows = citations.map((c) =>
    [
      c.status,
      c.sourceId,
      `${c.citedVersion ?? '-'} → ${c.currentVersion ?? '-'}`,
      String(c.servedCount),
      c.lastServedAt,
      c.packs.map((p) => `${shortHash(p.packHash)}${p.caller === undefined ? '' : ` (${p.caller})`}`).join(', '),
    ].map(visibleLine),
  );
  const header = ['status', 'source', 'version', 'served', 'last served', 'packs'];
  if (rows.length > 0) for (const line of columns([header, ...rows])) stdout().write(`${line}\n`);
}

export function registerCitations(program: Command): void {
  const citations = program.command('citations').description('what the citation ledger of `serve` and `mcp` recorded');
  storeOption(
    citations
      .command('stale')
      .description(
        'the served citations that went stale since: now changed, moved or missing in the store, newest first (exit 3 when any is)',
      ),
  )
    .option('--ledger <file>', 'the citation ledger (default: the one beside the store file)')
    .option('--since <time>', 'only citations served at or after this time (ISO 8601)')
    .option('--status <list>', 'only these statuses (comma-separated: changed, moved, missing)', list)
    .option('--limit <n>', 'print at most this many (default: all)', integer('--limit', { min: 1 }))
    .option('--principals <list>', 'comma-separated principals: only citations of sources they may read (default: anonymous)', list)
    .option('--all-principals', "every citation, whatever its source's ACL, with who was served each pack")
    .option('--json', 'print JSON lines: one per citation, then a summary')
    .action(async (flags: StaleFlags) => {
      const { CitationLedger } = await import('../../service/ledger.js');
      const { ledgerPathBeside } = await import('../../service/ledger.js');
      const { serveStale } = await import('../../service/stale.js');
      const ledgerPath = flags.ledger ?? ledgerPathBeside(await existingStoreFile(flags.store));
      const ledger = await CitationLedger.open({ path: ledgerPath });
      const context = { store: await openStore(flags.store), principals: principalsFrom(flags), ledger, caller: 'cli' };
      const wanted = flags.limit;
      const found: StaleCitation[] = [];
      let checked = 0;
      let cursor: string | undefined;
      do {
        const page = await serveStale(
          serviceRequest(schemas.stale, {
            since: flags.since,
            status: flags.status,
            limit: Math.min(DEFAULT_LIMITS.maxStalePage, wanted === undefined ? DEFAULT_LIMITS.maxStalePage : wanted - found.length),
            cursor,
          }),
          context,
          DEFAULT_LIMITS,
        );
        found.push(...page.citations);
        checked += page.checked;
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined && (wanted === undefined || found.length < wanted));
      const counts = { changed: 0, moved: 0, missing: 0 };
      for (const citation of found) counts[citation.status] += 1;
      if (flags.json) {
        for (const citation of found) stdout().write(`${JSON.stringify({ type: 'citation', ...citation })}\n`);
        stdout().write(`${JSON.stringify({ type: 'summary', ...counts, checked, skippedLines: ledger.skippedLines })}\n`);
      } else {
        printTable(found);
        const skipped =
          ledger.skippedLines === 0
            ? ''
            : `; ${ledger.skippedLines} ledger line${ledger.skippedLines === 1 ? '' : 's'} skipped (torn or not ledger entries)`;
        stdout().write(
          `${counts.changed} changed, ${counts.moved} moved, ${counts.missing} missing of ${checked} served citations checked${skipped}\n`,
        );
      }
      if (found.length > 0) throw new CommandExit(STALE_EXIT_CODE);
    });
}
