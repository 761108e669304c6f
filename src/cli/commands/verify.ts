import type { Command } from 'commander';
import { describeIssues, LitmPackError } from '../../base/errors.js';
import { DEFAULT_LIMITS } from '../../service/limits.js';
import { requestSchemas } from '../../service/requests.js';
import { serveVerify } from '../../service/service.js';
import { VerifiablePackSchema, type CitationCheck, type CitationStatus } from '../../verify/verify.js';
import { readStdin, readUserFile, stdout } from '../io.js';
import { columns, visibleLine } from '../terminal.js';
import { list, principalsFrom, serviceRequest, storeOption } from '../options.js';

const schemas = requestSchemas(DEFAULT_LIMITS);
import { openStore } from '../stores.js';

/** Exit code when some citation is `changed` or `missing`. */
export const STALE_EXIT_CODE = 3;

/** Ends a command with an exit code of its own after its output was printed (main() returns `exitCode`). */
export class CommandExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

interface ReadPack {
  /** 1-based: the pack's line in a JSON lines file, or its index in a JSON array. */
  index: number;
  pack: ReturnType<typeof VerifiablePackSchema.parse>;
}

/** One canonical JSON pack, a JSON array of packs, or JSON lines of packs (a harness's golden set). */
function readPacks(input: string): ReadPack[] {
  const parseOne = (value: unknown, index: number, where: string): ReadPack => {
    const result = VerifiablePackSchema.safeParse(value);
    if (!result.success) {
      throw new LitmPackError('invalid_input', `${where}: not a pack (${describeIssues(result.error.issues)})`, {
        issues: result.error.issues,
        details: { index },
      });
    }
    return { index, pack: result.data };
  };
  let whole: unknown;
  try {
    whole = JSON.parse(input);
  } catch {
    whole = undefined;
  }
  if (Array.isArray(whole)) return whole.map((value, i) => parseOne(value, i + 1, `pack ${i + 1}`));
  if (whole !== undefined) return [parseOne(whole, 1, 'pack')];
  const packs: ReadPack[] = [];
  input.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new LitmPackError('invalid_input', `line ${i + 1}: not valid JSON (${(error as Error).message})`, { details: { line: i + 1 } });
    }
    packs.push(parseOne(value, i + 1, `line ${i + 1}`));
  });
  if (packs.length === 0) throw new LitmPackError('invalid_input', 'No pack in the input');
  return packs;
}

function countStatuses(checks: readonly CitationCheck[]): Record<CitationStatus, number> {
  const counts: Record<CitationStatus, number> = { current: 0, moved: 0, changed: 0, missing: 0 };
  for (const check of checks) counts[check.status] += 1;
  return counts;
}

const spanText = (span: { start: number; end: number } | null) => (span === null ? '-' : `${span.start}-${span.end}`);

function shorten(text: string, length: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1)}…`;
}

/** What a person reads: one table per pack and a per-pack summary. */
function printTable(packIndex: number, packHash: unknown, query: unknown, checks: readonly CitationCheck[], several: boolean): void {
  const title = [
    `Pack ${packIndex}`,
    typeof packHash === 'string' ? `sha256:${packHash.slice(0, 12)}` : '',
    typeof query === 'string' ? `"${shorten(query, 60)}"` : '',
  ]
    .filter(Boolean)
    .join('  ');
  if (several || checks.length === 0) stdout().write(`${visibleLine(title)}\n`);
  const rows = checks.map((c) => {
    let note = '';
    if (c.status === 'moved') note = `now at ${spanText(c.span)}`;
    if (c.status === 'changed') {
      note =
        c.closest === null
          ? 'closest passage unknown (no cited text)'
          : `closest ${spanText(c.closest.span)} (score ${c.closest.score.toFixed(2)}): "${shorten(c.closest.text, 60)}"`;
    }
    if (c.status === 'missing') note = 'source not found';
    return [
      c.ref === null ? '-' : `[${c.ref}]`,
      c.status,
      c.sourceId,
      `${c.citedVersion ?? '-'} → ${c.currentVersion ?? '-'}`,
      spanText(c.citedSpan),
      note,
    ].map(visibleLine);
  });
  const header = ['ref', 'status', 'source', 'version', 'span', ''];
  if (rows.length > 0) for (const line of columns([header, ...rows])) stdout().write(`${line}\n`);
  const counts = countStatuses(checks);
  stdout().write(
    `${several ? `Pack ${packIndex}: ` : ''}${counts.current} current, ${counts.moved} moved, ${counts.changed} changed, ${counts.missing} missing\n`,
  );
  if (several) stdout().write('\n');
}

export function registerVerify(program: Command): void {
  storeOption(
    program
      .command('verify')
      .description(
        'check the citations of packs against the store: current, moved, changed or missing (exit 3 when any is changed or missing)',
      )
      .argument('[packs]', 'a pack (canonical JSON), or JSON lines of packs; stdin when absent'),
  )
    .option('--principals <list>', 'comma-separated principals; sources they may not read verify as missing (default: anonymous)', list)
    .option('--all-principals', 'verify against every source, whatever its ACL')
    .option('--json', 'print JSON lines: one per citation, then one summary per pack')
    .action(async (file: string | undefined, flags: { store: string; principals?: string[]; allPrincipals?: boolean; json?: boolean }) => {
      const input = file === undefined || file === '-' ? await readStdin() : await readUserFile(file);
      const packs = readPacks(input);
      const context = { store: await openStore(flags.store), principals: principalsFrom(flags) };
      let stale = 0;
      for (const { index, pack } of packs) {
        const { checks } = await serveVerify(serviceRequest(schemas.verify, { pack }), context);
        const counts = countStatuses(checks);
        stale += counts.changed + counts.missing;
        if (flags.json) {
          for (const check of checks)
            stdout().write(`${JSON.stringify({ type: 'citation', pack: index, packHash: pack.packHash ?? null, ...check })}\n`);
          stdout().write(`${JSON.stringify({ type: 'summary', pack: index, packHash: pack.packHash ?? null, ...counts })}\n`);
        } else {
          printTable(index, pack.packHash, pack.query, checks, packs.length > 1);
        }
      }
      if (stale > 0) throw new CommandExit(STALE_EXIT_CODE);
    });
}
